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

// Calls f(var) for each variable that `node` defines (binds for its children).
template <class F>
void forEachDefinedVar(const Node* node, F&& f) {
  switch (node->kind()) {
    case NodeKind::For: f(static_cast<const ForNode*>(node)->loopVar.get()); break;
    case NodeKind::Let: f(static_cast<const LetNode*>(node)->var.get()); break;
    case NodeKind::LetStmt: f(static_cast<const LetStmtNode*>(node)->var.get()); break;
    case NodeKind::Allocate: f(static_cast<const AllocateNode*>(node)->buffer->data.get()); break;
    case NodeKind::BufferRealize: f(static_cast<const BufferRealizeNode*>(node)->buffer->data.get()); break;
    case NodeKind::Reduce:
      for (auto& axis : static_cast<const ReduceNode*>(node)->axes) f(axis.var().get());
      break;
    case NodeKind::IterVar: f(static_cast<const IterVarNode*>(node)->var.get()); break;
    case NodeKind::PrimFunc:
      for (auto& param : static_cast<const PrimFuncNode*>(node)->params) f(param->data.get());
      break;
    default: break;
  }
}

class EqualChecker {
public:
  bool equal(const Node* a, const Node* b) {
    if (a == b) return true;
    if (!a || !b || a->kind() != b->kind()) return false;
    if (a->kind() == NodeKind::Var) return sameVar(static_cast<const VarNode*>(a), static_cast<const VarNode*>(b));
    // Definitions pair up the variables they introduce before their fields are compared.
    std::vector<const VarNode*> definedA, definedB;
    forEachDefinedVar(a, [&](const VarNode* v) { definedA.push_back(v); });
    forEachDefinedVar(b, [&](const VarNode* v) { definedB.push_back(v); });
    if (definedA.size() != definedB.size()) return false;
    for (size_t i = 0; i < definedA.size(); ++i)
      if (!bind(definedA[i], definedB[i])) return false;
    if (a->kind() == NodeKind::Buffer &&
        !sameVar(static_cast<const BufferNode*>(a)->data.get(), static_cast<const BufferNode*>(b)->data.get()))
      return false;
    return dispatchNode(a, [&](const auto* na) {
      using NodeT = std::remove_cv_t<std::remove_pointer_t<decltype(na)>>;
      if (!na) return false;
      return fieldsEqual(na->fields(), static_cast<const NodeT*>(b)->fields());
    });
  }

private:
  // Pairs two defined variables; a variable defined twice must pair the same way.
  bool bind(const VarNode* a, const VarNode* b) {
    if (a->dtype != b->dtype) return false;
    auto [itA, newA] = aToB_.emplace(a, b);
    auto [itB, newB] = bToA_.emplace(b, a);
    return itA->second == b && itB->second == a;
  }
  // Uses: paired variables must be partners; unpaired (free) ones must be the same node.
  bool sameVar(const VarNode* a, const VarNode* b) {
    auto itA = aToB_.find(a);
    auto itB = bToA_.find(b);
    if (itA != aToB_.end() || itB != bToA_.end())
      return itA != aToB_.end() && itA->second == b && itB != bToA_.end() && itB->second == a;
    return a == b;
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
      // Defined variables hash by order of definition, free ones by identity, matching
      // EqualChecker.
      auto* var = static_cast<const VarNode*>(node);
      auto it = varIndex_.find(var);
      uint64_t identity = it != varIndex_.end() ? it->second : std::hash<const void*>()(var) | (1ull << 63);
      return mix(h, identity + var->dtype.bits() * 131);
    }
    forEachDefinedVar(node, [&](const VarNode* v) { varIndex_.emplace(v, varIndex_.size()); });
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
