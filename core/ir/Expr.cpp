// Node constructors (with their validity checks) and expression builders.
#include <cmath>
#include <limits>

#include "core/ir/IROperators.h"
#include "core/support/Error.h"

namespace tessel {

const char* nodeKindName(NodeKind kind) {
  switch (kind) {
#define TESSEL_NODE_NAME(Name) \
  case NodeKind::Name: return #Name;
    TESSEL_EXPR_NODES(TESSEL_NODE_NAME)
    TESSEL_STMT_NODES(TESSEL_NODE_NAME)
#undef TESSEL_NODE_NAME
    case NodeKind::Buffer: return "Buffer";
    case NodeKind::IterVar: return "IterVar";
    case NodeKind::PrimFunc: return "PrimFunc";
    case NodeKind::Other: return "Other";
  }
  return "?";
}

const char* intrinsicName(Intrinsic op) {
  switch (op) {
#define TESSEL_INTRINSIC_NAME(Name, text) \
  case Intrinsic::Name: return text;
    TESSEL_INTRINSICS(TESSEL_INTRINSIC_NAME)
#undef TESSEL_INTRINSIC_NAME
  }
  return "?";
}

size_t intrinsicArity(Intrinsic op) {
  switch (op) {
    case Intrinsic::Pow:
    case Intrinsic::BitwiseAnd:
    case Intrinsic::BitwiseOr:
    case Intrinsic::BitwiseXor:
    case Intrinsic::ShiftLeft:
    case Intrinsic::ShiftRight: return 2;
    case Intrinsic::Fma:
    case Intrinsic::DotU8I8:
    case Intrinsic::DotBF16: return 3;
    default: return 1;
  }
}

bool isBitwiseIntrinsic(Intrinsic op) {
  switch (op) {
    case Intrinsic::BitwiseAnd:
    case Intrinsic::BitwiseOr:
    case Intrinsic::BitwiseXor:
    case Intrinsic::BitwiseNot:
    case Intrinsic::ShiftLeft:
    case Intrinsic::ShiftRight: return true;
    default: return false;
  }
}

bool parseIntrinsic(const std::string& name, Intrinsic* out) {
#define TESSEL_INTRINSIC_PARSE(Name, text) \
  if (name == text) {                      \
    *out = Intrinsic::Name;                \
    return true;                           \
  }
  TESSEL_INTRINSICS(TESSEL_INTRINSIC_PARSE)
#undef TESSEL_INTRINSIC_PARSE
  return false;
}

const char* reducerName(Reducer reducer) {
  switch (reducer) {
    case Reducer::Sum: return "sum";
    case Reducer::Max: return "max";
    case Reducer::Min: return "min";
    case Reducer::Product: return "prod";
  }
  return "?";
}

Expr reducerIdentity(Reducer reducer, DataType dtype) {
  switch (reducer) {
    case Reducer::Sum: return makeZero(dtype);
    case Reducer::Product: return makeConst(dtype, 1);
    case Reducer::Max: return minValue(dtype);
    case Reducer::Min: return maxValue(dtype);
  }
  return Expr();
}

Expr reducerCombine(Reducer reducer, Expr accumulated, Expr value) {
  switch (reducer) {
    case Reducer::Sum: return accumulated + value;
    case Reducer::Product: return accumulated * value;
    case Reducer::Max: return max(accumulated, value);
    case Reducer::Min: return min(accumulated, value);
  }
  return Expr();
}

// --- handles -------------------------------------------------------------------------

Expr::Expr(int value) : Expr(IntImmNode::make(DataType::index(), value)) {}
Expr::Expr(int64_t value) : Expr(IntImmNode::make(DataType::index(), value)) {}
Expr::Expr(float value) : Expr(FloatImmNode::make(DataType::float32(), value)) {}
Expr::Expr(double value) : Expr(FloatImmNode::make(DataType::float64(), value)) {}

Var::Var(std::string name, DataType dtype) : Expr(new VarNode(dtype, std::move(name))) {}

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope,
               std::vector<Expr> strides)
    : NodeHandle(new BufferNode(name, Var(name, DataType::handle()), dtype, std::move(shape),
                                std::move(strides), std::move(scope))) {
  TESSEL_ICHECK(get()->strides.empty() || get()->strides.size() == get()->shape.size())
      << "buffer " << name << ": strides must match shape";
}

IterVar::IterVar(Var var, Range dom, IterVarType type)
    : NodeHandle(new IterVarNode(std::move(var), std::move(dom), type)) {}

const int64_t* asConstInt(const Expr& e) {
  if (auto* imm = e.as<IntImmNode>()) return &imm->value;
  if (auto* broadcast = e.as<BroadcastNode>()) return asConstInt(broadcast->value);
  return nullptr;
}

bool isConstInt(const Expr& e, int64_t value) {
  const int64_t* v = asConstInt(e);
  return v && *v == value;
}

// --- node constructors -----------------------------------------------------------------

Expr IntImmNode::make(DataType dtype, int64_t value) {
  TESSEL_ICHECK(dtype.isScalar() && (dtype.isIntegral() || dtype.isBool()))
      << "IntImm of type " << dtype.toString();
  return Expr(new IntImmNode(dtype, value));
}

Expr FloatImmNode::make(DataType dtype, double value) {
  TESSEL_ICHECK(dtype.isScalar() && dtype.isFloat()) << "FloatImm of type " << dtype.toString();
  return Expr(new FloatImmNode(dtype, value));
}

namespace {
void checkSameType(const Expr& a, const Expr& b, const char* what) {
  TESSEL_ICHECK(a.defined() && b.defined()) << what << " of an undefined operand";
  TESSEL_ICHECK(a.dtype() == b.dtype())
      << what << " of mismatched types " << a.dtype().toString() << " and " << b.dtype().toString();
}
template <class T>
Expr makeArithmetic(Expr a, Expr b, const char* what) {
  checkSameType(a, b, what);
  DataType dtype = a.dtype();
  return Expr(new T(dtype, std::move(a), std::move(b)));
}
template <class T>
Expr makeComparison(Expr a, Expr b, const char* what) {
  checkSameType(a, b, what);
  DataType dtype = DataType::boolean(a.dtype().lanes());
  return Expr(new T(dtype, std::move(a), std::move(b)));
}
template <class T>
Expr makeLogical(Expr a, Expr b, const char* what) {
  checkSameType(a, b, what);
  TESSEL_ICHECK(a.dtype().isBool()) << what << " of non-bool " << a.dtype().toString();
  DataType dtype = a.dtype();
  return Expr(new T(dtype, std::move(a), std::move(b)));
}
}  // namespace

Expr AddNode::make(Expr a, Expr b) { return makeArithmetic<AddNode>(a, b, "add"); }
Expr SubNode::make(Expr a, Expr b) { return makeArithmetic<SubNode>(a, b, "sub"); }
Expr MulNode::make(Expr a, Expr b) { return makeArithmetic<MulNode>(a, b, "mul"); }
Expr DivNode::make(Expr a, Expr b) { return makeArithmetic<DivNode>(a, b, "div"); }
Expr ModNode::make(Expr a, Expr b) { return makeArithmetic<ModNode>(a, b, "mod"); }
Expr FloorDivNode::make(Expr a, Expr b) { return makeArithmetic<FloorDivNode>(a, b, "floordiv"); }
Expr FloorModNode::make(Expr a, Expr b) { return makeArithmetic<FloorModNode>(a, b, "floormod"); }
Expr MinNode::make(Expr a, Expr b) { return makeArithmetic<MinNode>(a, b, "min"); }
Expr MaxNode::make(Expr a, Expr b) { return makeArithmetic<MaxNode>(a, b, "max"); }
Expr EQNode::make(Expr a, Expr b) { return makeComparison<EQNode>(a, b, "=="); }
Expr NENode::make(Expr a, Expr b) { return makeComparison<NENode>(a, b, "!="); }
Expr LTNode::make(Expr a, Expr b) { return makeComparison<LTNode>(a, b, "<"); }
Expr LENode::make(Expr a, Expr b) { return makeComparison<LENode>(a, b, "<="); }
Expr GTNode::make(Expr a, Expr b) { return makeComparison<GTNode>(a, b, ">"); }
Expr GENode::make(Expr a, Expr b) { return makeComparison<GENode>(a, b, ">="); }
Expr AndNode::make(Expr a, Expr b) { return makeLogical<AndNode>(a, b, "&&"); }
Expr OrNode::make(Expr a, Expr b) { return makeLogical<OrNode>(a, b, "||"); }

Expr NotNode::make(Expr a) {
  TESSEL_ICHECK(a.defined() && a.dtype().isBool()) << "! of non-bool";
  DataType dtype = a.dtype();
  return Expr(new NotNode(dtype, std::move(a)));
}

Expr SelectNode::make(Expr condition, Expr trueValue, Expr falseValue) {
  checkSameType(trueValue, falseValue, "select");
  TESSEL_ICHECK(condition.defined() && condition.dtype().isBool()) << "select condition must be bool";
  TESSEL_ICHECK(condition.dtype().lanes() == 1 || condition.dtype().lanes() == trueValue.dtype().lanes())
      << "select condition lanes";
  DataType dtype = trueValue.dtype();
  return Expr(new SelectNode(dtype, std::move(condition), std::move(trueValue), std::move(falseValue)));
}

Expr CastNode::make(DataType dtype, Expr value) {
  TESSEL_ICHECK(value.defined()) << "cast of undefined";
  TESSEL_ICHECK(dtype.lanes() == value.dtype().lanes())
      << "cast from " << value.dtype().toString() << " to " << dtype.toString() << " changes lanes";
  return Expr(new CastNode(dtype, std::move(value)));
}

Expr CallNode::make(DataType dtype, Intrinsic op, std::vector<Expr> args) {
  for (auto& arg : args) TESSEL_ICHECK(arg.defined()) << intrinsicName(op) << " of undefined";
  return Expr(new CallNode(dtype, op, std::move(args)));
}

Expr BufferLoadNode::make(Buffer buffer, std::vector<Expr> indices) {
  TESSEL_ICHECK(buffer.defined()) << "load from undefined buffer";
  int lanes = 1;
  for (auto& index : indices) {
    TESSEL_ICHECK(index.defined() && index.dtype().isIntegral())
        << "load " << buffer.name() << ": index must be an integer";
    lanes = std::max(lanes, index.dtype().lanes());
  }
  DataType dtype = buffer.dtype().withLanes(lanes * buffer.dtype().lanes());
  return Expr(new BufferLoadNode(dtype, std::move(buffer), std::move(indices)));
}

Expr RampNode::make(Expr base, Expr stride, int lanes) {
  checkSameType(base, stride, "ramp");
  TESSEL_ICHECK(base.dtype().isScalar() && lanes > 1) << "ramp needs scalar base and lanes > 1";
  DataType dtype = base.dtype().withLanes(lanes);
  return Expr(new RampNode(dtype, std::move(base), std::move(stride), lanes));
}

Expr BroadcastNode::make(Expr value, int lanes) {
  TESSEL_ICHECK(value.defined() && value.dtype().isScalar() && lanes > 1) << "broadcast of non-scalar";
  DataType dtype = value.dtype().withLanes(lanes);
  return Expr(new BroadcastNode(dtype, std::move(value), lanes));
}

Expr LetNode::make(Var var, Expr value, Expr body) {
  checkSameType(var, value, "let");
  DataType dtype = body.dtype();
  return Expr(new LetNode(dtype, std::move(var), std::move(value), std::move(body)));
}

Expr ReduceNode::make(Reducer reducer, Expr source, std::vector<IterVar> axes, Expr condition) {
  TESSEL_ICHECK(source.defined()) << "reduce of undefined";
  for (auto& axis : axes) TESSEL_ICHECK(axis.type() == IterVarType::Reduce) << "reduce over a non-reduce axis";
  if (!condition.defined()) condition = IntImmNode::make(DataType::boolean(), 1);
  DataType dtype = source.dtype();
  return Expr(new ReduceNode(dtype, reducer, std::move(source), std::move(axes), std::move(condition)));
}

// --- builders ---------------------------------------------------------------------------

Expr makeConst(DataType dtype, double value) {
  Expr scalar;
  DataType element = dtype.element();
  if (element.isFloat()) scalar = FloatImmNode::make(element, value);
  else if (element.isBool()) scalar = IntImmNode::make(element, value != 0);
  else scalar = IntImmNode::make(element, static_cast<int64_t>(value));
  return dtype.lanes() > 1 ? BroadcastNode::make(scalar, dtype.lanes()) : scalar;
}

Expr makeZero(DataType dtype) { return makeConst(dtype, 0); }

Expr maxValue(DataType dtype) {
  DataType e = dtype.element();
  Expr scalar;
  if (e.isFloat()) {
    double v = e.bits() == 64 ? std::numeric_limits<double>::max()
               : e.bits() == 32 ? double(std::numeric_limits<float>::max())
               : e.code() == DataType::Code::BFloat ? 3.38953139e38 : 65504.0;
    scalar = FloatImmNode::make(e, v);
  } else if (e.isInt()) {
    scalar = IntImmNode::make(e, e.bits() == 64 ? std::numeric_limits<int64_t>::max()
                                               : (int64_t(1) << (e.bits() - 1)) - 1);
  } else if (e.isUInt()) {
    scalar = IntImmNode::make(e, e.bits() == 64 ? -1 : (int64_t(1) << e.bits()) - 1);
  } else {
    scalar = IntImmNode::make(e, 1);
  }
  return dtype.lanes() > 1 ? BroadcastNode::make(scalar, dtype.lanes()) : scalar;
}

Expr minValue(DataType dtype) {
  DataType e = dtype.element();
  Expr scalar;
  if (e.isFloat()) {
    Expr top = maxValue(e);  // kept alive: the node pointer below must not outlive it
    scalar = FloatImmNode::make(e, -top.as<FloatImmNode>()->value);
  } else if (e.isInt()) {
    scalar = IntImmNode::make(e, e.bits() == 64 ? std::numeric_limits<int64_t>::min()
                                               : -(int64_t(1) << (e.bits() - 1)));
  } else {
    scalar = IntImmNode::make(e, 0);
  }
  return dtype.lanes() > 1 ? BroadcastNode::make(scalar, dtype.lanes()) : scalar;
}

namespace {
bool isImmediate(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }
double immediateValue(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) return double(i->value);
  return e.as<FloatImmNode>()->value;
}
Expr convertImmediate(const Expr& imm, DataType to) {
  if (auto* i = imm.as<IntImmNode>(); i && to.element().isIntegral()) {
    Expr scalar = IntImmNode::make(to.element(), i->value);
    return to.lanes() > 1 ? BroadcastNode::make(scalar, to.lanes()) : scalar;
  }
  return makeConst(to, immediateValue(imm));
}
}  // namespace

void matchTypes(Expr& a, Expr& b) {
  TESSEL_ICHECK(a.defined() && b.defined()) << "operation on an undefined expression";
  if (a.dtype() == b.dtype()) return;
  // An immediate adopts the other operand's type.
  if (isImmediate(b) && !isImmediate(a)) { b = convertImmediate(b, a.dtype()); return; }
  if (isImmediate(a) && !isImmediate(b)) { a = convertImmediate(a, b.dtype()); return; }
  // Scalar meets vector: broadcast.
  if (a.dtype().lanes() == 1 && b.dtype().lanes() > 1) a = BroadcastNode::make(a, b.dtype().lanes());
  if (b.dtype().lanes() == 1 && a.dtype().lanes() > 1) b = BroadcastNode::make(b, a.dtype().lanes());
  if (a.dtype() == b.dtype()) return;
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta.isFloat() && !tb.isFloat()) { b = CastNode::make(ta, b); return; }
  if (tb.isFloat() && !ta.isFloat()) { a = CastNode::make(tb, a); return; }
  // Same class, different widths: widen the narrower.
  if (ta.bits() < tb.bits()) a = CastNode::make(tb.withLanes(ta.lanes()), a);
  else b = CastNode::make(ta.withLanes(tb.lanes()), b);
  TESSEL_ICHECK(a.dtype() == b.dtype())
      << "cannot match types " << ta.toString() << " and " << tb.toString();
}

Expr operator+(Expr a, Expr b) { matchTypes(a, b); return AddNode::make(a, b); }
Expr operator-(Expr a, Expr b) { matchTypes(a, b); return SubNode::make(a, b); }
Expr operator*(Expr a, Expr b) { matchTypes(a, b); return MulNode::make(a, b); }
Expr operator/(Expr a, Expr b) {
  matchTypes(a, b);
  return a.dtype().isFloat() ? DivNode::make(a, b) : FloorDivNode::make(a, b);
}
Expr operator%(Expr a, Expr b) { matchTypes(a, b); return FloorModNode::make(a, b); }
Expr operator-(Expr a) { return makeZero(a.dtype()) - a; }
Expr operator<(Expr a, Expr b) { matchTypes(a, b); return LTNode::make(a, b); }
Expr operator<=(Expr a, Expr b) { matchTypes(a, b); return LENode::make(a, b); }
Expr operator>(Expr a, Expr b) { matchTypes(a, b); return GTNode::make(a, b); }
Expr operator>=(Expr a, Expr b) { matchTypes(a, b); return GENode::make(a, b); }
Expr operator&&(Expr a, Expr b) { matchTypes(a, b); return AndNode::make(a, b); }
Expr operator||(Expr a, Expr b) { matchTypes(a, b); return OrNode::make(a, b); }
Expr operator!(Expr a) { return NotNode::make(a); }
Expr eq(Expr a, Expr b) { matchTypes(a, b); return EQNode::make(a, b); }
Expr ne(Expr a, Expr b) { matchTypes(a, b); return NENode::make(a, b); }
Expr min(Expr a, Expr b) { matchTypes(a, b); return MinNode::make(a, b); }
Expr max(Expr a, Expr b) { matchTypes(a, b); return MaxNode::make(a, b); }
Expr floordiv(Expr a, Expr b) { matchTypes(a, b); return FloorDivNode::make(a, b); }
Expr floormod(Expr a, Expr b) { matchTypes(a, b); return FloorModNode::make(a, b); }
Expr truncdiv(Expr a, Expr b) { matchTypes(a, b); return DivNode::make(a, b); }
Expr truncmod(Expr a, Expr b) { matchTypes(a, b); return ModNode::make(a, b); }
Expr select(Expr condition, Expr trueValue, Expr falseValue) {
  matchTypes(trueValue, falseValue);
  return SelectNode::make(condition, trueValue, falseValue);
}
Expr cast(DataType dtype, Expr value) {
  if (value.dtype() == dtype) return value;
  if (isImmediate(value) && dtype.isScalar()) return convertImmediate(value, dtype);
  return CastNode::make(dtype, value);
}
Expr call(Intrinsic op, std::vector<Expr> args) {
  TESSEL_ICHECK(!args.empty()) << intrinsicName(op) << " needs arguments";
  if (args.size() == 2) matchTypes(args[0], args[1]);
  if (args.size() == 3) { matchTypes(args[0], args[1]); matchTypes(args[1], args[2]); matchTypes(args[0], args[1]); }
  DataType dtype = op == Intrinsic::IsNan ? DataType::boolean(args[0].dtype().lanes()) : args[0].dtype();
  return CallNode::make(dtype, op, std::move(args));
}
Expr exp(Expr x) { return call(Intrinsic::Exp, {x}); }
Expr log(Expr x) { return call(Intrinsic::Log, {x}); }
Expr sqrt(Expr x) { return call(Intrinsic::Sqrt, {x}); }
Expr tanh(Expr x) { return call(Intrinsic::Tanh, {x}); }
Expr erf(Expr x) { return call(Intrinsic::Erf, {x}); }
Expr pow(Expr x, Expr y) { return call(Intrinsic::Pow, {x, y}); }
Expr fabs(Expr x) { return call(Intrinsic::Fabs, {x}); }
Expr sigmoid(Expr x) { return call(Intrinsic::Sigmoid, {x}); }
Expr likely(Expr condition) { return call(Intrinsic::Likely, {condition}); }

}  // namespace tessel
