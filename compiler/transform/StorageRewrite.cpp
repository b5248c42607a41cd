// Storage rewriting (see StorageRewrite.h).
#include "compiler/transform/StorageRewrite.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/transform/RemoveNoOp.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {

using DataVarSet = std::unordered_set<const VarNode*>;

// Every buffer (by data variable) that a statement loads from, stores to, or names.
class AccessCollector : public IRVisitor {
public:
  DataVarSet read, touched;
  void visit(const BufferLoadNode* node) override {
    read.insert(node->buffer->data.get());
    touched.insert(node->buffer->data.get());
    IRVisitor::visit(node);
  }
  void visit(const BufferStoreNode* node) override {
    touched.insert(node->buffer->data.get());
    IRVisitor::visit(node);
  }
  // A data variable used as a value (its address escapes): count it as read.
  void visit(const VarNode* node) override {
    if (node->dtype.isHandle()) {
      read.insert(node);
      touched.insert(node);
    }
  }
};

AccessCollector accessesOf(const Stmt& s) {
  AccessCollector collector;
  collector.visitStmt(s);
  return collector;
}

// The element count of a flat allocation of constant size, or -1.
int64_t constantFlatSize(const Buffer& buffer) {
  if (buffer.shape().size() != 1 || !buffer->strides.empty()) return -1;
  const int64_t* size = asConstInt(buffer.shape()[0]);
  return size && !buffer.shape()[0].dtype().isVector() ? *size : -1;
}

bool constantSize(const Buffer& buffer) {
  for (auto& extent : buffer.shape())
    if (!asConstInt(extent)) return false;
  return true;
}

// --- 1. unread allocations -------------------------------------------------------------

class StoreRemover : public IRMutator {
public:
  explicit StoreRemover(const VarNode* data) : data_(data) {}
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Stmt visit(const BufferStoreNode* node, const Stmt& self) override {
    return node->buffer->data.get() == data_ ? SeqStmtNode::make({}) : self;
  }

private:
  const VarNode* data_;
};

class UnreadAllocationRemover : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Stmt visit(const AllocateNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    const VarNode* data = node->buffer->data.get();
    if (!accessesOf(body).read.count(data)) return removeNoOp(StoreRemover(data).mutate(body));
    return body.same(node->body) ? self : AllocateNode::make(node->buffer, body);
  }
};

// --- 2. hoisting out of serial loops -----------------------------------------------------

class AllocationHoister : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Stmt visit(const ForNode* node, const Stmt& self) override {
    Stmt loop = IRMutator::visit(node, self);  // inner loops first: hoisting then repeats outward
    auto* rewritten = loop.as<ForNode>();
    if (rewritten->forKind != ForKind::Serial) return loop;
    std::vector<Buffer> hoisted;
    Stmt body = rewritten->body;
    while (auto* allocate = body.as<AllocateNode>()) {
      if (!constantSize(allocate->buffer)) break;
      hoisted.push_back(allocate->buffer);
      body = allocate->body;
    }
    if (hoisted.empty()) return loop;
    Stmt result = ForNode::make(rewritten->loopVar, rewritten->min, rewritten->extent, rewritten->forKind, body,
                                rewritten->threadTag);
    for (auto it = hoisted.rbegin(); it != hoisted.rend(); ++it) result = AllocateNode::make(*it, result);
    return result;
  }
};

// --- 3. sharing memory within a block ----------------------------------------------------

// Replaces buffers by the shared buffer that now holds them.
class BufferRenamer : public IRMutator {
public:
  explicit BufferRenamer(const std::unordered_map<const VarNode*, Buffer>& map) : map_(map) {}
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Expr visit(const BufferLoadNode* node, const Expr& self) override {
    Expr load = IRMutator::visit(node, self);
    auto it = map_.find(node->buffer->data.get());
    if (it == map_.end()) return load;
    return BufferLoadNode::make(it->second, load.as<BufferLoadNode>()->indices);
  }
  Stmt visit(const BufferStoreNode* node, const Stmt& self) override {
    Stmt store = IRMutator::visit(node, self);
    auto it = map_.find(node->buffer->data.get());
    if (it == map_.end()) return store;
    auto* rewritten = store.as<BufferStoreNode>();
    return BufferStoreNode::make(it->second, rewritten->value, rewritten->indices);
  }
  Expr visit(const VarNode* node, const Expr& self) override {
    auto it = map_.find(node);
    return it == map_.end() ? self : Expr(it->second->data);
  }

private:
  const std::unordered_map<const VarNode*, Buffer>& map_;
};

// A block flattened into a list: allocation markers (the buffer) and the statements
// between them. `Allocate A { s1; Allocate B { s2; s3 } }` is [A, s1, B, s2, s3].
struct BlockEntry {
  Buffer allocation;  // defined for a marker
  Stmt statement;     // defined for a statement
};

// Memory shared by allocations with disjoint lifetimes.
struct Slot {
  Buffer first;
  int64_t size = 0;
  int lastUse = -1;
  std::vector<const VarNode*> members;
};

class MemoryReuser : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Stmt visit(const AllocateNode* node, const Stmt& self) override { return rewriteBlock(self); }
  Stmt visit(const SeqStmtNode* node, const Stmt& self) override { return rewriteBlock(self); }

private:
  static void linearize(const Stmt& s, std::vector<BlockEntry>* out) {
    if (auto* allocate = s.as<AllocateNode>()) {
      out->push_back({allocate->buffer, Stmt()});
      linearize(allocate->body, out);
    } else if (auto* seq = s.as<SeqStmtNode>()) {
      for (auto& item : seq->seq) linearize(item, out);
    } else {
      out->push_back({Buffer(), s});
    }
  }

  // The block with its statements rewritten and its structure kept.
  Stmt rebuildInPlace(const Stmt& s) {
    if (auto* allocate = s.as<AllocateNode>()) {
      Stmt body = rebuildInPlace(allocate->body);
      return body.same(allocate->body) ? s : AllocateNode::make(allocate->buffer, body);
    }
    if (auto* seq = s.as<SeqStmtNode>()) {
      bool changed = false;
      std::vector<Stmt> items;
      for (auto& item : seq->seq) {
        items.push_back(rebuildInPlace(item));
        changed = changed || !items.back().same(item);
      }
      return changed ? SeqStmtNode::make(std::move(items)) : s;
    }
    return mutate(s);
  }

  Stmt rewriteBlock(const Stmt& head) {
    std::vector<BlockEntry> entries;
    linearize(head, &entries);

    // Lifetimes in statement positions of the block.
    std::unordered_map<const VarNode*, std::pair<int, int>> lifetime;
    std::vector<const BufferNode*> candidates;
    DataVarSet seen;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].allocation.defined()) {
        const Buffer& buffer = entries[i].allocation;
        // The same memory allocated twice in one block: too unusual to reason about.
        if (!seen.insert(buffer->data.get()).second) return rebuildInPlace(head);
        if (constantFlatSize(buffer) >= 0) candidates.push_back(buffer.get());
        continue;
      }
      for (const VarNode* data : accessesOf(entries[i].statement).touched) {
        auto [it, inserted] = lifetime.emplace(data, std::pair<int, int>(int(i), int(i)));
        if (!inserted) it->second.second = int(i);
      }
    }

    // Greedy assignment in order of first use: the best-fitting free slot of the same
    // dtype and scope, else a new one.
    std::vector<const BufferNode*> ordered;
    for (auto* buffer : candidates)
      if (lifetime.count(buffer->data.get())) ordered.push_back(buffer);
    std::stable_sort(ordered.begin(), ordered.end(), [&](const BufferNode* a, const BufferNode* b) {
      return lifetime[a->data.get()].first < lifetime[b->data.get()].first;
    });
    std::vector<Slot> slots;
    bool shared = false;
    for (auto* node : ordered) {
      Buffer buffer(node);
      auto [firstUse, lastUse] = lifetime[node->data.get()];
      int64_t size = constantFlatSize(buffer);
      Slot* best = nullptr;
      for (auto& slot : slots) {
        if (slot.lastUse >= firstUse || slot.first.dtype() != buffer.dtype() || slot.first->scope != node->scope)
          continue;
        bool fits = slot.size >= size, bestFits = best && best->size >= size;
        if (!best || (fits && (!bestFits || slot.size < best->size)) || (!fits && !bestFits && slot.size > best->size))
          best = &slot;
      }
      if (!best) {
        slots.push_back({buffer, size, lastUse, {node->data.get()}});
        continue;
      }
      shared = true;
      best->size = std::max(best->size, size);
      best->lastUse = lastUse;
      best->members.push_back(node->data.get());
    }
    if (!shared) return rebuildInPlace(head);

    // Shared buffers: the first member's memory, grown to the largest member.
    std::unordered_map<const VarNode*, Buffer> renamed;
    std::vector<Buffer> sharedAllocations;
    DataVarSet hoisted;
    for (auto& slot : slots) {
      Buffer buffer = slot.first;
      if (slot.size != constantFlatSize(buffer)) {
        buffer = Buffer(new BufferNode(buffer.name(), buffer->data, buffer.dtype(),
                                       {IntImmNode::make(buffer.shape()[0].dtype(), slot.size)}, {}, buffer->scope));
      }
      sharedAllocations.push_back(buffer);
      for (const VarNode* member : slot.members) {
        hoisted.insert(member);
        if (member != buffer->data.get() || !buffer.same(slot.first)) renamed[member] = buffer;
      }
    }

    // Statements in order; allocations that share nothing keep their place.
    BufferRenamer renamer(renamed);
    Stmt result;
    std::vector<Stmt> tail;
    for (size_t i = entries.size(); i-- > 0;) {
      if (entries[i].allocation.defined()) {
        if (hoisted.count(entries[i].allocation->data.get())) continue;
        Stmt body = SeqStmtNode::make(std::move(tail));
        tail = {AllocateNode::make(entries[i].allocation, body)};
        continue;
      }
      tail.insert(tail.begin(), mutate(renamer.mutate(entries[i].statement)));
    }
    result = SeqStmtNode::make(std::move(tail));
    for (auto it = sharedAllocations.rbegin(); it != sharedAllocations.rend(); ++it)
      result = AllocateNode::make(*it, result);
    return result;
  }
};

}  // namespace

PrimFunc storageRewrite(const PrimFunc& f) {
  Stmt body = UnreadAllocationRemover().mutate(f->body);
  body = AllocationHoister().mutate(body);
  body = MemoryReuser().mutate(body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

}  // namespace tessel
