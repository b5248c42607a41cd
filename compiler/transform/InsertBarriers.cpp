// Barrier insertion (see InsertBarriers.h). The same rule as TVM's storage sync for shared
// memory: a barrier before the first read of what was written since the last barrier.
#include "compiler/transform/InsertBarriers.h"

#include <unordered_set>

#include "compiler/transform/GpuKernel.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {
using BufferSet = std::unordered_set<const BufferNode*>;

// The shared buffers a statement reads and writes.
struct SharedAccesses : IRVisitor {
  BufferSet reads, writes;
  using IRVisitor::visit;
  void visit(const BufferLoadNode* node) override {
    if (node->buffer->scope == "shared") reads.insert(node->buffer.get());
    IRVisitor::visit(node);
  }
  void visit(const BufferStoreNode* node) override {
    if (node->buffer->scope == "shared") writes.insert(node->buffer.get());
    IRVisitor::visit(node);
  }
};

SharedAccesses accessesOf(const Stmt& s) {
  SharedAccesses accesses;
  accesses.visitStmt(s);
  return accesses;
}

bool intersects(const BufferSet& a, const BufferSet& b) {
  for (auto* buffer : a)
    if (b.count(buffer)) return true;
  return false;
}

Stmt barrier() { return syncThreads(); }

bool containsThreadLoop(const Stmt& s) {
  struct Finder : IRVisitor {
    bool found = false;
    using IRVisitor::visit;
    void visit(const ForNode* node) override {
      if (node->forKind == ForKind::ThreadBinding && node->threadTag.rfind("threadIdx", 0) == 0) found = true;
      else IRVisitor::visit(node);
    }
  } finder;
  finder.visitStmt(s);
  return finder.found;
}

class BarrierInserter : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;

  Stmt visit(const SeqStmtNode* node, const Stmt& self) override {
    std::vector<Stmt> out;
    BufferSet unsynchronizedWrites;
    bool changed = false;
    for (const Stmt& item : node->seq) {
      Stmt rewritten = mutate(item);
      changed |= !rewritten.same(item);
      SharedAccesses accesses = accessesOf(rewritten);
      if (intersects(accesses.reads, unsynchronizedWrites)) {
        out.push_back(barrier());
        unsynchronizedWrites.clear();
        changed = true;
      }
      out.push_back(rewritten);
      unsynchronizedWrites.insert(accesses.writes.begin(), accesses.writes.end());
    }
    return changed ? SeqStmtNode::make(out) : self;
  }

  Stmt visit(const ForNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    // A serial loop whose body reads and writes shared memory: the next pass's writes must
    // wait until every thread is done reading this pass's values (a tile a matmul step
    // consumed, a row a cross-thread reduction folded). Only a body that is a sequence of
    // steps or spans the block's threads: a loop within one thread's own work (under a guard
    // some threads skip) must not wait for the others.
    if (node->forKind != ForKind::ThreadBinding) {
      SharedAccesses accesses = accessesOf(body);
      if (intersects(accesses.reads, accesses.writes) && (body.as<SeqStmtNode>() || containsThreadLoop(body)))
        body = SeqStmtNode::make({body, barrier()});
    }
    if (body.same(node->body)) return self;
    return ForNode::make(node->loopVar, node->min, node->extent, node->forKind, body, node->threadTag);
  }
};

}  // namespace

PrimFunc insertBarriers(const PrimFunc& f) {
  return rewriteKernelBodies(f, [](const Stmt& kernel) { return BarrierInserter().mutate(kernel); });
}

}  // namespace tessel
