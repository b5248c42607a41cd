// Constant- and ramp-folding builders for index arithmetic (see IndexArithmetic.h).
#include "compiler/transform/IndexArithmetic.h"

#include <algorithm>
#include <limits>

#include "core/ir/IROperators.h"
#include "core/support/Error.h"

namespace tessel {

namespace {

int lanesOf(const Expr& e) { return e.dtype().lanes(); }

const int64_t* scalarConst(const Expr& e) {
  auto* imm = e.as<IntImmNode>();
  return imm ? &imm->value : nullptr;
}

// Folding needs both operands of one integer element type. An immediate adopts the other
// side's type (index code mixes int64 immediates with narrower variables); anything else
// is left to the ordinary builders, which insert casts.
bool alignIntegerTypes(Expr& a, Expr& b) {
  DataType ea = a.dtype().element(), eb = b.dtype().element();
  if (!ea.isIntegral() || !eb.isIntegral()) return false;
  if (ea == eb) return true;
  if (auto* imm = a.as<IntImmNode>()) {
    a = IntImmNode::make(eb, imm->value);
    return true;
  }
  if (auto* imm = b.as<IntImmNode>()) {
    b = IntImmNode::make(ea, imm->value);
    return true;
  }
  return false;
}

// Operands with different vector widths (neither scalar) are a bug in the caller; the
// node constructors report it.
bool compatibleLanes(const Expr& a, const Expr& b) {
  return lanesOf(a) == lanesOf(b) || lanesOf(a) == 1 || lanesOf(b) == 1;
}

// The value every lane holds: the expression itself for a scalar, a broadcast's value;
// undefined for vectors whose lanes differ.
Expr laneInvariantValue(const Expr& e) {
  if (e.dtype().isScalar()) return e;
  if (auto* broadcast = e.as<BroadcastNode>()) return broadcast->value;
  return Expr();
}

bool negatable(int64_t value) { return value < 0 && value != std::numeric_limits<int64_t>::min(); }

}  // namespace

Expr broadcastTo(const Expr& value, int lanes) {
  if (lanesOf(value) == lanes) return value;
  TESSEL_ICHECK(value.dtype().isScalar()) << "cannot widen a " << value.dtype().toString() << " to "
                                          << lanes << " lanes";
  return BroadcastNode::make(value, lanes);
}

Expr addIndex(Expr a, Expr b) {
  if (!alignIntegerTypes(a, b) || !compatibleLanes(a, b)) return a + b;
  int lanes = std::max(lanesOf(a), lanesOf(b));
  const int64_t* ca = scalarConst(a);
  const int64_t* cb = scalarConst(b);
  if (ca && cb) return IntImmNode::make(a.dtype(), *ca + *cb);
  if (isConstInt(a, 0)) return broadcastTo(b, lanes);
  if (isConstInt(b, 0)) return broadcastTo(a, lanes);
  if (ca && !cb) return addIndex(b, a);  // constants go right: 1 + i prints as i + 1
  if (auto* ramp = a.as<RampNode>()) {
    if (Expr offset = laneInvariantValue(b); offset.defined())
      return RampNode::make(addIndex(ramp->base, offset), ramp->stride, ramp->lanes);
    if (auto* other = b.as<RampNode>())
      return RampNode::make(addIndex(ramp->base, other->base), addIndex(ramp->stride, other->stride), lanes);
  }
  if (auto* ramp = b.as<RampNode>()) {
    if (Expr offset = laneInvariantValue(a); offset.defined())
      return RampNode::make(addIndex(offset, ramp->base), ramp->stride, ramp->lanes);
  }
  if (lanes > 1) {
    Expr va = laneInvariantValue(a), vb = laneInvariantValue(b);
    if (va.defined() && vb.defined()) return broadcastTo(addIndex(va, vb), lanes);
  }
  if (cb) {
    if (negatable(*cb)) return subIndex(a, IntImmNode::make(b.dtype(), -*cb));
    // (x + c1) + c2 and (x - c1) + c2 fold their constants.
    if (auto* add = a.as<AddNode>(); add && scalarConst(add->b))
      return addIndex(add->a, IntImmNode::make(b.dtype(), *scalarConst(add->b) + *cb));
    if (auto* sub = a.as<SubNode>(); sub && scalarConst(sub->b))
      return subIndex(sub->a, IntImmNode::make(b.dtype(), *scalarConst(sub->b) - *cb));
  }
  return AddNode::make(broadcastTo(a, lanes), broadcastTo(b, lanes));
}

Expr subIndex(Expr a, Expr b) {
  if (!alignIntegerTypes(a, b) || !compatibleLanes(a, b)) return a - b;
  int lanes = std::max(lanesOf(a), lanesOf(b));
  const int64_t* ca = scalarConst(a);
  const int64_t* cb = scalarConst(b);
  if (ca && cb) return IntImmNode::make(a.dtype(), *ca - *cb);
  if (isConstInt(b, 0)) return broadcastTo(a, lanes);
  if (auto* ramp = a.as<RampNode>()) {
    if (Expr offset = laneInvariantValue(b); offset.defined())
      return RampNode::make(subIndex(ramp->base, offset), ramp->stride, ramp->lanes);
    if (auto* other = b.as<RampNode>())
      return RampNode::make(subIndex(ramp->base, other->base), subIndex(ramp->stride, other->stride), lanes);
  }
  if (lanes > 1) {
    Expr va = laneInvariantValue(a), vb = laneInvariantValue(b);
    if (va.defined() && vb.defined()) return broadcastTo(subIndex(va, vb), lanes);
  }
  if (cb) {
    if (negatable(*cb)) return addIndex(a, IntImmNode::make(b.dtype(), -*cb));
    if (auto* add = a.as<AddNode>(); add && scalarConst(add->b))
      return addIndex(add->a, IntImmNode::make(b.dtype(), *scalarConst(add->b) - *cb));
    if (auto* sub = a.as<SubNode>(); sub && scalarConst(sub->b))
      return subIndex(sub->a, IntImmNode::make(b.dtype(), *scalarConst(sub->b) + *cb));
  }
  return SubNode::make(broadcastTo(a, lanes), broadcastTo(b, lanes));
}

Expr mulIndex(Expr a, Expr b) {
  if (!alignIntegerTypes(a, b) || !compatibleLanes(a, b)) return a * b;
  int lanes = std::max(lanesOf(a), lanesOf(b));
  const int64_t* ca = scalarConst(a);
  const int64_t* cb = scalarConst(b);
  if (ca && cb) return IntImmNode::make(a.dtype(), *ca * *cb);
  if (isConstInt(a, 0) || isConstInt(b, 0)) return makeZero(a.dtype().element().withLanes(lanes));
  if (isConstInt(a, 1)) return broadcastTo(b, lanes);
  if (isConstInt(b, 1)) return broadcastTo(a, lanes);
  if (ca && !cb) return mulIndex(b, a);  // i*32 rather than 32*i
  if (cb) {
    // (x*c1)*c2 folds its constants: i*2*20 becomes i*40.
    if (auto* mul = a.as<MulNode>(); mul && scalarConst(mul->b))
      return mulIndex(mul->a, IntImmNode::make(b.dtype(), *scalarConst(mul->b) * *cb));
  }
  if (auto* ramp = a.as<RampNode>()) {
    if (Expr scale = laneInvariantValue(b); scale.defined())
      return RampNode::make(mulIndex(ramp->base, scale), mulIndex(ramp->stride, scale), ramp->lanes);
  }
  if (auto* ramp = b.as<RampNode>()) {
    if (Expr scale = laneInvariantValue(a); scale.defined())
      return RampNode::make(mulIndex(scale, ramp->base), mulIndex(scale, ramp->stride), ramp->lanes);
  }
  if (lanes > 1) {
    Expr va = laneInvariantValue(a), vb = laneInvariantValue(b);
    if (va.defined() && vb.defined()) return broadcastTo(mulIndex(va, vb), lanes);
  }
  return MulNode::make(broadcastTo(a, lanes), broadcastTo(b, lanes));
}

namespace {

class FoldingSubstituter : public IRMutator {
public:
  explicit FoldingSubstituter(const VarMap& map) : map_(map) {}
  using IRMutator::mutate;

protected:
  using IRMutator::visit;

  Expr visit(const VarNode* node, const Expr& self) override {
    auto it = map_.find(node);
    return it == map_.end() ? self : it->second;
  }
  Expr visit(const AddNode* node, const Expr& self) override { return rebuild(node, self, addIndex); }
  Expr visit(const SubNode* node, const Expr& self) override { return rebuild(node, self, subIndex); }
  Expr visit(const MulNode* node, const Expr& self) override { return rebuild(node, self, mulIndex); }

private:
  template <class NodeT>
  Expr rebuild(const NodeT* node, const Expr& self, Expr (*fold)(Expr, Expr)) {
    Expr a = mutate(node->a), b = mutate(node->b);
    if (a.same(node->a) && b.same(node->b)) return self;
    if (!node->dtype.element().isIntegral()) return NodeT::make(a, b);
    return fold(a, b);
  }

  const VarMap& map_;
};

}  // namespace

Expr substituteAndFold(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return FoldingSubstituter(map).mutate(e);
}

Stmt substituteAndFold(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return FoldingSubstituter(map).mutate(s);
}

}  // namespace tessel
