// Integer and quantized operators: MatMulInteger, QLinearMatMul, QLinearConv (ConvInteger
// lives with Conv in NeuralNetConv.cpp), QLinearConvPrepacked, the int8 VNNI convolution
// AlterLayout puts in place of a QLinearConv with constant int8 weights,
// QLinearDepthwiseConvPrepacked, the int8 depthwise one it puts in place of a depthwise
// QLinearConv over channel-blocked data, and
// QDensePrepacked, the int8 VNNI dense layer FakeQuantizationToInteger makes of a quantized
// MatMul or Gemm with constant weights.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/BatchMatmul.h"
#include "compiler/ops/Int8Conv2d.h"
#include "compiler/ops/Int8DepthwiseConv2d.h"
#include "compiler/ops/Int8Dense.h"
#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/PackedConvParams.h"
#include "compiler/ops/Quantized.h"

namespace tessel::graph::nn {

namespace {

bool isByte(DataType dtype) { return dtype == DataType::uint8() || dtype == DataType::int8(); }

std::optional<Diagnostic> requireByte(const OpCall& call, size_t i, const char* role) {
  if (isByte(call.inputTypes[i].dtype)) return std::nullopt;
  return call.error(std::string(role) + " has element type " + call.inputTypes[i].dtype.toString() +
                    ", expected uint8 or int8");
}

// A scalar input: shape [] or [1], of `dtype` when given.
std::optional<Diagnostic> requireScalar(const OpCall& call, size_t i, const char* role,
                                        std::optional<DataType> dtype = std::nullopt) {
  const auto& shape = call.inputTypes[i].shape;
  if (!shape.empty() && shape != std::vector<int64_t>{1})
    return call.error(std::string(role) + " has shape " + shapeName(shape) + ", expected a scalar",
                      "Tessel supports per-tensor quantization here");
  if (dtype && call.inputTypes[i].dtype != *dtype)
    return call.error(std::string(role) + " has element type " + call.inputTypes[i].dtype.toString() + ", expected " +
                      dtype->toString());
  return std::nullopt;
}

// A zero point: a scalar, or one per `extent` entries (rows of A, columns of B, filters).
std::optional<Diagnostic> requireZeroPoint(const OpCall& call, size_t i, size_t operand, int64_t extent,
                                           const char* role) {
  const auto& shape = call.inputTypes[i].shape;
  bool scalar = shape.empty() || shape == std::vector<int64_t>{1};
  if (!scalar && shape != std::vector<int64_t>{extent})
    return call.error(std::string(role) + " has shape " + shapeName(shape) + ", expected a scalar or [" +
                      std::to_string(extent) + "]");
  if (call.inputTypes[i].dtype != call.inputTypes[operand].dtype)
    return call.error(std::string(role) + " must have its operand's element type");
  return std::nullopt;
}

Expected<QuantizedMatmulParams> matmulIntegerParams(const OpCall& call, bool requantized) {
  size_t a = 0, b = requantized ? 3 : 1;
  size_t aZero = 2, bZero = requantized ? 5 : 3;
  if (auto e = requireByte(call, a, "A")) return *e;
  if (auto e = requireByte(call, b, "B")) return *e;
  QuantizedMatmulParams p;
  p.aShape = call.inputTypes[a].shape;
  p.bShape = call.inputTypes[b].shape;
  p.aType = call.inputTypes[a].dtype;
  p.bType = call.inputTypes[b].dtype;
  auto shape = batchMatmulOutputShape(p.aShape, p.bShape);
  if (!shape) return atNode(call, shape.error());
  int64_t rows = p.aShape.size() >= 2 ? p.aShape[p.aShape.size() - 2] : 1;
  int64_t columns = p.bShape.size() >= 2 ? p.bShape.back() : 1;
  if (call.hasInput(aZero)) {
    if (auto e = requireZeroPoint(call, aZero, a, rows, "a_zero_point")) return *e;
    p.aZeroPoint = call.inputTypes[aZero].shape;
  }
  if (call.hasInput(bZero)) {
    if (auto e = requireZeroPoint(call, bZero, b, columns, "b_zero_point")) return *e;
    p.bZeroPoint = call.inputTypes[bZero].shape;
  }
  if (requantized) {
    if (!call.hasInput(7)) return call.error("y_zero_point is required");
    // a_scale: one, or one per row of A; b_scale: one, or one per column of B; y_scale: one.
    const char* roles[] = {"a_scale", "b_scale", "y_scale"};
    size_t scales[] = {1, 4, 6};
    int64_t extents[] = {rows, columns, 1};
    for (int s = 0; s < 3; ++s) {
      const auto& shape = call.inputTypes[scales[s]].shape;
      bool perAxis = s < 2 && shape == std::vector<int64_t>{extents[s]};
      if (!perAxis)
        if (auto e = requireScalar(call, scales[s], roles[s], DataType::float32())) return *e;
      if (call.inputTypes[scales[s]].dtype != DataType::float32())
        return call.error(std::string(roles[s]) + " must be float32");
      p.scalarShapes[size_t(s)] = shape;
    }
    if (auto e = requireScalar(call, 7, "y_zero_point")) return *e;
    if (!isByte(call.inputTypes[7].dtype)) return call.error("y_zero_point must be uint8 or int8");
    if (!p.aZeroPoint || !p.bZeroPoint) return call.error("a_zero_point and b_zero_point are required");
    p.scalarShapes[3] = call.inputTypes[7].shape;
    p.outType = call.inputTypes[7].dtype;
    p.requantized = true;
  }
  return p;
}

OpDef matmulIntegerDef(const char* name, bool requantized) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = requantized ? 8 : 2;
  def.maxInputs = requantized ? 8 : 4;
  def.inferTypes = [requantized](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = matmulIntegerParams(call, requantized);
    if (!p) return p.error();
    auto shape = batchMatmulOutputShape(p->aShape, p->bShape);
    return std::vector<TensorType>{TensorType{requantized ? p->outType : DataType::int32(), *shape, ""}};
  };
  def.build = [requantized](const OpCall& call) -> Expected<OpKernel> {
    auto p = matmulIntegerParams(call, requantized);
    if (!p) return p.error();
    auto w = quantizedMatmul(*p);
    if (!w) return atNode(call, w.error());
    // Workload inputs: A, B, the zero points given, then the scales and y_zero_point.
    std::vector<int> inputs = {0, requantized ? 3 : 1};
    if (p->aZeroPoint) inputs.push_back(2);
    if (p->bZeroPoint) inputs.push_back(requantized ? 5 : 3);
    if (requantized) inputs.insert(inputs.end(), {1, 4, 6, 7});
    return makeKernel(std::move(*w), inputs, [](const Workload& workload, const Target& target) {
      return defaultQuantizedSchedule(workload, target);
    });
  };
  return def;
}

// QLinearConv inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B (int32). The geometry attributes are Conv's.
Expected<QuantizedConvParams> qlinearConvParams(const OpCall& call) {
  if (auto e = requireByte(call, 0, "x")) return *e;
  if (auto e = requireByte(call, 3, "w")) return *e;
  // The convolution geometry from a call that sees x and w as Conv's inputs 0 and 1.
  OpCall geometryCall = call;
  geometryCall.inputTypes = {call.inputTypes[0], call.inputTypes[3]};
  geometryCall.constantInputs.resize(2);
  auto conv = convolutionGeometry(geometryCall);
  if (!conv) return conv.error();
  int64_t filters = call.inputTypes[3].shape[0];
  QuantizedConvParams p;
  p.conv = *conv;
  p.xType = call.inputTypes[0].dtype;
  p.wType = call.inputTypes[3].dtype;
  if (auto e = requireZeroPoint(call, 2, 0, 1, "x_zero_point")) return *e;
  if (auto e = requireZeroPoint(call, 5, 3, filters, "w_zero_point")) return *e;
  p.conv.inputZeroPoint = call.inputTypes[2].shape;
  p.conv.weightZeroPoint = call.inputTypes[5].shape;
  if (auto e = requireScalar(call, 1, "x_scale", DataType::float32())) return *e;
  if (auto e = requireScalar(call, 6, "y_scale", DataType::float32())) return *e;
  if (auto e = requireScalar(call, 7, "y_zero_point")) return *e;
  const auto& wScale = call.inputTypes[4].shape;
  if (!(wScale.empty() || wScale == std::vector<int64_t>{1} || wScale == std::vector<int64_t>{filters}) ||
      call.inputTypes[4].dtype != DataType::float32())
    return call.error("w_scale must be a float32 scalar or one per filter");
  if (!isByte(call.inputTypes[7].dtype)) return call.error("y_zero_point must be uint8 or int8");
  p.weightScaleShape = wScale;
  p.scalarShapes = {call.inputTypes[1].shape, call.inputTypes[6].shape, call.inputTypes[7].shape};
  p.outType = call.inputTypes[7].dtype;
  if (call.hasInput(8)) {
    if (call.inputTypes[8].shape != std::vector<int64_t>{filters} || call.inputTypes[8].dtype != DataType::int32())
      return call.error("B must be int32 with one value per filter");
    p.conv.bias = true;
  }
  // Not ONNX's: FakeQuantizationToInteger's mark of a Relu it folded in.
  auto relu = call.intAttr("fused_relu", 0);
  if (!relu) return relu.error();
  p.relu = *relu != 0;
  return p;
}

OpDef qlinearConvDef() {
  OpDef def;
  def.name = "QLinearConv";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 8;
  def.maxInputs = 9;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = qlinearConvParams(call);
    if (!p) return p.error();
    return std::vector<TensorType>{TensorType{p->outType, p->conv.outputShape(), ""}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = qlinearConvParams(call);
    if (!p) return p.error();
    auto w = quantizedConv(*p);
    if (!w) return atNode(call, w.error());
    // directConv's inputs (x, w, bias?, x_zero_point, w_zero_point), then the scales.
    std::vector<int> inputs = {0, 3};
    if (p->conv.bias) inputs.push_back(8);
    inputs.insert(inputs.end(), {2, 5, 1, 4, 6, 7});
    return makeKernel(std::move(*w), inputs, [](const Workload& workload, const Target& target) {
      return defaultQuantizedSchedule(workload, target);
    });
  };
  return def;
}

// The int8 VNNI convolution a QLinearConvPrepacked node stands for (made by AlterLayout from
// a QLinearConv; see compiler/graph/QuantizedConvPacking.h). Inputs: x (NCHW), the packed
// weight, the folded offset and scale per filter.
Expected<Int8Conv2dParams> prepackedQuantizedConvParams(const OpCall& call) {
  auto weightShape = call.intsAttr("weight_shape", {});
  if (!weightShape) return weightShape.error();
  auto yType = call.stringAttr("y_type", "uint8");
  if (!yType) return yType.error();
  std::optional<DataType> outputType = DataType::parse(*yType);
  // Channel-blocked activations (AlterLayout's data_layout / out_layout), NCHW when absent.
  auto dataLayout = call.stringAttr("data_layout", "NCHW"), outLayout = call.stringAttr("out_layout", "NCHW");
  if (!dataLayout) return dataLayout.error();
  if (!outLayout) return outLayout.error();
  std::optional<int64_t> dataBlock = channelBlockOf(*dataLayout), outBlock = channelBlockOf(*outLayout);
  if (!dataBlock || !outBlock) return call.error("data_layout and out_layout must be NCHW or NCHW<block>c");
  std::vector<int64_t> dataShape = call.inputTypes[0].shape;
  if (*dataBlock) {
    if (dataShape.size() != 5 || dataShape[4] != *dataBlock || call.inputTypes[0].layout != *dataLayout)
      return call.error("data_layout is " + *dataLayout + " but the input is " + call.inputTypes[0].toString(),
                        "insert a LayoutTransform before the convolution");
    dataShape = unblockedChannelShape(dataShape, *dataBlock);
  } else if (!call.inputTypes[0].layout.empty()) {
    return call.error("the input is " + call.inputTypes[0].toString() + " but data_layout is NCHW");
  }
  if (weightShape->size() != 4 || !outputType || dataShape.size() != 4)
    return call.error("QLinearConvPrepacked needs 'weight_shape' (OIHW), 'y_type' and 4-D data",
                      "QLinearConvPrepacked nodes are made by AlterLayout; rerun it on the QLinearConv");
  auto conv = conv2dParamsFromOnnx(call.attributes, dataShape, *weightShape, false);
  if (!conv) return call.error(conv.error().message, conv.error().hint);
  Int8Conv2dParams p;
  p.conv = *conv;
  p.dataType = call.inputTypes[0].dtype;
  p.outputType = *outputType;
  for (auto [key, field] : {std::pair{"x_zero_point", &p.dataZeroPoint}, {"y_zero_point", &p.outputZeroPoint},
                            {"input_block", &p.inputBlock}, {"filter_block", &p.filterBlock}}) {
    auto value = call.intAttr(key, -1000);
    if (!value) return value.error();
    *field = *value;
  }
  p.nchwInput = *dataBlock == 0;
  p.nchwOutput = *outBlock == 0;
  if (*dataBlock) p.inputBlock = *dataBlock;
  if (*outBlock && *outBlock != p.filterBlock)
    return call.error("out_layout " + *outLayout + " is not the kernel's filter block " + std::to_string(p.filterBlock));
  auto relu = call.intAttr("fused_relu", 0);
  if (!relu) return relu.error();
  p.relu = *relu != 0;
  if (std::string problem = p.validate(); !problem.empty()) return call.error(problem);
  if (call.inputTypes[1].shape != p.weightShape() || call.inputTypes[2].shape != std::vector<int64_t>{p.conv.filters})
    return call.error("the packed weight or the folded offsets do not match 'weight_shape'",
                      "rerun AlterLayout on the QLinearConv");
  return p;
}

OpDef qlinearConvPrepackedDef() {
  OpDef def;
  def.name = "QLinearConvPrepacked";
  def.pattern = OpPattern::Opaque;
  def.minInputs = 4;
  def.maxInputs = 4;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = prepackedQuantizedConvParams(call);
    if (!p) return p.error();
    const Conv2dParams& c = p->conv;
    TensorType out{p->outputType, {c.batch, c.filters, c.outHeight(), c.outWidth()}, ""};
    if (!p->nchwOutput) {
      out.shape = blockedChannelShape(out.shape, p->filterBlock);
      out.layout = blockedChannelLayout(p->filterBlock);
    }
    return std::vector<TensorType>{out};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = prepackedQuantizedConvParams(call);
    if (!p) return p.error();
    OpKernel kernel;
    kernel.workload = int8Conv2d(*p);
    kernel.inputIndices = {0, 1, 2, 3};
    Int8Conv2dParams params = *p;
    kernel.schedule = [params](const Workload& w, const Target& target) {
      return defaultInt8Conv2dSchedule(w, params, target);
    };
    return kernel;
  };
  return def;
}

// The int8 depthwise convolution a QLinearDepthwiseConvPrepacked node stands for (made by
// AlterLayout from a depthwise QLinearConv over channel-blocked data). Inputs: x (NCHW<b>c),
// the packed weight, the folded offset and scale per channel.
Expected<Int8DepthwiseConv2dParams> prepackedQuantizedDepthwiseParams(const OpCall& call) {
  auto weightShape = call.intsAttr("weight_shape", {});
  if (!weightShape) return weightShape.error();
  auto yType = call.stringAttr("y_type", "uint8");
  if (!yType) return yType.error();
  std::optional<DataType> outputType = DataType::parse(*yType);
  auto dataLayout = call.stringAttr("data_layout", "");
  if (!dataLayout) return dataLayout.error();
  std::optional<int64_t> block = channelBlockOf(*dataLayout);
  const TensorType& data = call.inputTypes[0];
  if (!block || *block == 0 || data.shape.size() != 5 || data.shape[4] != *block || data.layout != *dataLayout)
    return call.error("data_layout is '" + *dataLayout + "' but the input is " + data.toString(),
                      "QLinearDepthwiseConvPrepacked reads NCHW<b>c data; AlterLayout makes it");
  if (weightShape->size() != 4 || !outputType)
    return call.error("QLinearDepthwiseConvPrepacked needs 'weight_shape' (OIHW) and 'y_type'",
                      "QLinearDepthwiseConvPrepacked nodes are made by AlterLayout; rerun it on the QLinearConv");
  auto conv = conv2dParamsFromOnnx(call.attributes, unblockedChannelShape(data.shape, *block), *weightShape, false);
  if (!conv) return call.error(conv.error().message, conv.error().hint);
  Int8DepthwiseConv2dParams p;
  p.conv = *conv;
  p.block = *block;
  p.dataType = data.dtype;
  p.outputType = *outputType;
  for (auto [key, field] : {std::pair{"x_zero_point", &p.dataZeroPoint}, {"y_zero_point", &p.outputZeroPoint}}) {
    auto value = call.intAttr(key, -1000);
    if (!value) return value.error();
    *field = *value;
  }
  auto relu = call.intAttr("fused_relu", 0);
  if (!relu) return relu.error();
  p.relu = *relu != 0;
  if (std::string problem = p.validate(); !problem.empty()) return call.error(problem);
  if (call.inputTypes[1].shape != p.weightShape() || call.inputTypes[2].shape != std::vector<int64_t>{p.conv.channels} ||
      call.inputTypes[3].shape != std::vector<int64_t>{p.conv.channels})
    return call.error("the packed weight or the folded offsets and scales do not match 'weight_shape'",
                      "rerun AlterLayout on the QLinearConv");
  return p;
}

OpDef qlinearDepthwiseConvPrepackedDef() {
  OpDef def;
  def.name = "QLinearDepthwiseConvPrepacked";
  def.pattern = OpPattern::Opaque;
  def.minInputs = 4;
  def.maxInputs = 4;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = prepackedQuantizedDepthwiseParams(call);
    if (!p) return p.error();
    const Conv2dParams& c = p->conv;
    return std::vector<TensorType>{TensorType{
        p->outputType, blockedChannelShape({c.batch, c.filters, c.outHeight(), c.outWidth()}, p->block),
        blockedChannelLayout(p->block)}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = prepackedQuantizedDepthwiseParams(call);
    if (!p) return p.error();
    OpKernel kernel;
    kernel.workload = int8DepthwiseConv2d(*p);
    kernel.inputIndices = {0, 1, 2, 3};
    Int8DepthwiseConv2dParams params = *p;
    kernel.schedule = [params](const Workload& w, const Target& target) {
      return defaultInt8DepthwiseConv2dSchedule(w, params, target);
    };
    return kernel;
  };
  return def;
}

// The int8 dense layer a QDensePrepacked node stands for (made by FakeQuantizationToInteger
// from a dequantize -> MatMul/Gemm region; see compiler/graph/QuantizedDensePacking.h).
// Inputs: x [..., K], the packed weight, the folded offset and scale per column; or, for x
// quantized at run time (DynamicQuantizeLinear -> MatMulInteger), the packed weight, the
// weight sums, x's scale and zero point, and the weight scale and float bias per column.
Expected<Int8DenseParams> prepackedQuantizedDenseParams(const OpCall& call) {
  if (auto e = requireByte(call, 0, "x")) return *e;
  Int8DenseParams p;
  p.dataShape = call.inputTypes[0].shape;
  p.dataType = call.inputTypes[0].dtype;
  auto yType = call.stringAttr("y_type", "uint8");
  if (!yType) return yType.error();
  std::optional<DataType> outputType = DataType::parse(*yType);
  if (!outputType) return call.error("y_type '" + *yType + "' is not a type");
  p.outputType = *outputType;
  struct IntField {
    const char* key;
    int64_t* field;
    int64_t fallback;
  };
  for (IntField f : {IntField{"n", &p.columns, 0}, IntField{"column_block", &p.columnBlock, 32},
                     IntField{"x_zero_point", &p.dataZeroPoint, 0}, IntField{"y_zero_point", &p.outputZeroPoint, 0}}) {
    auto value = call.intAttr(f.key, f.fallback);
    if (!value) return value.error();
    *f.field = *value;
  }
  auto relu = call.intAttr("fused_relu", 0);
  if (!relu) return relu.error();
  p.relu = *relu != 0;
  // Seven inputs: x quantized at run time, its scale and zero point inputs 3 and 4.
  p.dynamicData = call.inputTypes.size() == 7;
  if (!call.inputTypes[0].layout.empty()) return call.error("x must be in its plain layout");
  if (std::string problem = p.validate(); !problem.empty()) return call.error(problem);
  const std::vector<int64_t> perColumn = {p.columns};
  // Inputs after the weight: (offset, scale) or (weight_sum, x_scale, x_zero_point,
  // weight_scale, bias), with their types.
  std::vector<std::pair<std::vector<int64_t>, DataType>> expected =
      p.dynamicData ? std::vector<std::pair<std::vector<int64_t>, DataType>>{{perColumn, DataType::int32()},
                                                                             {{}, DataType::float32()},
                                                                             {{}, DataType::uint8()},
                                                                             {perColumn, DataType::float32()},
                                                                             {perColumn, DataType::float32()}}
                    : std::vector<std::pair<std::vector<int64_t>, DataType>>{{perColumn, DataType::int32()},
                                                                             {perColumn, DataType::float32()}};
  bool matches = call.inputTypes[1].shape == p.weightShape() && call.inputTypes[1].dtype == DataType::int8();
  for (size_t i = 0; i < expected.size(); ++i)
    matches = matches && call.inputTypes[2 + i].shape == expected[i].first && call.inputTypes[2 + i].dtype == expected[i].second;
  if (!matches)
    return call.error("the packed weight or the per-column inputs do not match x and 'n'",
                      "QDensePrepacked nodes are made by FakeQuantizationToInteger; rerun it on the QDQ model");
  return p;
}

OpDef qdensePrepackedDef() {
  OpDef def;
  def.name = "QDensePrepacked";
  def.pattern = OpPattern::Opaque;
  def.minInputs = 4;
  def.maxInputs = 7;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = prepackedQuantizedDenseParams(call);
    if (!p) return p.error();
    return std::vector<TensorType>{TensorType{p->outputType, p->outputShape(), ""}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = prepackedQuantizedDenseParams(call);
    if (!p) return p.error();
    OpKernel kernel;
    kernel.workload = int8Dense(*p);
    kernel.inputIndices = p->dynamicData ? std::vector<int>{0, 1, 2, 3, 4, 5, 6} : std::vector<int>{0, 1, 2, 3};
    Int8DenseParams params = *p;
    kernel.schedule = [params](const Workload& w, const Target& target) {
      return defaultInt8DenseSchedule(w, params, target);
    };
    return kernel;
  };
  return def;
}

}  // namespace

void registerQuantizedOps(OpRegistry& registry) {
  registry.add(matmulIntegerDef("MatMulInteger", false));
  registry.add(matmulIntegerDef("QLinearMatMul", true));
  registry.add(qlinearConvDef());
  registry.add(qlinearConvPrepackedDef());
  registry.add(qlinearDepthwiseConvPrepackedDef());
  registry.add(qdensePrepackedDef());
}

}  // namespace tessel::graph::nn
