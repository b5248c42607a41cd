// Statement constructors and their validity checks.
#include "core/ir/Stmt.h"

#include "core/support/Error.h"

namespace tessel {

const char* forKindName(ForKind kind) {
  switch (kind) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::ThreadBinding: return "thread_binding";
  }
  return "?";
}

Stmt ForNode::make(Var loopVar, Expr min, Expr extent, ForKind forKind, Stmt body, std::string threadTag) {
  TESSEL_ICHECK(loopVar.defined() && min.defined() && extent.defined() && body.defined())
      << "for loop with an undefined part";
  TESSEL_ICHECK(min.dtype() == loopVar.dtype() && extent.dtype() == loopVar.dtype())
      << "for " << loopVar.name() << ": min/extent type must match the loop variable";
  return Stmt(new ForNode(std::move(loopVar), std::move(min), std::move(extent), forKind, std::move(body),
                          std::move(threadTag)));
}

Stmt AllocateNode::make(Buffer buffer, Stmt body) {
  TESSEL_ICHECK(buffer.defined() && body.defined()) << "allocate with an undefined part";
  return Stmt(new AllocateNode(std::move(buffer), std::move(body)));
}

Stmt IfThenElseNode::make(Expr condition, Stmt thenCase, Stmt elseCase) {
  TESSEL_ICHECK(condition.defined() && condition.dtype() == DataType::boolean()) << "if needs a scalar bool";
  TESSEL_ICHECK(thenCase.defined()) << "if without a then case";
  return Stmt(new IfThenElseNode(std::move(condition), std::move(thenCase), std::move(elseCase)));
}

Stmt SeqStmtNode::make(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  for (auto& stmt : seq) {
    if (!stmt.defined()) continue;
    if (auto* inner = stmt.as<SeqStmtNode>()) flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    else flat.push_back(stmt);
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(new SeqStmtNode(std::move(flat)));
}

Stmt LetStmtNode::make(Var var, Expr value, Stmt body) {
  TESSEL_ICHECK(value.defined() && body.defined() && var.dtype() == value.dtype()) << "bad let " << var.name();
  return Stmt(new LetStmtNode(std::move(var), std::move(value), std::move(body)));
}

Stmt EvaluateNode::make(Expr value) {
  TESSEL_ICHECK(value.defined()) << "evaluate of undefined";
  return Stmt(new EvaluateNode(std::move(value)));
}

Stmt AttrStmtNode::make(std::string key, Expr value, Stmt body) {
  TESSEL_ICHECK(value.defined() && body.defined()) << "attr " << key << " with an undefined part";
  return Stmt(new AttrStmtNode(std::move(key), std::move(value), std::move(body)));
}

Stmt BufferStoreNode::make(Buffer buffer, Expr value, std::vector<Expr> indices) {
  TESSEL_ICHECK(buffer.defined() && value.defined()) << "store with an undefined part";
  TESSEL_ICHECK(value.dtype().element() == buffer.dtype().element())
      << "store of " << value.dtype().toString() << " into " << buffer.name() << " of "
      << buffer.dtype().toString();
  for (auto& index : indices)
    TESSEL_ICHECK(index.defined() && index.dtype().isIntegral()) << "store " << buffer.name() << ": bad index";
  return Stmt(new BufferStoreNode(std::move(buffer), std::move(value), std::move(indices)));
}

Stmt BufferRealizeNode::make(Buffer buffer, std::vector<Range> bounds, Stmt body) {
  TESSEL_ICHECK(buffer.defined() && body.defined()) << "realize with an undefined part";
  TESSEL_ICHECK(bounds.size() == buffer.shape().size()) << "realize " << buffer.name() << ": one range per dimension";
  return Stmt(new BufferRealizeNode(std::move(buffer), std::move(bounds), std::move(body)));
}

PrimFunc::PrimFunc(std::string name, std::vector<Buffer> params, Stmt body)
    : NodeHandle(new PrimFuncNode(std::move(name), std::move(params), std::move(body))) {
  TESSEL_ICHECK(get()->body.defined()) << "function " << get()->name << " without a body";
}

}  // namespace tessel
