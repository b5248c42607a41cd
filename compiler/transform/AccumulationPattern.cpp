// Accumulation pieces shared by the tensorize matchers.
#include "compiler/transform/AccumulationPattern.h"

#include "core/ir/StructuralEqual.h"

namespace tessel {

const BufferLoadNode* widenedLoad(const Expr& e, DataType accumulator) {
  const auto* cast = e.as<CastNode>();
  if (!cast || cast->dtype != accumulator) return nullptr;
  const auto* load = cast->value.as<BufferLoadNode>();
  return load && load->dtype.isScalar() && load->indices.size() == 1 ? load : nullptr;
}

bool isZeroConstant(const Expr& e) {
  if (const auto* imm = e.as<FloatImmNode>()) return imm->value == 0;
  return isConstInt(e, 0);
}

bool loadsStoredElement(const Expr& e, const BufferStoreNode* store) {
  const auto* load = e.as<BufferLoadNode>();
  return load && load->buffer.same(store->buffer) && load->indices.size() == 1 &&
         structuralEqual(load->indices[0], store->indices[0]);
}

}  // namespace tessel
