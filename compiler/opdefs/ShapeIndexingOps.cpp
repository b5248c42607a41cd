// Operator definitions that read or write at positions held in tensors: Gather,
// GatherElements, GatherND, ScatterElements (and the older Scatter), ScatterND, OneHot,
// ReverseSequence, and Compress / NonZero / Unique when the positions are known at compile time.
#include "compiler/opdefs/ShapeOpSupport.h"
#include "compiler/ops/Generate.h"
#include "compiler/ops/Indexing.h"
#include "compiler/ops/Transform.h"
#include "compiler/ops/TransformSupport.h"

namespace tessel::graph::shape_ops {

namespace {
using Shape = std::vector<int64_t>;

Expected<OpKernel> buildGather(const OpCall& call) {
  auto axis = call.intAttr("axis", 0);
  if (!axis) return axis.error();
  const TensorType& data = inputType(call, 0);
  return transformKernel(
      call, gather(data.shape, inputType(call, 1).shape, *axis, data.dtype, inputType(call, 1).dtype), {0, 1});
}

Expected<OpKernel> buildGatherElements(const OpCall& call) {
  auto axis = call.intAttr("axis", 0);
  if (!axis) return axis.error();
  const TensorType& data = inputType(call, 0);
  return transformKernel(
      call, gatherElements(data.shape, inputType(call, 1).shape, *axis, data.dtype, inputType(call, 1).dtype), {0, 1});
}

Expected<OpKernel> buildGatherND(const OpCall& call) {
  auto batchDims = call.intAttr("batch_dims", 0);
  if (!batchDims) return batchDims.error();
  const TensorType& data = inputType(call, 0);
  return transformKernel(
      call, gatherND(data.shape, inputType(call, 1).shape, *batchDims, data.dtype, inputType(call, 1).dtype), {0, 1});
}

Expected<ScatterReduction> scatterReduction(const OpCall& call) {
  auto name = call.stringAttr("reduction", "none");
  if (!name) return name.error();
  if (*name == "none") return ScatterReduction::None;
  if (*name == "add") return ScatterReduction::Add;
  if (*name == "mul") return ScatterReduction::Mul;
  if (*name == "max") return ScatterReduction::Max;
  if (*name == "min") return ScatterReduction::Min;
  return call.error("reduction '" + *name + "' is not supported", "use none, add, mul, max or min");
}

// A Diagnostic when a scatter's updates (input 2) do not have the shape and type it writes.
std::optional<Diagnostic> checkUpdates(const OpCall& call, const Shape& expected) {
  if (inputType(call, 2).shape != expected)
    return call.error("updates have shape " + shapeName(inputType(call, 2).shape) + ", expected " +
                      shapeName(expected));
  if (inputType(call, 2).dtype != inputType(call, 0).dtype)
    return call.error("updates are " + inputType(call, 2).dtype.toString() + ", data " +
                      inputType(call, 0).dtype.toString());
  return std::nullopt;
}

Expected<OpKernel> buildScatterElements(const OpCall& call) {
  auto axis = call.intAttr("axis", 0);
  if (!axis) return axis.error();
  auto reduction = scatterReduction(call);
  if (!reduction) return reduction.error();
  const TensorType& data = inputType(call, 0);
  const TensorType& indices = inputType(call, 1);
  if (auto problem = checkUpdates(call, indices.shape)) return *problem;
  return transformKernel(call, scatterElements(data.shape, indices.shape, *axis, *reduction, data.dtype, indices.dtype),
                         {0, 1, 2});
}

Expected<OpKernel> buildScatterND(const OpCall& call) {
  auto reduction = scatterReduction(call);
  if (!reduction) return reduction.error();
  const TensorType& data = inputType(call, 0);
  const TensorType& indices = inputType(call, 1);
  if (!indices.shape.empty() && indices.shape.back() >= 1 && size_t(indices.shape.back()) <= data.shape.size()) {
    Shape updates(indices.shape.begin(), indices.shape.end() - 1);
    updates.insert(updates.end(), data.shape.begin() + indices.shape.back(), data.shape.end());
    if (auto problem = checkUpdates(call, updates)) return *problem;
  }
  return transformKernel(call, scatterND(data.shape, indices.shape, *reduction, data.dtype, indices.dtype), {0, 1, 2});
}

Expected<OpKernel> buildOneHot(const OpCall& call) {
  auto axis = call.intAttr("axis", -1);
  if (!axis) return axis.error();
  auto depth = call.constantDoubles(1, "depth");
  if (!depth) return depth.error();
  if (depth->size() != 1) return call.error("depth must hold one value");
  if (elementCount(inputType(call, 2).shape) != 2 || inputType(call, 2).shape.size() != 1)
    return call.error("values have shape " + shapeName(inputType(call, 2).shape), "values are [off_value, on_value]");
  const TensorType& indices = inputType(call, 0);
  return transformKernel(
      call, oneHot(indices.shape, int64_t(depth->front()), *axis, indices.dtype, inputType(call, 2).dtype), {0, 2});
}

Expected<OpKernel> buildReverseSequence(const OpCall& call) {
  auto batchAxis = call.intAttr("batch_axis", 1);
  if (!batchAxis) return batchAxis.error();
  auto timeAxis = call.intAttr("time_axis", 0);
  if (!timeAxis) return timeAxis.error();
  const TensorType& in = inputType(call, 0);
  const TensorType& lengths = inputType(call, 1);
  if (lengths.dtype != DataType::int64())
    return call.error("sequence_lens is " + lengths.dtype.toString(), "use int64");
  auto batch = normalizedAxis(call, *batchAxis, in.shape.size(), "batch_axis");
  if (!batch) return batch.error();
  if (lengths.shape != Shape{in.shape[size_t(*batch)]})
    return call.error("sequence_lens has shape " + shapeName(lengths.shape) + ", expected one length per batch entry");
  return transformKernel(call, reverseSequence(in.shape, *batchAxis, *timeAxis, in.dtype), {0, 1});
}

Expected<OpKernel> buildCompress(const OpCall& call) {
  auto condition = constantElements(call, 1, "condition");
  if (!condition)
    return call.error(condition.error().message,
                      "Compress has a data-dependent shape: Tessel needs a constant condition");
  std::optional<int64_t> axis;
  if (call.hasAttr("axis")) {
    auto a = call.intAttr("axis", 0);
    if (!a) return a.error();
    axis = *a;
  }
  std::vector<bool> keep;
  for (double c : *condition) keep.push_back(c != 0);
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, compress(in.shape, axis, keep, in.dtype), {0});
}

Expected<OpKernel> buildNonZero(const OpCall& call) {
  if (!call.isConstant(0))
    return call.error("the input is not a constant",
                      "NonZero has a data-dependent shape: Tessel compiles it only when its input is known");
  auto values = constantElements(call, 0, "input");
  if (!values) return values.error();
  const Shape& shape = inputType(call, 0).shape;
  std::vector<std::vector<int64_t>> hits;
  for (int64_t i = 0; i < int64_t(values->size()); ++i)
    if ((*values)[size_t(i)] != 0) {
      std::vector<int64_t> index(shape.size());
      int64_t rest = i;
      for (size_t d = shape.size(); d-- > 0;) {
        index[d] = rest % shape[d];
        rest /= shape[d];
      }
      hits.push_back(index);
    }
  // Output [rank, count]: row d lists the d-th coordinate of every non-zero element.
  std::vector<double> table;
  for (size_t d = 0; d < shape.size(); ++d)
    for (auto& hit : hits) table.push_back(double(hit[d]));
  return transformKernel(call, constantTensor({int64_t(shape.size()), int64_t(hits.size())}, table, DataType::int64()),
                         {});
}
// Unique has data-dependent output shapes: it compiles only when its input is known, and then
// all four outputs are constants computed here.
Expected<OpKernel> buildUnique(const OpCall& call) {
  if (!call.isConstant(0))
    return call.error("the input is not a constant",
                      "Unique has a data-dependent shape: Tessel compiles it only when its input is known");
  auto values = constantElements(call, 0, "input");
  if (!values) return values.error();
  auto sorted = call.intAttr("sorted", 1);
  if (!sorted) return sorted.error();
  const TensorType& in = inputType(call, 0);
  // Without an axis the elements of the flattened input are compared; with one, whole slices.
  Shape shape = in.shape;
  std::optional<int64_t> axis;
  if (call.hasAttr("axis")) {
    auto a = call.intAttr("axis", 0);
    if (!a) return a.error();
    auto normalized = normalizedAxis(call, *a, shape.size());
    if (!normalized) return normalized.error();
    axis = *normalized;
  }
  if (!axis) shape = {elementCount(in.shape)};
  size_t a = size_t(axis.value_or(0));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t count = shape[a];
  auto sliceOf = [&](int64_t k) {
    std::vector<double> slice;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) slice.push_back((*values)[size_t((o * count + k) * inner + i)]);
    return slice;
  };
  std::vector<std::vector<double>> slices;
  for (int64_t k = 0; k < count; ++k) slices.push_back(sliceOf(k));
  // Distinct slices in order of first occurrence, then sorted if asked.
  std::vector<int64_t> firsts;
  for (int64_t k = 0; k < count; ++k) {
    bool seen = false;
    for (int64_t f : firsts) seen = seen || slices[size_t(f)] == slices[size_t(k)];
    if (!seen) firsts.push_back(k);
  }
  if (*sorted)
    std::stable_sort(firsts.begin(), firsts.end(),
                     [&](int64_t x, int64_t y) { return slices[size_t(x)] < slices[size_t(y)]; });
  std::vector<double> indices;
  std::vector<double> inverse(static_cast<size_t>(count), 0.0);
  std::vector<double> counts(firsts.size(), 0.0);
  for (size_t u = 0; u < firsts.size(); ++u) indices.push_back(double(firsts[u]));
  for (int64_t k = 0; k < count; ++k)
    for (size_t u = 0; u < firsts.size(); ++u)
      if (slices[size_t(firsts[u])] == slices[size_t(k)]) {
        inverse[size_t(k)] = double(u);
        counts[u] += 1;
      }
  Shape uniqueShape = shape;
  uniqueShape[a] = int64_t(firsts.size());
  std::vector<double> unique;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t f : firsts)
      for (int64_t i = 0; i < inner; ++i) unique.push_back((*values)[size_t((o * count + f) * inner + i)]);
  struct Output {
    Shape shape;
    const std::vector<double>* values;
    DataType dtype;
  };
  std::vector<Output> outputs = {{uniqueShape, &unique, in.dtype},
                                 {{int64_t(firsts.size())}, &indices, DataType::int64()},
                                 {{count}, &inverse, DataType::int64()},
                                 {{int64_t(firsts.size())}, &counts, DataType::int64()}};
  Workload w;
  w.name = "unique_" + shapeName(in.shape);
  for (int k = 0; k < call.outputCount; ++k) {
    const Output& output = outputs[size_t(k)];
    auto stage = constantStage(output.shape, *output.values, output.dtype, "out" + std::to_string(k));
    if (!stage) return transformKernel(call, stage.error(), {});
    w.outputs.push_back(*stage);
  }
  w.name += "_" + transform_support::parameterTag(*values);
  return transformKernel(call, w, {});
}
}  // namespace

void registerIndexingOps(OpRegistry& registry) {
  const OpPattern injective = OpPattern::Injective;
  registry.add(kernelTypedOp("Gather", injective, 2, 2, {}, buildGather));
  registry.add(kernelTypedOp("GatherElements", injective, 2, 2, {}, buildGatherElements));
  registry.add(kernelTypedOp("GatherND", injective, 2, 2, {}, buildGatherND));
  // Scatters search the updates for each output element: their own kernels.
  registry.add(kernelTypedOp("ScatterElements", OpPattern::Opaque, 3, 3, {}, buildScatterElements));
  registry.add(kernelTypedOp("Scatter", OpPattern::Opaque, 3, 3, {}, buildScatterElements));
  registry.add(kernelTypedOp("ScatterND", OpPattern::Opaque, 3, 3, {}, buildScatterND));
  registry.add(kernelTypedOp("OneHot", injective, 3, 3, {1}, buildOneHot));
  registry.add(kernelTypedOp("ReverseSequence", injective, 2, 2, {}, buildReverseSequence));
  registry.add(kernelTypedOp("Compress", injective, 2, 2, {1}, buildCompress));
  registry.add(kernelTypedOp("NonZero", OpPattern::Opaque, 1, 1, {0}, buildNonZero));
  registry.add(kernelTypedOp("Unique", OpPattern::Opaque, 1, 1, {0}, buildUnique, 1, 4));
}

}  // namespace tessel::graph::shape_ops
