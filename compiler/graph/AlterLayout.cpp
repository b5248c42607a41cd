// AlterLayout: Conv, MatMul and Gemm nodes with constant weights rewritten to operators that
// read weights packed once at compile time (ConvPrepacked, DensePrepacked).
#include "compiler/graph/AlterLayout.h"

#include <functional>
#include <map>
#include <utility>

#include "compiler/graph/GraphRewriter.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/PackedConvParams.h"

namespace tessel::graph {

namespace {
// A float attribute that some writers store as an int.
double numberAttribute(const OperationNode& op, const std::string& key, double fallback) {
  auto it = op.attributes.find(key);
  if (it == op.attributes.end()) return fallback;
  if (auto* value = std::get_if<double>(&it->second)) return *value;
  if (auto* value = std::get_if<int64_t>(&it->second)) return double(*value);
  return fallback;
}

bool packableType(const TensorType& type) {
  return type.known() && type.layout.empty() && (type.dtype == DataType::float32() || type.dtype == DataType::float64());
}

class WeightPacker {
public:
  explicit WeightPacker(const ScheduleTarget& target) : target_(target) {}

  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    if (op.isFused() || op.outputTypes.size() != 1) return std::nullopt;
    if (op.op == "Conv") return rewriteConv(op, inputs);
    if (op.op == "MatMul") return rewriteMatMul(op, inputs);
    if (op.op == "Gemm") return rewriteGemm(op, inputs);
    return std::nullopt;
  }

  /// The first node whose attributes could not be read (the pass reports it).
  std::optional<Diagnostic> failure;

private:
  static const ConstantNode* constantInput(const std::vector<Value>& inputs, size_t i) {
    return i < inputs.size() && inputs[i].defined() && inputs[i].index() == 0 ? asConstant(inputs[i].node()) : nullptr;
  }

  // One packed constant per (weight, packing): a weight shared by several nodes is packed once.
  Value packedConstant(const ConstantNode& weight, const std::string& layout, const std::string& packing,
                       const std::function<runtime::NDArray()>& pack) {
    auto key = std::make_pair(static_cast<const GraphNode*>(&weight), packing);
    auto it = packed_.find(key);
    if (it != packed_.end()) return it->second;
    Value value = makeConstant(weight.name + "." + layout, pack(), layout);
    packed_.emplace(key, value);
    return value;
  }

  std::optional<std::vector<Value>> rewriteConv(const OperationNode& op, const std::vector<Value>& inputs) {
    const ConstantNode* weight = constantInput(inputs, 1);
    if (!weight || !inputs[0].defined() || !packableType(inputs[0].type()) || !packableType(weight->outputTypes[0]))
      return std::nullopt;
    if (inputs[0].type().dtype != weight->outputTypes[0].dtype) return std::nullopt;
    bool hasBias = inputs.size() > 2 && inputs[2].defined();
    auto params = conv2dParamsFromOnnx(op.attributes, inputs[0].type().shape, weight->outputTypes[0].shape, hasBias);
    if (!params) {
      // Not a 2-D convolution is simply left alone; a malformed one is the user's to fix.
      if (inputs[0].type().shape.size() == 4 && weight->outputTypes[0].shape.size() == 4 && !failure) {
        Diagnostic d = params.error();
        d.message = "Conv '" + op.name + "': " + d.message;
        d.location = op.name;
        failure = d;
      }
      return std::nullopt;
    }
    if (params->isDepthwise()) return std::nullopt;  // its kernel reads OIHW directly
    Conv2dParams p = *params;
    std::string layout = conv2dPackedWeightLayout(p, target_);
    Value packed = packedConstant(*weight, layout, layout,
                                  [&] { return packConv2dWeight(p, weight->data, target_); });
    Attributes attributes = op.attributes;
    attributes["weight_shape"] = weight->outputTypes[0].shape;
    std::vector<Value> newInputs = {inputs[0], packed};
    if (hasBias) newInputs.push_back(inputs[2]);
    return makeOperation(op.name, "ConvPrepacked", newInputs, attributes, op.outputTypes, op.provenance);
  }

  Value packedMatrix(const ConstantNode& b, bool transposed) {
    const std::vector<int64_t>& shape = b.outputTypes[0].shape;
    int64_t n = transposed ? shape[0] : shape[1];
    std::string layout = matmulPackedBLayout(n, target_);
    // The same panels come from B or from its transpose; the cache tells the sources apart.
    return packedConstant(b, layout, (transposed ? "transposed " : "") + layout,
                          [&] { return packMatmulBConstant(b.data, transposed, target_); });
  }

  std::optional<std::vector<Value>> rewriteMatMul(const OperationNode& op, const std::vector<Value>& inputs) {
    const ConstantNode* b = constantInput(inputs, 1);
    if (!b || inputs.size() != 2 || !inputs[0].defined() || !packableType(inputs[0].type()) ||
        !packableType(b->outputTypes[0]))
      return std::nullopt;
    const TensorType& a = inputs[0].type();
    const std::vector<int64_t>& bShape = b->outputTypes[0].shape;
    if (a.dtype != b->outputTypes[0].dtype || a.shape.size() < 2 || bShape.size() != 2 || a.shape.back() != bShape[0])
      return std::nullopt;
    Attributes attributes{{"n", bShape[1]}};
    return makeOperation(op.name, "DensePrepacked", {inputs[0], packedMatrix(*b, false)}, attributes, op.outputTypes,
                         op.provenance);
  }

  std::optional<std::vector<Value>> rewriteGemm(const OperationNode& op, const std::vector<Value>& inputs) {
    const ConstantNode* b = constantInput(inputs, 1);
    if (!b || !inputs[0].defined() || !packableType(inputs[0].type()) || !packableType(b->outputTypes[0]))
      return std::nullopt;
    const TensorType& a = inputs[0].type();
    const std::vector<int64_t>& bShape = b->outputTypes[0].shape;
    bool transB = op.attribute<int64_t>("transB", 0) != 0;
    bool hasC = inputs.size() > 2 && inputs[2].defined();
    if (op.attribute<int64_t>("transA", 0) != 0 || numberAttribute(op, "alpha", 1.0) != 1.0) return std::nullopt;
    double beta = numberAttribute(op, "beta", 1.0);
    if (hasC && beta != 1.0 && beta != 0.0) return std::nullopt;
    if (a.dtype != b->outputTypes[0].dtype || a.shape.size() != 2 || bShape.size() != 2) return std::nullopt;
    int64_t k = transB ? bShape[1] : bShape[0], n = transB ? bShape[0] : bShape[1];
    if (a.shape[1] != k) return std::nullopt;
    Attributes attributes{{"n", n}};
    bool addC = hasC && beta == 1.0;
    std::string productName = addC ? op.name + ".product" : op.name;
    std::vector<Value> product = makeOperation(productName, "DensePrepacked", {inputs[0], packedMatrix(*b, transB)},
                                               attributes, op.outputTypes, op.provenance);
    if (!addC) return product;
    // C broadcasts to [M, N] the same way under Gemm's and Add's rules.
    return makeOperation(op.name, "Add", {product[0], inputs[2]}, {}, op.outputTypes, op.provenance);
  }

  ScheduleTarget target_;
  std::map<std::pair<const GraphNode*, std::string>, Value> packed_;
};
}  // namespace

Expected<Graph> alterLayout(const Graph& graph, const ScheduleTarget& target) {
  WeightPacker packer(target);
  Graph result = rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& inputs) {
    return packer.rewrite(op, inputs);
  });
  if (packer.failure) return *packer.failure;
  return result;
}

}  // namespace tessel::graph
