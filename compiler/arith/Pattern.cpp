// Matching, instantiation, condition evaluation and printing of rewrite patterns.
#include "compiler/arith/Pattern.h"

#include <optional>
#include <sstream>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/ConstantFold.h"
#include "compiler/arith/ExprEqual.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"
#include "core/support/Error.h"

namespace tessel::pattern {

namespace {

bool isComparison(NodeKind kind) {
  return kind == NodeKind::EQ || kind == NodeKind::NE || kind == NodeKind::LT || kind == NodeKind::LE ||
         kind == NodeKind::GT || kind == NodeKind::GE;
}

bool isBinary(NodeKind kind) {
  switch (kind) {
#define TESSEL_IS_BINARY(Name) case NodeKind::Name:
    TESSEL_BINARY_NODES(TESSEL_IS_BINARY)
#undef TESSEL_IS_BINARY
    return true;
    default: return false;
  }
}

bool binaryOperands(const Expr& e, const Expr** a, const Expr** b) {
  switch (e->kind()) {
#define TESSEL_OPERANDS(Name)                    \
  case NodeKind::Name: {                         \
    auto* node = static_cast<const Name##Node*>(e.get()); \
    *a = &node->a;                               \
    *b = &node->b;                               \
    return true;                                 \
  }
    TESSEL_BINARY_NODES(TESSEL_OPERANDS)
#undef TESSEL_OPERANDS
    default: return false;
  }
}

Expr makeBinary(NodeKind kind, Expr a, Expr b) {
  switch (kind) {
#define TESSEL_MAKE_BINARY(Name) \
  case NodeKind::Name: return Name##Node::make(std::move(a), std::move(b));
    TESSEL_BINARY_NODES(TESSEL_MAKE_BINARY)
#undef TESSEL_MAKE_BINARY
    default: TESSEL_ICHECK(false) << "not a binary node kind: " << nodeKindName(kind); return Expr();
  }
}

bool bindSlot(Expr& slot, const Expr& e) {
  if (!slot.defined()) {
    slot = e;
    return true;
  }
  return exprEqual(slot, e);
}

bool bindLanes(Match& m, int lanes) {
  if (m.lanes == 0) m.lanes = lanes;
  return m.lanes == lanes;
}

bool matchLiteral(int64_t value, const Expr& e) {
  if (auto* imm = e.as<IntImmNode>()) return !e.dtype().isBool() && wrapToType(imm->value, e.dtype()) == value;
  if (auto* imm = e.as<FloatImmNode>()) return imm->value == static_cast<double>(value);
  if (auto* b = e.as<BroadcastNode>()) return matchLiteral(value, b->value);
  return false;
}

bool matchBool(int64_t value, const Expr& e) {
  if (auto* imm = e.as<IntImmNode>()) return e.dtype().isBool() && (imm->value != 0) == (value != 0);
  if (auto* b = e.as<BroadcastNode>()) return matchBool(value, b->value);
  return false;
}

bool matchNode(const PatternNode& p, const Expr& e, Match& m) {
  if (e->kind() != p.nodeKind) return false;
  const auto& kids = p.children;
  if (isBinary(p.nodeKind)) {
    const Expr *a = nullptr, *b = nullptr;
    if (!binaryOperands(e, &a, &b)) return false;
    return matchPattern(kids[0], *a, m) && matchPattern(kids[1], *b, m);
  }
  switch (p.nodeKind) {
    case NodeKind::Not: return matchPattern(kids[0], e.as<NotNode>()->a, m);
    case NodeKind::Select: {
      auto* s = e.as<SelectNode>();
      return matchPattern(kids[0], s->condition, m) && matchPattern(kids[1], s->trueValue, m) &&
             matchPattern(kids[2], s->falseValue, m);
    }
    case NodeKind::Ramp: {
      auto* r = e.as<RampNode>();
      return bindLanes(m, r->lanes) && matchPattern(kids[0], r->base, m) && matchPattern(kids[1], r->stride, m);
    }
    case NodeKind::Broadcast: {
      auto* b = e.as<BroadcastNode>();
      return bindLanes(m, b->lanes) && matchPattern(kids[0], b->value, m);
    }
    case NodeKind::Call: {
      auto* c = e.as<CallNode>();
      if (c->op != p.op || c->args.size() != kids.size()) return false;
      for (size_t i = 0; i < kids.size(); ++i)
        if (!matchPattern(kids[i], c->args[i], m)) return false;
      return true;
    }
    default: return false;
  }
}

// The type a pattern builds to, when the match determines it (literals take theirs from
// context and have none of their own).
std::optional<DataType> typeOf(const Pattern& pattern, const Match& m) {
  const PatternNode& p = pattern.get();
  switch (p.kind) {
    case PatternKind::Any: return m.any[p.slot].dtype();
    case PatternKind::Constant: return m.constants[p.slot].dtype();
    case PatternKind::Node: break;
    default: return std::nullopt;
  }
  auto firstKnown = [&]() -> std::optional<DataType> {
    for (auto& child : p.children)
      if (auto t = typeOf(child, m)) return t;
    return std::nullopt;
  };
  if (isComparison(p.nodeKind)) {
    auto operand = firstKnown();
    if (!operand) return std::nullopt;
    return DataType::boolean(operand->lanes());
  }
  switch (p.nodeKind) {
    case NodeKind::Select: {
      if (auto t = typeOf(p.children[1], m)) return t;
      return typeOf(p.children[2], m);
    }
    case NodeKind::Ramp:
    case NodeKind::Broadcast: {
      auto element = typeOf(p.children[0], m);
      if (!element) element = p.children.size() > 1 ? typeOf(p.children[1], m) : std::nullopt;
      if (!element) return std::nullopt;
      return element->withLanes(m.lanes);
    }
    default: return firstKnown();
  }
}

Expr buildLiteral(int64_t value, DataType type) {
  if (type.element().isFloat()) return makeConst(type, static_cast<double>(value));
  return makeIntConst(type, value);
}

Expr buildNode(const PatternNode& p, const Match& m, DataType type) {
  const auto& kids = p.children;
  if (isComparison(p.nodeKind)) {
    auto operand = typeOf(kids[0], m);
    if (!operand) operand = typeOf(kids[1], m);
    TESSEL_ICHECK(operand) << "rewrite rule compares two literals";
    return makeBinary(p.nodeKind, buildPattern(kids[0], m, *operand), buildPattern(kids[1], m, *operand));
  }
  if (isBinary(p.nodeKind))
    return makeBinary(p.nodeKind, buildPattern(kids[0], m, type), buildPattern(kids[1], m, type));
  switch (p.nodeKind) {
    case NodeKind::Not: return NotNode::make(buildPattern(kids[0], m, type));
    case NodeKind::Select: {
      DataType condition = typeOf(kids[0], m).value_or(DataType::boolean());
      return SelectNode::make(buildPattern(kids[0], m, condition), buildPattern(kids[1], m, type),
                              buildPattern(kids[2], m, type));
    }
    case NodeKind::Ramp:
      return RampNode::make(buildPattern(kids[0], m, type.element()), buildPattern(kids[1], m, type.element()),
                            m.lanes);
    case NodeKind::Broadcast: return BroadcastNode::make(buildPattern(kids[0], m, type.element()), m.lanes);
    case NodeKind::Call: {
      std::vector<Expr> args;
      for (auto& kid : kids) args.push_back(buildPattern(kid, m, type));
      return CallNode::make(type, p.op, std::move(args));
    }
    default: TESSEL_ICHECK(false) << "cannot build a " << nodeKindName(p.nodeKind) << " pattern"; return Expr();
  }
}

// Conditions are evaluated in 128 bits; unbounded bounds become +-2^100 so that sums and
// comparisons with them behave like infinities.
using Wide = __int128;
constexpr Wide kWideInf = Wide(1) << 100;

Wide widenBound(int64_t v) {
  if (v == ConstIntBound::kNegInf) return -kWideInf;
  if (v == ConstIntBound::kPosInf) return kWideInf;
  return v;
}

Wide floorDivWide(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}

std::optional<Wide> evaluate(const Pattern& pattern, const Match& m, Analyzer& analyzer) {
  const PatternNode& p = pattern.get();
  auto matched = [&]() -> const Expr& {
    const PatternNode& child = p.children[0].get();
    TESSEL_ICHECK(child.kind == PatternKind::Any || child.kind == PatternKind::Constant)
        << "condition terms take a wildcard";
    return child.kind == PatternKind::Any ? m.any[child.slot] : m.constants[child.slot];
  };
  switch (p.kind) {
    case PatternKind::Literal: return p.value;
    case PatternKind::Bool: return p.value;
    case PatternKind::Constant: {
      auto* imm = m.constants[p.slot].as<IntImmNode>();
      if (!imm) return std::nullopt;
      return wrapToType(imm->value, m.constants[p.slot].dtype());
    }
    case PatternKind::Any: return std::nullopt;
    case PatternKind::LowerBound: return widenBound(analyzer.quickBound(matched()).min);
    case PatternKind::UpperBound: return widenBound(analyzer.quickBound(matched()).max);
    case PatternKind::TypeMin: return widenBound(typeBound(matched().dtype()).min);
    case PatternKind::IsSigned: return matched().dtype().isInt() ? 1 : 0;
    case PatternKind::IsInteger: return matched().dtype().isIntegral() ? 1 : 0;
    case PatternKind::Node: break;
  }
  if (p.nodeKind == NodeKind::Not) {
    auto a = evaluate(p.children[0], m, analyzer);
    if (!a) return std::nullopt;
    return *a == 0 ? 1 : 0;
  }
  if (!isBinary(p.nodeKind)) return std::nullopt;
  auto a = evaluate(p.children[0], m, analyzer);
  if (!a) return std::nullopt;
  // Short-circuit so that `c1 != 0 && floormod(c0, c1) == 0` never divides by zero.
  if (p.nodeKind == NodeKind::And && *a == 0) return 0;
  if (p.nodeKind == NodeKind::Or && *a != 0) return 1;
  auto b = evaluate(p.children[1], m, analyzer);
  if (!b) return std::nullopt;
  Wide u = *a, v = *b;
  switch (p.nodeKind) {
    case NodeKind::Add: return u + v;
    case NodeKind::Sub: return u - v;
    case NodeKind::Mul:
      if ((u > kWideInf || u < -kWideInf) || (v > kWideInf || v < -kWideInf)) return std::nullopt;
      return u * v;
    case NodeKind::FloorDiv: if (v == 0) return std::nullopt; return floorDivWide(u, v);
    case NodeKind::FloorMod: if (v == 0) return std::nullopt; return u - floorDivWide(u, v) * v;
    case NodeKind::Div: if (v == 0) return std::nullopt; return u / v;
    case NodeKind::Mod: if (v == 0) return std::nullopt; return u % v;
    case NodeKind::Min: return u < v ? u : v;
    case NodeKind::Max: return u > v ? u : v;
    case NodeKind::EQ: return u == v;
    case NodeKind::NE: return u != v;
    case NodeKind::LT: return u < v;
    case NodeKind::LE: return u <= v;
    case NodeKind::GT: return u > v;
    case NodeKind::GE: return u >= v;
    case NodeKind::And: return u != 0 && v != 0;
    case NodeKind::Or: return u != 0 || v != 0;
    default: return std::nullopt;
  }
}

// --- printing ---

// Operators print as the IR printer prints them (core's tables), except that patterns
// are integer arithmetic, so Div is the truncating division and prints as truncdiv(...).
int precedenceOf(const PatternNode& p) {
  return p.kind == PatternKind::Node && p.nodeKind != NodeKind::Div ? infixPrecedence(p.nodeKind) : 10;
}

void print(std::ostream& out, const Pattern& pattern, int parentPrecedence);

void printCall(std::ostream& out, const char* name, const std::vector<Pattern>& args, const char* extra = nullptr) {
  out << name << "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out << ", ";
    print(out, args[i], 0);
  }
  if (extra) out << ", " << extra;
  out << ")";
}

void print(std::ostream& out, const Pattern& pattern, int parentPrecedence) {
  const PatternNode& p = pattern.get();
  switch (p.kind) {
    case PatternKind::Any:
    case PatternKind::Constant: out << p.name; return;
    case PatternKind::Literal: out << p.value; return;
    case PatternKind::Bool: out << (p.value ? "true" : "false"); return;
    case PatternKind::LowerBound: printCall(out, "lowerBound", p.children); return;
    case PatternKind::UpperBound: printCall(out, "upperBound", p.children); return;
    case PatternKind::TypeMin: printCall(out, "typeMin", p.children); return;
    case PatternKind::IsSigned: printCall(out, "isSigned", p.children); return;
    case PatternKind::IsInteger: printCall(out, "isInteger", p.children); return;
    case PatternKind::Node: break;
  }
  const char* symbol = p.nodeKind == NodeKind::Div ? nullptr : infixSymbol(p.nodeKind);
  if (symbol) {
    int precedence = precedenceOf(p);
    bool parens = precedence < parentPrecedence;
    if (parens) out << "(";
    print(out, p.children[0], precedence);
    out << symbol;
    print(out, p.children[1], precedence + 1);
    if (parens) out << ")";
    return;
  }
  switch (p.nodeKind) {
    case NodeKind::Div: printCall(out, "truncdiv", p.children); return;
    case NodeKind::Mod: printCall(out, "truncmod", p.children); return;
    case NodeKind::Min: printCall(out, "min", p.children); return;
    case NodeKind::Max: printCall(out, "max", p.children); return;
    case NodeKind::Select: printCall(out, "select", p.children); return;
    case NodeKind::Ramp: printCall(out, "ramp", p.children, "n"); return;
    case NodeKind::Broadcast: printCall(out, "broadcast", p.children, "n"); return;
    case NodeKind::Call: printCall(out, intrinsicName(p.op), p.children); return;
    case NodeKind::Not: out << "!"; print(out, p.children[0], 10); return;
    default: out << "<" << nodeKindName(p.nodeKind) << ">"; return;
  }
}

}  // namespace

Pattern::Pattern(int value) : Pattern(static_cast<int64_t>(value)) {}

Pattern::Pattern(int64_t value) {
  auto node = std::make_shared<PatternNode>();
  node->kind = PatternKind::Literal;
  node->value = value;
  node_ = std::move(node);
}

Pattern Pattern::any(int slot, std::string name) {
  TESSEL_ICHECK(slot >= 0 && slot < Match::kAnySlots) << "wildcard slot " << slot;
  auto node = std::make_shared<PatternNode>();
  node->kind = PatternKind::Any;
  node->slot = slot;
  node->name = std::move(name);
  return Pattern(std::move(node));
}

Pattern Pattern::constant(int slot, std::string name) {
  TESSEL_ICHECK(slot >= 0 && slot < Match::kConstantSlots) << "constant slot " << slot;
  auto node = std::make_shared<PatternNode>();
  node->kind = PatternKind::Constant;
  node->slot = slot;
  node->name = std::move(name);
  return Pattern(std::move(node));
}

Pattern Pattern::boolean(bool value) {
  auto node = std::make_shared<PatternNode>();
  node->kind = PatternKind::Bool;
  node->value = value ? 1 : 0;
  return Pattern(std::move(node));
}

Pattern Pattern::node(NodeKind kind, std::vector<Pattern> children, Intrinsic op) {
  auto node = std::make_shared<PatternNode>();
  node->kind = PatternKind::Node;
  node->nodeKind = kind;
  node->op = op;
  node->children = std::move(children);
  return Pattern(std::move(node));
}

Pattern Pattern::term(PatternKind kind, Pattern child) {
  auto node = std::make_shared<PatternNode>();
  node->kind = kind;
  node->children = {std::move(child)};
  return Pattern(std::move(node));
}

NodeKind Pattern::rootKind() const { return node_->kind == PatternKind::Node ? node_->nodeKind : NodeKind::Other; }

std::string Pattern::toString() const {
  std::ostringstream out;
  print(out, *this, 0);
  return out.str();
}

bool matchPattern(const Pattern& pattern, const Expr& e, Match& m) {
  const PatternNode& p = pattern.get();
  switch (p.kind) {
    case PatternKind::Any: return bindSlot(m.any[p.slot], e);
    case PatternKind::Constant: {
      bool isConstant = (e.as<IntImmNode>() && !e.dtype().isBool()) || e.as<FloatImmNode>();
      return isConstant && bindSlot(m.constants[p.slot], e);
    }
    case PatternKind::Literal: return matchLiteral(p.value, e);
    case PatternKind::Bool: return matchBool(p.value, e);
    case PatternKind::Node: return matchNode(p, e, m);
    default: return false;
  }
}

Expr buildPattern(const Pattern& pattern, const Match& m, DataType type) {
  const PatternNode& p = pattern.get();
  switch (p.kind) {
    case PatternKind::Any: return m.any[p.slot];
    case PatternKind::Constant: return m.constants[p.slot];
    case PatternKind::Literal: return buildLiteral(p.value, type);
    case PatternKind::Bool: return makeIntConst(DataType::boolean(type.lanes()), p.value);
    case PatternKind::Node: return buildNode(p, m, type);
    default: TESSEL_ICHECK(false) << "condition terms cannot be built into IR"; return Expr();
  }
}

bool conditionHolds(const Pattern& condition, const Match& m, Analyzer& analyzer) {
  auto value = evaluate(condition, m, analyzer);
  return value && *value != 0;
}

Pattern operator+(Pattern a, Pattern b) { return binary(NodeKind::Add, std::move(a), std::move(b)); }
Pattern operator-(Pattern a, Pattern b) { return binary(NodeKind::Sub, std::move(a), std::move(b)); }
Pattern operator*(Pattern a, Pattern b) { return binary(NodeKind::Mul, std::move(a), std::move(b)); }
Pattern operator<(Pattern a, Pattern b) { return binary(NodeKind::LT, std::move(a), std::move(b)); }
Pattern operator<=(Pattern a, Pattern b) { return binary(NodeKind::LE, std::move(a), std::move(b)); }
Pattern operator>(Pattern a, Pattern b) { return binary(NodeKind::GT, std::move(a), std::move(b)); }
Pattern operator>=(Pattern a, Pattern b) { return binary(NodeKind::GE, std::move(a), std::move(b)); }
Pattern operator&&(Pattern a, Pattern b) { return binary(NodeKind::And, std::move(a), std::move(b)); }
Pattern operator||(Pattern a, Pattern b) { return binary(NodeKind::Or, std::move(a), std::move(b)); }
Pattern operator!(Pattern a) { return Pattern::node(NodeKind::Not, {std::move(a)}); }
Pattern eq(Pattern a, Pattern b) { return binary(NodeKind::EQ, std::move(a), std::move(b)); }
Pattern ne(Pattern a, Pattern b) { return binary(NodeKind::NE, std::move(a), std::move(b)); }
Pattern floordiv(Pattern a, Pattern b) { return binary(NodeKind::FloorDiv, std::move(a), std::move(b)); }
Pattern floormod(Pattern a, Pattern b) { return binary(NodeKind::FloorMod, std::move(a), std::move(b)); }
Pattern truncdiv(Pattern a, Pattern b) { return binary(NodeKind::Div, std::move(a), std::move(b)); }
Pattern truncmod(Pattern a, Pattern b) { return binary(NodeKind::Mod, std::move(a), std::move(b)); }
Pattern min(Pattern a, Pattern b) { return binary(NodeKind::Min, std::move(a), std::move(b)); }
Pattern max(Pattern a, Pattern b) { return binary(NodeKind::Max, std::move(a), std::move(b)); }
Pattern select(Pattern condition, Pattern trueValue, Pattern falseValue) {
  return Pattern::node(NodeKind::Select, {std::move(condition), std::move(trueValue), std::move(falseValue)});
}
Pattern ramp(Pattern base, Pattern stride, LanesWildcard) {
  return Pattern::node(NodeKind::Ramp, {std::move(base), std::move(stride)});
}
Pattern broadcast(Pattern value, LanesWildcard) { return Pattern::node(NodeKind::Broadcast, {std::move(value)}); }
Pattern likely(Pattern condition) { return Pattern::node(NodeKind::Call, {std::move(condition)}, Intrinsic::Likely); }
Pattern binary(NodeKind kind, Pattern a, Pattern b) {
  TESSEL_ICHECK(isBinary(kind)) << "not a binary node kind: " << nodeKindName(kind);
  return Pattern::node(kind, {std::move(a), std::move(b)});
}

Pattern lowerBound(Pattern wildcard) { return Pattern::term(PatternKind::LowerBound, std::move(wildcard)); }
Pattern upperBound(Pattern wildcard) { return Pattern::term(PatternKind::UpperBound, std::move(wildcard)); }
Pattern typeMin(Pattern wildcard) { return Pattern::term(PatternKind::TypeMin, std::move(wildcard)); }
Pattern isSigned(Pattern wildcard) { return Pattern::term(PatternKind::IsSigned, std::move(wildcard)); }
Pattern isInteger(Pattern wildcard) { return Pattern::term(PatternKind::IsInteger, std::move(wildcard)); }

}  // namespace tessel::pattern
