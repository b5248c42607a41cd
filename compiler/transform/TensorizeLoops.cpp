// Tensorization of marked loop nests: the pattern match and the replacement.
#include "compiler/transform/TensorizeLoops.h"

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/Simplify.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "compiler/transform/AccumulationPattern.h"
#include "compiler/transform/TileDotNest.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"

namespace tessel {

namespace {

class Tensorizer : public IRMutator {
public:
  explicit Tensorizer(std::optional<TensorizeMismatch>* mismatch) : mismatch_(mismatch) {}

  Stmt visit(const AttrStmtNode* node, const Stmt& self) override {
    const TensorIntrinsic* intrinsic = tensorIntrinsicOfAttr(node->key);
    if (!intrinsic) return IRMutator::visit(node, self);
    if (mismatch_->has_value()) return self;
    const auto* outer = node->body.as<ForNode>();
    if (!outer) {
      *mismatch_ = TensorizeMismatch{"?", "the tensorize mark is not on a loop", ""};
      return self;
    }
    if (intrinsic->wholeReduction) {
      // The nest stays as it is, marked for codegen, which writes tiles where the target
      // has them; matching it here makes a schedule that does not fit fail at its line.
      auto nest = matchTileDotNest(outer);
      if (!nest) {
        *mismatch_ = TensorizeMismatch{outer->loopVar.name(), nest.error().message, nest.error().hint};
        return self;
      }
      return AttrStmtNode::make(kTileDotAttr, Expr(int64_t(0)), node->body);
    }
    auto replaced = replace(*intrinsic, outer);
    if (!replaced) {
      *mismatch_ = TensorizeMismatch{outer->loopVar.name(), lastMessage_, lastHint_};
      return self;
    }
    return *replaced;
  }

private:
  std::optional<Stmt> mismatch(std::string message, std::string hint = "") {
    lastMessage_ = std::move(message);
    lastHint_ = std::move(hint);
    return std::nullopt;
  }

  std::optional<Stmt> replace(const TensorIntrinsic& intrinsic, const ForNode* outer) {
    std::string what = intrinsic.name + " computes " + intrinsic.summary;
    // A reduction whose first loop is inside the tensorized one initializes each output there.
    const BufferStoreNode* init = nullptr;
    const auto* inner = outer->body.as<ForNode>();
    if (const auto* seq = outer->body.as<SeqStmtNode>(); seq && seq->seq.size() == 2) {
      init = seq->seq[0].as<BufferStoreNode>();
      inner = seq->seq[1].as<ForNode>();
      if (!init || init->indices.size() != 1 || !isZeroConstant(init->value)) inner = nullptr;
    }
    if (!inner)
      return mismatch("the loop '" + outer->loopVar.name() + "' holds more than one loop",
                      "its body must be one loop around the update, after the outputs' initialization at most");
    for (const ForNode* loop : {outer, inner}) {
      if (loop->forKind != ForKind::Serial)
        return mismatch("the loop '" + loop->loopVar.name() + "' is " + forKindName(loop->forKind),
                        "leave the loops inside a tensorized loop plain");
      if (!isConstInt(loop->min, 0)) return mismatch("the loop '" + loop->loopVar.name() + "' does not start at 0");
    }
    Stmt body = inner->body;
    Expr condition;
    if (const auto* branch = body.as<IfThenElseNode>(); branch && !branch->elseCase.defined()) {
      condition = branch->condition;
      body = branch->thenCase;
    }
    const auto* store = body.as<BufferStoreNode>();
    if (!store || store->indices.size() != 1)
      return mismatch("the body of '" + inner->loopVar.name() + "' is not a single update", what);
    auto uses = [&](const Expr& e, const ForNode* loop) { return usesVar(e, loop->loopVar); };
    if (condition.defined() && (uses(condition, outer) || uses(condition, inner)))
      return mismatch("the update is guarded by " + toString(condition) + ", which changes inside the nest",
                      "choose split factors that divide the loops, or pad the tensors");
    if (store->buffer.dtype() != intrinsic.accumulatorType)
      return mismatch("the update writes " + store->buffer.dtype().toString() + ", not " +
                      intrinsic.accumulatorType.toString());
    // value = C[ci] + int32(A[ai]) * int32(B[bi]), in either order.
    const auto* add = store->value.as<AddNode>();
    if (!add) return mismatch("the update is not an accumulation", what);
    Expr product = add->b;
    if (!loadsStoredElement(add->a, store)) {
      product = add->a;
      if (!loadsStoredElement(add->b, store)) return mismatch("the update does not add to the element it stores", what);
    }
    const auto* mul = product.as<MulNode>();
    const BufferLoadNode* data = mul ? widenedLoad(mul->a, intrinsic.accumulatorType) : nullptr;
    const BufferLoadNode* weight = mul ? widenedLoad(mul->b, intrinsic.accumulatorType) : nullptr;
    if (!data || !weight)
      return mismatch("the update adds " + toString(product) + ", not a product of two widened loads", what);
    if (data->dtype != intrinsic.dataType) std::swap(data, weight);
    if (data->dtype != intrinsic.dataType || weight->dtype != intrinsic.weightType)
      return mismatch("the operands are " + data->dtype.toString() + " and " + weight->dtype.toString() + ", not " +
                          intrinsic.dataType.toString() + " and " + intrinsic.weightType.toString(),
                      intrinsic.instruction == Intrinsic::DotU8I8
                          ? "convert the operands (VNNI multiplies unsigned by signed bytes: shift int8 data by 128)"
                          : "convert the operands to " + intrinsic.dataType.toString());

    // Which loop is the lanes loop: the one the stored element moves with.
    const ForNode* lanes = outer;
    const ForNode* reduction = inner;
    if (!uses(store->indices[0], outer)) std::swap(lanes, reduction);
    auto extentIs = [](const ForNode* loop, int64_t n) {
      const int64_t* extent = asConstInt(loop->extent);
      return extent && *extent == n;
    };
    if (!extentIs(lanes, intrinsic.lanes))
      return mismatch("the output loop '" + lanes->loopVar.name() + "' runs " + toString(lanes->extent) +
                          " times; " + intrinsic.name + " computes " + std::to_string(intrinsic.lanes) + " outputs",
                      "split it by " + std::to_string(intrinsic.lanes));
    if (!extentIs(reduction, intrinsic.reduction))
      return mismatch("the reduction loop '" + reduction->loopVar.name() + "' runs " + toString(reduction->extent) +
                          " times; " + intrinsic.name + " adds " + std::to_string(intrinsic.reduction) +
                          " products per output",
                      "split it by " + std::to_string(intrinsic.reduction));

    // Strides: each index is its base plus the documented multiple of each loop variable.
    Analyzer analyzer;
    analyzer.bind(lanes->loopVar, Range::fromMinExtent(Expr(0), lanes->extent));
    analyzer.bind(reduction->loopVar, Range::fromMinExtent(Expr(0), reduction->extent));
    VarMap origin = {{lanes->loopVar.get(), Expr(int64_t(0))}, {reduction->loopVar.get(), Expr(int64_t(0))}};
    Expr i = lanes->loopVar, k = reduction->loopVar;
    auto base = [&](const Expr& index) { return simplify(substitute(index, origin)); };
    auto follows = [&](const Expr& index, const Expr& offset) {
      return analyzer.canProve(eq(index, base(index) + offset));
    };
    Expr cIndex = store->indices[0], aIndex = data->indices[0], bIndex = weight->indices[0];
    if (!follows(cIndex, i))
      return mismatch("the outputs " + store->buffer.name() + "[" + toString(cIndex) + "] are not contiguous in '" +
                          lanes->loopVar.name() + "'",
                      "make the tensorized loop the innermost axis of the output's layout");
    if (!follows(aIndex, k))
      return mismatch(data->buffer.name() + "[" + toString(aIndex) + "] is not contiguous in '" +
                          reduction->loopVar.name() + "', or moves with '" + lanes->loopVar.name() + "'",
                      "use a data layout whose innermost axis holds 4 consecutive reduction elements");
    if (!follows(bIndex, i * Expr(intrinsic.reduction) + k))
      return mismatch(weight->buffer.name() + "[" + toString(bIndex) + "] is not laid out as [" +
                          std::to_string(intrinsic.lanes) + " outputs][" + std::to_string(intrinsic.reduction) +
                          " reduction elements]",
                      "pack the weight so that its two innermost axes are the output and the reduction blocks");

    // The instruction's operands are 32-bit words, each the `reduction` elements of one lane.
    int n = int(intrinsic.lanes), r = int(intrinsic.reduction);
    DataType word = DataType::int32();
    Expr outputs = RampNode::make(base(cIndex), Expr(int64_t(1)), n);
    Expr accumulated = BufferLoadNode::make(store->buffer, {outputs});
    Expr dataWord = CallNode::make(word, Intrinsic::Reinterpret,
                                   {BufferLoadNode::make(data->buffer, {RampNode::make(base(aIndex), Expr(int64_t(1)), r)})});
    Expr weights = CallNode::make(
        word.withLanes(n), Intrinsic::Reinterpret,
        {BufferLoadNode::make(weight->buffer, {RampNode::make(base(bIndex), Expr(int64_t(1)), n * r)})});
    Expr dot = CallNode::make(intrinsic.accumulatorType.withLanes(n), intrinsic.instruction,
                              {accumulated, BroadcastNode::make(dataWord, n), weights});
    Stmt result = BufferStoreNode::make(store->buffer, dot, {outputs});
    if (condition.defined()) result = IfThenElseNode::make(condition, result);
    if (init) {
      if (!init->buffer.same(store->buffer) || uses(init->indices[0], reduction) || !follows(init->indices[0], i))
        return mismatch("the initialization inside '" + outer->loopVar.name() + "' is not of the same outputs", what);
      Stmt zero = BufferStoreNode::make(
          store->buffer, BroadcastNode::make(init->value, n),
          {RampNode::make(base(init->indices[0]), Expr(int64_t(1)), n)});
      result = SeqStmtNode::make({zero, result});
    }
    return result;
  }

  std::optional<TensorizeMismatch>* mismatch_;
  std::string lastMessage_, lastHint_;
};

}  // namespace

PrimFunc tensorizeLoops(const PrimFunc& f, std::optional<TensorizeMismatch>* mismatch) {
  Tensorizer tensorizer(mismatch);
  Stmt body = tensorizer.mutate(f->body);
  if (mismatch->has_value() || body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

}  // namespace tessel
