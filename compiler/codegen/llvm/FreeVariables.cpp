// Free-variable analysis of loop-IR statements, for outlining parallel loop bodies.
#include "compiler/codegen/llvm/FreeVariables.h"

#include <unordered_map>
#include <unordered_set>

#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {

class FreeVariableCollector : public IRVisitor {
public:
  std::vector<Var> found;

  void bind(const Var& var) { ++bindingDepth_[var.get()]; }
  void unbind(const Var& var) { --bindingDepth_[var.get()]; }

  void use(const Var& var) {
    auto it = bindingDepth_.find(var.get());
    if (it != bindingDepth_.end() && it->second > 0) return;
    if (seen_.insert(var.get()).second) found.push_back(var);
  }

  void visit(const VarNode* node) override { use(Var(node)); }
  void visitBuffer(const Buffer& buffer) override { use(buffer->data); }

  void visit(const ForNode* node) override {
    visitExpr(node->min);
    visitExpr(node->extent);
    bind(node->loopVar);
    visitStmt(node->body);
    unbind(node->loopVar);
  }
  void visit(const LetStmtNode* node) override {
    visitExpr(node->value);
    bind(node->var);
    visitStmt(node->body);
    unbind(node->var);
  }
  void visit(const LetNode* node) override {
    visitExpr(node->value);
    bind(node->var);
    visitExpr(node->body);
    unbind(node->var);
  }
  void visit(const AllocateNode* node) override {
    // The size is computed where the allocation happens, so its variables are uses.
    for (auto& extent : node->buffer->shape) visitExpr(extent);
    bind(node->buffer->data);
    visitStmt(node->body);
    unbind(node->buffer->data);
  }

private:
  std::unordered_map<const VarNode*, int> bindingDepth_;
  std::unordered_set<const VarNode*> seen_;
};

}  // namespace

std::vector<Var> freeVariables(const Stmt& body, const std::vector<Var>& bound) {
  FreeVariableCollector collector;
  for (auto& var : bound) collector.bind(var);
  collector.visitStmt(body);
  return std::move(collector.found);
}

}  // namespace tessel
