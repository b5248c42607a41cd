// Which ONNX opsets (of the default domain) the importer accepts, and which operators of older ones.
#include "compiler/frontend/onnx/OnnxOpsets.h"

#include <map>

#include "compiler/frontend/onnx/OnnxControlFlow.h"
#include "compiler/frontend/onnx/OnnxRecurrent.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::frontend {
namespace {

// For every operator whose definition in force at opset 7 is older than opset 7: the opset
// that definition appeared in (from ONNX's operator schema history; operators that changed
// at opset 7, like the broadcasting binary ops, are absent because older versions differ).
const std::map<std::string, int>& definitionSinceAtOldestOpset() {
  static const std::map<std::string, int> since = {
      {"Abs", 6}, {"ArgMax", 1}, {"ArgMin", 1}, {"Cast", 6}, {"Ceil", 6}, {"Clip", 6}, {"Concat", 4},
      {"Constant", 1}, {"Conv", 1}, {"ConvTranspose", 1}, {"DepthToSpace", 1}, {"Elu", 6}, {"Exp", 6},
      {"Flatten", 1}, {"Floor", 6}, {"Gather", 1}, {"GlobalAveragePool", 1}, {"GlobalLpPool", 2},
      {"GlobalMaxPool", 1}, {"HardSigmoid", 6}, {"Hardmax", 1}, {"Identity", 1}, {"If", 1},
      {"InstanceNormalization", 6}, {"LRN", 1}, {"LeakyRelu", 6}, {"Log", 6}, {"LogSoftmax", 1}, {"Loop", 1},
      {"LpNormalization", 1}, {"LpPool", 2}, {"MatMul", 1}, {"Max", 6}, {"MaxPool", 1}, {"MaxRoiPool", 1},
      {"Mean", 6}, {"Min", 6}, {"Neg", 6}, {"Not", 1}, {"Pad", 2}, {"RandomNormal", 1}, {"RandomNormalLike", 1},
      {"RandomUniform", 1}, {"RandomUniformLike", 1}, {"Reciprocal", 6}, {"ReduceL1", 1}, {"ReduceL2", 1},
      {"ReduceLogSum", 1}, {"ReduceLogSumExp", 1}, {"ReduceMax", 1}, {"ReduceMean", 1}, {"ReduceMin", 1},
      {"ReduceProd", 1}, {"ReduceSum", 1}, {"ReduceSumSquare", 1}, {"Relu", 6}, {"Reshape", 5}, {"Selu", 6},
      {"Shape", 1}, {"Sigmoid", 6}, {"Size", 1}, {"Slice", 1}, {"Softmax", 1}, {"Softplus", 1},
      {"Softsign", 1}, {"SpaceToDepth", 1}, {"Split", 2}, {"Sqrt", 6}, {"Squeeze", 1}, {"Sum", 6},
      {"Tanh", 6}, {"Tile", 6}, {"TopK", 1}, {"Transpose", 1}, {"Unsqueeze", 1},
  };
  return since;
}

}  // namespace

bool definitionUnchangedSinceOpset(const std::string& opType, int opset) {
  if (opset >= kOldestSupportedOpset) return true;
  auto& since = definitionSinceAtOldestOpset();
  auto it = since.find(opType);
  return it != since.end() && it->second <= opset;
}

bool isDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

bool implementsOnnxOperator(const std::string& domain, const std::string& opType) {
  if (!isDefaultDomain(domain)) return false;
  return opType == "Constant" || opType == "GroupNormalization" || isRecurrentOperator(opType) ||
         isControlFlowOperator(opType) ||
         graph::OpRegistry::global().find(opType) != nullptr;
}

}  // namespace tessel::frontend
