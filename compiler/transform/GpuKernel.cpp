// Launch shapes of lowered GPU kernels (see GpuKernel.h).
#include "compiler/transform/GpuKernel.h"

#include <algorithm>

#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

int threadTagDimension(const std::string& tag) {
  char last = tag.empty() ? 'x' : tag.back();
  return last == 'z' ? 2 : last == 'y' ? 1 : 0;
}

Stmt syncThreads() {
  return AttrStmtNode::make(kSyncThreadsAttr, Expr(int64_t(0)), EvaluateNode::make(Expr(int64_t(0))));
}

bool isSyncThreads(const Stmt& s) {
  auto* attr = s.as<AttrStmtNode>();
  return attr && attr->key == kSyncThreadsAttr;
}

int64_t maxThreadsPerBlock(const Target&) { return 1024; }
int64_t maxSharedBytesPerBlock(const Target&) { return 48 * 1024; }

bool isBlockIndexTag(const std::string& tag) { return tag.rfind("blockIdx", 0) == 0; }

std::vector<const AttrStmtNode*> deviceKernels(const PrimFunc& f) {
  std::vector<const AttrStmtNode*> kernels;
  struct Collector : IRVisitor {
    std::vector<const AttrStmtNode*>* out;
    using IRVisitor::visit;
    void visit(const AttrStmtNode* node) override {
      if (node->key == kDeviceKernelAttr) out->push_back(node);
      else IRVisitor::visit(node);
    }
  } collector;
  collector.out = &kernels;
  collector.visitStmt(f->body);
  return kernels;
}

PrimFunc rewriteKernelBodies(const PrimFunc& f, const std::function<Stmt(const Stmt&)>& rewrite) {
  class KernelRewriter : public IRMutator {
  public:
    explicit KernelRewriter(const std::function<Stmt(const Stmt&)>& rewrite) : rewrite_(rewrite) {}
    using IRMutator::mutate;

  protected:
    using IRMutator::visit;
    Stmt visit(const AttrStmtNode* node, const Stmt& self) override {
      if (node->key != kDeviceKernelAttr) return IRMutator::visit(node, self);
      Stmt body = rewrite_(node->body);
      if (body.same(node->body)) return self;
      return AttrStmtNode::make(node->key, node->value, body);
    }

  private:
    const std::function<Stmt(const Stmt&)>& rewrite_;
  };
  KernelRewriter rewriter(rewrite);
  Stmt body = rewriter.mutate(f->body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

std::vector<Buffer> deviceWorkspaces(const PrimFunc& f) {
  std::vector<Buffer> workspaces;
  Stmt body = f->body;
  while (auto* allocate = body.as<AllocateNode>()) {
    if (allocate->buffer->scope != "global") break;
    workspaces.push_back(allocate->buffer);
    body = allocate->body;
  }
  return workspaces;
}

KernelLaunch kernelLaunch(const PrimFunc& f, const AttrStmtNode* kernel) {
  KernelLaunch launch;
  const int64_t* index = asConstInt(kernel->value);
  launch.name = f->name + "_kernel" + std::to_string(index ? *index : 0);
  struct Scanner : IRVisitor {
    KernelLaunch* launch;
    using IRVisitor::visit;
    void visit(const ForNode* node) override {
      if (node->forKind == ForKind::ThreadBinding) {
        const int64_t* extent = asConstInt(node->extent);
        int d = threadTagDimension(node->threadTag);
        auto& dims = isBlockIndexTag(node->threadTag) ? launch->grid : launch->block;
        if (!extent) {
          if (launch->nonConstantExtent.empty()) launch->nonConstantExtent = node->threadTag;
        } else {
          dims[d] = std::max(dims[d], *extent);
        }
      }
      IRVisitor::visit(node);
    }
    void visit(const AllocateNode* node) override {
      if (node->buffer->scope == "shared") {
        int64_t elements = 1;
        for (auto& extent : node->buffer->shape)
          if (const int64_t* e = asConstInt(extent)) elements *= *e;
        launch->sharedBytes += elements * node->buffer->dtype.bytes();
      }
      IRVisitor::visit(node);
    }
  } scanner;
  scanner.launch = &launch;
  scanner.visitStmt(kernel->body);
  return launch;
}

}  // namespace tessel
