// Expressions of the loop IR: immediates, variables, arithmetic, loads, vectors, reductions.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "core/ir/DataType.h"
#include "core/ir/Node.h"

namespace tessel {

struct ExprNode;
struct VarNode;
struct BufferNode;
struct IterVarNode;

/// Handle to an immutable expression node.
class Expr : public NodeHandle {
public:
  Expr() = default;
  explicit Expr(const ExprNode* node);
  /// An index-typed (int64) integer immediate.
  Expr(int value);
  Expr(int64_t value);
  /// A float32 immediate.
  Expr(float value);
  /// A float64 immediate.
  Expr(double value);

  const ExprNode* get() const;
  const ExprNode* operator->() const { return get(); }
  DataType dtype() const;
};

/// Handle to a variable. Identity is the node: two Vars named "i" are different variables.
class Var : public Expr {
public:
  Var() = default;
  explicit Var(std::string name, DataType dtype = DataType::index());
  explicit Var(const VarNode* node);
  const VarNode* get() const;
  const VarNode* operator->() const { return get(); }
  const std::string& name() const;
};

/// A half-open interval [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
  static Range fromMinExtent(Expr min, Expr extent) { return {std::move(min), std::move(extent)}; }
  auto fields() const { return std::tie(min, extent); }
};

/// A buffer in memory: element type, logical shape, optional strides (empty means compact
/// row-major) and a storage scope ("global" for arguments and heap memory, "local" for
/// small per-thread scratch that should live in registers).
class Buffer : public NodeHandle {
public:
  Buffer() = default;
  explicit Buffer(const BufferNode* node);
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope = "global",
         std::vector<Expr> strides = {});
  const BufferNode* get() const;
  const BufferNode* operator->() const { return get(); }
  const std::string& name() const;
  DataType dtype() const;
  const std::vector<Expr>& shape() const;
};

enum class IterVarType : uint8_t {
  DataParallel,  ///< An output axis: each iteration writes different elements.
  Reduce,        ///< A reduction axis: iterations accumulate into the same element.
};

/// A loop axis of a tensor expression: a variable with its domain.
class IterVar : public NodeHandle {
public:
  IterVar() = default;
  explicit IterVar(const IterVarNode* node);
  IterVar(Var var, Range dom, IterVarType type);
  const IterVarNode* get() const;
  const IterVarNode* operator->() const { return get(); }
  const Var& var() const;
  const Range& dom() const;
  IterVarType type() const;
  const std::string& name() const;
  /// An iteration variable reads as its variable in expressions (A(i, k) with k a reduce axis).
  operator Var() const { return var(); }
};

// ---------------------------------------------------------------------------------------
// Nodes

struct ExprNode : Node {
  ExprNode(NodeKind kind, DataType dtype) : Node(kind), dtype(dtype) {}
  const DataType dtype;
};

#define TESSEL_DECLARE_NODE(Name) static constexpr NodeKind kKind = NodeKind::Name

struct IntImmNode : ExprNode {
  TESSEL_DECLARE_NODE(IntImm);
  IntImmNode(DataType dtype, int64_t value) : ExprNode(kKind, dtype), value(value) {}
  const int64_t value;
  static Expr make(DataType dtype, int64_t value);
  auto fields() const { return std::tie(dtype, value); }
};

struct FloatImmNode : ExprNode {
  TESSEL_DECLARE_NODE(FloatImm);
  FloatImmNode(DataType dtype, double value) : ExprNode(kKind, dtype), value(value) {}
  const double value;
  static Expr make(DataType dtype, double value);
  auto fields() const { return std::tie(dtype, value); }
};

struct VarNode : ExprNode {
  TESSEL_DECLARE_NODE(Var);
  VarNode(DataType dtype, std::string name) : ExprNode(kKind, dtype), name(std::move(name)) {}
  const std::string name;
  // Variables compare by binding, not by name; see StructuralEqual.
  auto fields() const { return std::tie(dtype); }
};

/// Shared shape of all two-operand expressions.
template <NodeKind K>
struct BinaryNode : ExprNode {
  static constexpr NodeKind kKind = K;
  BinaryNode(DataType dtype, Expr a, Expr b) : ExprNode(K, dtype), a(std::move(a)), b(std::move(b)) {}
  const Expr a, b;
  auto fields() const { return std::tie(dtype, a, b); }
};

/// a + b, a - b, a * b.
struct AddNode : BinaryNode<NodeKind::Add> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct SubNode : BinaryNode<NodeKind::Sub> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct MulNode : BinaryNode<NodeKind::Mul> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
/// Division rounding toward zero (C semantics) for integers; ordinary division for floats.
struct DivNode : BinaryNode<NodeKind::Div> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
/// Remainder with the sign of the dividend (C semantics).
struct ModNode : BinaryNode<NodeKind::Mod> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
/// Integer division rounding toward negative infinity (what loop splitting produces).
struct FloorDivNode : BinaryNode<NodeKind::FloorDiv> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
/// Remainder with the sign of the divisor: a - floordiv(a, b) * b.
struct FloorModNode : BinaryNode<NodeKind::FloorMod> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct MinNode : BinaryNode<NodeKind::Min> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct MaxNode : BinaryNode<NodeKind::Max> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
/// Comparisons produce bool (with the lanes of their operands).
struct EQNode : BinaryNode<NodeKind::EQ> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct NENode : BinaryNode<NodeKind::NE> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct LTNode : BinaryNode<NodeKind::LT> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct LENode : BinaryNode<NodeKind::LE> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct GTNode : BinaryNode<NodeKind::GT> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct GENode : BinaryNode<NodeKind::GE> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
/// Logical and/or of bools.
struct AndNode : BinaryNode<NodeKind::And> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };
struct OrNode : BinaryNode<NodeKind::Or> { using BinaryNode::BinaryNode; static Expr make(Expr a, Expr b); };

struct NotNode : ExprNode {
  TESSEL_DECLARE_NODE(Not);
  NotNode(DataType dtype, Expr a) : ExprNode(kKind, dtype), a(std::move(a)) {}
  const Expr a;
  static Expr make(Expr a);
  auto fields() const { return std::tie(dtype, a); }
};

/// condition ? trueValue : falseValue, evaluating both sides (no short circuit).
struct SelectNode : ExprNode {
  TESSEL_DECLARE_NODE(Select);
  SelectNode(DataType dtype, Expr condition, Expr trueValue, Expr falseValue)
      : ExprNode(kKind, dtype), condition(std::move(condition)), trueValue(std::move(trueValue)),
        falseValue(std::move(falseValue)) {}
  const Expr condition, trueValue, falseValue;
  static Expr make(Expr condition, Expr trueValue, Expr falseValue);
  auto fields() const { return std::tie(dtype, condition, trueValue, falseValue); }
};

struct CastNode : ExprNode {
  TESSEL_DECLARE_NODE(Cast);
  CastNode(DataType dtype, Expr value) : ExprNode(kKind, dtype), value(std::move(value)) {}
  const Expr value;
  static Expr make(DataType dtype, Expr value);
  auto fields() const { return std::tie(dtype, value); }
};

/// Pure intrinsic functions known to every backend.
#define TESSEL_INTRINSICS(X)                                                              \
  X(Exp, "exp") X(Log, "log") X(Sqrt, "sqrt") X(Rsqrt, "rsqrt") X(Tanh, "tanh")           \
  X(Erf, "erf") X(Pow, "pow") X(Fabs, "fabs") X(Floor, "floor") X(Ceil, "ceil")           \
  X(Round, "round") X(Trunc, "trunc") X(Sin, "sin") X(Cos, "cos") X(Sigmoid, "sigmoid")    \
  X(Fma, "fma") X(IsNan, "isnan")                                                          \
  /* Less common elementwise math (ONNX Tan, Asin, ...); backends may call the C library. */ \
  X(Tan, "tan") X(Asin, "asin") X(Acos, "acos") X(Atan, "atan") X(Sinh, "sinh")           \
  X(Cosh, "cosh") X(Asinh, "asinh") X(Acosh, "acosh") X(Atanh, "atanh")                   \
  /* likely(cond): a branch hint; loop partitioning splits loops where it is true. */     \
  X(Likely, "likely")                                                                      \
  /* reinterpret(x): x's bits as the call's type (same total width), e.g. uint8x4 as int32. */ \
  X(Reinterpret, "reinterpret")                                                            \
  /* dot_u8i8(acc, a, b), all int32 x N: lane i += the sum over its four bytes j of          \
     uint8(a.byte[i][j]) * int8(b.byte[i][j]), wrapping; what x86's vpdpbusd computes.       \
     Only tensorize writes it (see compiler/schedule/TensorIntrinsic.h). */                 \
  X(DotU8I8, "dot_u8i8")                                                                   \
  /* dot_bf16(acc, a, b), acc float32 x N, a and b int32 x N: lane i += the sum over its two \
     bfloat16 halves j of a.half[i][j] * b.half[i][j], the upper half first; what x86's      \
     vdpbf16ps computes. Only tensorize writes it. */                                        \
  X(DotBF16, "dot_bf16")                                                                   \
  /* Bitwise operations on integers and bools (ONNX BitwiseAnd/Or/Xor/Not, BitShift), all   \
     operands of one type. shift_right is logical for unsigned types, arithmetic for        \
     signed ones; a shift by the type's width or more gives 0 (the sign, for a signed        \
     shift_right) instead of C's undefined behaviour. */                                     \
  X(BitwiseAnd, "bitwise_and") X(BitwiseOr, "bitwise_or") X(BitwiseXor, "bitwise_xor")     \
  X(BitwiseNot, "bitwise_not") X(ShiftLeft, "shift_left") X(ShiftRight, "shift_right")

enum class Intrinsic : uint8_t {
#define TESSEL_INTRINSIC_ENUM(Name, text) Name,
  TESSEL_INTRINSICS(TESSEL_INTRINSIC_ENUM)
#undef TESSEL_INTRINSIC_ENUM
};
const char* intrinsicName(Intrinsic op);
/// How many arguments `op` takes (pow 2, fma 3, ...).
size_t intrinsicArity(Intrinsic op);
/// bitwise_and/or/xor/not and the shifts: integer (or bool) operations, not math.
bool isBitwiseIntrinsic(Intrinsic op);
/// The intrinsic spelled `name` ("exp"), if any.
bool parseIntrinsic(const std::string& name, Intrinsic* out);

struct CallNode : ExprNode {
  TESSEL_DECLARE_NODE(Call);
  CallNode(DataType dtype, Intrinsic op, std::vector<Expr> args)
      : ExprNode(kKind, dtype), op(op), args(std::move(args)) {}
  const Intrinsic op;
  const std::vector<Expr> args;
  static Expr make(DataType dtype, Intrinsic op, std::vector<Expr> args);
  auto fields() const { return std::tie(dtype, op, args); }
};

/// buffer[indices...]. Before storage flattening, one index per dimension; after, one
/// flat element index. A Ramp index loads a vector.
struct BufferLoadNode : ExprNode {
  TESSEL_DECLARE_NODE(BufferLoad);
  BufferLoadNode(DataType dtype, Buffer buffer, std::vector<Expr> indices)
      : ExprNode(kKind, dtype), buffer(std::move(buffer)), indices(std::move(indices)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
  static Expr make(Buffer buffer, std::vector<Expr> indices);
  auto fields() const { return std::tie(dtype, buffer, indices); }
};

/// The vector (base, base + stride, ..., base + (lanes - 1) * stride).
struct RampNode : ExprNode {
  TESSEL_DECLARE_NODE(Ramp);
  RampNode(DataType dtype, Expr base, Expr stride, int lanes)
      : ExprNode(kKind, dtype), base(std::move(base)), stride(std::move(stride)), lanes(lanes) {}
  const Expr base, stride;
  const int lanes;
  static Expr make(Expr base, Expr stride, int lanes);
  auto fields() const { return std::tie(dtype, base, stride, lanes); }
};

/// A scalar repeated in every lane.
struct BroadcastNode : ExprNode {
  TESSEL_DECLARE_NODE(Broadcast);
  BroadcastNode(DataType dtype, Expr value, int lanes)
      : ExprNode(kKind, dtype), value(std::move(value)), lanes(lanes) {}
  const Expr value;
  const int lanes;
  static Expr make(Expr value, int lanes);
  auto fields() const { return std::tie(dtype, value, lanes); }
};

/// let var = value in body.
struct LetNode : ExprNode {
  TESSEL_DECLARE_NODE(Let);
  LetNode(DataType dtype, Var var, Expr value, Expr body)
      : ExprNode(kKind, dtype), var(std::move(var)), value(std::move(value)), body(std::move(body)) {}
  const Var var;
  const Expr value, body;
  static Expr make(Var var, Expr value, Expr body);
  auto fields() const { return std::tie(dtype, var, value, body); }
};

enum class Reducer : uint8_t { Sum, Max, Min, Product };
const char* reducerName(Reducer reducer);
/// The identity element of a reducer for a type (0 for sum, lowest value for max, ...).
Expr reducerIdentity(Reducer reducer, DataType dtype);
/// combine(accumulated, value) for a reducer.
Expr reducerCombine(Reducer reducer, Expr accumulated, Expr value);

/// A reduction of `source` over `axes` (only inside tensor-expression bodies; lowering
/// turns it into an init statement and an update loop).
struct ReduceNode : ExprNode {
  TESSEL_DECLARE_NODE(Reduce);
  ReduceNode(DataType dtype, Reducer reducer, Expr source, std::vector<IterVar> axes, Expr condition)
      : ExprNode(kKind, dtype), reducer(reducer), source(std::move(source)), axes(std::move(axes)),
        condition(std::move(condition)) {}
  const Reducer reducer;
  const Expr source;
  const std::vector<IterVar> axes;
  const Expr condition;  ///< Elements where it is false are skipped; true when unused.
  static Expr make(Reducer reducer, Expr source, std::vector<IterVar> axes, Expr condition = Expr());
  auto fields() const { return std::tie(dtype, reducer, source, axes, condition); }
};

struct BufferNode : Node {
  static constexpr NodeKind kKind = NodeKind::Buffer;
  BufferNode(std::string name, Var data, DataType dtype, std::vector<Expr> shape,
             std::vector<Expr> strides, std::string scope)
      : Node(kKind), name(std::move(name)), data(std::move(data)), dtype(dtype),
        shape(std::move(shape)), strides(std::move(strides)), scope(std::move(scope)) {}
  const std::string name;
  const Var data;  ///< The pointer variable (handle type) that backs the buffer.
  const DataType dtype;
  const std::vector<Expr> shape;
  const std::vector<Expr> strides;  ///< Empty: compact row-major.
  const std::string scope;
  auto fields() const { return std::tie(dtype, shape, strides, scope); }
};

struct IterVarNode : Node {
  static constexpr NodeKind kKind = NodeKind::IterVar;
  IterVarNode(Var var, Range dom, IterVarType type)
      : Node(kKind), var(std::move(var)), dom(std::move(dom)), type(type) {}
  const Var var;
  const Range dom;
  const IterVarType type;
  auto fields() const { return std::tie(var, dom, type); }
};

// ---------------------------------------------------------------------------------------
// Inline accessors

inline Expr::Expr(const ExprNode* node) : NodeHandle(node) {}
inline const ExprNode* Expr::get() const { return static_cast<const ExprNode*>(NodeHandle::get()); }
inline DataType Expr::dtype() const { return get()->dtype; }
inline Var::Var(const VarNode* node) : Expr(node) {}
inline const VarNode* Var::get() const { return static_cast<const VarNode*>(NodeHandle::get()); }
inline const std::string& Var::name() const { return get()->name; }
inline Buffer::Buffer(const BufferNode* node) : NodeHandle(node) {}
inline const BufferNode* Buffer::get() const { return static_cast<const BufferNode*>(NodeHandle::get()); }
inline const std::string& Buffer::name() const { return get()->name; }
inline DataType Buffer::dtype() const { return get()->dtype; }
inline const std::vector<Expr>& Buffer::shape() const { return get()->shape; }
inline IterVar::IterVar(const IterVarNode* node) : NodeHandle(node) {}
inline const IterVarNode* IterVar::get() const { return static_cast<const IterVarNode*>(NodeHandle::get()); }
inline const Var& IterVar::var() const { return get()->var; }
inline const Range& IterVar::dom() const { return get()->dom; }
inline IterVarType IterVar::type() const { return get()->type; }
inline const std::string& IterVar::name() const { return get()->var.name(); }

/// The integer value of an IntImm (or a Broadcast of one), if `e` is one.
const int64_t* asConstInt(const Expr& e);
/// True when `e` is the integer constant `value`.
bool isConstInt(const Expr& e, int64_t value);

}  // namespace tessel
