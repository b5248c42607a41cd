// Flattening integer expressions into linear forms and rebuilding them.
#include "compiler/arith/LinearForm.h"

#include "compiler/arith/ConstantFold.h"
#include "compiler/arith/ExprEqual.h"
#include "core/ir/Stmt.h"

namespace tessel {

namespace {

class Flattener {
public:
  Flattener(LinearForm& form, size_t maxTerms) : form_(form), maxTerms_(maxTerms) {}
  bool ok = true;

  // Coefficients are kept as 64-bit patterns and multiplied with wraparound.
  void collect(const Expr& e, uint64_t scale) {
    if (!ok) return;
    if (const int64_t* value = asConstInt(e)) {
      form_.constant = static_cast<int64_t>(static_cast<uint64_t>(form_.constant) + scale * static_cast<uint64_t>(*value));
      ++form_.leaves;
      return;
    }
    switch (e->kind()) {
      case NodeKind::Add: {
        auto* n = e.as<AddNode>();
        collect(n->a, scale);
        collect(n->b, scale);
        return;
      }
      case NodeKind::Sub: {
        auto* n = e.as<SubNode>();
        collect(n->a, scale);
        collect(n->b, 0 - scale);
        return;
      }
      case NodeKind::Mul: {
        auto* n = e.as<MulNode>();
        if (const int64_t* c = asConstInt(n->b)) return collect(n->a, scale * static_cast<uint64_t>(*c));
        if (const int64_t* c = asConstInt(n->a)) return collect(n->b, scale * static_cast<uint64_t>(*c));
        break;
      }
      default: break;
    }
    addTerm(e, scale);
  }

private:
  void addTerm(const Expr& atom, uint64_t scale) {
    ++form_.leaves;
    for (auto& term : form_.terms) {
      if (exprEqual(term.atom, atom)) {
        term.coefficient = static_cast<int64_t>(static_cast<uint64_t>(term.coefficient) + scale);
        return;
      }
    }
    if (form_.terms.size() >= maxTerms_) {
      ok = false;
      return;
    }
    form_.terms.push_back({atom, static_cast<int64_t>(scale)});
  }

  LinearForm& form_;
  size_t maxTerms_;
};

// Coefficients read as signed numbers of the type's width, so that an unsigned x - y keeps
// its subtraction rather than becoming x + y*255.
int64_t signedAtWidth(int64_t value, DataType dtype) {
  return wrapToType(value, DataType(DataType::Code::Int, dtype.bits()));
}

// Uses x == c*floordiv(x, c) + floormod(x, c) (and its C-division twin) to merge a term in
// x with a term in floordiv(x, c) or floormod(x, c):
//   b*x - b*c*floordiv(x, c)  ->  b*floormod(x, c)
//   b*x - b*floormod(x, c)    ->  b*c*floordiv(x, c)
// Exact in wraparound arithmetic too, since the identity holds for every integer type.
void mergeDivisionPairs(LinearForm& form) {
  auto divisionParts = [](const Expr& atom, Expr* x, int64_t* c, bool* isQuotient, bool* isFloor) {
    const Expr *a = nullptr, *b = nullptr;
    switch (atom->kind()) {
      case NodeKind::FloorDiv: a = &atom.as<FloorDivNode>()->a; b = &atom.as<FloorDivNode>()->b; *isQuotient = true; *isFloor = true; break;
      case NodeKind::FloorMod: a = &atom.as<FloorModNode>()->a; b = &atom.as<FloorModNode>()->b; *isQuotient = false; *isFloor = true; break;
      case NodeKind::Div: a = &atom.as<DivNode>()->a; b = &atom.as<DivNode>()->b; *isQuotient = true; *isFloor = false; break;
      case NodeKind::Mod: a = &atom.as<ModNode>()->a; b = &atom.as<ModNode>()->b; *isQuotient = false; *isFloor = false; break;
      default: return false;
    }
    auto* divisor = b->as<IntImmNode>();
    if (!divisor || divisor->value == 0) return false;
    *x = *a;
    *c = divisor->value;
    return true;
  };
  DataType element = form.dtype.element();
  for (size_t d = 0; d < form.terms.size(); ++d) {
    Expr x;
    int64_t c;
    bool isQuotient, isFloor;
    if (!divisionParts(form.terms[d].atom, &x, &c, &isQuotient, &isFloor)) continue;
    for (size_t t = 0; t < form.terms.size(); ++t) {
      if (t == d || !exprEqual(form.terms[t].atom, x)) continue;
      uint64_t b = static_cast<uint64_t>(form.terms[t].coefficient);
      uint64_t a = static_cast<uint64_t>(form.terms[d].coefficient);
      uint64_t expected = isQuotient ? (0 - b) * static_cast<uint64_t>(c) : 0 - b;
      if (wrapToType(static_cast<int64_t>(a), element) != wrapToType(static_cast<int64_t>(expected), element)) continue;
      Expr divisor = makeIntConst(x.dtype(), c);
      if (isQuotient) {
        form.terms[t].atom = isFloor ? FloorModNode::make(x, divisor) : ModNode::make(x, divisor);
      } else {
        form.terms[t].atom = isFloor ? FloorDivNode::make(x, divisor) : DivNode::make(x, divisor);
        form.terms[t].coefficient = static_cast<int64_t>(b * static_cast<uint64_t>(c));
      }
      form.terms.erase(form.terms.begin() + static_cast<std::ptrdiff_t>(d));
      --d;
      break;
    }
  }
}

}  // namespace

std::optional<LinearForm> toLinearForm(const Expr& e, size_t maxTerms) {
  if (!e.defined() || !e.dtype().isIntegral()) return std::nullopt;
  LinearForm form;
  form.dtype = e.dtype();
  Flattener flattener(form, maxTerms);
  flattener.collect(e, 1);
  if (!flattener.ok) return std::nullopt;
  DataType element = form.dtype.element();
  mergeDivisionPairs(form);
  std::vector<LinearTerm> kept;
  for (auto& term : form.terms) {
    term.coefficient = signedAtWidth(term.coefficient, element);
    if (term.coefficient != 0) kept.push_back(term);
  }
  form.terms = std::move(kept);
  form.constant = signedAtWidth(form.constant, element);
  return form;
}

Expr fromLinearForm(const LinearForm& form) {
  DataType dtype = form.dtype;
  auto scaled = [&](const Expr& atom, int64_t coefficient) {
    return coefficient == 1 ? atom : MulNode::make(atom, makeIntConst(dtype, coefficient));
  };
  Expr result;
  for (auto& term : form.terms) {
    if (term.coefficient <= 0) continue;
    Expr t = scaled(term.atom, term.coefficient);
    result = result.defined() ? AddNode::make(result, t) : t;
  }
  bool constantFirst = !result.defined() && form.constant > 0;
  if (constantFirst) result = makeIntConst(dtype, form.constant);
  for (auto& term : form.terms) {
    if (term.coefficient >= 0) continue;
    // The negation of the type's minimum is itself; keep it as an added term.
    if (term.coefficient == INT64_MIN || wrapToType(-term.coefficient, DataType(DataType::Code::Int, dtype.bits())) < 0) {
      Expr t = scaled(term.atom, term.coefficient);
      result = result.defined() ? AddNode::make(result, t) : t;
      continue;
    }
    Expr t = scaled(term.atom, -term.coefficient);
    result = SubNode::make(result.defined() ? result : makeIntConst(dtype, 0), t);
  }
  if (constantFirst || form.constant == 0) return result.defined() ? result : makeIntConst(dtype, 0);
  if (!result.defined()) return makeIntConst(dtype, form.constant);
  int64_t c = form.constant;
  bool negatable = c != INT64_MIN && wrapToType(-c, DataType(DataType::Code::Int, dtype.bits())) == -c;
  if (c < 0 && negatable) return SubNode::make(result, makeIntConst(dtype, -c));
  return AddNode::make(result, makeIntConst(dtype, c));
}

size_t linearOperationCount(const Expr& e) {
  if (asConstInt(e)) return 0;
  switch (e->kind()) {
    case NodeKind::Add: return 1 + linearOperationCount(e.as<AddNode>()->a) + linearOperationCount(e.as<AddNode>()->b);
    case NodeKind::Sub: return 1 + linearOperationCount(e.as<SubNode>()->a) + linearOperationCount(e.as<SubNode>()->b);
    case NodeKind::Mul: {
      auto* n = e.as<MulNode>();
      if (asConstInt(n->b)) return 1 + linearOperationCount(n->a);
      if (asConstInt(n->a)) return 1 + linearOperationCount(n->b);
      return 0;
    }
    default: return 0;
  }
}

}  // namespace tessel
