// Maps operator names to the categories the graph view colours by.
#include "views/graph/NodeCategory.h"

#include <string_view>
#include <unordered_map>

#include "core/graph/UnsupportedOperations.h"

namespace tessel::views {

namespace {

// One table, so adding an operator is adding a row. Operators missing here fall back to
// Other rather than guessing from their names.
const std::unordered_map<std::string_view, NodeCategory>& operatorCategories() {
  using C = NodeCategory;
  static const std::unordered_map<std::string_view, NodeCategory> table = [] {
    std::unordered_map<std::string_view, NodeCategory> t;
    for (auto op : {"Conv", "ConvInteger", "ConvPrepacked", "ConvTranspose", "QLinearConv", "MatMul", "MatMulInteger",
                    "QLinearMatMul", "Gemm", "DensePrepacked", "Einsum", "DFT", "STFT", "Det"})
      t[op] = C::Compute;
    for (auto op : {"Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift", "Cast",
                    "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp",
                    "Floor", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN",
                    "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mod", "Mul", "Neg", "Not", "Or",
                    "PRelu", "Pow", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
                    "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Where", "Xor",
                    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "Gelu", "Mish", "BiasAdd"})
      t[op] = C::Elementwise;
    for (auto op : {"ArgMax", "ArgMin", "AveragePool", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "LpPool",
                    "MaxPool", "MaxUnpool", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                    "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "CumSum", "TopK",
                    "RoiAlign", "NonMaxSuppression", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
      t[op] = C::Reduction;
    for (auto op : {"Compress", "Concat", "ConstantOfShape", "DepthToSpace", "Expand", "EyeLike", "Flatten", "Gather",
                    "GatherElements", "GatherND", "GridSample", "NonZero", "OneHot", "Pad", "Range", "Reshape",
                    "Resize", "ReverseSequence", "Scatter", "ScatterElements", "ScatterND", "Shape", "Size", "Slice",
                    "SpaceToDepth", "Split", "Squeeze", "Tile", "Trilu", "Unique", "Unsqueeze", "Upsample",
                    "BlackmanWindow", "HammingWindow", "HannWindow", "MelWeightMatrix", "TfIdfVectorizer"})
      t[op] = C::DataMovement;
    for (auto op : {"BatchNormalization", "InstanceNormalization", "LayerNormalization", "LpNormalization",
                    "MeanVarianceNormalization", "LRN", "Softmax", "LogSoftmax", "Hardmax"})
      t[op] = C::Normalization;
    for (auto op : {"LayoutTransform", "Transpose"}) t[op] = C::LayoutTransform;
    t["Constant"] = C::Constant;
    t[graph::kUnsupportedOp] = C::Unsupported;
    return t;
  }();
  return table;
}

}  // namespace

NodeCategory categorizeOperator(const std::string& op) {
  const auto& table = operatorCategories();
  auto it = table.find(op);
  return it == table.end() ? NodeCategory::Other : it->second;
}

QString categoryDisplayName(NodeCategory category) {
  switch (category) {
    case NodeCategory::Compute: return QStringLiteral("Convolution / MatMul");
    case NodeCategory::Elementwise: return QStringLiteral("Elementwise");
    case NodeCategory::Reduction: return QStringLiteral("Reduction / Pooling");
    case NodeCategory::DataMovement: return QStringLiteral("Data movement / Shape");
    case NodeCategory::Normalization: return QStringLiteral("Normalization");
    case NodeCategory::LayoutTransform: return QStringLiteral("Layout transform");
    case NodeCategory::Constant: return QStringLiteral("Constant / Weight");
    case NodeCategory::InputOutput: return QStringLiteral("Input / Output");
    case NodeCategory::Fused: return QStringLiteral("Fused kernel");
    case NodeCategory::Unsupported: return QStringLiteral("Unsupported operator");
    case NodeCategory::Module: return QStringLiteral("Module (closed)");
    case NodeCategory::Other: return QStringLiteral("Other");
  }
  return QStringLiteral("Other");
}

}  // namespace tessel::views
