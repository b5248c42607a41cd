// Storage flattening (see StorageFlatten.h).
#include "compiler/transform/StorageFlatten.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "compiler/transform/IndexArithmetic.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/support/Error.h"

namespace tessel {

namespace {

// How the logical coordinates of one buffer map to elements of its flat 1-D buffer.
struct FlatLayout {
  Buffer flat;
  std::vector<Expr> mins;  // logical coordinate of element 0, per dimension
  std::vector<Expr> strides;
};

std::vector<Expr> compactStrides(const std::vector<Expr>& extents) {
  std::vector<Expr> strides(extents.size());
  Expr stride = Expr(1);
  for (size_t d = extents.size(); d-- > 0;) {
    strides[d] = stride;
    stride = mulIndex(stride, extents[d]);
  }
  return strides;
}

Expr elementCount(const std::vector<Expr>& extents) {
  Expr count = Expr(1);
  for (auto& extent : extents) count = mulIndex(count, extent);
  return count;
}

// Elements needed to hold `extents` laid out with `strides`. For declared strides this is
// strides[0] * extents[0] (the row padding of the outermost dimension included), but never
// less than the compact size nor than the last element's offset + 1 (strides that are not
// row-major).
Expr storageSize(const std::vector<Expr>& extents, const std::vector<Expr>& strides, bool declaredStrides) {
  Expr compact = elementCount(extents);
  if (!declaredStrides || extents.empty()) return compact;
  Expr padded = mulIndex(strides[0], extents[0]);
  Expr span = Expr(1);
  for (size_t d = 0; d < extents.size(); ++d) span = addIndex(span, mulIndex(subIndex(extents[d], 1), strides[d]));
  const int64_t* c = asConstInt(compact);
  const int64_t* p = asConstInt(padded);
  const int64_t* s = asConstInt(span);
  if (c && p && s) return Expr(std::max({*c, *p, *s}));
  return max(padded, compact);
}

Buffer makeFlatBuffer(const Buffer& buffer, Expr size) {
  return Buffer(new BufferNode(buffer.name(), buffer->data, buffer.dtype(), {std::move(size)}, {},
                               buffer->scope));
}

bool isFlat(const Buffer& buffer) { return buffer.shape().size() == 1 && buffer->strides.empty(); }

// The layout of a buffer addressed over its whole shape (parameters, allocations).
FlatLayout wholeBufferLayout(const Buffer& buffer) {
  FlatLayout layout;
  bool declared = !buffer->strides.empty();
  layout.strides = declared ? buffer->strides : compactStrides(buffer.shape());
  layout.flat = isFlat(buffer) ? buffer
                               : makeFlatBuffer(buffer, storageSize(buffer.shape(), layout.strides, declared));
  return layout;
}

class StorageFlattener : public IRMutator {
public:
  explicit StorageFlattener(const std::vector<Buffer>& params) {
    for (auto& param : params) {
      byBuffer_[param.get()] = wholeBufferLayout(param);
      byData_[param->data.get()] = byBuffer_[param.get()];
    }
  }
  using IRMutator::mutate;

protected:
  using IRMutator::visit;

  Stmt visit(const BufferRealizeNode* node, const Stmt& self) override {
    const Buffer& buffer = node->buffer;
    FlatLayout layout;
    std::vector<Expr> extents;
    for (auto& bound : node->bounds) {
      layout.mins.push_back(mutate(bound.min));
      extents.push_back(mutate(bound.extent));
    }
    bool declared = !buffer->strides.empty();
    layout.strides = declared ? buffer->strides : compactStrides(extents);
    layout.flat = makeFlatBuffer(buffer, storageSize(extents, layout.strides, declared));
    Buffer flat = layout.flat;
    Stmt body = withLayout(buffer, std::move(layout), node->body);
    return AllocateNode::make(flat, body);
  }

  Stmt visit(const AllocateNode* node, const Stmt& self) override {
    if (isFlat(node->buffer)) return IRMutator::visit(node, self);
    FlatLayout layout = wholeBufferLayout(node->buffer);
    Buffer flat = layout.flat;
    return AllocateNode::make(flat, withLayout(node->buffer, std::move(layout), node->body));
  }

  Expr visit(const BufferLoadNode* node, const Expr& self) override {
    bool changed = false;
    auto indices = mutateAll(node->indices, &changed);
    const FlatLayout& layout = layoutOf(node->buffer, node->indices.size());
    if (!changed && layout.flat.same(node->buffer) && layout.mins.empty()) return self;
    return BufferLoadNode::make(layout.flat, {flatIndex(layout, node->buffer, indices)});
  }

  Stmt visit(const BufferStoreNode* node, const Stmt& self) override {
    bool changed = false;
    Expr value = mutate(node->value);
    auto indices = mutateAll(node->indices, &changed);
    const FlatLayout& layout = layoutOf(node->buffer, node->indices.size());
    if (!changed && value.same(node->value) && layout.flat.same(node->buffer) && layout.mins.empty()) return self;
    return BufferStoreNode::make(layout.flat, value, {flatIndex(layout, node->buffer, indices)});
  }

private:
  // Mutates `body` with `buffer` mapped to `layout`, restoring any outer mapping after.
  Stmt withLayout(const Buffer& buffer, FlatLayout layout, const Stmt& body) {
    auto savedBuffer = replace(byBuffer_, buffer.get(), layout);
    auto savedData = replace(byData_, buffer->data.get(), std::move(layout));
    Stmt result = mutate(body);
    restore(byBuffer_, buffer.get(), savedBuffer);
    restore(byData_, buffer->data.get(), savedData);
    return result;
  }

  template <class Map, class Key>
  static std::optional<FlatLayout> replace(Map& map, Key key, FlatLayout layout) {
    std::optional<FlatLayout> saved;
    if (auto it = map.find(key); it != map.end()) saved = it->second;
    map[key] = std::move(layout);
    return saved;
  }
  template <class Map, class Key>
  static void restore(Map& map, Key key, const std::optional<FlatLayout>& saved) {
    if (saved) map[key] = *saved;
    else map.erase(key);
  }

  // Accesses normally name the very buffer that was realized or passed. One that names
  // another buffer over the same memory is mapped the same way when its dimensions agree;
  // otherwise (an already flattened view, an allocation made before this pass) it is
  // addressed over its own shape.
  const FlatLayout& layoutOf(const Buffer& buffer, size_t dimensions) {
    if (auto it = byBuffer_.find(buffer.get()); it != byBuffer_.end()) return it->second;
    if (auto it = byData_.find(buffer->data.get()); it != byData_.end() && it->second.strides.size() == dimensions)
      return it->second;
    return byBuffer_.emplace(buffer.get(), wholeBufferLayout(buffer)).first->second;
  }

  static Expr flatIndex(const FlatLayout& layout, const Buffer& buffer, const std::vector<Expr>& indices) {
    TESSEL_ICHECK(indices.size() == layout.strides.size())
        << "access to " << buffer.name() << " with " << indices.size() << " indices, but it has "
        << layout.strides.size() << " dimensions";
    Expr offset = Expr(0);
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr coordinate = layout.mins.empty() ? indices[d] : subIndex(indices[d], layout.mins[d]);
      offset = addIndex(offset, mulIndex(coordinate, layout.strides[d]));
    }
    return offset;
  }

  std::unordered_map<const BufferNode*, FlatLayout> byBuffer_;
  std::unordered_map<const VarNode*, FlatLayout> byData_;
};

}  // namespace

PrimFunc storageFlatten(const PrimFunc& f) {
  Stmt body = StorageFlattener(f->params).mutate(f->body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

}  // namespace tessel
