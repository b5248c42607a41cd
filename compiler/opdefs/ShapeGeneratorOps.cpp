// Operator definitions whose output depends only on shapes, attributes and constant inputs:
// Shape, Size, ConstantOfShape, Range and EyeLike. Their kernels have no runtime inputs, so
// FoldConstant replaces them by constants at compile time.
#include <cmath>

#include "compiler/opdefs/ShapeOpSupport.h"
#include "compiler/ops/Generate.h"

namespace tessel::graph::shape_ops {

namespace {
using Shape = std::vector<int64_t>;

Expected<OpKernel> buildShape(const OpCall& call) {
  const Shape& shape = inputType(call, 0).shape;
  int64_t rank = int64_t(shape.size());
  auto start = call.intAttr("start", 0);
  if (!start) return start.error();
  auto end = call.intAttr("end", rank);
  if (!end) return end.error();
  // Opset 15: negative bounds count from the end; both are clamped to [0, rank].
  auto resolve = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  int64_t first = resolve(*start), last = resolve(*end);
  std::vector<double> dims;
  for (int64_t d = first; d < last; ++d) dims.push_back(double(shape[size_t(d)]));
  return transformKernel(call, constantTensor({int64_t(dims.size())}, dims, DataType::int64()), {});
}

Expected<OpKernel> buildSize(const OpCall& call) {
  return transformKernel(call, constantTensor({}, {double(elementCount(inputType(call, 0).shape))}, DataType::int64()),
                         {});
}

// ConstantOfShape's `value` is a one-element tensor attribute. The ONNX importer hands a
// tensor attribute over as its elements (doubles for floats, ints otherwise) with its element
// type in "value.dtype" ("int32"); an ONNX element type code in "value_dtype" is accepted too.
Expected<OpKernel> buildConstantOfShape(const OpCall& call) {
  auto shape = call.constantInts(0, "shape");
  if (!shape) return shape.error();
  double value = 0;
  DataType dtype = DataType::float32();
  if (auto it = call.attributes.find("value"); it != call.attributes.end()) {
    const Attribute& attribute = it->second;
    if (auto* doubles = std::get_if<std::vector<double>>(&attribute)) {
      if (doubles->size() != 1) return call.error("attribute 'value' must hold exactly one element");
      value = doubles->front();
    } else if (auto* ints = std::get_if<std::vector<int64_t>>(&attribute)) {
      if (ints->size() != 1) return call.error("attribute 'value' must hold exactly one element");
      value = double(ints->front());
      dtype = DataType::int64();
    } else if (auto* number = std::get_if<double>(&attribute)) {
      value = *number;
    } else if (auto* integer = std::get_if<int64_t>(&attribute)) {
      value = double(*integer);
      dtype = DataType::int64();
    } else {
      return call.error("attribute 'value' is not a number", "give a one-element tensor");
    }
    if (call.hasAttr("value.dtype")) {
      auto name = call.stringAttr("value.dtype", "");
      if (!name) return name.error();
      auto type = DataType::parse(*name);
      if (!type) return call.error("value has element type '" + *name + "'", "Tessel has no such type");
      dtype = *type;
    } else if (call.hasAttr("value_dtype")) {
      auto code = call.intAttr("value_dtype", 1);
      if (!code) return code.error();
      auto type = dataTypeFromOnnx(*code);
      if (!type) return call.error("value has ONNX element type " + std::to_string(*code), "Tessel has no such type");
      dtype = *type;
    }
  }
  for (int64_t d : *shape)
    if (d < 0) return call.error("shape has a negative dimension " + std::to_string(d));
  return transformKernel(call, fill(*shape, value, dtype), {});
}

Expected<OpKernel> buildRange(const OpCall& call) {
  std::vector<double> bounds;
  const char* names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    auto v = call.constantDoubles(i, names[i]);
    if (!v) return v.error();
    if (v->size() != 1) return call.error(std::string(names[i]) + " must be a scalar");
    bounds.push_back(v->front());
  }
  double start = bounds[0], limit = bounds[1], delta = bounds[2];
  if (delta == 0) return call.error("delta is 0", "a range needs a non-zero step");
  int64_t count = std::max<int64_t>(int64_t(std::ceil((limit - start) / delta)), 0);
  return transformKernel(call, range(start, delta, count, inputType(call, 0).dtype), {});
}

Expected<OpKernel> buildEyeLike(const OpCall& call) {
  auto k = call.intAttr("k", 0);
  if (!k) return k.error();
  DataType dtype = inputType(call, 0).dtype;
  if (call.hasAttr("dtype")) {
    auto code = call.intAttr("dtype", 1);
    if (!code) return code.error();
    auto type = dataTypeFromOnnx(*code);
    if (!type) return call.error("dtype " + std::to_string(*code) + " is not an element type Tessel has");
    dtype = *type;
  }
  return transformKernel(call, eyeLike(inputType(call, 0).shape, *k, dtype), {});
}
}  // namespace

void registerGeneratorOps(OpRegistry& registry) {
  // Each output element is computed on its own, like data movement; in practice these fold
  // into constants before fusion runs.
  const OpPattern injective = OpPattern::Injective;
  registry.add(kernelTypedOp("Shape", injective, 1, 1, {}, buildShape));
  registry.add(kernelTypedOp("Size", injective, 1, 1, {}, buildSize));
  registry.add(kernelTypedOp("ConstantOfShape", injective, 1, 1, {0}, buildConstantOfShape));
  registry.add(kernelTypedOp("Range", injective, 3, 3, {0, 1, 2}, buildRange));
  registry.add(kernelTypedOp("EyeLike", injective, 1, 1, {}, buildEyeLike));
}

}  // namespace tessel::graph::shape_ops
