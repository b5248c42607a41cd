// The GPU C printer (see CodeGenC.h). Everything dialect-specific is in Dialect below; the
// rest walks the IR once per kernel.
#include "compiler/codegen/c/CodeGenC.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/Simplify.h"
#include "runtime/BFloat16.h"

namespace tessel {

namespace {

// The words that differ between CUDA C and OpenCL C.
struct Dialect {
  bool cuda = true;

  std::string kernelQualifier() const { return cuda ? "extern \"C\" __global__ void" : "__kernel void"; }
  std::string pointerParameter(const std::string& type, const std::string& name) const {
    return cuda ? type + "* __restrict__ " + name : "__global " + type + "* restrict " + name;
  }
  // Aligned to 16 bytes so the compiler may read four consecutive floats as one vector load.
  std::string sharedQualifier() const { return cuda ? "__shared__ __align__(16) " : "__local "; }
  std::string threadIndex(const std::string& tag) const {
    if (cuda) return tag;
    int d = threadTagDimension(tag);
    return std::string(isBlockIndexTag(tag) ? "get_group_id(" : "get_local_id(") + std::to_string(d) + ")";
  }
  std::string barrier() const { return cuda ? "__syncthreads()" : "barrier(CLK_LOCAL_MEM_FENCE)"; }
  std::string int64Type() const { return cuda ? "long long" : "long"; }
  // C math library names: CUDA wants the float versions spelled with an f; OpenCL's are
  // overloaded on the argument type.
  std::string math(const std::string& name, DataType dtype) const {
    if (cuda && dtype.bits() <= 32) return name + "f";  // 16-bit floats are float registers
    return name;
  }
  std::string floatMin(DataType dtype) const { return cuda ? math("fmin", dtype) : "fmin"; }
  std::string floatMax(DataType dtype) const { return cuda ? math("fmax", dtype) : "fmax"; }
  std::string infinity(bool negative, DataType dtype) const {
    if (dtype.bits() == 64) return cuda ? (negative ? "__longlong_as_double(0xfff0000000000000ULL)"
                                                    : "__longlong_as_double(0x7ff0000000000000ULL)")
                                        : (negative ? "(-(double)INFINITY)" : "((double)INFINITY)");
    return cuda ? (negative ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)")
                : (negative ? "(-INFINITY)" : "INFINITY");
  }
  std::string nan(DataType dtype) const {
    if (dtype.bits() == 64) return cuda ? "__longlong_as_double(0x7ff8000000000000ULL)" : "((double)NAN)";
    return cuda ? "__int_as_float(0x7fffffff)" : "NAN";
  }
};

/// `value` rounded to the nearest float16 (ties to even; beyond the largest, infinity).
double roundToFloat16(double value) {
  if (!std::isfinite(value) || value == 0) return value;
  double magnitude = std::fabs(value);
  if (magnitude >= 65520.0) return std::copysign(INFINITY, value);
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  // 11 significant bits; below 2^-14 the spacing of the subnormals, 2^-24.
  double spacing = std::ldexp(1.0, std::max(exponent - 1, -14) - 10);
  return std::copysign(std::nearbyint(magnitude / spacing) * spacing, value);
}

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

// Lane `lane` of a vector expression as a scalar one: GPU code is written per thread, so
// vectors (from vectorize()) are printed one lane at a time, lane by lane the same
// statement; the device compiler combines adjacent aligned accesses into vector ones.
// Undefined where a construct has no per-lane meaning here (vector variables).
Expr laneOf(const Expr& e, int lane) {
  if (e.dtype().isScalar()) return e;
  switch (e->kind()) {
    case NodeKind::Ramp: {
      auto* n = e.as<RampNode>();
      return AddNode::make(n->base, MulNode::make(n->stride, IntImmNode::make(n->stride.dtype(), lane)));
    }
    case NodeKind::Broadcast: return e.as<BroadcastNode>()->value;
    case NodeKind::BufferLoad: {
      auto* n = e.as<BufferLoadNode>();
      std::vector<Expr> indices;
      for (const Expr& index : n->indices) {
        indices.push_back(laneOf(index, lane));
        if (!indices.back().defined()) return Expr();
      }
      return BufferLoadNode::make(n->buffer, indices);
    }
#define TESSEL_LANE_BINARY(Name)                                          \
  case NodeKind::Name: {                                                 \
    auto* n = e.as<Name##Node>();                                        \
    Expr a = laneOf(n->a, lane), b = laneOf(n->b, lane);                 \
    return a.defined() && b.defined() ? Name##Node::make(a, b) : Expr(); \
  }
      TESSEL_BINARY_NODES(TESSEL_LANE_BINARY)
#undef TESSEL_LANE_BINARY
    case NodeKind::Not: {
      Expr a = laneOf(e.as<NotNode>()->a, lane);
      return a.defined() ? NotNode::make(a) : Expr();
    }
    case NodeKind::Select: {
      auto* n = e.as<SelectNode>();
      Expr c = laneOf(n->condition, lane), t = laneOf(n->trueValue, lane), f = laneOf(n->falseValue, lane);
      return c.defined() && t.defined() && f.defined() ? SelectNode::make(c, t, f) : Expr();
    }
    case NodeKind::Cast: {
      auto* n = e.as<CastNode>();
      Expr value = laneOf(n->value, lane);
      return value.defined() ? CastNode::make(n->dtype.withLanes(1), value) : Expr();
    }
    case NodeKind::Call: {
      auto* n = e.as<CallNode>();
      std::vector<Expr> args;
      for (const Expr& arg : n->args) {
        args.push_back(laneOf(arg, lane));
        if (!args.back().defined()) return Expr();
      }
      return CallNode::make(n->dtype.withLanes(1), n->op, args);
    }
    default: return Expr();
  }
}

class KernelPrinter {
public:
  KernelPrinter(const Dialect& dialect, bool narrowIndices) : dialect_(dialect), narrowIndices_(narrowIndices) {}

  std::string error;

  // The element type of a buffer in memory: the tensor's own width always (narrowed indices
  // are for arithmetic only), and a byte per boolean, as the runtime stores them.
  std::string storageType(DataType dtype) {
    if (dtype.isBool()) return dialect_.cuda ? "unsigned char" : "uchar";
    // float16 and bfloat16 are stored as their 16 bits and converted on load and store (see
    // kHalfHelpers): OpenCL C has no half arithmetic without cl_khr_fp16, and CUDA's needs
    // cuda_fp16.h, which NVRTC would have to find.
    if (isSixteenBitFloat(dtype)) return dialect_.cuda ? "unsigned short" : "ushort";
    if (dtype.isInt() && dtype.bits() == 64) return dialect_.int64Type();
    return type(dtype);
  }

  std::string type(DataType dtype) {
    if (dtype.isVector()) {
      fail("a vector value (" + dtype.toString() + ") outside a vector store has no GPU form yet: remove vectorize()");
      return "float";
    }
    // A 16-bit float lives in a float register, as on the CPU's bfloat16 path.
    if (dtype.isFloat() && dtype.bits() <= 32) return "float";
    if (dtype.isFloat() && dtype.bits() == 64) return "double";
    if (dtype.isBool()) return "bool";
    if (dtype.isInt()) {
      switch (dtype.bits()) {
        case 8: return dialect_.cuda ? "signed char" : "char";
        case 16: return "short";
        case 32: return "int";
        case 64: return narrowIndices_ && indexContext_ ? "int" : dialect_.int64Type();
        default: break;
      }
    }
    if (dtype.isUInt()) {
      switch (dtype.bits()) {
        case 8: return dialect_.cuda ? "unsigned char" : "uchar";
        case 16: return dialect_.cuda ? "unsigned short" : "ushort";
        case 32: return dialect_.cuda ? "unsigned int" : "uint";
        case 64: return dialect_.cuda ? "unsigned long long" : "ulong";
        default: break;
      }
    }
    fail("element type " + dtype.toString() + " is not supported on GPU targets yet");
    return "float";
  }

  std::string bufferName(const Buffer& buffer) { return name(buffer->data.get(), buffer->name); }

  std::string name(const VarNode* var, const std::string& base) {
    auto it = names_.find(var);
    if (it != names_.end()) return it->second;
    std::string candidate = sanitize(base);
    std::string unique = candidate;
    for (int n = 1; used_.count(unique); ++n) unique = candidate + "_" + std::to_string(n);
    used_.insert(unique);
    names_[var] = unique;
    return unique;
  }

  void reserve(const std::string& word) { used_.insert(word); }

  // ---- expressions
  std::string expr(const Expr& e) {
    std::string text = unroundedExpr(e);
    // 16-bit float arithmetic is done in float and rounded after each operation, as the CPU
    // code does (float's 24 bits make that exact for + - * /: the results match bit for bit).
    // The operators' compute rules mostly cast around float16 arithmetic already (the Cast
    // rounds); this covers IR that does not.
    if (isSixteenBitFloat(e.dtype()) && computesAValue(e->kind()))
      return sixteenBitHelper(e.dtype(), "_round") + "(" + text + ")";
    return text;
  }

  static bool computesAValue(NodeKind kind) {
    switch (kind) {
      case NodeKind::Add:
      case NodeKind::Sub:
      case NodeKind::Mul:
      case NodeKind::Div:
      case NodeKind::Mod:
      case NodeKind::FloorDiv:
      case NodeKind::FloorMod:
      case NodeKind::Call: return true;
      default: return false;  // loads, constants, min/max, selects and casts are exact already
    }
  }

  std::string unroundedExpr(const Expr& e) {
    switch (e->kind()) {
      case NodeKind::IntImm: return intImm(e.as<IntImmNode>());
      case NodeKind::FloatImm: return floatImm(e.as<FloatImmNode>());
      case NodeKind::Var: {
        auto* var = e.as<VarNode>();
        return name(var, var->name);
      }
#define TESSEL_C_BINARY(Name, op) \
  case NodeKind::Name: return binary(e.as<Name##Node>()->a, op, e.as<Name##Node>()->b);
        TESSEL_C_BINARY(Add, "+")
        TESSEL_C_BINARY(Sub, "-")
        TESSEL_C_BINARY(Mul, "*")
        TESSEL_C_BINARY(EQ, "==")
        TESSEL_C_BINARY(NE, "!=")
        TESSEL_C_BINARY(LT, "<")
        TESSEL_C_BINARY(LE, "<=")
        TESSEL_C_BINARY(GT, ">")
        TESSEL_C_BINARY(GE, ">=")
        TESSEL_C_BINARY(And, "&&")
        TESSEL_C_BINARY(Or, "||")
#undef TESSEL_C_BINARY
      case NodeKind::Div: {
        auto* n = e.as<DivNode>();
        return binary(n->a, "/", n->b);
      }
      case NodeKind::Mod: {
        auto* n = e.as<ModNode>();
        if (n->a.dtype().isFloat()) return dialect_.math("fmod", n->a.dtype()) + "(" + expr(n->a) + ", " + expr(n->b) + ")";
        return binary(n->a, "%", n->b);
      }
      case NodeKind::FloorDiv: {
        auto* n = e.as<FloorDivNode>();
        if (n->a.dtype().isFloat()) return dialect_.math("floor", n->a.dtype()) + "(" + binary(n->a, "/", n->b) + ")";
        // Unsigned operands are never negative: C's division already floors.
        if (n->a.dtype().isUInt() || (nonNegative(n->a) && positive(n->b))) return binary(n->a, "/", n->b);
        usesFloorHelpers_ = true;
        return "tessel_floordiv(" + expr(n->a) + ", " + expr(n->b) + ")";
      }
      case NodeKind::FloorMod: {
        auto* n = e.as<FloorModNode>();
        if (n->a.dtype().isFloat()) {
          std::string a = expr(n->a), b = expr(n->b);
          return "(" + a + " - " + dialect_.math("floor", n->a.dtype()) + "(" + a + " / " + b + ") * " + b + ")";
        }
        if (n->a.dtype().isUInt() || (nonNegative(n->a) && positive(n->b))) return binary(n->a, "%", n->b);
        usesFloorHelpers_ = true;
        return "tessel_floormod(" + expr(n->a) + ", " + expr(n->b) + ")";
      }
      case NodeKind::Min: {
        auto* n = e.as<MinNode>();
        if (n->a.dtype().isFloat()) return dialect_.floatMin(n->a.dtype()) + "(" + expr(n->a) + ", " + expr(n->b) + ")";
        // Both operands in the node's type: an index narrowed to int beside a value loaded
        // from an int64 buffer would make the overloaded min ambiguous.
        std::string t = type(n->dtype);
        return "min((" + t + ")" + expr(n->a) + ", (" + t + ")" + expr(n->b) + ")";
      }
      case NodeKind::Max: {
        auto* n = e.as<MaxNode>();
        if (n->a.dtype().isFloat()) return dialect_.floatMax(n->a.dtype()) + "(" + expr(n->a) + ", " + expr(n->b) + ")";
        std::string t = type(n->dtype);
        return "max((" + t + ")" + expr(n->a) + ", (" + t + ")" + expr(n->b) + ")";
      }
      case NodeKind::Not: return "(!" + expr(e.as<NotNode>()->a) + ")";
      case NodeKind::Select: {
        auto* n = e.as<SelectNode>();
        return "(" + expr(n->condition) + " ? " + expr(n->trueValue) + " : " + expr(n->falseValue) + ")";
      }
      case NodeKind::Cast: {
        auto* n = e.as<CastNode>();
        // To a 16-bit float: rounded to it now, though the register stays a float.
        if (isSixteenBitFloat(n->dtype))
          return sixteenBitHelper(n->dtype, "_round") + "((float)" + expr(n->value) + ")";
        return "((" + type(n->dtype) + ")" + expr(n->value) + ")";
      }
      case NodeKind::Call: return call(e.as<CallNode>());
      case NodeKind::BufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        if (n->indices.size() != 1) {
          fail("load of " + n->buffer->name + " was not flattened");
          return "0";
        }
        type(n->dtype);
        std::string element = bufferName(n->buffer) + "[" + asIndex([&] { return expr(n->indices[0]); }) + "]";
        if (isSixteenBitFloat(n->buffer->dtype)) return sixteenBitHelper(n->buffer->dtype, "_to_f32") + "(" + element + ")";
        return element;
      }
      case NodeKind::Let: {
        auto* n = e.as<LetNode>();
        // A let inside an expression: bind by substitution is not possible in C without a
        // statement, so the value is repeated (lets are rare after simplification).
        names_[n->var.get()] = "(" + expr(n->value) + ")";
        return expr(n->body);
      }
      case NodeKind::Ramp:
      case NodeKind::Broadcast:
        fail("a vector outside a vector store has no GPU form yet: remove vectorize() from the schedule");
        return "0";
      default: fail("cannot print " + std::string(nodeKindName(e->kind())) + " in GPU code"); return "0";
    }
  }

  // ---- statements
  void stmt(const Stmt& s) {
    switch (s->kind()) {
      case NodeKind::SeqStmt:
        for (auto& item : s.as<SeqStmtNode>()->seq) stmt(item);
        return;
      case NodeKind::For: return forLoop(s.as<ForNode>());
      case NodeKind::Allocate: {
        auto* n = s.as<AllocateNode>();
        const std::string& scope = n->buffer->scope;
        if (scope != "shared" && scope != "local") {
          fail("buffer " + n->buffer->name + " is allocated in " + scope +
               " memory inside a kernel: cache it in shared or local memory, or compute_inline it");
          return;
        }
        int64_t elements = 1;
        for (auto& extent : n->buffer->shape) {
          const int64_t* value = asConstInt(extent);
          if (!value) {
            fail("buffer " + n->buffer->name + " has no constant size");
            return;
          }
          elements *= *value;
        }
        line((scope == "shared" ? dialect_.sharedQualifier() : std::string()) + storageType(n->buffer->dtype) + " " +
             bufferName(n->buffer) + "[" + std::to_string(elements) + "];");
        stmt(n->body);
        return;
      }
      case NodeKind::IfThenElse: {
        auto* n = s.as<IfThenElseNode>();
        line("if (" + expr(n->condition) + ") {");
        indented([&] { stmt(n->thenCase); });
        if (n->elseCase.defined()) {
          line("} else {");
          indented([&] { stmt(n->elseCase); });
        }
        line("}");
        return;
      }
      case NodeKind::LetStmt: {
        auto* n = s.as<LetStmtNode>();
        line("{");
        indented([&] {
          std::string value = expr(n->value);
          line(type(n->var.dtype()) + " " + name(n->var.get(), n->var.name()) + " = " + value + ";");
          stmt(n->body);
        });
        line("}");
        return;
      }
      case NodeKind::Evaluate: {
        auto* n = s.as<EvaluateNode>();
        if (n->value.as<IntImmNode>()) return;  // a no-op
        line(expr(n->value) + ";");
        return;
      }
      case NodeKind::AttrStmt:
        if (isSyncThreads(s)) {
          line(dialect_.barrier() + ";");
          return;
        }
        stmt(s.as<AttrStmtNode>()->body);
        return;
      case NodeKind::BufferStore: {
        auto* n = s.as<BufferStoreNode>();
        if (n->indices.size() != 1) {
          fail("store to " + n->buffer->name + " was not flattened");
          return;
        }
        int lanes = std::max(n->value.dtype().lanes(), n->indices[0].dtype().lanes());
        if (lanes == 1) {
          line(bufferName(n->buffer) + "[" + asIndex([&] { return expr(n->indices[0]); }) + "] = " +
               storedValue(n->buffer->dtype, expr(n->value)) + ";");
          return;
        }
        // A vector store: one statement per lane, all lanes' values computed first, since
        // a later lane's value may read what an earlier lane's store would overwrite.
        std::vector<std::string> values;
        for (int lane = 0; lane < lanes; ++lane) {
          Expr value = simplify(laneOf(n->value, lane)), index = laneOf(n->indices[0], lane);
          if (!value.defined() || !index.defined()) {
            fail("a vector store to " + n->buffer->name + " has no per-lane form on GPU targets");
            return;
          }
          std::string name = "lane" + std::to_string(lane) + "_" + std::to_string(vectorStores_);
          line("const " + type(n->value.dtype().withLanes(1)) + " " + name + " = " + expr(value) + ";");
          values.push_back(name);
        }
        for (int lane = 0; lane < lanes; ++lane)
          line(bufferName(n->buffer) + "[" + asIndex([&] { return expr(simplify(laneOf(n->indices[0], lane))); }) +
               "] = " + storedValue(n->buffer->dtype, values[size_t(lane)]) + ";");
        ++vectorStores_;
        return;
      }
      default: fail("cannot print " + std::string(nodeKindName(s->kind())) + " in GPU code"); return;
    }
  }

  static bool isSixteenBitFloat(DataType dtype) { return dtype.isFloat() && dtype.bits() == 16; }

  /// "tessel_f16_to_f32", "tessel_bf16_round", ...: the conversions kHalfHelpers defines.
  std::string sixteenBitHelper(DataType dtype, const char* suffix) {
    usesHalfHelpers_ = true;
    return std::string(dtype.code() == DataType::Code::BFloat ? "tessel_bf16" : "tessel_f16") + suffix;
  }

  /// `value` as a buffer of `dtype` holds it: 16-bit floats rounded to their bits.
  std::string storedValue(DataType dtype, const std::string& value) {
    if (!isSixteenBitFloat(dtype)) return value;
    return sixteenBitHelper(dtype, "_from_f32") + "((float)" + value + ")";
  }

  void setLaunch(const KernelLaunch& launch) { launch_ = launch; }
  bool usesFloorHelpers() const { return usesFloorHelpers_; }
  bool usesHalfHelpers() const { return usesHalfHelpers_; }
  std::string takeText() { return std::move(out_).str(); }
  void line(const std::string& text) { out_ << std::string(indent_ * 2, ' ') << text << "\n"; }
  template <class F>
  void indented(F&& f) {
    ++indent_;
    f();
    --indent_;
  }

private:
  void fail(const std::string& message) {
    if (error.empty()) error = message;
  }

  bool nonNegative(const Expr& e) { return analyzer_.constIntBound(e).min >= 0; }
  bool positive(const Expr& e) { return analyzer_.constIntBound(e).min > 0; }

  std::string intImm(const IntImmNode* n) {
    if (n->dtype.isBool()) return n->value ? "true" : "false";
    std::string text = std::to_string(n->value);
    bool wide = n->value > INT32_MAX || n->value < INT32_MIN;
    if (n->dtype.bits() == 64 && (wide || !narrowIndices_ || !indexContext_))
      return "(" + dialect_.int64Type() + ")" + text + "LL";
    if (n->dtype.isUInt()) return text + "u";
    return text;
  }

  std::string floatImm(const FloatImmNode* n) {
    double value = n->value;
    // The constant the CPU code holds: a 16-bit float's value rounded to its type (rounding
    // to infinity, a huge one, is caught below).
    if (isSixteenBitFloat(n->dtype))
      value = n->dtype.code() == DataType::Code::BFloat
                  ? double(runtime::roundToBFloat16(float(value)))
                  : roundToFloat16(value);
    if (std::isinf(value)) return dialect_.infinity(value < 0, n->dtype);
    if (std::isnan(value)) return dialect_.nan(n->dtype);
    char buffer[64];
    if (n->dtype.bits() == 64) {
      std::snprintf(buffer, sizeof buffer, "%.17g", value);
    } else {
      std::snprintf(buffer, sizeof buffer, "%.9g", value);
    }
    std::string text = buffer;
    if (text.find_first_of(".eE") == std::string::npos) text += ".0";
    if (n->dtype.bits() != 64) text += "f";
    return text;
  }

  std::string binary(const Expr& a, const char* op, const Expr& b) {
    return "(" + expr(a) + " " + op + " " + expr(b) + ")";
  }

  /// a OP b (or OP a), cast back to the operands' type: C promotes narrow integers to int.
  std::string bitwise(const CallNode* n, const char* op) {
    DataType t = n->dtype;
    if (!(t.isIntegral() || t.isBool())) fail(std::string(intrinsicName(n->op)) + " of " + t.toString() + " is not supported");
    std::string text = n->args.size() == 1 ? std::string(op) + expr(n->args[0]) : binary(n->args[0], op, n->args[1]);
    return "((" + type(t) + ")" + text + ")";
  }

  /// A shift with C's undefined cases defined as the CPU code defines them: by the width
  /// or more (or a negative amount) gives 0, or the sign for a signed shift right.
  std::string shift(const CallNode* n) {
    DataType t = n->dtype;
    if (!t.isIntegral()) fail(std::string(intrinsicName(n->op)) + " of " + t.toString() + " is not supported");
    std::string value = expr(n->args[0]), amount = expr(n->args[1]);
    std::string width = std::to_string(t.bits());
    std::string tooWide = "((" + std::string(dialect_.cuda ? "unsigned long long" : "ulong") + ")(" + amount + ") >= " + width + ")";
    if (n->op == Intrinsic::ShiftRight && t.isInt())
      return "((" + type(t) + ")(" + value + " >> (" + tooWide + " ? " + std::to_string(t.bits() - 1) + " : " + amount + ")))";
    const char* op = n->op == Intrinsic::ShiftLeft ? " << " : " >> ";
    return "(" + tooWide + " ? (" + type(t) + ")0 : (" + type(t) + ")(" + value + op + amount + "))";
  }

  std::string call(const CallNode* n) {
    auto arg = [&](size_t i) { return i < n->args.size() ? expr(n->args[i]) : std::string("0"); };
    DataType t = n->dtype;
    switch (n->op) {
      case Intrinsic::Likely: return arg(0);
      case Intrinsic::Sigmoid: {
        std::string one = t.bits() == 64 ? "1.0" : "1.0f";
        return "(" + one + " / (" + one + " + " + dialect_.math("exp", t) + "(-" + arg(0) + ")))";
      }
      case Intrinsic::Rsqrt: return dialect_.math("rsqrt", t) + "(" + arg(0) + ")";
      // Halves to even, as ONNX Round and the CPU code do (C's round goes away from zero).
      case Intrinsic::Round: return dialect_.math("rint", t) + "(" + arg(0) + ")";
      case Intrinsic::Fabs: return dialect_.cuda ? dialect_.math("fabs", t) + "(" + arg(0) + ")" : "fabs(" + arg(0) + ")";
      case Intrinsic::IsNan: return "isnan(" + arg(0) + ")";
      case Intrinsic::Pow: return dialect_.math("pow", t) + "(" + arg(0) + ", " + arg(1) + ")";
      case Intrinsic::Fma: return dialect_.math("fma", t) + "(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ")";
      case Intrinsic::BitwiseAnd: return bitwise(n, "&");
      case Intrinsic::BitwiseOr: return bitwise(n, "|");
      case Intrinsic::BitwiseXor: return bitwise(n, "^");
      case Intrinsic::BitwiseNot:
        if (t.isBool()) return "(!" + arg(0) + ")";
        return bitwise(n, "~");
      case Intrinsic::ShiftLeft:
      case Intrinsic::ShiftRight: return shift(n);
      case Intrinsic::Reinterpret:
      case Intrinsic::DotU8I8:
      case Intrinsic::DotBF16:
        fail(std::string(intrinsicName(n->op)) + " has no GPU implementation yet");
        return "0";
      default:
        if (!t.isFloat()) {
          fail(std::string(intrinsicName(n->op)) + " of " + t.toString() + " has no GPU implementation");
          return "0";
        }
        return dialect_.math(intrinsicName(n->op), t) + "(" + arg(0) + ")";
    }
  }

  void forLoop(const ForNode* n) {
    std::string var = name(n->loopVar.get(), n->loopVar.name());
    std::string varType = asIndex([&] { return type(n->loopVar.dtype()); });
    analyzer_.bind(n->loopVar, Range::fromMinExtent(n->min, n->extent));
    if (n->forKind == ForKind::ThreadBinding) {
      int d = threadTagDimension(n->threadTag);
      int64_t launched = isBlockIndexTag(n->threadTag) ? launch_.grid[d] : launch_.block[d];
      const int64_t* extent = asConstInt(n->extent);
      std::string index = "(" + varType + ")" + dialect_.threadIndex(n->threadTag);
      if (!isConstInt(n->min, 0)) index = "(" + asIndex([&] { return expr(n->min); }) + " + " + index + ")";
      line("{");
      indented([&] {
        line("const " + varType + " " + var + " = " + index + ";");
        if (extent && *extent < launched) {
          // A stage with fewer iterations than the launch has threads: the rest sit out.
          line("if (" + var + " < " + std::to_string(*extent) + ") {");
          indented([&] { stmt(n->body); });
          line("}");
        } else {
          stmt(n->body);
        }
      });
      line("}");
    } else {
      if (n->forKind == ForKind::Unrolled) line("#pragma unroll");
      std::string begin = asIndex([&] { return expr(n->min); });
      std::string extent = asIndex([&] { return expr(n->extent); });
      std::string end = isConstInt(n->min, 0) ? extent : "(" + begin + " + " + extent + ")";
      line("for (" + varType + " " + var + " = " + begin + "; " + var + " < " + end + "; ++" + var + ") {");
      indented([&] { stmt(n->body); });
      line("}");
    }
    analyzer_.unbind(n->loopVar);
  }

  const Dialect& dialect_;
  bool narrowIndices_;
  // Whether what is being printed is an index (buffer subscripts, loop bounds and variables):
  // only indices are narrowed to 32 bits; int64 data keeps its width.
  bool indexContext_ = false;
  template <class F>
  std::string asIndex(F&& print) {
    bool saved = indexContext_;
    indexContext_ = true;
    std::string text = print();
    indexContext_ = saved;
    return text;
  }
  Analyzer analyzer_;
  KernelLaunch launch_;
  std::ostringstream out_;
  int indent_ = 1;
  std::unordered_map<const VarNode*, std::string> names_;
  std::unordered_set<std::string> used_;
  bool usesFloorHelpers_ = false;
  bool usesHalfHelpers_ = false;
  int vectorStores_ = 0;
};

// Whether every buffer has fewer than 2^31 elements, so indices fit in 32-bit integers
// (64-bit integer arithmetic takes several instructions on GPUs).
bool indicesFitInt32(const PrimFunc& f) {
  bool fits = true;
  auto check = [&](const Buffer& buffer) {
    int64_t elements = 1;
    for (auto& extent : buffer->shape) {
      const int64_t* value = asConstInt(extent);
      if (!value) {
        fits = false;
        return;
      }
      elements *= *value;
      if (elements >= (int64_t(1) << 31)) fits = false;
    }
  };
  for (auto& buffer : f->params) check(buffer);
  return fits;
}

const char* kFloorHelpersCuda =
    "__device__ __forceinline__ int tessel_floordiv(int a, int b) { int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "__device__ __forceinline__ int tessel_floormod(int a, int b) { int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "__device__ __forceinline__ long long tessel_floordiv(long long a, long long b) { long long q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "__device__ __forceinline__ long long tessel_floormod(long long a, long long b) { long long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n";
const char* kFloorHelpersOpenCL =
    "inline int __attribute__((overloadable)) tessel_floordiv(int a, int b) { int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "inline int __attribute__((overloadable)) tessel_floormod(int a, int b) { int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "inline long __attribute__((overloadable)) tessel_floordiv(long a, long b) { long q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "inline long __attribute__((overloadable)) tessel_floormod(long a, long b) { long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n";

// 16-bit floats to and from their bits, rounding to nearest even (NaN stays NaN): float16
// through the hardware conversions (PTX cvt; OpenCL's vload_half/vstore_half, core since 1.0),
// bfloat16 as the upper half of a float32.
const char* kHalfHelpersCuda =
    "__device__ __forceinline__ float tessel_f16_to_f32(unsigned short h) { float x; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(x) : \"h\"(h)); return x; }\n"
    "__device__ __forceinline__ unsigned short tessel_f16_from_f32(float x) { unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x)); return h; }\n"
    "__device__ __forceinline__ float tessel_f16_round(float x) { return tessel_f16_to_f32(tessel_f16_from_f32(x)); }\n"
    "__device__ __forceinline__ float tessel_bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned int)h << 16); }\n"
    "__device__ __forceinline__ unsigned short tessel_bf16_from_f32(float x) {\n"
    "  unsigned int bits = __float_as_uint(x);\n"
    "  if (x != x) return (unsigned short)((bits >> 16) | 0x40);\n"
    "  return (unsigned short)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);\n"
    "}\n"
    "__device__ __forceinline__ float tessel_bf16_round(float x) { return tessel_bf16_to_f32(tessel_bf16_from_f32(x)); }\n";
const char* kHalfHelpersOpenCL =
    "inline float tessel_f16_to_f32(ushort h) { return vload_half(0, (const __private half*)&h); }\n"
    "inline ushort tessel_f16_from_f32(float x) { ushort h; vstore_half_rte(x, 0, (__private half*)&h); return h; }\n"
    "inline float tessel_f16_round(float x) { return tessel_f16_to_f32(tessel_f16_from_f32(x)); }\n"
    "inline float tessel_bf16_to_f32(ushort h) { return as_float((uint)h << 16); }\n"
    "inline ushort tessel_bf16_from_f32(float x) {\n"
    "  uint bits = as_uint(x);\n"
    "  if (isnan(x)) return (ushort)((bits >> 16) | 0x40);\n"
    "  return (ushort)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);\n"
    "}\n"
    "inline float tessel_bf16_round(float x) { return tessel_bf16_to_f32(tessel_bf16_from_f32(x)); }\n";

}  // namespace

Expected<GpuSource> generateGpuSource(const PrimFunc& f, const Target& target) {
  return generateGpuSource(std::vector<PrimFunc>{f}, target, f->name);
}

Expected<GpuSource> generateGpuSource(const std::vector<PrimFunc>& funcs, const Target& target,
                                      const std::string& title) {
  if (target.kind == TargetKind::Cpu)
    return Diagnostic{"generateGpuSource needs a cuda or opencl target, got " + target.toString(), title, 0, 0, ""};
  Dialect dialect;
  dialect.cuda = target.kind == TargetKind::Cuda;
  GpuSource source;
  bool floorHelpers = false, halfHelpers = false;
  std::vector<std::string> kernelTexts;
  for (size_t index = 0; index < funcs.size(); ++index) {
    const PrimFunc& f = funcs[index];
    bool narrow = indicesFitInt32(f);
    auto kernels = deviceKernels(f);
    if (kernels.empty())
      return Diagnostic{"the function has no kernels: lower it for a GPU target first", f->name, 0, 0, ""};
    std::vector<Buffer> workspaces = deviceWorkspaces(f);
    for (const AttrStmtNode* kernel : kernels) {
      KernelLaunch launch = kernelLaunch(f, kernel);
      KernelPrinter printer(dialect, narrow);
      for (const char* word : {"min", "max", "threadIdx", "blockIdx", "blockDim", "gridDim"}) printer.reserve(word);
      std::string params;
      std::vector<Buffer> buffers = f->params;
      for (const Buffer& workspace : workspaces) buffers.push_back(workspace);
      for (size_t i = 0; i < buffers.size(); ++i) {
        const Buffer& buffer = buffers[i];
        params +=
            (i ? ", " : "") + dialect.pointerParameter(printer.storageType(buffer->dtype), printer.bufferName(buffer));
      }
      printer.setLaunch(launch);
      printer.stmt(kernel->body);
      if (!printer.error.empty()) return Diagnostic{printer.error, f->name, 0, 0, ""};
      floorHelpers |= printer.usesFloorHelpers();
      halfHelpers |= printer.usesHalfHelpers();
      std::string header = dialect.kernelQualifier() + " ";
      if (dialect.cuda)
        header = "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(launch.threadsPerBlock()) + ") ";
      else
        header += "__attribute__((reqd_work_group_size(" + std::to_string(launch.block[0]) + ", " +
                  std::to_string(launch.block[1]) + ", " + std::to_string(launch.block[2]) + "))) ";
      kernelTexts.push_back(header + launch.name + "(" + params + ") {\n" + printer.takeText() + "}\n");
      source.kernels.push_back(launch);
      source.kernelFunctions.push_back(index);
    }
    source.workspaces.push_back(std::move(workspaces));
  }

  std::ostringstream code;
  code << "// " << title << " for " << target.toString() << ", generated by Tessel.\n";
  if (!dialect.cuda) code << "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  if (floorHelpers) code << (dialect.cuda ? kFloorHelpersCuda : kFloorHelpersOpenCL);
  if (halfHelpers) code << (dialect.cuda ? kHalfHelpersCuda : kHalfHelpersOpenCL);
  int lineNumber = 1;
  for (char c : code.str()) lineNumber += c == '\n';
  for (const std::string& text : kernelTexts) {
    code << "\n";
    ++lineNumber;
    source.kernelLines.push_back(lineNumber);
    code << text;
    for (char c : text) lineNumber += c == '\n';
  }
  source.code = code.str();
  return source;
}

}  // namespace tessel
