// Structural equality and hashing, both generated from each node's fields() tuple so the
// node list in NodeKinds.def stays the single place that knows about node kinds.
#include "core/ir/StructuralEqual.h"

#include <unordered_map>

namespace tessel {

namespace {

template <class F>
decltype(auto) dispatchNode(const Node* node, F&& f) {
  switch (node->kind()) {
#define TESSEL_DISPATCH(Name) \
  case NodeKind::Name: return f(static_cast<const Name##Node*>(node));
    TESSEL_EXPR_NODES(TESSEL_DISPATCH)
    TESSEL_STMT_NODES(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    case NodeKind::Buffer: return f(static_cast<const BufferNode*>(node));
    case NodeKind::IterVar: return f(static_cast<const IterVarNode*>(node));
    case NodeKind::PrimFunc: return f(static_cast<const PrimFuncNode*>(node));
    default: return f(static_cast<const PrimFuncNode*>(nullptr));
  }
}

class EqualChecker {
public:
  bool equal(const Node* a, const Node* b) {
    if (a == b) return true;
    if (!a || !b || a->kind() != b->kind()) return false;
    if (a->kind() == NodeKind::Var) return bind(static_cast<const VarNode*>(a), static_cast<const VarNode*>(b));
    if (a->kind() == NodeKind::Buffer) {
      auto* ba = static_cast<const BufferNode*>(a);
      auto* bb = static_cast<const BufferNode*>(b);
      if (!bind(ba->data.get(), bb->data.get())) return false;
    }
    return dispatchNode(a, [&](const auto* na) {
      using NodeT = std::remove_cv_t<std::remove_pointer_t<decltype(na)>>;
      if (!na) return false;
      return fieldsEqual(na->fields(), static_cast<const NodeT*>(b)->fields());
    });
  }

private:
  // Maps variables of `a` to variables of `b` on first sight; a later mismatch fails.
  bool bind(const VarNode* a, const VarNode* b) {
    if (a->dtype != b->dtype) return false;
    auto [itA, newA] = aToB_.emplace(a, b);
    auto [itB, newB] = bToA_.emplace(b, a);
    return itA->second == b && itB->second == a;
  }

  template <class Tuple>
  bool fieldsEqual(const Tuple& x, const Tuple& y) {
    return fieldsEqualImpl(x, y, std::make_index_sequence<std::tuple_size_v<Tuple>>());
  }
  template <class Tuple, size_t... I>
  bool fieldsEqualImpl(const Tuple& x, const Tuple& y, std::index_sequence<I...>) {
    return (field(std::get<I>(x), std::get<I>(y)) && ...);
  }

  bool field(const NodeHandle& x, const NodeHandle& y) { return equal(x.get(), y.get()); }
  bool field(const Range& x, const Range& y) { return field(x.min, y.min) && field(x.extent, y.extent); }
  template <class T>
  bool field(const std::vector<T>& x, const std::vector<T>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!field(x[i], y[i])) return false;
    return true;
  }
  template <class T>
    requires(!std::is_base_of_v<NodeHandle, T>)
  bool field(const T& x, const T& y) { return x == y; }

  std::unordered_map<const VarNode*, const VarNode*> aToB_, bToA_;
};

class Hasher {
public:
  uint64_t hash(const Node* node) {
    if (!node) return 0x9e3779b97f4a7c15ull;
    uint64_t h = mix(0xcbf29ce484222325ull, uint64_t(node->kind()));
    if (node->kind() == NodeKind::Var) {
      // Variables hash by order of first appearance, matching EqualChecker's binding.
      auto [it, inserted] = varIndex_.emplace(static_cast<const VarNode*>(node), varIndex_.size());
      return mix(h, it->second + static_cast<const VarNode*>(node)->dtype.bits() * 131);
    }
    if (node->kind() == NodeKind::Buffer) h = mix(h, hash(static_cast<const BufferNode*>(node)->data.get()));
    return dispatchNode(node, [&](const auto* n) {
      if (!n) return h;
      uint64_t out = h;
      std::apply([&](const auto&... f) { ((out = mix(out, field(f))), ...); }, n->fields());
      return out;
    });
  }

private:
  static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
  }
  uint64_t field(const NodeHandle& x) { return hash(x.get()); }
  uint64_t field(const Range& r) { return mix(field(r.min), field(r.extent)); }
  uint64_t field(const DataType& t) { return uint64_t(t.code()) << 32 | uint64_t(t.bits()) << 16 | t.lanes(); }
  uint64_t field(const std::string& s) { return std::hash<std::string>()(s); }
  uint64_t field(double d) { return std::hash<double>()(d); }
  template <class T>
  uint64_t field(const std::vector<T>& items) {
    uint64_t h = items.size();
    for (auto& item : items) h = mix(h, field(item));
    return h;
  }
  template <class T>
    requires(!std::is_base_of_v<NodeHandle, T>)
  uint64_t field(const T& value) { return uint64_t(value); }

  std::unordered_map<const VarNode*, uint64_t> varIndex_;
};

}  // namespace

bool structuralEqual(const Expr& a, const Expr& b) { return EqualChecker().equal(a.get(), b.get()); }
bool structuralEqual(const Stmt& a, const Stmt& b) { return EqualChecker().equal(a.get(), b.get()); }
bool structuralEqual(const PrimFunc& a, const PrimFunc& b) { return EqualChecker().equal(a.get(), b.get()); }
uint64_t structuralHash(const Expr& e) { return Hasher().hash(e.get()); }
uint64_t structuralHash(const Stmt& s) { return Hasher().hash(s.get()); }
uint64_t structuralHash(const PrimFunc& f) { return Hasher().hash(f.get()); }

}  // namespace tessel
