// Inference-time simplification: no-op removal, batch normalization folding and zero padding
// folded into average pools.
#include "compiler/graph/SimplifyInference.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "compiler/graph/GraphRewriter.h"
#include "compiler/lower/Build.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

namespace {

using ValueKey = std::pair<const GraphNode*, int>;

bool isFloat(const TensorType& type) { return type.dtype == DataType::float32() || type.dtype == DataType::float64(); }

// The elements of a float32 or float64 array as doubles.
std::vector<double> readDoubles(const runtime::NDArray& data) {
  std::vector<double> values;
  if (data.dtype() == runtime::DataType::float32())
    for (float v : data.values<float>()) values.push_back(v);
  else
    for (double v : data.values<double>()) values.push_back(v);
  return values;
}

runtime::NDArray makeArray(const std::vector<int64_t>& shape, DataType dtype, const std::vector<double>& values) {
  auto array = runtime::NDArray::empty(shape, toRuntimeType(dtype));
  TESSEL_ICHECK(array.numElements() == int64_t(values.size())) << "array of " << values.size() << " values";
  if (dtype == DataType::float32()) {
    auto out = array.values<float>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = float(values[i]);
  } else {
    auto out = array.values<double>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  }
  return array;
}

// A constant's data when `v` is a float constant of `dtype`, else null.
const ConstantNode* floatConstant(const Value& v, DataType dtype) {
  if (!v.defined()) return nullptr;
  auto* constant = asConstant(v.node());
  return constant && constant->outputTypes[0].dtype == dtype ? constant : nullptr;
}

std::vector<Provenance> joined(std::vector<Provenance> a, const std::vector<Provenance>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Batch normalization as y = scale[c] * x + shift[c].
struct ChannelAffine {
  std::vector<double> scale, shift;
};

class InferenceSimplifier {
public:
  // Runs sweeps until no batch normalization waits on a producer rewritten in the same sweep.
  Expected<Graph> run(const Graph& input) {
    Graph graph = input;
    for (;;) {
      countUses(graph);
      deferred_ = false;
      Graph next = rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& inputs) {
        return error_ ? std::nullopt : rewrite(op, inputs);
      });
      if (error_) return *error_;
      graph = std::move(next);
      if (!deferred_) return graph;
    }
  }

private:
  void countUses(const Graph& graph) {
    uses_.clear();
    for (const OperationNode* op : graph.operations()) {
      std::set<ValueKey> seen;  // an operation reading a value twice is one reader
      for (auto& input : op->inputs) {
        ValueKey key{input.node(), input.index()};
        if (input.defined() && seen.insert(key).second) ++uses_[key];
      }
    }
    for (auto& output : graph.outputs) ++uses_[{output.node(), output.index()}];
  }
  int usesOf(const GraphNode* node, int index = 0) const {
    auto it = uses_.find({node, index});
    return it == uses_.end() ? 0 : it->second;
  }

  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    if (op.op == "Identity" && inputs.size() == 1) return std::vector<Value>{inputs[0]};
    if (op.op == "Dropout") return removeDropout(op, inputs);
    if (op.op == "BatchNormalization") return rewriteBatchNorm(op, inputs);
    if (op.op == "AveragePool") return foldZeroPadding(op, inputs);
    if (op.op == "Conv") return dropPaddingOnlyTaps(op, inputs);
    return std::nullopt;
  }

  // A dilated convolution whose dilation is as wide as its image (DeepLab's atrous pyramid
  // has dilations 12, 24 and 36 over 14x14 or 28x28 features) has taps that read only the
  // zero padding at every output position: they add nothing, yet cost as much as the others.
  // The live taps of an axis form one run [first, last]; the convolution keeps only those,
  // its weight cut to them and its padding reduced by the dead taps' reach, which keeps
  // every output reading the same input positions (a single live tap makes it a 1x1
  // convolution, dilation 1). Only with explicit padding that stays non-negative.
  std::optional<std::vector<Value>> dropPaddingOnlyTaps(const OperationNode& conv, const std::vector<Value>& inputs) {
    if (conv.isFused() || inputs.size() < 2 || !inputs[0].defined() || conv.outputTypes.size() != 1) return std::nullopt;
    if (conv.attribute<std::string>("auto_pad", "NOTSET") != "NOTSET") return std::nullopt;
    const TensorType& x = inputs[0].type();
    const TensorType& y = conv.outputTypes[0];
    auto* weight = floatConstant(inputs[1], x.dtype);
    if (!weight || !x.known() || !y.known() || x.shape.size() < 3 || y.shape.size() != x.shape.size()) return std::nullopt;
    const std::vector<int64_t>& wShape = weight->outputTypes[0].shape;
    size_t spatial = x.shape.size() - 2;
    if (wShape.size() != spatial + 2) return std::nullopt;
    auto perAxis = [&](const char* name, int64_t fallback, size_t count) {
      std::vector<int64_t> values = conv.attribute<std::vector<int64_t>>(name, std::vector<int64_t>(count, fallback));
      return values.size() == count ? values : std::vector<int64_t>{};
    };
    std::vector<int64_t> strides = perAxis("strides", 1, spatial), dilations = perAxis("dilations", 1, spatial);
    std::vector<int64_t> pads = perAxis("pads", 0, 2 * spatial);
    if (strides.empty() || dilations.empty() || pads.empty()) return std::nullopt;
    std::vector<int64_t> first(spatial), kept(spatial);
    bool shrinks = false;
    for (size_t a = 0; a < spatial; ++a) {
      int64_t size = x.shape[2 + a], outputs = y.shape[2 + a], taps = wShape[2 + a];
      int64_t d = dilations[a], lowest = -1, highest = -1;
      for (int64_t r = 0; r < taps; ++r) {
        // The input positions tap r reads over every output: [r*d - pad, (outputs-1)*stride + r*d - pad].
        bool live = r * d - pads[a] <= size - 1 && (outputs - 1) * strides[a] + r * d - pads[a] >= 0;
        if (!live) continue;
        if (lowest < 0) lowest = r;
        highest = r;
      }
      if (lowest < 0) return std::nullopt;  // no tap reads the image: the output is the bias alone
      int64_t begin = pads[a] - lowest * d, end = pads[a + spatial] - (taps - 1 - highest) * d;
      if (begin < 0 || end < 0) return std::nullopt;
      first[a] = lowest;
      kept[a] = highest - lowest + 1;
      shrinks = shrinks || kept[a] < taps;
      pads[a] = begin;
      pads[a + spatial] = end;
      if (kept[a] == 1) dilations[a] = 1;
    }
    if (!shrinks) return std::nullopt;
    // The weight [M, C/group, k0, k1, ...] cut to the live taps of every axis.
    std::vector<int64_t> newShape = {wShape[0], wShape[1]};
    newShape.insert(newShape.end(), kept.begin(), kept.end());
    std::vector<double> old = readDoubles(weight->data), cut;
    cut.reserve(size_t(elementCount(newShape)));
    std::vector<int64_t> index(newShape.size(), 0);
    for (int64_t e = 0; e < elementCount(newShape); ++e) {
      int64_t source = 0;
      for (size_t k = 0; k < newShape.size(); ++k) source = source * wShape[k] + index[k] + (k >= 2 ? first[k - 2] : 0);
      cut.push_back(old[size_t(source)]);
      for (size_t k = newShape.size(); k-- > 0;) {
        if (++index[k] < newShape[k]) break;
        index[k] = 0;
      }
    }
    std::vector<Value> newInputs = inputs;
    newInputs[1] = makeConstant(weight->name + ".live_taps", makeArray(newShape, x.dtype, cut));
    Attributes attributes = conv.attributes;
    attributes["kernel_shape"] = kept;
    attributes["pads"] = pads;
    attributes["dilations"] = dilations;
    auto rewritten = typed(conv.name, "Conv", newInputs, attributes, conv.provenance, y);
    if (!rewritten) return std::nullopt;
    return std::vector<Value>{*rewritten};
  }

  // The spatial padding of a Pad that adds zeros around the spatial axes of its input only
  // (begin values, then end values); nullopt for any other Pad.
  static std::optional<std::vector<int64_t>> spatialZeroPadding(const OperationNode& pad) {
    if (pad.isFused() || pad.op != "Pad" || pad.inputs.empty() || !pad.inputs[0].defined()) return std::nullopt;
    if (pad.attribute<std::string>("mode", "constant") != "constant") return std::nullopt;
    if (pad.hasInput(3)) return std::nullopt;  // axes: not worth reading
    size_t rank = pad.inputs[0].type().shape.size();
    std::vector<int64_t> pads = pad.attribute<std::vector<int64_t>>("pads", {});  // before opset 11
    if (pad.attributes.count("value") && (pad.attribute<double>("value", 1.0) != 0.0 && pad.attribute<int64_t>("value", 1) != 0))
      return std::nullopt;
    if (pad.hasInput(1)) {
      auto* constant = asConstant(pad.inputs[1].node());
      auto values = constant ? integerElements(constant->data) : std::nullopt;
      if (!values) return std::nullopt;
      pads = *values;
    }
    if (pad.hasInput(2)) {
      auto* value = asConstant(pad.inputs[2].node());
      if (!value || value->data.numElements() != 1 || !isFloat(value->outputTypes[0]) ||
          readDoubles(value->data)[0] != 0.0)
        return std::nullopt;
    }
    if (rank < 3 || pads.size() != 2 * rank) return std::nullopt;
    std::vector<int64_t> spatial;
    for (size_t k = 0; k < 2 * rank; ++k) {
      size_t axis = k % rank;
      if (pads[k] < 0 || (axis < 2 && pads[k] != 0)) return std::nullopt;
      if (axis >= 2) spatial.push_back(pads[k]);
    }
    return spatial;
  }

  // An AveragePool of zeros padded around its input (PyTorch exports avg_pool2d's padding so)
  // pools the input itself with that padding counted in every window: one kernel instead of a
  // padded copy, and one that reads channel-blocked activations in place. Only without
  // ceil_mode (whose extra windows would count padding the Pad did not add) and auto_pad, and
  // when the pool's own padding, if any, is counted too.
  std::optional<std::vector<Value>> foldZeroPadding(const OperationNode& pool, const std::vector<Value>& inputs) {
    if (pool.isFused() || inputs.empty() || !inputs[0].defined() || pool.outputTypes.size() != 1) return std::nullopt;
    auto* pad = asOperation(inputs[0].node());
    auto padding = pad ? spatialZeroPadding(*pad) : std::nullopt;
    if (!padding) return std::nullopt;
    if (pool.attribute<int64_t>("ceil_mode", 0) != 0 || pool.attribute<std::string>("auto_pad", "NOTSET") != "NOTSET")
      return std::nullopt;
    std::vector<int64_t> pads = pool.attribute<std::vector<int64_t>>("pads", std::vector<int64_t>(padding->size(), 0));
    if (pads.size() != padding->size()) return std::nullopt;
    bool poolPads = false, padPads = false;
    for (size_t k = 0; k < pads.size(); ++k) {
      poolPads = poolPads || pads[k] != 0;
      padPads = padPads || (*padding)[k] != 0;
      pads[k] += (*padding)[k];
    }
    bool counted = pool.attribute<int64_t>("count_include_pad", 0) != 0;
    if (poolPads && !counted) return std::nullopt;
    // A pool's padding must stay narrower than its (dilated) window.
    std::vector<int64_t> kernel = pool.attribute<std::vector<int64_t>>("kernel_shape", {});
    std::vector<int64_t> dilations = pool.attribute<std::vector<int64_t>>("dilations", {});
    if (kernel.size() * 2 != pads.size()) return std::nullopt;
    for (size_t k = 0; k < pads.size(); ++k) {
      size_t axis = k % kernel.size();
      int64_t dilation = axis < dilations.size() ? dilations[axis] : 1;
      if (pads[k] >= (kernel[axis] - 1) * dilation + 1) return std::nullopt;
    }
    Attributes attributes = pool.attributes;
    attributes["pads"] = pads;
    if (padPads) attributes["count_include_pad"] = int64_t(1);
    return makeOperation(pool.name, "AveragePool", {pad->inputs[0]}, attributes, pool.outputTypes,
                         joined(pad->provenance, pool.provenance));
  }

  std::optional<std::vector<Value>> removeDropout(const OperationNode& op, const std::vector<Value>& inputs) {
    if (inputs.empty() || !inputs[0].defined()) return std::nullopt;
    // Opset 12+ may ask for training behaviour through a third input.
    if (inputs.size() > 2 && inputs[2].defined()) {
      auto* training = asConstant(inputs[2].node());
      if (!training || training->data.numElements() != 1 || static_cast<const uint8_t*>(training->data.data())[0])
        return std::nullopt;
    }
    std::vector<Value> outputs{inputs[0]};
    if (op.outputTypes.size() > 1) {
      // At inference nothing is dropped: the mask is all ones (true).
      const TensorType& maskType = op.outputTypes[1];
      if (!maskType.known()) return std::nullopt;
      auto mask = runtime::NDArray::empty(maskType.shape, toRuntimeType(maskType.dtype));
      if (maskType.dtype == DataType::float32()) {
        for (float& v : mask.values<float>()) v = 1.0f;
      } else if (maskType.dtype == DataType::boolean() || maskType.dtype == DataType::uint8()) {
        std::memset(mask.data(), 1, size_t(mask.byteSize()));
      } else {
        return std::nullopt;
      }
      outputs.push_back(makeConstant(op.name + ".mask", mask, maskType.layout));
    }
    return outputs;
  }

  // The folded affine form of an inference batch normalization with constant parameters.
  std::optional<ChannelAffine> affineOf(const OperationNode& bn, const std::vector<Value>& inputs) const {
    if (inputs.size() < 5 || !inputs[0].defined() || bn.attribute<int64_t>("training_mode", 0) != 0)
      return std::nullopt;
    const TensorType& x = inputs[0].type();
    if (!isFloat(x) || x.shape.size() < 2 || bn.attribute<int64_t>("spatial", 1) != 1) return std::nullopt;
    // Before opset 14, declaring the statistics outputs is what asks for training mode.
    int opset = bn.provenance.empty() ? 0 : bn.provenance.front().opset;
    if (bn.outputTypes.size() > 1 && opset != 0 && opset < 14) return std::nullopt;
    // The running statistics of training mode are other outputs; they must be unread.
    for (size_t i = 1; i < bn.outputTypes.size(); ++i)
      if (usesOf(&bn, int(i))) return std::nullopt;
    int64_t channels = x.shape[1];
    std::vector<std::vector<double>> params;
    for (size_t i = 1; i < 5; ++i) {
      auto* constant = floatConstant(inputs[i], x.dtype);
      if (!constant || constant->data.numElements() != channels) return std::nullopt;
      params.push_back(readDoubles(constant->data));
    }
    double epsilon = 1e-5;
    auto it = bn.attributes.find("epsilon");
    if (it != bn.attributes.end()) {
      if (auto* d = std::get_if<double>(&it->second)) epsilon = *d;
      else if (auto* i = std::get_if<int64_t>(&it->second)) epsilon = double(*i);
    }
    ChannelAffine affine;
    for (int64_t c = 0; c < channels; ++c) {
      double gamma = params[0][size_t(c)], beta = params[1][size_t(c)];
      double mean = params[2][size_t(c)], variance = params[3][size_t(c)];
      double scale = gamma / std::sqrt(variance + epsilon);
      affine.scale.push_back(scale);
      affine.shift.push_back(beta - mean * scale);
    }
    return affine;
  }

  std::optional<std::vector<Value>> rewriteBatchNorm(const OperationNode& bn, const std::vector<Value>& inputs) {
    auto affine = affineOf(bn, inputs);
    if (!affine) return std::nullopt;
    // Patterns look at the producer as the use counts saw it; a producer rewritten in this
    // sweep is looked at again in the next one.
    if (!(inputs[0] == bn.inputs[0])) {
      deferred_ = true;
      return std::nullopt;
    }
    std::optional<Value> folded;
    auto* producer = asOperation(inputs[0].node());
    if (producer && producer->outputTypes.size() == 1 && usesOf(producer) == 1) {
      if (producer->op == "Conv") folded = foldIntoConv(*producer, bn, *affine);
      else if (producer->op == "Gemm") folded = foldIntoGemm(*producer, bn, *affine);
      else if (producer->op == "MatMul") folded = foldIntoMatMul(*producer, nullptr, bn, *affine);
      else if (producer->op == "Add") folded = foldIntoMatMulAdd(*producer, bn, *affine);
    }
    if (error_) return std::nullopt;
    if (!folded) folded = asMulAdd(bn, inputs[0], *affine);
    if (!folded) return std::nullopt;
    std::vector<Value> outputs(bn.outputTypes.size());
    outputs[0] = *folded;
    return outputs;
  }

  // An operation typed through the registry; a Diagnostic (kept in error_) when it cannot be.
  std::optional<Value> typed(const std::string& name, const std::string& op, std::vector<Value> inputs,
                             Attributes attributes, std::vector<Provenance> provenance, const TensorType& expected) {
    auto outputs = makeTypedOperation(name, op, std::move(inputs), std::move(attributes), std::move(provenance));
    if (!outputs) {
      error_ = outputs.error();
      return std::nullopt;
    }
    TESSEL_ICHECK(outputs->size() == 1 && (*outputs)[0].type() == expected)
        << "simplifying " << name << " changed its type to " << (*outputs)[0].type().toString()
        << " from " << expected.toString();
    return (*outputs)[0];
  }

  std::optional<Value> foldIntoConv(const OperationNode& conv, const OperationNode& bn, const ChannelAffine& affine) {
    DataType dtype = conv.outputTypes[0].dtype;
    auto* weight = conv.inputs.size() > 1 ? floatConstant(conv.inputs[1], dtype) : nullptr;
    size_t channels = affine.scale.size();
    if (!weight || weight->outputTypes[0].shape.empty() || weight->outputTypes[0].shape[0] != int64_t(channels))
      return std::nullopt;
    std::vector<double> bias(channels, 0.0);
    if (conv.hasInput(2)) {
      auto* given = floatConstant(conv.inputs[2], dtype);
      if (!given || given->data.numElements() != int64_t(channels)) return std::nullopt;
      bias = readDoubles(given->data);
    }
    // Every filter k is scaled by scale[k]; the bias follows the normalization.
    std::vector<double> w = readDoubles(weight->data);
    size_t perFilter = w.size() / channels;
    for (size_t k = 0; k < channels; ++k) {
      for (size_t j = 0; j < perFilter; ++j) w[k * perFilter + j] *= affine.scale[k];
      bias[k] = bias[k] * affine.scale[k] + affine.shift[k];
    }
    Value newWeight = makeConstant(weight->name + ".bn_folded", makeArray(weight->outputTypes[0].shape, dtype, w));
    Value newBias = makeConstant(conv.name + ".bias.bn_folded", makeArray({int64_t(channels)}, dtype, bias));
    return typed(conv.name, "Conv", {conv.inputs[0], newWeight, newBias}, conv.attributes,
                 joined(conv.provenance, bn.provenance), bn.outputTypes[0]);
  }

  std::optional<Value> foldIntoGemm(const OperationNode& gemm, const OperationNode& bn, const ChannelAffine& affine) {
    DataType dtype = gemm.outputTypes[0].dtype;
    const auto& out = gemm.outputTypes[0].shape;
    auto* b = gemm.inputs.size() > 1 ? floatConstant(gemm.inputs[1], dtype) : nullptr;
    if (!b || out.size() != 2 || b->outputTypes[0].shape.size() != 2) return std::nullopt;
    int64_t rows = out[0], columns = out[1];
    bool transB = gemm.attribute<int64_t>("transB", 0) != 0;
    double beta = 1.0;
    if (auto it = gemm.attributes.find("beta"); it != gemm.attributes.end()) {
      if (auto* d = std::get_if<double>(&it->second)) beta = *d;
      else if (auto* i = std::get_if<int64_t>(&it->second)) beta = double(*i);
    }
    // The bias after folding: beta * C * scale + shift, one row when C does not vary by row.
    std::vector<int64_t> cShape{columns};
    std::vector<double> c(size_t(columns), 0.0);
    if (gemm.hasInput(2)) {
      auto* given = floatConstant(gemm.inputs[2], dtype);
      if (!given) return std::nullopt;
      std::vector<int64_t> shape = given->outputTypes[0].shape;
      while (shape.size() < 2) shape.insert(shape.begin(), 1);
      if (shape.size() != 2 || (shape[0] != 1 && shape[0] != rows) || (shape[1] != 1 && shape[1] != columns))
        return std::nullopt;
      std::vector<double> values = readDoubles(given->data);
      if (shape[0] == rows && rows != 1) cShape = {rows, columns};
      c.assign(size_t(elementCount(cShape)), 0.0);
      for (size_t i = 0; i < c.size(); ++i) {
        int64_t row = int64_t(i) / columns, column = int64_t(i) % columns;
        c[i] = beta * values[size_t((shape[0] == 1 ? 0 : row) * shape[1] + (shape[1] == 1 ? 0 : column))];
      }
    }
    for (size_t i = 0; i < c.size(); ++i) {
      size_t column = i % size_t(columns);
      c[i] = c[i] * affine.scale[column] + affine.shift[column];
    }
    std::vector<double> w = readDoubles(b->data);
    const auto& bShape = b->outputTypes[0].shape;
    for (int64_t i = 0; i < bShape[0]; ++i)
      for (int64_t j = 0; j < bShape[1]; ++j) w[size_t(i * bShape[1] + j)] *= affine.scale[size_t(transB ? i : j)];
    Value newB = makeConstant(b->name + ".bn_folded", makeArray(bShape, dtype, w));
    Value newC = makeConstant(gemm.name + ".bias.bn_folded", makeArray(cShape, dtype, c));
    Attributes attributes = gemm.attributes;
    attributes["beta"] = 1.0;
    return typed(gemm.name, "Gemm", {gemm.inputs[0], newB, newC}, attributes, joined(gemm.provenance, bn.provenance),
                 bn.outputTypes[0]);
  }

  // MatMul(a, W) [+ bias] followed by the normalization of its columns.
  std::optional<Value> foldIntoMatMul(const OperationNode& matmul, const ConstantNode* bias, const OperationNode& bn,
                                      const ChannelAffine& affine, const std::vector<Provenance>& addProvenance = {}) {
    DataType dtype = matmul.outputTypes[0].dtype;
    if (matmul.outputTypes[0].shape.size() != 2 || matmul.inputs.size() != 2) return std::nullopt;
    auto* weight = floatConstant(matmul.inputs[1], dtype);
    size_t columns = affine.scale.size();
    if (!weight || weight->outputTypes[0].shape.size() != 2 || weight->outputTypes[0].shape[1] != int64_t(columns))
      return std::nullopt;
    std::vector<double> w = readDoubles(weight->data);
    for (size_t i = 0; i < w.size(); ++i) w[i] *= affine.scale[i % columns];
    std::vector<double> shift(columns, 0.0);
    std::vector<double> given = bias ? readDoubles(bias->data) : std::vector<double>(columns, 0.0);
    for (size_t j = 0; j < columns; ++j) shift[j] = given[j] * affine.scale[j] + affine.shift[j];
    Value newWeight = makeConstant(weight->name + ".bn_folded", makeArray(weight->outputTypes[0].shape, dtype, w));
    Value newBias = makeConstant((bias ? bias->name : matmul.name + ".bias") + ".bn_folded",
                                 makeArray({int64_t(columns)}, dtype, shift));
    auto product = typed(matmul.name, "MatMul", {matmul.inputs[0], newWeight}, matmul.attributes, matmul.provenance,
                         matmul.outputTypes[0]);
    if (!product) return std::nullopt;
    return typed(bn.name, "Add", {*product, newBias}, {}, joined(addProvenance, bn.provenance), bn.outputTypes[0]);
  }

  std::optional<Value> foldIntoMatMulAdd(const OperationNode& add, const OperationNode& bn,
                                         const ChannelAffine& affine) {
    if (add.inputs.size() != 2) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      auto* matmul = asOperation(add.inputs[size_t(side)].node());
      auto* bias = floatConstant(add.inputs[size_t(1 - side)], add.outputTypes[0].dtype);
      if (!matmul || matmul->op != "MatMul" || !bias || usesOf(matmul) != 1) continue;
      // The bias must be a row of one value per column.
      const auto& shape = bias->outputTypes[0].shape;
      bool row = !shape.empty() && shape.back() == int64_t(affine.scale.size()) &&
                 bias->data.numElements() == shape.back();
      if (!row || shape.size() > 2 || !(matmul->outputTypes[0] == add.outputTypes[0])) continue;
      return foldIntoMatMul(*matmul, bias, bn, affine, add.provenance);
    }
    return std::nullopt;
  }

  std::optional<Value> asMulAdd(const OperationNode& bn, const Value& x, const ChannelAffine& affine) {
    const TensorType& type = x.type();
    // [C, 1, ..., 1] lines the channels up with axis 1 of x under broadcasting.
    std::vector<int64_t> shape{type.shape[1]};
    shape.resize(type.shape.size() - 1, 1);
    Value scale = makeConstant(bn.name + ".scale", makeArray(shape, type.dtype, affine.scale));
    Value shift = makeConstant(bn.name + ".shift", makeArray(shape, type.dtype, affine.shift));
    auto scaled = typed(bn.name + ".scaled", "Mul", {x, scale}, {}, bn.provenance, type);
    if (!scaled) return std::nullopt;
    return typed(bn.name, "Add", {*scaled, shift}, {}, bn.provenance, bn.outputTypes[0]);
  }

  std::map<ValueKey, int> uses_;
  bool deferred_ = false;
  std::optional<Diagnostic> error_;
};

}  // namespace

Expected<Graph> simplifyInference(const Graph& graph) { return InferenceSimplifier().run(graph); }

}  // namespace tessel::graph
