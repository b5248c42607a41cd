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

}  // namespace

std::optional<LinearForm> toLinearForm(const Expr& e, size_t maxTerms) {
  if (!e.defined() || !e.dtype().isIntegral()) return std::nullopt;
  LinearForm form;
  form.dtype = e.dtype();
  Flattener flattener(form, maxTerms);
  flattener.collect(e, 1);
  if (!flattener.ok) return std::nullopt;
  DataType element = form.dtype.element();
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

}  // namespace tessel
