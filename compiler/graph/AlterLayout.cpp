// AlterLayout: Conv, MatMul, Gemm and QLinearConv nodes with constant weights rewritten to
// operators that read weights packed once at compile time (ConvPrepacked, DensePrepacked,
// QLinearConvPrepacked), then chains of
// convolutions and elementwise operations moved to channel-blocked activations.
#include "compiler/graph/AlterLayout.h"

#include <functional>
#include <map>
#include <set>
#include <utility>

#include "compiler/graph/GraphRewriter.h"
#include "compiler/graph/QuantizedConvPacking.h"
#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/PackedConvParams.h"
#include "compiler/ops/WinogradConv2d.h"

namespace tessel::graph {

namespace {
bool packableType(const TensorType& type) {
  return type.known() && type.layout.empty() && (type.dtype == DataType::float32() || type.dtype == DataType::float64());
}

class WeightPacker {
public:
  WeightPacker(const Target& target, bool winograd) : target_(target), winograd_(winograd) {}

  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    if (op.isFused() || op.outputTypes.size() != 1) return std::nullopt;
    if (op.op == "Conv") return rewriteConv(op, inputs);
    if (op.op == "MatMul") return rewriteMatMul(op, inputs);
    if (op.op == "Gemm") return rewriteGemm(op, inputs);
    if (op.op == "QLinearConv") return packQuantizedConv(op, inputs, target_);
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
    if (winograd_) p.winogradTile = winogradTileFor(p, target_);
    std::string layout = conv2dPackedWeightLayout(p, target_);
    Value packed = packedConstant(*weight, layout, layout,
                                  [&] { return packConv2dWeight(p, weight->data, target_); });
    Attributes attributes = op.attributes;
    attributes["weight_shape"] = weight->outputTypes[0].shape;
    if (p.winogradTile) attributes["winograd_tile"] = p.winogradTile;
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

  Target target_;
  bool winograd_ = true;
  std::map<std::pair<const GraphNode*, std::string>, Value> packed_;
};

// Operations computing each element from the same element of their one full-sized input:
// they run unchanged on a blocked tensor.
bool layoutFreeUnary(const std::string& op) {
  // Quantize/DequantizeLinear count when per tensor (rewriteUnary checks their scale is one value).
  static const std::set<std::string> ops = {"Relu",     "Clip",      "LeakyRelu",      "Sigmoid",
                                            "HardSigmoid", "HardSwish", "Tanh",        "Elu",
                                            "Selu",     "Identity",  "QuantizeLinear", "DequantizeLinear"};
  return ops.count(op) != 0;
}

// Binary operations that broadcast: blocked when their operands can be laid out alike.
bool layoutFreeBinary(const std::string& op) { return op == "Add" || op == "Sub" || op == "Mul" || op == "Div"; }

// Pools work per channel, so their kernels read a blocked input in place and write a blocked
// output (MaxPool only with its one output: Indices count NCHW offsets).
bool channelwisePool(const std::string& op) {
  return op == "MaxPool" || op == "AveragePool" || op == "GlobalMaxPool" || op == "GlobalAveragePool";
}

// A Concat along the channels of 4-D tensors: over NCHW<b>c inputs it joins their outer block
// axis, so it stays blocked when every input holds whole blocks.
bool channelConcat(const OperationNode& op) {
  if (op.isFused() || op.op != "Concat" || op.outputTypes.size() != 1) return false;
  int64_t axis = op.attribute<int64_t>("axis", 0);
  return axis == 1 || axis == -3;
}

int64_t channelBlockOfType(const TensorType& type) { return channelBlockOf(type.layout).value_or(0); }
int64_t channelBlockOfValue(const Value& v) { return channelBlockOfType(v.type()); }

// The logical (NCHW) shape of a tensor of `type`, blocked or not.
std::vector<int64_t> logicalShape(const TensorType& type) {
  return unblockedChannelShape(type.shape, channelBlockOfType(type));
}

// An operation an earlier run already laid out: it reads or writes a channel-blocked tensor.
bool readsOrWritesBlocked(const OperationNode& op) {
  for (const Value& input : op.inputs)
    if (input.defined() && channelBlockOfValue(input)) return true;
  for (const TensorType& type : op.outputTypes)
    if (channelBlockOfType(type)) return true;
  return false;
}

using ValueKey = std::pair<const GraphNode*, int>;
ValueKey keyOf(const Value& v) { return {v.node(), v.index()}; }

// Moves activations between convolutions to NCHW<kb>c, in a second rewrite after the weights
// are packed (only ConvPrepacked convolutions read and write blocked activations).
class ActivationBlocker {
public:
  ActivationBlocker(const Graph& graph, const Target& target) : target_(target) {
    for (const OperationNode* op : graph.operations())
      for (const Value& input : op->inputs)
        if (input.defined()) consumers_[keyOf(input)].push_back(op);
  }

  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    // A transform the graph already had becomes one of the rewritten input, so it cancels
    // against a transform next to it instead of piling up.
    if (!op.isFused() && op.op == "LayoutTransform")
      return std::vector<Value>{inLayout(inputs[0], channelBlockOfType(op.outputTypes[0]))};
    if (readsOrWritesBlocked(op)) return keptLaidOut(op, inputs);
    if (!op.isFused() && op.op == "ConvPrepacked") return rewriteConv(op, inputs);
    if (!op.isFused() && op.op == "QLinearConvPrepacked") return rewriteQuantizedConv(op, inputs);
    if (!op.isFused() && op.op == "QLinearConv")
      if (auto blocked = rewriteQuantizedDepthwise(op, inputs)) return blocked;
    if (!op.isFused() && op.op == "Conv")
      if (auto blocked = rewriteDepthwise(op, inputs)) return blocked;
    bool anyBlocked = false;
    for (const Value& input : inputs) anyBlocked = anyBlocked || (input.defined() && channelBlockOfValue(input));
    if (!anyBlocked) return std::nullopt;
    if (!op.isFused() && op.outputTypes.size() == 1) {
      if (layoutFreeUnary(op.op))
        if (auto blocked = rewriteUnary(op, inputs)) return blocked;
      if (layoutFreeBinary(op.op) && inputs.size() == 2)
        if (auto blocked = rewriteBinary(op, inputs)) return blocked;
      // A pool's output is no larger than its input: transforming after it never costs more.
      if (channelwisePool(op.op) && channelBlockOfValue(inputs[0]))
        if (auto blocked = typedOperation(op, inputs, op.attributes)) return blocked;
      if (channelConcat(op))
        if (auto blocked = rewriteConcat(op, inputs)) return blocked;
    }
    return rebuiltOnNchw(op, inputs);
  }

  /// Each graph output in the layout it had in `original` (NCHW, unless the input graph
  /// returned a blocked tensor).
  Graph withOutputLayoutsOf(const Graph& original, Graph graph) {
    for (size_t i = 0; i < graph.outputs.size(); ++i)
      graph.outputs[i] = inLayout(graph.outputs[i], channelBlockOfValue(original.outputs[i]));
    return graph;
  }

private:
  // The convolution's parameters over its logical NCHW input; nullopt for one that must stay
  // as it is (depthwise, grouped, or attributes conv2d cannot read).
  std::optional<Conv2dParams> denseConvParams(const OperationNode& op, const std::vector<int64_t>& nchwShape) const {
    if (op.attributes.count("data_layout") || op.attributes.count("out_layout")) return std::nullopt;
    std::vector<int64_t> weightShape = op.attribute<std::vector<int64_t>>("weight_shape", {});
    if (weightShape.size() != 4 || nchwShape.size() != 4) return std::nullopt;
    auto params = conv2dParamsFromOnnx(op.attributes, nchwShape, weightShape, op.hasInput(2));
    if (!params || params->groups != 1) return std::nullopt;
    return *params;
  }

  // A depthwise Conv with one filter per channel and a constant weight, as conv2d parameters
  // over its logical NCHW input: it computes in the blocks of a blocked input (vectors of
  // channels, whatever the width and stride). nullopt for any other Conv.
  static std::optional<Conv2dParams> depthwiseParams(const OperationNode& op, const std::vector<Value>& inputs,
                                                     const std::vector<int64_t>& nchwShape) {
    if (op.isFused() || op.op != "Conv" || inputs.size() < 2 || !inputs[1].defined() || inputs[1].index() != 0)
      return std::nullopt;
    const ConstantNode* weight = asConstant(inputs[1].node());
    if (!weight || !packableType(weight->outputTypes[0]) || nchwShape.size() != 4) return std::nullopt;
    bool hasBias = inputs.size() > 2 && inputs[2].defined();
    auto params = conv2dParamsFromOnnx(op.attributes, nchwShape, weight->outputTypes[0].shape, hasBias);
    if (!params || !params->isDepthwise() || params->filters != params->channels) return std::nullopt;
    return *params;
  }

  // Whether output `key` of the packed graph reaches a dense convolution through operations
  // that stay blocked (or transforms the graph already had): only then is writing it blocked
  // worth the transforms back elsewhere.
  bool feedsBlockedConv(const ValueKey& key) {
    auto known = feedsConv_.find(key);
    if (known != feedsConv_.end()) return known->second;
    std::vector<int64_t> shape = logicalShape(key.first->outputTypes[size_t(key.second)]);
    bool feeds = false;
    for (const OperationNode* consumer : consumers_[key]) {
      if (consumer->isFused() || consumer->outputTypes.size() != 1) continue;
      bool isData = keyOf(consumer->inputs[0]) == key;
      bool staysBlocked = (layoutFreeUnary(consumer->op) || channelwisePool(consumer->op) ||
                           consumer->op == "LayoutTransform") && isData;
      if (consumer->op == "ConvPrepacked")
        feeds = isData && denseConvParams(*consumer, shape).has_value();
      else if (consumer->op == "QLinearConvPrepacked")  // reads any block of whole channel quads
        feeds = isData && shape.size() == 4 && shape[1] % 4 == 0;
      else if (consumer->op == "Conv")  // a depthwise one computes in the blocks it is given
        feeds = isData && depthwiseParams(*consumer, consumer->inputs, shape).has_value();
      else if (consumer->op == "QLinearConv")  // so does a depthwise quantized one
        feeds = isData && shape.size() == 4 && shape[1] > 1 && consumer->attribute<int64_t>("group", 1) == shape[1];
      else if (staysBlocked || layoutFreeBinary(consumer->op))
        feeds = feedsBlockedConv({consumer, 0});
      else if (channelConcat(*consumer))  // it stays blocked only if every input can be
        feeds = inputsFillVectors(*consumer) && feedsBlockedConv({consumer, 0});
      if (feeds) break;
    }
    feedsConv_[key] = feeds;
    return feeds;
  }

  // Whether every input of `op` has a whole number of vectors of channels: a block size all
  // of them can be written in (a convolution's block is one or two vectors of filters).
  bool inputsFillVectors(const OperationNode& op) const {
    for (const Value& input : op.inputs) {
      if (!input.defined()) return false;
      std::vector<int64_t> shape = logicalShape(input.type());
      if (shape.size() != 4 || shape[1] == 0 || shape[1] % target_.vectorLanes() != 0) return false;
    }
    return true;
  }

  std::optional<std::vector<Value>> rewriteConv(const OperationNode& op, const std::vector<Value>& inputs) {
    Value data = inputs[0];
    // Read through a transform to NCHW (the input graph had it) when the source can be read in
    // place; if it cannot, toNchw below finds the same transform again.
    if (const Value* blocked = blockedSourceOf(data)) data = *blocked;
    int64_t inputBlock = channelBlockOfValue(data);
    std::vector<int64_t> nchwShape = unblockedChannelShape(data.type().shape, inputBlock);
    auto params = denseConvParams(op, nchwShape);
    if (!params) {
      if (inputBlock) return rebuiltOnNchw(op, inputs);
      return std::nullopt;
    }
    Conv2dActivationLayout layout{inputBlock, feedsBlockedConv({&op, 0})};
    if (!conv2dSupportsActivationLayout(*params, layout, target_)) {
      layout.blockedOutput = layout.blockedOutput && conv2dSupportsActivationLayout(*params, {0, true}, target_);
      if (inputBlock && !conv2dSupportsActivationLayout(*params, {inputBlock, false}, target_)) {
        data = toNchw(data);
        layout.inputBlock = 0;
      }
    }
    if (layout == Conv2dActivationLayout{}) {
      if (inputBlock) return rebuiltOnNchw(op, inputs);
      return std::nullopt;
    }
    Attributes attributes = op.attributes;
    if (layout.inputBlock) attributes["data_layout"] = blockedChannelLayout(layout.inputBlock);
    if (layout.blockedOutput) attributes["out_layout"] = blockedChannelLayout(conv2dFilterBlock(*params, target_));
    std::vector<Value> newInputs = inputs;
    newInputs[0] = data;
    return typedOperation(op, newInputs, attributes);
  }

  // The int8 convolution over blocked activations: it reads the blocks it is given when they
  // hold whole quads of channels (its dot products take 4 at a time), and writes its filter
  // blocks when what reads them stays blocked up to another convolution (the dequantize,
  // residual add, Relu and quantize between two layers of a QDQ model all do).
  std::optional<std::vector<Value>> rewriteQuantizedConv(const OperationNode& op, const std::vector<Value>& inputs) {
    Value data = inputs[0];
    if (!data.defined() || op.outputTypes[0].shape.size() != 4) return std::nullopt;
    if (const Value* blocked = blockedSourceOf(data)) data = *blocked;
    int64_t inputBlock = channelBlockOfValue(data);
    std::vector<int64_t> shape = unblockedChannelShape(data.type().shape, inputBlock);
    if (inputBlock && (shape.size() != 4 || inputBlock % 4 != 0 || shape[1] % inputBlock != 0)) {
      data = toNchw(data);
      inputBlock = 0;
    }
    int64_t filters = op.outputTypes[0].shape[1], filterBlock = op.attribute<int64_t>("filter_block", 0);
    bool blockedOutput = filterBlock > 0 && filters % filterBlock == 0 && feedsBlockedConv({&op, 0});
    if (!inputBlock && !blockedOutput && data == inputs[0]) return std::nullopt;
    Attributes attributes = op.attributes;
    if (inputBlock) attributes["data_layout"] = blockedChannelLayout(inputBlock);
    if (blockedOutput) attributes["out_layout"] = blockedChannelLayout(filterBlock);
    std::vector<Value> newInputs = inputs;
    newInputs[0] = data;
    return typedOperation(op, newInputs, attributes);
  }

  // A depthwise QLinearConv: the int8 depthwise kernel in its input's blocks. An NCHW input
  // (from a model input, or an operation that stays NCHW) is regrouped into blocks first: a
  // pass over bytes, far cheaper than the reference kernel.
  std::optional<std::vector<Value>> rewriteQuantizedDepthwise(const OperationNode& op, const std::vector<Value>& inputs) {
    if (inputs.empty() || !inputs[0].defined() || op.attribute<int64_t>("group", 1) <= 1) return std::nullopt;
    Value data = inputs[0];
    if (const Value* blocked = blockedSourceOf(data)) data = *blocked;
    if (!channelBlockOfValue(data)) {
      const TensorType& type = data.type();
      if (!type.known() || !type.layout.empty() || type.shape.size() != 4) return std::nullopt;
      int64_t channels = type.shape[1], block = channels % 32 == 0 ? 32 : channels % 16 == 0 ? 16 : 0;
      if (!block) return std::nullopt;
      data = transform(data, block);
    }
    return packQuantizedDepthwiseConv(op, inputs, data);
  }

  // A depthwise convolution of a blocked input: ConvPrepacked reading and writing the input's
  // blocks, its weight packed in them ([C / b, 1, R, S, b]).
  std::optional<std::vector<Value>> rewriteDepthwise(const OperationNode& op, const std::vector<Value>& inputs) {
    Value data = inputs[0];
    if (!data.defined()) return std::nullopt;
    if (const Value* blocked = blockedSourceOf(data)) data = *blocked;
    int64_t block = channelBlockOfValue(data);
    if (!block) return std::nullopt;
    auto params = depthwiseParams(op, inputs, unblockedChannelShape(data.type().shape, block));
    Conv2dActivationLayout layout{block, true};
    if (!params || !conv2dSupportsActivationLayout(*params, layout, target_)) return std::nullopt;
    const ConstantNode* weight = asConstant(inputs[1].node());
    std::string weightLayout = conv2dPackedWeightLayout(*params, layout, target_);
    auto key = std::make_pair(keyOf(inputs[1]), block);
    auto packed = packedDepthwiseWeights_.find(key);
    if (packed == packedDepthwiseWeights_.end()) {
      Value value = makeConstant(weight->name + "." + weightLayout,
                                 packConv2dWeight(*params, layout, weight->data, target_), weightLayout);
      packed = packedDepthwiseWeights_.emplace(key, value).first;
    }
    Attributes attributes = op.attributes;
    attributes["weight_shape"] = weight->outputTypes[0].shape;
    attributes["data_layout"] = blockedChannelLayout(block);
    attributes["out_layout"] = blockedChannelLayout(block);
    std::vector<Value> newInputs = {data, packed->second};
    if (inputs.size() > 2 && inputs[2].defined()) newInputs.push_back(inputs[2]);
    OperationNode prepacked(op.name, "ConvPrepacked", newInputs, attributes, op.outputTypes, op.provenance);
    return typedOperation(prepacked, newInputs, attributes);
  }

  std::optional<std::vector<Value>> rewriteUnary(const OperationNode& op, const std::vector<Value>& inputs) {
    // Only the first input is full-sized; Clip's bounds and the like must be single values.
    for (size_t i = 1; i < inputs.size(); ++i)
      if (inputs[i].defined() && (channelBlockOfValue(inputs[i]) || inputs[i].type().elementCount() != 1))
        return std::nullopt;
    return typedOperation(op, inputs, op.attributes);
  }

  std::optional<std::vector<Value>> rewriteBinary(const OperationNode& op, const std::vector<Value>& inputs) {
    const TensorType& outType = op.outputTypes[0];
    if (outType.shape.size() != 4 || !outType.layout.empty()) return std::nullopt;
    int64_t block = 0;
    for (const Value& input : inputs)
      if (!block) block = channelBlockOfValue(input);
    if (outType.shape[1] % block != 0) return std::nullopt;
    std::vector<Value> newInputs;
    for (const Value& input : inputs) {
      const TensorType& type = input.type();
      int64_t inputBlock = channelBlockOfValue(input);
      if (inputBlock && unblockedChannelShape(type.shape, inputBlock) == outType.shape) {
        newInputs.push_back(toBlocked(input, block));
      } else if (!inputBlock && type.shape == outType.shape) {
        newInputs.push_back(toBlocked(input, block));
      } else if (!inputBlock && type.elementCount() == 1) {
        newInputs.push_back(input);
      } else if (auto perChannel = blockedPerChannelConstant(input, outType.shape[1], block)) {
        newInputs.push_back(*perChannel);
      } else if (isComputedPerChannel(input, outType)) {
        // A squeeze-and-excitation scale ([N, C, 1, 1] from a pool, 1x1 convolutions and a
        // sigmoid): blocked it broadcasts as before, and moving it costs C elements, where
        // leaving the operation on NCHW would move the full-sized operand twice.
        newInputs.push_back(toBlocked(input, block));
      } else {
        return std::nullopt;
      }
    }
    return typedOperation(op, newInputs, op.attributes);
  }

  // A channel Concat with a blocked input, joined in that input's blocks. Blocked inputs cost
  // nothing to join that way (and transforming the result costs what transforming them would);
  // NCHW inputs are transformed in when they hold no more elements than the blocked ones
  // (DenseNet's last Concat: 16 blocked layers and the last one's NCHW output) or the result
  // reaches a convolution, which would otherwise have the whole result transformed back.
  // Inputs whose channels do not fill the blocks, or that are blocked differently, leave the
  // Concat on NCHW.
  std::optional<std::vector<Value>> rewriteConcat(const OperationNode& op, const std::vector<Value>& inputs) {
    int64_t block = 0, blockedElements = 0, nchwElements = 0;
    for (const Value& input : inputs) {
      if (!input.defined()) return std::nullopt;
      if (!block) block = channelBlockOfValue(input);
      (channelBlockOfValue(input) ? blockedElements : nchwElements) += input.type().elementCount();
    }
    for (const Value& input : inputs) {
      int64_t inputBlock = channelBlockOfValue(input);
      std::vector<int64_t> shape = logicalShape(input.type());
      if ((inputBlock && inputBlock != block) || shape.size() != 4 || shape[1] == 0 ||
          shape[1] % block != 0)
        return std::nullopt;
    }
    if (nchwElements > blockedElements && !feedsBlockedConv({&op, 0})) return std::nullopt;
    std::vector<Value> blocked;
    for (const Value& input : inputs) blocked.push_back(toBlocked(input, block));
    return typedOperation(op, blocked, op.attributes);
  }

  // Whether `value` holds one value per channel of `outType` ([1 or N, C, 1, 1] as NCHW,
  // blocked or not), computed rather than constant.
  static bool isComputedPerChannel(const Value& value, const TensorType& outType) {
    std::vector<int64_t> shape = logicalShape(value.type());
    return shape.size() == 4 && (shape[0] == 1 || shape[0] == outType.shape[0]) && shape[1] == outType.shape[1] &&
           shape[2] == 1 && shape[3] == 1 && !asConstant(value.node());
  }

  // A constant of one value per channel ([C, 1, 1] or [1, C, 1, 1]) as [C / b, 1, 1, b], which
  // broadcasts against [N, C / b, H, W, b] exactly as the original did against NCHW. Channel
  // co * b + ci sits at the same offset in both, so the data is a copy.
  std::optional<Value> blockedPerChannelConstant(const Value& value, int64_t channels, int64_t block) {
    const ConstantNode* constant = asConstant(value.node());
    if (!constant) return std::nullopt;
    const std::vector<int64_t>& shape = constant->outputTypes[0].shape;
    bool perChannel = (shape == std::vector<int64_t>{channels, 1, 1}) ||
                      (shape == std::vector<int64_t>{1, channels, 1, 1});
    if (!perChannel || !constant->outputTypes[0].layout.empty()) return std::nullopt;
    auto key = std::make_pair(keyOf(value), block);
    if (auto it = blockedConstants_.find(key); it != blockedConstants_.end()) return it->second;
    std::vector<int64_t> blockedShape = {channels / block, 1, 1, block};
    if (shape.size() == 4) blockedShape.insert(blockedShape.begin(), 1);
    runtime::NDArray data = runtime::NDArray::empty(blockedShape, constant->data.dtype());
    data.copyFrom(constant->data.data(), size_t(constant->data.byteSize()));
    Value blocked = makeConstant(constant->name + "." + blockedChannelLayout(block), data);
    blockedConstants_.emplace(key, blocked);
    return blocked;
  }

  // `op` over `inputs` with the output types the registry infers for them.
  std::optional<std::vector<Value>> typedOperation(const OperationNode& op, const std::vector<Value>& inputs,
                                                   const Attributes& attributes) {
    OperationNode probe(op.name, op.op, inputs, attributes, op.outputTypes, op.provenance);
    auto types = inferOpTypes(makeOpCall(probe, target_));
    if (!types) return std::nullopt;  // the operator cannot take these layouts: stay NCHW
    return makeOperation(op.name, op.op, inputs, attributes, *types, op.provenance);
  }

  // An operation an earlier run laid out, as it was: each input in the layout it had then.
  std::vector<Value> keptLaidOut(const OperationNode& op, const std::vector<Value>& inputs) {
    std::vector<Value> laidOut;
    for (size_t i = 0; i < inputs.size(); ++i)
      laidOut.push_back(inputs[i].defined() ? inLayout(inputs[i], channelBlockOfValue(op.inputs[i])) : inputs[i]);
    if (op.isFused()) return makeFusedOperation(op.name, op.op, laidOut, *op.body, op.provenance);
    return makeOperation(op.name, op.op, laidOut, op.attributes, op.outputTypes, op.provenance);
  }

  // `op` with every blocked input transformed back to NCHW (its output types unchanged).
  std::vector<Value> rebuiltOnNchw(const OperationNode& op, const std::vector<Value>& inputs) {
    std::vector<Value> nchw;
    for (const Value& input : inputs) nchw.push_back(input.defined() ? toNchw(input) : input);
    if (op.isFused()) return makeFusedOperation(op.name, op.op, nchw, *op.body, op.provenance);
    return makeOperation(op.name, op.op, nchw, op.attributes, op.outputTypes, op.provenance);
  }

  // The producer's input when `value` is a LayoutTransform from `layout`, else null.
  static const Value* transformedFrom(const Value& value, int64_t block) {
    const OperationNode* producer = asOperation(value.node());
    if (!producer || producer->op != "LayoutTransform") return nullptr;
    const Value& source = producer->inputs[0];
    return channelBlockOfValue(source) == block ? &source : nullptr;
  }

  // The blocked value `value` is a LayoutTransform to NCHW of, or null.
  static const Value* blockedSourceOf(const Value& value) {
    const OperationNode* producer = asOperation(value.node());
    if (!producer || producer->op != "LayoutTransform" || channelBlockOfValue(value)) return nullptr;
    return channelBlockOfValue(producer->inputs[0]) ? &producer->inputs[0] : nullptr;
  }

  Value transform(const Value& value, int64_t destinationBlock) {
    auto key = std::make_pair(keyOf(value), destinationBlock);
    if (auto it = transforms_.find(key); it != transforms_.end()) return it->second;
    int64_t sourceBlock = channelBlockOfValue(value);
    const TensorType& type = value.type();
    std::vector<int64_t> nchwShape = unblockedChannelShape(type.shape, sourceBlock);
    TensorType outType{type.dtype, blockedChannelShape(nchwShape, destinationBlock),
                       destinationBlock ? blockedChannelLayout(destinationBlock) : ""};
    auto layoutName = [](int64_t block) { return block ? blockedChannelLayout(block) : std::string("NCHW"); };
    Attributes attributes{{"src_layout", layoutName(sourceBlock)}, {"dst_layout", layoutName(destinationBlock)}};
    std::string name = value.name() + "." + layoutName(destinationBlock);
    Value result = makeOperation(name, "LayoutTransform", {value}, attributes, {outType})[0];
    transforms_.emplace(key, result);
    return result;
  }

  Value toNchw(const Value& value) {
    int64_t block = channelBlockOfValue(value);
    if (!block) return value;
    if (const Value* original = transformedFrom(value, 0)) return *original;  // NCHW -> blocked -> NCHW
    return transform(value, 0);
  }

  Value toBlocked(const Value& value, int64_t block) {
    int64_t current = channelBlockOfValue(value);
    if (current == block) return value;
    if (current) return toBlocked(toNchw(value), block);
    if (const Value* original = transformedFrom(value, block)) return *original;  // blocked -> NCHW -> blocked
    return transform(value, block);
  }

  // `value` with channel block `block` (0: NCHW).
  Value inLayout(const Value& value, int64_t block) { return block ? toBlocked(value, block) : toNchw(value); }

  Target target_;
  std::map<ValueKey, std::vector<const OperationNode*>> consumers_;
  std::map<ValueKey, bool> feedsConv_;
  std::map<std::pair<ValueKey, int64_t>, Value> transforms_;
  std::map<std::pair<ValueKey, int64_t>, Value> blockedConstants_;
  std::map<std::pair<ValueKey, int64_t>, Value> packedDepthwiseWeights_;
};
}  // namespace

std::vector<PassOption> AlterLayoutOptions::declared() {
  return {PassOption::flag("winograd", true,
                           "compute dense 3x3 stride-1 convolutions with enough channels by Winograd F(4x4, 3x3)"),
          PassOption::flag("blocked_activations", true,
                           "keep activations between convolutions channel-blocked (NCHW<b>c)"),
          PassOption::flag("pack_weights", true,
                           "pack constant Conv/MatMul/Gemm weights at compile time (false: AlterLayout does nothing)")};
}

AlterLayoutOptions AlterLayoutOptions::fromConfig(const PassConfig& config) {
  AlterLayoutOptions options;
  options.packWeights = config.flag("pack_weights");
  options.blockedActivations = config.flag("blocked_activations");
  options.winograd = config.flag("winograd");
  return options;
}

Expected<Graph> alterLayout(const Graph& graph, const Target& target) {
  return alterLayout(graph, target, AlterLayoutOptions{});
}

Expected<Graph> alterLayout(const Graph& graph, const Target& target, const AlterLayoutOptions& options) {
  if (!options.packWeights) return graph;
  WeightPacker packer(target, options.winograd);
  Graph packed = rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& inputs) {
    return packer.rewrite(op, inputs);
  });
  if (packer.failure) return *packer.failure;
  if (!options.blockedActivations) return packed;
  ActivationBlocker blocker(packed, target);
  Graph blocked = rewriteGraph(packed, [&](const OperationNode& op, const std::vector<Value>& inputs) {
    return blocker.rewrite(op, inputs);
  });
  return blocker.withOutputLayoutsOf(graph, std::move(blocked));
}

}  // namespace tessel::graph
