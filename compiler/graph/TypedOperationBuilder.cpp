// Typed replacement operations for graph passes (TypedOperationBuilder.h).
#include "compiler/graph/TypedOperationBuilder.h"

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

std::optional<Value> TypedOperationBuilder::typed(const std::string& name, const std::string& op,
                                                  std::vector<Value> inputs, Attributes attributes,
                                                  const std::vector<Provenance>& provenance) {
  auto outputs = makeTypedOperation(name, op, std::move(inputs), std::move(attributes), provenance);
  if (!outputs) {
    error_ = outputs.error();
    return std::nullopt;
  }
  return (*outputs)[0];
}

Value TypedOperationBuilder::int64s(const std::string& name, const std::vector<int64_t>& values) {
  auto array = runtime::NDArray::empty({int64_t(values.size())}, runtime::DataType::int64());
  array.copyFrom(values);
  return makeConstant(name, array);
}

}  // namespace tessel::graph
