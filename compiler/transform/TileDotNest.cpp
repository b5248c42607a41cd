// Recognition of the accumulation nest tile_u8i8 replaces.
#include "compiler/transform/TileDotNest.h"

#include <map>
#include <set>

#include "compiler/arith/Simplify.h"
#include "compiler/transform/AccumulationPattern.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"
#include "core/ir/StructuralEqual.h"

namespace tessel {

namespace {

Diagnostic mismatch(std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), "", 0, 0, std::move(hint)};
}

// An index as base + sum of constant multiples of the nest's variables, read off the
// expression's own sums and products (so floordiv, min and the like around a nest variable
// are refused rather than misread; parts without one are the base, whatever they are).
struct LinearIndex {
  Expr base;
  std::map<const VarNode*, int64_t> strides;
  int64_t stride(const Var& v) const {
    auto it = strides.find(v.get());
    return it == strides.end() ? 0 : it->second;
  }
};

class LinearReader {
public:
  explicit LinearReader(const std::vector<const ForNode*>& loops) {
    for (const ForNode* loop : loops) nestVars_.insert(loop->loopVar.get());
  }

  // Adds scale * e to `into`; false when e is not linear in the nest's variables.
  bool read(const Expr& e, int64_t scale, LinearIndex& into) {
    if (!usesVar(e, [&](const VarNode* v) { return nestVars_.count(v) != 0; })) {
      Expr term = scale == 1 ? e : e * Expr(scale);
      into.base = into.base.defined() ? into.base + term : term;
      return true;
    }
    if (const auto* var = e.as<VarNode>()) {
      into.strides[var] += scale;
      return true;
    }
    if (const auto* add = e.as<AddNode>()) return read(add->a, scale, into) && read(add->b, scale, into);
    if (const auto* sub = e.as<SubNode>()) return read(sub->a, scale, into) && read(sub->b, -scale, into);
    if (const auto* mul = e.as<MulNode>()) {
      if (const int64_t* c = asConstInt(mul->b)) return read(mul->a, scale * *c, into);
      if (const int64_t* c = asConstInt(mul->a)) return read(mul->b, scale * *c, into);
    }
    return false;
  }

private:
  std::set<const VarNode*> nestVars_;
};

std::optional<LinearIndex> linearIn(const Expr& index, const std::vector<const ForNode*>& loops) {
  LinearIndex linear;
  if (!LinearReader(loops).read(index, 1, linear)) return std::nullopt;
  linear.base = linear.base.defined() ? simplify(linear.base) : Expr(int64_t(0));
  std::erase_if(linear.strides, [](const auto& entry) { return entry.second == 0; });
  return linear;
}

}  // namespace

Expected<TileDotNest> matchTileDotNest(const ForNode* rowsLoop) {
  const std::string tileHint =
      "tile_u8i8 takes: the rows loop, a loop of 16 n columns, then the reduction loops with 4 bytes of one "
      "input element innermost";
  // The perfect nest below the mark, with the initialization where it sits.
  std::vector<const ForNode*> loops;
  const BufferStoreNode* init = nullptr;
  size_t initDepth = 0;
  Stmt body;
  for (const ForNode* loop = rowsLoop; loop;) {
    loops.push_back(loop);
    body = loop->body;
    loop = body.as<ForNode>();
    if (const auto* seq = body.as<SeqStmtNode>(); seq && !init && seq->seq.size() == 2) {
      init = seq->seq[0].as<BufferStoreNode>();
      loop = seq->seq[1].as<ForNode>();
      if (!init || !loop || init->indices.size() != 1 || !isZeroConstant(init->value))
        return mismatch("the nest under '" + rowsLoop->loopVar.name() + "' holds more than its initialization and one loop",
                        tileHint);
      initDepth = loops.size();
    }
  }
  const auto* store = body.as<BufferStoreNode>();
  if (!store || store->indices.size() != 1)
    return mismatch("the innermost body under '" + rowsLoop->loopVar.name() + "' is not a single update (a condition "
                    "or a second statement is in the way)",
                    "choose split factors that divide the loops, or pad the tensors; " + tileHint);
  for (const ForNode* loop : loops) {
    if (loop->forKind != ForKind::Serial)
      return mismatch("the loop '" + loop->loopVar.name() + "' is " + forKindName(loop->forKind),
                      "leave the loops inside a tensorized loop plain");
    if (!isConstInt(loop->min, 0) || !asConstInt(loop->extent))
      return mismatch("the loop '" + loop->loopVar.name() + "' does not run from 0 a constant number of times");
  }
  if (store->buffer.dtype() != DataType::int32())
    return mismatch("the update writes " + store->buffer.dtype().toString() + ", not int32");
  const auto* add = store->value.as<AddNode>();
  Expr product = add ? add->b : Expr();
  if (add && !loadsStoredElement(add->a, store)) product = loadsStoredElement(add->b, store) ? add->a : Expr();
  const auto* mul = product.defined() ? product.as<MulNode>() : nullptr;
  const BufferLoadNode* data = mul ? widenedLoad(mul->a, DataType::int32()) : nullptr;
  const BufferLoadNode* weight = mul ? widenedLoad(mul->b, DataType::int32()) : nullptr;
  if (!data || !weight)
    return mismatch("the update is not C += int32(A) * int32(B)", "tile_u8i8 accumulates products of two widened loads");
  if (data->dtype != DataType::uint8()) std::swap(data, weight);
  if (data->dtype != DataType::uint8() || weight->dtype != DataType::int8())
    return mismatch("the operands are " + data->dtype.toString() + " and " + weight->dtype.toString() +
                        ", not uint8 and int8",
                    "convert the operands (AMX's tdpbusd multiplies unsigned by signed bytes: shift int8 data by 128)");

  auto c = linearIn(store->indices[0], loops);
  auto a = linearIn(data->indices[0], loops);
  auto b = linearIn(weight->indices[0], loops);
  if (!c || !a || !b)
    return mismatch("an index of the update is not a sum of constant multiples of the nest's loop variables",
                    "use layouts whose blocks the loops walk directly (no division or clamping inside the nest)");

  TileDotNest nest;
  nest.acc = store->buffer;
  nest.data = data->buffer;
  nest.weight = weight->buffer;
  nest.accBase = c->base;
  nest.dataBase = a->base;
  nest.weightBase = b->base;
  // Two data-parallel loops (rows, columns) or three (blocks of rows, rows, columns): the
  // loops the output moves with, outside every reduction loop.
  size_t parallel = 0;
  while (parallel < loops.size() && c->stride(loops[parallel]->loopVar) != 0) ++parallel;
  auto name = [](const ForNode* loop) { return "'" + loop->loopVar.name() + "'"; };
  if (parallel < 2 || parallel > 3)
    return mismatch("the output moves with " + std::to_string(parallel) + " loops of the nest; tile_u8i8 takes 2 or 3 " +
                        "(rows, or blocks of rows and rows, then columns)",
                    tileHint);
  for (size_t i = parallel; i < loops.size(); ++i)
    if (c->stride(loops[i]->loopVar) != 0)
      return mismatch("the output moves with " + name(loops[i]) + ", which should be a reduction loop", tileHint);
  const ForNode* blocks = parallel == 3 ? loops[0] : nullptr;
  const ForNode* rows = loops[parallel - 2];
  const ForNode* columns = loops[parallel - 1];
  nest.rowVar = rows->loopVar;
  nest.columnVar = columns->loopVar;
  nest.rows = *asConstInt(rows->extent);
  nest.columns = *asConstInt(columns->extent);
  if (c->stride(columns->loopVar) != 1 || b->stride(columns->loopVar) != 4 || a->stride(columns->loopVar) != 0)
    return mismatch("the loop " + name(columns) + " is not a loop over output columns (contiguous in " +
                        nest.acc.name() + ", 4 bytes apart in " + nest.weight.name() + ")",
                    tileHint);
  if (nest.columns % 16 != 0)
    return mismatch("the columns loop " + name(columns) + " runs " + std::to_string(nest.columns) +
                        " times, not a multiple of 16",
                    "split it by 16, 32 or 64");
  auto isRowLoop = [&](const ForNode* loop) {
    return c->stride(loop->loopVar) >= nest.columns && b->stride(loop->loopVar) == 0 && a->stride(loop->loopVar) > 0;
  };
  for (const ForNode* loop : {blocks, rows})
    if (loop && !isRowLoop(loop))
      return mismatch("the loop " + name(loop) + " is not a loop over output rows (each row's columns apart in " +
                          nest.acc.name() + ", one input row of " + nest.data.name() + " each)",
                      tileHint);
  nest.accRowStride = c->stride(rows->loopVar);
  nest.dataRowStride = a->stride(rows->loopVar);
  if (blocks) {
    nest.rowBlocks = *asConstInt(blocks->extent);
    nest.accRowBlockStride = c->stride(blocks->loopVar);
    nest.dataRowBlockStride = a->stride(blocks->loopVar);
  }
  if (init) {
    auto zeroed = linearIn(init->indices[0], loops);
    bool same = zeroed && structuralEqual(zeroed->base, nest.accBase);
    for (size_t i = 0; same && i < parallel; ++i)
      same = zeroed->stride(loops[i]->loopVar) == c->stride(loops[i]->loopVar);
    if (initDepth != parallel || !init->buffer.same(nest.acc) || !same)
      return mismatch("the initialization inside the nest is not of the outputs the update accumulates", tileHint);
    nest.initializes = true;
  }

  // The innermost reduction loop: the 4 bytes of one 32-bit element; the one around it, when
  // present, the groups of 4 along a tile row (at most 16, the tile's 64 bytes).
  const ForNode* bytes = loops.back();
  if (*asConstInt(bytes->extent) != 4 || a->stride(bytes->loopVar) != 1 || b->stride(bytes->loopVar) != 1)
    return mismatch("the innermost loop " + name(bytes) + " is not 4 consecutive bytes of both operands",
                    "split the channels by 4 and put that loop innermost, with a packed weight whose innermost axis "
                    "holds the same 4 channels");
  size_t outer = loops.size() - 1;
  if (outer > parallel) {
    const ForNode* group = loops[outer - 1];
    if (a->stride(group->loopVar) == 4 && *asConstInt(group->extent) <= 16 && b->stride(group->loopVar) != 0) {
      nest.groups = *asConstInt(group->extent);
      nest.weightGroupStride = b->stride(group->loopVar);
      --outer;
    }
  }
  if (nest.groups == 1) nest.weightGroupStride = 4 * nest.columns;  // one B row; any stride reads it
  for (size_t i = parallel; i < outer; ++i)
    nest.outerReductions.push_back({loops[i]->loopVar, *asConstInt(loops[i]->extent), a->stride(loops[i]->loopVar),
                                    b->stride(loops[i]->loopVar)});
  return nest;
}

}  // namespace tessel
