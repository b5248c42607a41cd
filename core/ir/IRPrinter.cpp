// The IR printer. Output is meant to be read by people: infix arithmetic with minimal
// parentheses, one statement per line, two-space indentation, and variables that share a
// name but not an identity printed with distinct suffixes.
#include "core/ir/IRPrinter.h"

#include "core/ir/IROperators.h"

#include <charconv>
#include <map>
#include <sstream>
#include <unordered_map>

namespace tessel {

const char* infixSymbol(NodeKind kind) {
  switch (kind) {
    case NodeKind::Add: return " + ";
    case NodeKind::Sub: return " - ";
    case NodeKind::Mul: return "*";
    case NodeKind::Div: return "/";
    case NodeKind::FloorDiv: return "//";
    case NodeKind::FloorMod: return " % ";
    case NodeKind::EQ: return " == ";
    case NodeKind::NE: return " != ";
    case NodeKind::LT: return " < ";
    case NodeKind::LE: return " <= ";
    case NodeKind::GT: return " > ";
    case NodeKind::GE: return " >= ";
    case NodeKind::And: return " && ";
    case NodeKind::Or: return " || ";
    default: return nullptr;
  }
}

int infixPrecedence(NodeKind kind) {
  switch (kind) {
    case NodeKind::Or: return 1;
    case NodeKind::And: return 2;
    case NodeKind::EQ: case NodeKind::NE: case NodeKind::LT: case NodeKind::LE:
    case NodeKind::GT: case NodeKind::GE: return 3;
    case NodeKind::Add: case NodeKind::Sub: return 4;
    case NodeKind::Mul: case NodeKind::Div: case NodeKind::FloorDiv: case NodeKind::FloorMod: return 5;
    default: return 10;  // atoms and function-call syntax
  }
}

namespace {

std::string formatFloat(double value, DataType dtype) {
  char buffer[64];
  auto result = dtype.bits() == 32 ? std::to_chars(buffer, buffer + sizeof buffer, float(value))
                                   : std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".einf") == std::string::npos) text += ".0";
  if (dtype.bits() == 32) text += "f";
  else if (dtype.bits() == 16) text = dtype.element().toString() + "(" + text + ")";
  return text;
}

class Printer {
public:
  std::ostringstream out;

  std::string name(const VarNode* var) {
    auto it = names_.find(var);
    if (it != names_.end()) return it->second;
    std::string chosen = var->name.empty() ? "v" : var->name;
    int& uses = nameUses_[chosen];
    if (uses > 0) chosen += "_" + std::to_string(uses);
    ++uses;
    names_[var] = chosen;
    return chosen;
  }
  std::string bufferName(const Buffer& buffer) { return name(buffer->data.get()); }

  void indent() { out << std::string(2 * depth_, ' '); }

  void printExpr(const Expr& e, int parentPrecedence = 0) {
    if (!e.defined()) { out << "<undefined>"; return; }
    NodeKind kind = e->kind();
    if (const char* symbol = infixSymbol(kind)) {
      int p = infixPrecedence(kind);
      bool parens = p < parentPrecedence;
      if (parens) out << "(";
      auto operands = binaryOperands(e);
      printExpr(operands.first, p);
      out << symbol;
      // Right operand binds one tighter: a - (b - c) keeps its parentheses.
      printExpr(operands.second, p + 1);
      if (parens) out << ")";
      return;
    }
    switch (kind) {
      case NodeKind::IntImm: {
        auto* n = e.as<IntImmNode>();
        if (n->dtype.isBool()) out << (n->value ? "true" : "false");
        else if (n->dtype == DataType::index()) out << n->value;
        else out << n->dtype.toString() << "(" << n->value << ")";
        return;
      }
      case NodeKind::FloatImm: {
        auto* n = e.as<FloatImmNode>();
        out << formatFloat(n->value, n->dtype);
        return;
      }
      case NodeKind::Var: out << name(e.as<VarNode>()); return;
      case NodeKind::Mod: { auto* n = e.as<ModNode>(); call("truncmod", {n->a, n->b}); return; }
      case NodeKind::Min: { auto* n = e.as<MinNode>(); call("min", {n->a, n->b}); return; }
      case NodeKind::Max: { auto* n = e.as<MaxNode>(); call("max", {n->a, n->b}); return; }
      case NodeKind::Not: out << "!"; printExpr(e.as<NotNode>()->a, 10); return;
      case NodeKind::Select: {
        auto* n = e.as<SelectNode>();
        call("select", {n->condition, n->trueValue, n->falseValue});
        return;
      }
      case NodeKind::Cast: {
        auto* n = e.as<CastNode>();
        call(n->dtype.toString(), {n->value});
        return;
      }
      case NodeKind::Call: {
        auto* n = e.as<CallNode>();
        // A reinterpretation says what it makes of the bits; other calls take their operands' type.
        if (n->op == Intrinsic::Reinterpret)
          call("reinterpret<" + n->dtype.toString() + ">", n->args);
        else
          call(intrinsicName(n->op), n->args);
        return;
      }
      case NodeKind::BufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        out << bufferName(n->buffer) << "[";
        list(n->indices);
        out << "]";
        return;
      }
      case NodeKind::Ramp: {
        auto* n = e.as<RampNode>();
        call("ramp", {n->base, n->stride, Expr(n->lanes)});
        return;
      }
      case NodeKind::Broadcast: {
        auto* n = e.as<BroadcastNode>();
        call("broadcast", {n->value, Expr(n->lanes)});
        return;
      }
      case NodeKind::Let: {
        auto* n = e.as<LetNode>();
        out << "(let " << name(n->var.get()) << " = ";
        printExpr(n->value);
        out << " in ";
        printExpr(n->body);
        out << ")";
        return;
      }
      case NodeKind::Reduce: {
        auto* n = e.as<ReduceNode>();
        out << reducerName(n->reducer) << "(";
        printExpr(n->source);
        out << ", over ";
        for (size_t i = 0; i < n->axes.size(); ++i) {
          if (i) out << ", ";
          out << name(n->axes[i].var().get()) << " in [";
          printRange(n->axes[i].dom().min, n->axes[i].dom().extent, ", ");
          out << ")";
        }
        if (!isConstInt(n->condition, 1)) {
          out << ", where ";
          printExpr(n->condition);
        }
        out << ")";
        return;
      }
      default: out << "<" << nodeKindName(kind) << ">"; return;
    }
  }

  void printStmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s->kind()) {
      case NodeKind::For: {
        auto* n = s.as<ForNode>();
        indent();
        if (n->forKind == ForKind::ThreadBinding) out << "bind(" << n->threadTag << ") ";
        else if (n->forKind != ForKind::Serial) out << forKindName(n->forKind) << " ";
        out << "for (" << name(n->loopVar.get()) << ", ";
        printExpr(n->min);
        out << ", ";
        printExpr(n->extent);
        out << ") {\n";
        block(n->body);
        return;
      }
      case NodeKind::Allocate: {
        auto* n = s.as<AllocateNode>();
        indent();
        out << "allocate " << bufferName(n->buffer) << ": " << n->buffer.dtype().toString() << "[";
        list(n->buffer.shape());
        out << "]";
        if (n->buffer->scope != "global") out << " in " << n->buffer->scope;
        out << "\n";
        printStmt(n->body);
        return;
      }
      case NodeKind::IfThenElse: {
        auto* n = s.as<IfThenElseNode>();
        indent();
        out << "if (";
        printExpr(n->condition);
        out << ") {\n";
        Stmt elseCase = n->elseCase;
        blockBody(n->thenCase);
        while (elseCase.defined()) {
          indent();
          if (auto* chained = elseCase.as<IfThenElseNode>()) {
            out << "} else if (";
            printExpr(chained->condition);
            out << ") {\n";
            blockBody(chained->thenCase);
            elseCase = chained->elseCase;
          } else {
            out << "} else {\n";
            blockBody(elseCase);
            elseCase = Stmt();
          }
        }
        indent();
        out << "}\n";
        return;
      }
      case NodeKind::SeqStmt:
        for (auto& item : s.as<SeqStmtNode>()->seq) printStmt(item);
        return;
      case NodeKind::LetStmt: {
        auto* n = s.as<LetStmtNode>();
        indent();
        out << "let " << name(n->var.get()) << " = ";
        printExpr(n->value);
        out << "\n";
        printStmt(n->body);
        return;
      }
      case NodeKind::Evaluate:
        indent();
        printExpr(s.as<EvaluateNode>()->value);
        out << "\n";
        return;
      case NodeKind::AttrStmt: {
        auto* n = s.as<AttrStmtNode>();
        indent();
        out << "attr " << n->key << " = ";
        printExpr(n->value);
        out << "\n";
        // A marker with nothing under it (a GPU barrier) is the one line.
        auto* evaluate = n->body.as<EvaluateNode>();
        if (!evaluate || !evaluate->value.as<IntImmNode>()) printStmt(n->body);
        return;
      }
      case NodeKind::BufferStore: {
        auto* n = s.as<BufferStoreNode>();
        indent();
        out << bufferName(n->buffer) << "[";
        list(n->indices);
        out << "] = ";
        printExpr(n->value);
        out << "\n";
        return;
      }
      case NodeKind::BufferRealize: {
        auto* n = s.as<BufferRealizeNode>();
        indent();
        out << "realize " << bufferName(n->buffer) << ": " << n->buffer.dtype().toString() << "[";
        for (size_t i = 0; i < n->bounds.size(); ++i) {
          if (i) out << ", ";
          printRange(n->bounds[i].min, n->bounds[i].extent, ":");
        }
        out << "]";
        if (n->buffer->scope != "global") out << " in " << n->buffer->scope;
        out << " {\n";
        block(n->body);
        return;
      }
      default: indent(); out << "<" << nodeKindName(s->kind()) << ">\n"; return;
    }
  }

  void printFunc(const PrimFunc& f) {
    out << "func " << f->name << "(";
    for (size_t i = 0; i < f->params.size(); ++i) {
      if (i) out << ", ";
      const Buffer& b = f->params[i];
      out << bufferName(b) << ": " << b.dtype().toString() << "[";
      list(b.shape());
      out << "]";
    }
    out << ") {\n";
    block(f->body);
  }

private:
  static std::pair<Expr, Expr> binaryOperands(const Expr& e) {
    switch (e->kind()) {
#define TESSEL_BINARY_OPERANDS(Name) \
  case NodeKind::Name: return {e.as<Name##Node>()->a, e.as<Name##Node>()->b};
      TESSEL_BINARY_NODES(TESSEL_BINARY_OPERANDS)
#undef TESSEL_BINARY_OPERANDS
      default: return {};
    }
  }
  // "min<sep>end" with end folded when both are constants.
  void printRange(const Expr& min, const Expr& extent, const char* separator) {
    printExpr(min);
    out << separator;
    const int64_t* lo = asConstInt(min);
    const int64_t* n = asConstInt(extent);
    if (lo && n) out << (*lo + *n);
    else if (lo && *lo == 0) printExpr(extent);
    else printExpr(min + extent);
  }
  void call(const std::string& function, const std::vector<Expr>& args) {
    out << function << "(";
    list(args);
    out << ")";
  }
  void list(const std::vector<Expr>& items) {
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out << ", ";
      printExpr(items[i]);
    }
  }
  // Body at one more level, then the closing brace.
  void block(const Stmt& body) {
    blockBody(body);
    indent();
    out << "}\n";
  }
  void blockBody(const Stmt& body) {
    ++depth_;
    printStmt(body);
    --depth_;
  }

  int depth_ = 0;
  std::unordered_map<const VarNode*, std::string> names_;
  std::map<std::string, int> nameUses_;
};

}  // namespace

std::string toString(const Expr& e) {
  Printer p;
  p.printExpr(e);
  return p.out.str();
}
std::string toString(const Stmt& s) {
  Printer p;
  p.printStmt(s);
  return p.out.str();
}
std::string toString(const PrimFunc& f) {
  Printer p;
  p.printFunc(f);
  return p.out.str();
}
std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << toString(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << toString(s); }
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) { return os << toString(f); }

}  // namespace tessel
