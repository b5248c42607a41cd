// Host/device split (see SplitHostDevice.h).
#include "compiler/transform/SplitHostDevice.h"

#include "compiler/transform/GpuKernel.h"
#include "compiler/transform/RemoveNoOp.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {
// The first loop of `s` below annotations and allocations: what decides where it runs.
const ForNode* outermostLoop(const Stmt& s) {
  Stmt current = s;
  while (current.defined()) {
    if (auto* loop = current.as<ForNode>()) return loop;
    if (auto* attr = current.as<AttrStmtNode>()) current = attr->body;
    else if (auto* allocate = current.as<AllocateNode>()) current = allocate->body;
    else if (auto* let = current.as<LetStmtNode>()) current = let->body;
    else return nullptr;
  }
  return nullptr;
}

bool containsBoundLoop(const Stmt& s) {
  bool found = false;
  struct Finder : IRVisitor {
    bool* found;
    using IRVisitor::visit;
    void visit(const ForNode* node) override {
      if (node->forKind == ForKind::ThreadBinding) *found = true;
      else IRVisitor::visit(node);
    }
  } finder;
  finder.found = &found;
  finder.visitStmt(s);
  return found;
}

// The top-level loop nests of `s` in order, with the global allocations around and between
// them taken out (they are allocated once, for the whole function, around all kernels).
void collectNests(const Stmt& s, std::vector<Buffer>& workspaces, std::vector<Stmt>& nests) {
  if (auto* allocate = s.as<AllocateNode>(); allocate && allocate->buffer->scope == "global") {
    workspaces.push_back(allocate->buffer);
    collectNests(allocate->body, workspaces, nests);
  } else if (auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& item : seq->seq) collectNests(item, workspaces, nests);
  } else {
    nests.push_back(s);
  }
}
}  // namespace

PrimFunc splitHostDevice(const PrimFunc& f, std::optional<HostCodeProblem>* problem) {
  // Intermediate stages computed at root live in global memory the host allocates (module
  // workspaces); the allocations stay around the kernels, which read and write them.
  std::vector<Buffer> workspaces;
  std::vector<Stmt> nests;
  collectNests(f->body, workspaces, nests);
  std::vector<Stmt> kernels;
  for (const Stmt& nest : nests) {
    if (isNoOp(nest)) continue;
    const ForNode* loop = outermostLoop(nest);
    // A nest with no bound loop at all (a reduction to one value) is a kernel of one thread.
    if ((!loop || loop->forKind != ForKind::ThreadBinding) && containsBoundLoop(nest)) {
      std::string name = loop ? loop->loopVar.name() : "";
      *problem = HostCodeProblem{
          name,
          (loop ? "loop '" + name + "' is not bound to a GPU block or thread index"
                : std::string("a statement outside any loop is not bound to a GPU thread")) +
              ": it would run in every thread",
          "bind the stage's outer loops, e.g. bind(C, io, blockIdx.x) and bind(C, ii, threadIdx.x)"};
      return f;
    }
    Expr index(int64_t(kernels.size()));
    kernels.push_back(AttrStmtNode::make(kDeviceKernelAttr, index, nest));
  }
  Stmt result = SeqStmtNode::make(kernels);
  for (auto it = workspaces.rbegin(); it != workspaces.rend(); ++it) result = AllocateNode::make(*it, result);
  return PrimFunc(f->name, f->params, result);
}

}  // namespace tessel
