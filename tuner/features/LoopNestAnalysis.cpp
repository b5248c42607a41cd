// One walk over a lowered loop nest collecting store groups, their arithmetic and accesses.
#include "tuner/features/LoopNestAnalysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "compiler/arith/ConstIntBound.h"
#include "core/ir/IRVisitor.h"

namespace tessel::features {

void OpCounts::add(const OpCounts& o, double times) {
  floatAddSub += o.floatAddSub * times;
  floatMul += o.floatMul * times;
  floatDiv += o.floatDiv * times;
  floatMinMax += o.floatMinMax * times;
  fmaShaped += o.fmaShaped * times;
  mathCalls += o.mathCalls * times;
  compareSelect += o.compareSelect * times;
  intOps += o.intOps * times;
  intDivMod += o.intDivMod * times;
  casts += o.casts * times;
}

double StoreGroup::trips() const {
  double trips = 1;
  for (const LoopLevel& loop : loops) trips *= loop.extent;
  return trips;
}

namespace {

// Let chains deeper than this are treated as opaque: it bounds the work on adversarial IR.
constexpr int kMaxLetDepth = 32;

bool isFloatMul(const Expr& e) { return e.as<MulNode>() && e.dtype().isFloat(); }

struct Operands {
  const Expr* a = nullptr;
  const Expr* b = nullptr;
};

// The two operands of a binary node (a + b, a < b, ...); null for any other kind.
Operands binaryOperands(const Expr& e) {
  switch (e->kind()) {
#define TESSEL_OPERANDS_CASE(Name)    \
  case NodeKind::Name: {              \
    auto* node = e.as<Name##Node>();  \
    return {&node->a, &node->b};      \
  }
    TESSEL_BINARY_NODES(TESSEL_OPERANDS_CASE)
#undef TESSEL_OPERANDS_CASE
    default: return {};
  }
}

class LoopNestWalker {
public:
  LoopNestFacts run(const Stmt& body) {
    contextGroups_.emplace_back();
    if (body.defined()) walk(body);
    return std::move(facts_);
  }

private:
  void walk(const Stmt& s) {
    if (!s.defined()) return;
    switch (s->kind()) {
      case NodeKind::For: return visitFor(s.as<ForNode>());
      case NodeKind::BufferStore: return visitStore(s.as<BufferStoreNode>());
      case NodeKind::SeqStmt:
        for (const Stmt& child : s.as<SeqStmtNode>()->seq) walk(child);
        return;
      case NodeKind::IfThenElse: {
        auto* node = s.as<IfThenElseNode>();
        ++guardDepth_;
        walk(node->thenCase);
        if (node->elseCase.defined()) walk(node->elseCase);
        --guardDepth_;
        return;
      }
      case NodeKind::Allocate: {
        auto* node = s.as<AllocateNode>();
        recordAllocation(node->buffer);
        return walk(node->body);
      }
      case NodeKind::BufferRealize: {
        auto* node = s.as<BufferRealizeNode>();
        recordAllocation(node->buffer);
        return walk(node->body);
      }
      case NodeKind::LetStmt: {
        auto* node = s.as<LetStmtNode>();
        lets_[node->var.get()] = node->value;
        walk(node->body);
        lets_.erase(node->var.get());
        return;
      }
      case NodeKind::AttrStmt: return walk(s.as<AttrStmtNode>()->body);
      default: return;  // Evaluate and anything new: no stores inside.
    }
  }

  void visitFor(const ForNode* node) {
    LoopLevel level;
    level.var = node->loopVar.get();
    level.kind = node->forKind;
    level.extent = static_cast<double>(std::max<int64_t>(0, upperBound(node->extent, 1)));
    ConstIntBound minBound = boundOf(node->min, 0);
    int64_t last = level.extent > 0 ? static_cast<int64_t>(level.extent) - 1 : 0;
    ConstIntBound varBound{minBound.min, boundAdd(minBound, ConstIntBound::point(last)).max};

    // The sample point where indices are evaluated: the middle iteration.
    double first = evaluate(node->min, 0, 0);
    if (!std::isfinite(first)) first = 0;
    firstPoint_.push_back(first);
    point_.push_back(first + std::floor(std::max(0.0, level.extent - 1) / 2));

    loops_.push_back(level);
    loopBounds_.push_back(varBound);
    contextGroups_.emplace_back();
    ++facts_.loops;
    facts_.maxDepth = std::max(facts_.maxDepth, static_cast<int>(loops_.size()));
    walk(node->body);
    contextGroups_.pop_back();
    point_.pop_back();
    firstPoint_.pop_back();
    loopBounds_.pop_back();
    loops_.pop_back();
  }

  void visitStore(const BufferStoreNode* node) {
    ++facts_.storeStatements;
    StoreGroup& group = groupFor(node->buffer.get());
    group.statements += 1;
    group.lanes = std::max(group.lanes, node->value.dtype().lanes());
    group.guarded = group.guarded || guardDepth_ > 0;
    group_ = &group;
    Access store = makeAccess(node->buffer, node->indices, node->value.dtype().lanes(), true);
    group.accesses.push_back(std::move(store));
    scan(node->value);
    for (const Expr& index : node->indices) scan(index);
    group_ = nullptr;
  }

  // The group of `buffer`'s stores directly inside the current innermost loop.
  StoreGroup& groupFor(const BufferNode* buffer) {
    for (size_t index : contextGroups_.back())
      if (facts_.groups[index].storedBuffer == buffer) return facts_.groups[index];
    contextGroups_.back().push_back(facts_.groups.size());
    StoreGroup& group = facts_.groups.emplace_back();
    group.loops = loops_;
    group.storedBuffer = buffer;
    return group;
  }

  void recordAllocation(const Buffer& buffer) {
    double elements = 1;
    for (const Expr& extent : buffer.shape()) elements *= static_cast<double>(std::max<int64_t>(0, upperBound(extent, 1)));
    DataType dtype = buffer.dtype();
    facts_.allocations.push_back({buffer.get(), elements * dtype.bytes() * dtype.lanes(), buffer->scope != "global"});
  }

  // Counts the operations of `e` into the current group and records its loads.
  void scan(const Expr& e) {
    OpCounts& ops = group_->ops;
    const double lanes = e.dtype().lanes();
    if (auto [a, b] = binaryOperands(e); a) {
      countBinary(e->kind(), *a, *b, lanes);
      scan(*a);
      return scan(*b);
    }
    switch (e->kind()) {
      case NodeKind::Not:
        ops.compareSelect += lanes;
        return scan(e.as<NotNode>()->a);
      case NodeKind::Select: {
        auto* node = e.as<SelectNode>();
        ops.compareSelect += lanes;
        scan(node->condition);
        scan(node->trueValue);
        return scan(node->falseValue);
      }
      case NodeKind::Cast:
        ops.casts += lanes;
        return scan(e.as<CastNode>()->value);
      case NodeKind::Call: {
        auto* node = e.as<CallNode>();
        if (node->op == Intrinsic::Fma) {
          ops.floatMul += lanes;
          ops.floatAddSub += lanes;
          ops.fmaShaped += lanes;
        } else if (isBitwiseIntrinsic(node->op)) {
          ops.intOps += lanes;
        } else if (node->op != Intrinsic::Likely) {  // a branch hint, not work
          ops.mathCalls += lanes;
        }
        for (const Expr& arg : node->args) scan(arg);
        return;
      }
      case NodeKind::BufferLoad: {
        auto* node = e.as<BufferLoadNode>();
        group_->accesses.push_back(makeAccess(node->buffer, node->indices, e.dtype().lanes(), false));
        for (const Expr& index : node->indices) scan(index);
        return;
      }
      case NodeKind::Ramp: {
        auto* node = e.as<RampNode>();
        scan(node->base);
        return scan(node->stride);
      }
      case NodeKind::Broadcast: return scan(e.as<BroadcastNode>()->value);
      case NodeKind::Let: {
        auto* node = e.as<LetNode>();
        scan(node->value);
        lets_[node->var.get()] = node->value;
        scan(node->body);
        lets_.erase(node->var.get());
        return;
      }
      case NodeKind::Reduce: return scan(e.as<ReduceNode>()->source);
      default: return;  // immediates and variables
    }
  }

  void countBinary(NodeKind kind, const Expr& a, const Expr& b, double lanes) {
    OpCounts& ops = group_->ops;
    const bool isFloat = a.dtype().isFloat();
    switch (kind) {
      case NodeKind::Add:
      case NodeKind::Sub:
        if (!isFloat) {
          ops.intOps += lanes;
        } else {
          ops.floatAddSub += lanes;
          if (isFloatMul(a) || isFloatMul(b)) ops.fmaShaped += lanes;
        }
        return;
      case NodeKind::Mul: (isFloat ? ops.floatMul : ops.intOps) += lanes; return;
      case NodeKind::Div:
      case NodeKind::Mod:
      case NodeKind::FloorDiv:
      case NodeKind::FloorMod: (isFloat ? ops.floatDiv : ops.intDivMod) += lanes; return;
      case NodeKind::Min:
      case NodeKind::Max: (isFloat ? ops.floatMinMax : ops.intOps) += lanes; return;
      default: ops.compareSelect += lanes; return;  // comparisons, and, or
    }
  }

  // ---- Index forms
  //
  // Lowered indices mix affine terms with floordiv/floormod of fused loops and of vector
  // lanes (ramp(i*16, 1, 16) // 510 * 510 + ramp(i*16, 1, 16) % 510 is just the ramp), and
  // clamps for padding. Rather than approximate each operator symbolically, the index is
  // evaluated at a sample point (every loop at its middle iteration, away from padding
  // edges) and one step further along each loop it mentions and along the lanes; for
  // indices with more than + - *, at three places, so that a floormod wrapping around at
  // one of them does not decide the step.

  Access makeAccess(const Buffer& buffer, const std::vector<Expr>& indices, int lanes, bool isWrite) {
    const size_t depth = loops_.size();
    Access access;
    access.buffer = buffer.get();
    access.isWrite = isWrite;
    access.lanes = lanes;
    access.elementBytes = std::max(1, buffer.dtype().bytes());
    access.coefficients.assign(depth, 0.0);
    access.unknown.assign(depth, false);
    mentioned_.assign(depth, false);
    bool opaque = false;
    affine_ = true;
    for (const Expr& index : indices) collectLoops(index, opaque, 0);
    if (opaque) {  // a gather: where it lands depends on data
      for (size_t l = 0; l < depth; ++l) access.unknown[l] = mentioned_[l];
      access.laneStride = 1;
      return access;
    }
    // Before flattening an access has one index per dimension: fold them row-major.
    rowStrides_.assign(indices.size(), 1.0);
    const std::vector<Expr>& shape = buffer.shape();
    for (size_t d = indices.size(); d-- > 1;)
      rowStrides_[d - 1] = rowStrides_[d] * (d < shape.size() ? std::max<int64_t>(1, upperBound(shape[d], 1)) : 1);

    access.offset = flatIndex(indices, 0);
    if (lanes > 1) {
      access.laneStride = medianStep(lanes, [&](double lane) { return flatIndex(indices, lane); });
    }
    for (size_t l = 0; l < depth; ++l) {
      const double extent = loops_[l].extent;
      if (!mentioned_[l] || extent <= 1) continue;
      const double first = firstPoint_[l];
      auto indexAtValue = [&](double step) { return indexAt(indices, l, first + step); };
      double& coefficient = access.coefficients[l];
      coefficient = medianStep(extent, indexAtValue);
      // A step that moves nothing locally (i // 8) still moves the access over the loop.
      if (coefficient == 0) coefficient = (indexAtValue(extent - 1) - indexAtValue(0)) / (extent - 1);
      if (!std::isfinite(coefficient)) {
        coefficient = 0;
        access.unknown[l] = true;
      }
    }
    if (!std::isfinite(access.offset)) access.offset = 0;
    if (!std::isfinite(access.laneStride)) access.laneStride = 1;
    return access;
  }

  // The step of index(x + 1) - index(x) at a quarter, half and three quarters of [0, count):
  // the median ignores where a floormod wraps around or a floordiv jumps at one of them.
  template <class F>
  double medianStep(double count, F index) const {
    if (affine_) return index(1) - index(0);  // the same step everywhere
    double steps[3];
    for (int i = 0; i < 3; ++i) {
      double x = std::floor((count - 1) * (i + 1) / 4);
      steps[i] = index(x + 1) - index(x);
      if (!std::isfinite(steps[i])) return steps[i];
    }
    std::sort(steps, steps + 3);
    return steps[1];
  }

  // The flat index with loop `level` at `value` instead of its sample point.
  double indexAt(const std::vector<Expr>& indices, size_t level, double value) {
    double saved = point_[level];
    point_[level] = value;
    double index = flatIndex(indices, 0);
    point_[level] = saved;
    return index;
  }

  double flatIndex(const std::vector<Expr>& indices, double lane) {
    double flat = 0;
    for (size_t d = 0; d < indices.size(); ++d) flat += evaluate(indices[d], lane, 0) * rowStrides_[d];
    return flat;
  }

  // Marks the loops `e` mentions (through lets) in mentioned_; opaque when it loads.
  void collectLoops(const Expr& e, bool& opaque, int letDepth) {
    postOrderVisit(e, [&](const Expr& sub) {
      switch (sub->kind()) {
        case NodeKind::BufferLoad: opaque = true; break;
        case NodeKind::Add: case NodeKind::Sub: case NodeKind::Mul: case NodeKind::Var: case NodeKind::IntImm:
        case NodeKind::Ramp: case NodeKind::Broadcast: case NodeKind::Cast: break;
        default: affine_ = false;
      }
      auto* var = sub.as<VarNode>();
      if (!var) return;
      if (int level = levelOf(var); level >= 0) {
        mentioned_[level] = true;
      } else if (auto let = lets_.find(var); let != lets_.end() && letDepth < kMaxLetDepth) {
        collectLoops(let->second, opaque, letDepth + 1);
      }
    });
  }

  // The value of an index expression at the sample point and `lane`; NaN where unknown
  // (a load, a division by zero).
  double evaluate(const Expr& e, double lane, int letDepth) {
    constexpr double unknown = std::numeric_limits<double>::quiet_NaN();
    if (const int64_t* value = asConstInt(e)) return static_cast<double>(*value);
    if (auto [a, b] = binaryOperands(e); a) {
      double x = evaluate(*a, lane, letDepth), y = evaluate(*b, lane, letDepth);
      const bool integral = a->dtype().isIntegral();
      switch (e->kind()) {
        case NodeKind::Add: return x + y;
        case NodeKind::Sub: return x - y;
        case NodeKind::Mul: return x * y;
        case NodeKind::Div: return y == 0 ? unknown : integral ? std::trunc(x / y) : x / y;
        case NodeKind::Mod: return y == 0 ? unknown : std::fmod(x, y);
        case NodeKind::FloorDiv: return y == 0 ? unknown : std::floor(x / y);
        case NodeKind::FloorMod: return y == 0 ? unknown : x - y * std::floor(x / y);
        case NodeKind::Min: return std::min(x, y);
        case NodeKind::Max: return std::max(x, y);
        case NodeKind::EQ: return x == y;
        case NodeKind::NE: return x != y;
        case NodeKind::LT: return x < y;
        case NodeKind::LE: return x <= y;
        case NodeKind::GT: return x > y;
        case NodeKind::GE: return x >= y;
        case NodeKind::And: return x != 0 && y != 0;
        case NodeKind::Or: return x != 0 || y != 0;
        default: return unknown;
      }
    }
    switch (e->kind()) {
      case NodeKind::FloatImm: return e.as<FloatImmNode>()->value;
      case NodeKind::Var: {
        auto* var = e.as<VarNode>();
        if (int level = levelOf(var); level >= 0) return point_[level];
        if (auto let = lets_.find(var); let != lets_.end())
          return letDepth < kMaxLetDepth ? evaluate(let->second, lane, letDepth + 1) : unknown;
        return 0;  // a free variable (a symbolic shape) is the same everywhere
      }
      case NodeKind::Not: return evaluate(e.as<NotNode>()->a, lane, letDepth) == 0;
      case NodeKind::Select: {
        auto* node = e.as<SelectNode>();
        double condition = evaluate(node->condition, lane, letDepth);
        if (std::isnan(condition)) return unknown;
        return evaluate(condition != 0 ? node->trueValue : node->falseValue, lane, letDepth);
      }
      case NodeKind::Cast: {
        double value = evaluate(e.as<CastNode>()->value, lane, letDepth);
        return e.dtype().isIntegral() ? std::trunc(value) : value;
      }
      case NodeKind::Ramp: {
        auto* node = e.as<RampNode>();
        return evaluate(node->base, lane, letDepth) + lane * evaluate(node->stride, lane, letDepth);
      }
      case NodeKind::Broadcast: return evaluate(e.as<BroadcastNode>()->value, lane, letDepth);
      case NodeKind::Call:  // likely(c) is c; other calls do not appear in indices
        if (auto* call = e.as<CallNode>(); call->op == Intrinsic::Likely && call->args.size() == 1)
          return evaluate(call->args[0], lane, letDepth);
        return unknown;
      case NodeKind::Let: {
        auto* node = e.as<LetNode>();
        lets_[node->var.get()] = node->value;
        double value = evaluate(node->body, lane, letDepth);
        lets_.erase(node->var.get());
        return value;
      }
      default: return unknown;
    }
  }

  // The loop level of `var`, innermost first (nests are shallow: faster than hashing), or -1.
  int levelOf(const VarNode* var) const {
    for (size_t l = loops_.size(); l-- > 0;)
      if (loops_[l].var == var) return static_cast<int>(l);
    return -1;
  }

  // ---- Integer bounds of extents and shapes

  // The largest value `e` can take in the current loop context, or `fallback` when unbounded.
  int64_t upperBound(const Expr& e, int64_t fallback) {
    if (const int64_t* value = asConstInt(e)) return *value;
    ConstIntBound bound = boundOf(e, 0);
    return bound.max == ConstIntBound::kPosInf ? fallback : bound.max;
  }

  ConstIntBound boundOf(const Expr& e, int letDepth) {
    if (const int64_t* value = asConstInt(e)) return ConstIntBound::point(*value);
    if (!e.dtype().isIntegral()) return ConstIntBound::everything();
    auto binary = [&](auto* node, ConstIntBound (*combine)(const ConstIntBound&, const ConstIntBound&)) {
      return combine(boundOf(node->a, letDepth), boundOf(node->b, letDepth));
    };
    switch (e->kind()) {
      case NodeKind::Var: {
        auto* var = e.as<VarNode>();
        if (int level = levelOf(var); level >= 0) return loopBounds_[level];
        if (auto let = lets_.find(var); let != lets_.end() && letDepth < kMaxLetDepth)
          return boundOf(let->second, letDepth + 1);
        return ConstIntBound::everything();
      }
      case NodeKind::Add: return binary(e.as<AddNode>(), boundAdd);
      case NodeKind::Sub: return binary(e.as<SubNode>(), boundSub);
      case NodeKind::Mul: return binary(e.as<MulNode>(), boundMul);
      case NodeKind::Div: return binary(e.as<DivNode>(), boundTruncDiv);
      case NodeKind::Mod: return binary(e.as<ModNode>(), boundTruncMod);
      case NodeKind::FloorDiv: return binary(e.as<FloorDivNode>(), boundFloorDiv);
      case NodeKind::FloorMod: return binary(e.as<FloorModNode>(), boundFloorMod);
      case NodeKind::Min: return binary(e.as<MinNode>(), boundMin);
      case NodeKind::Max: return binary(e.as<MaxNode>(), boundMax);
      case NodeKind::Cast: return boundOf(e.as<CastNode>()->value, letDepth);
      case NodeKind::Select: {
        auto* node = e.as<SelectNode>();
        return boundUnion(boundOf(node->trueValue, letDepth), boundOf(node->falseValue, letDepth));
      }
      default: return ConstIntBound::everything();
    }
  }

  LoopNestFacts facts_;
  std::vector<LoopLevel> loops_;
  std::vector<ConstIntBound> loopBounds_;
  std::vector<double> point_, firstPoint_;  // per loop: sample and first value of its variable
  std::vector<bool> mentioned_;             // scratch of makeAccess
  bool affine_ = true;                      // scratch of makeAccess: only + - * in the index
  std::vector<double> rowStrides_;          // scratch of makeAccess
  std::unordered_map<const VarNode*, Expr> lets_;    // lookups only
  std::vector<std::vector<size_t>> contextGroups_;   // per loop body: its groups' indices
  StoreGroup* group_ = nullptr;
  int guardDepth_ = 0;
};

}  // namespace

LoopNestFacts analyzeLoopNest(const PrimFunc& func) {
  if (!func.defined()) return {};
  return LoopNestWalker().run(func->body);
}

}  // namespace tessel::features
