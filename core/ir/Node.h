// Intrusive reference counting for immutable IR nodes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

#include "core/ir/NodeKinds.def"

namespace tessel {

enum class NodeKind : uint8_t {
#define TESSEL_NODE_KIND(Name) Name,
  TESSEL_EXPR_NODES(TESSEL_NODE_KIND) TESSEL_STMT_NODES(TESSEL_NODE_KIND)
#undef TESSEL_NODE_KIND
  Buffer,
  IterVar,
  PrimFunc,
  Other,  ///< Nodes outside the loop IR (TE operations, schedules, ...).
};

const char* nodeKindName(NodeKind kind);

/// Base of every immutable node. Never modified after construction; shared freely.
class Node {
public:
  explicit Node(NodeKind kind) : kind_(kind) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node() = default;

  NodeKind kind() const { return kind_; }

private:
  template <class T>
  friend class Ref;
  const NodeKind kind_;
  mutable std::atomic<int32_t> refCount_{0};
};

/// An owning, ref-counted pointer to a const node.
template <class T>
class Ref {
public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(const T* node) : node_(node) { retain(); }
  Ref(const Ref& other) : node_(other.node_) { retain(); }
  Ref(Ref&& other) noexcept : node_(std::exchange(other.node_, nullptr)) {}
  template <class U, class = std::enable_if_t<std::is_convertible_v<const U*, const T*>>>
  Ref(const Ref<U>& other) : node_(other.get()) { retain(); }
  ~Ref() { release(); }
  Ref& operator=(Ref other) noexcept {
    std::swap(node_, other.node_);
    return *this;
  }

  const T* get() const { return node_; }
  const T* operator->() const { return node_; }
  const T& operator*() const { return *node_; }
  explicit operator bool() const { return node_ != nullptr; }
  bool operator==(const Ref& other) const { return node_ == other.node_; }
  bool operator==(std::nullptr_t) const { return node_ == nullptr; }

private:
  void retain() {
    if (node_) node_->refCount_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (node_ && node_->refCount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete node_;
    node_ = nullptr;
  }
  const T* node_ = nullptr;
};

/// Base of the typed handles (Expr, Stmt, Buffer, ...): a Ref<Node> with a checked downcast.
class NodeHandle {
public:
  NodeHandle() = default;
  explicit NodeHandle(const Node* node) : ref_(node) {}
  explicit NodeHandle(Ref<Node> ref) : ref_(std::move(ref)) {}

  const Node* get() const { return ref_.get(); }
  bool defined() const { return ref_.get() != nullptr; }
  explicit operator bool() const { return defined(); }
  /// Pointer identity: true when both handles name the very same node.
  bool same(const NodeHandle& other) const { return ref_.get() == other.ref_.get(); }

  /// The node as T when it is of T's kind, else null.
  template <class T>
  const T* as() const {
    const Node* node = ref_.get();
    return node && node->kind() == T::kKind ? static_cast<const T*>(node) : nullptr;
  }

protected:
  Ref<Node> ref_;
};

/// Hashing and ordering by pointer identity, for maps keyed by a handle.
struct HandleHash {
  size_t operator()(const NodeHandle& h) const { return std::hash<const void*>()(h.get()); }
};
struct HandleEqual {
  bool operator()(const NodeHandle& a, const NodeHandle& b) const { return a.same(b); }
};
struct HandleLess {
  bool operator()(const NodeHandle& a, const NodeHandle& b) const { return a.get() < b.get(); }
};

}  // namespace tessel
