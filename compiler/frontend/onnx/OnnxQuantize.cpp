// QDQ model writing: finding the convolutions and dense layers, quantizing their weights,
// and inserting QuantizeLinear / DequantizeLinear nodes in topological order.
#include "compiler/frontend/onnx/OnnxQuantize.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "compiler/frontend/onnx/OnnxModelFile.h"
#include "compiler/frontend/onnx/OnnxTensor.h"

namespace tessel::frontend {

namespace {

int64_t defaultOpset(const onnx::ModelProto& model) {
  for (const auto& import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx") return import.version();
  return 0;
}

int64_t groupOf(const onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute())
    if (attribute.name() == "group") return attribute.i();
  return 1;
}

onnx::TensorProto scalarTensor(const std::string& name, int type) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  return t;
}

onnx::TensorProto floatScalar(const std::string& name, double value) {
  onnx::TensorProto t = scalarTensor(name, onnx::TensorProto::FLOAT);
  t.add_float_data(float(value));
  return t;
}

onnx::TensorProto uint8Scalar(const std::string& name, int value) {
  onnx::TensorProto t = scalarTensor(name, onnx::TensorProto::UINT8);
  t.add_int32_data(value);
  return t;
}

onnx::NodeProto quantizationNode(const std::string& op, const std::string& name, const std::string& input,
                                 const std::string& scale, const std::string& zeroPoint, const std::string& output,
                                 std::optional<int64_t> axis = std::nullopt) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(name);
  node.add_input(input);
  node.add_input(scale);
  node.add_input(zeroPoint);
  node.add_output(output);
  if (axis) {
    auto* attribute = node.add_attribute();
    attribute->set_name("axis");
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(*axis);
  }
  return node;
}

// A float weight as symmetric int8: the tensor `name` of `dims` (element i is valueAt(i))
// with its scale "name/scale" and zero point "name/zero_point", one per output channel
// (element i's is channelOf(i) of `channels`) with `perChannel`, else one for the tensor.
std::vector<onnx::TensorProto> symmetricInt8(const std::string& name, const std::vector<int64_t>& dims,
                                             const std::function<float(int64_t)>& valueAt,
                                             const std::function<int64_t(int64_t)>& channelOf, int64_t channels,
                                             bool perChannel) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  auto scaleIndex = [&](int64_t i) { return perChannel ? size_t(channelOf(i)) : size_t(0); };
  std::vector<double> scales(size_t(perChannel ? channels : 1), 0.0);
  for (int64_t i = 0; i < count; ++i) {
    double& scale = scales[scaleIndex(i)];
    scale = std::max(scale, double(std::fabs(valueAt(i))) / 127.0);
  }
  for (double& scale : scales)
    if (!(scale > 0)) scale = 1.0;  // an all-zero channel: any scale gives exact zeros
  onnx::TensorProto quantized;
  quantized.set_name(name);
  quantized.set_data_type(onnx::TensorProto::INT8);
  for (int64_t d : dims) quantized.add_dims(d);
  std::string raw(size_t(count), '\0');
  for (int64_t i = 0; i < count; ++i)
    raw[size_t(i)] = char(int8_t(std::clamp(std::nearbyint(double(valueAt(i)) / scales[scaleIndex(i)]), -127.0, 127.0)));
  quantized.set_raw_data(raw);
  onnx::TensorProto scale;
  scale.set_name(name + "/scale");
  scale.set_data_type(onnx::TensorProto::FLOAT);
  if (perChannel) scale.add_dims(channels);
  for (double s : scales) scale.add_float_data(float(s));
  onnx::TensorProto zero;
  zero.set_name(name + "/zero_point");
  zero.set_data_type(onnx::TensorProto::INT8);
  if (perChannel) zero.add_dims(channels);
  for (size_t i = 0; i < scales.size(); ++i) zero.add_int32_data(0);
  return {quantized, scale, zero};
}

}  // namespace

std::string dequantizedProducer(const std::string& tensor) { return tensor + "/DequantizeLinear"; }

Expected<QuantizableModel> findQuantizableLayers(const std::string& path) {
  auto bytes = readFileBytes(path);
  if (!bytes) return bytes.error();
  auto model = parseModel(*bytes, path);
  if (!model) return model.error();
  onnx::GraphProto* graph = model->mutable_graph();
  for (const auto& initializer : graph->initializer())
    if (initializer.data_location() == onnx::TensorProto::EXTERNAL)
      return Diagnostic{"initializer '" + initializer.name() + "' is stored in an external file", path, 0, 0,
                        "tessel quantize reads models whose weights are inside the .onnx file"};
  // Names for unnamed nodes: the quantized layers, the report and Tessel's graph all use them.
  std::set<std::string> names;
  for (const auto& node : graph->node()) names.insert(node.name());
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    if (!node->name().empty()) continue;
    std::string name = node->op_type() + "_" + std::to_string(i);
    while (names.count(name)) name += "_";
    names.insert(name);
    node->set_name(name);
  }
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& initializer : graph->initializer()) initializers[initializer.name()] = &initializer;
  std::map<std::string, std::pair<std::string, int>> producers;
  for (const auto& input : graph->input()) producers[input.name()] = {input.name(), 0};
  std::map<std::string, std::vector<const onnx::NodeProto*>> consumers;
  std::map<std::string, const onnx::NodeProto*> nodesByName;
  for (const auto& node : graph->node()) {
    nodesByName[node.name()] = &node;
    for (int i = 0; i < node.output_size(); ++i) producers[node.output(i)] = {node.name(), i};
    for (const auto& input : node.input()) consumers[input].push_back(&node);
  }
  std::set<std::string> graphOutputs;
  for (const auto& output : graph->output()) graphOutputs.insert(output.name());

  QuantizableModel out;
  out.opset = defaultOpset(*model);
  auto intAttribute = [](const onnx::NodeProto& node, const char* name, int64_t fallback) {
    for (const auto& attribute : node.attribute())
      if (attribute.name() == name) return attribute.i();
    return fallback;
  };
  auto floatAttribute = [](const onnx::NodeProto& node, const char* name, float fallback) {
    for (const auto& attribute : node.attribute())
      if (attribute.name() == name) return attribute.f();
    return fallback;
  };
  auto constantFloat = [&](const std::string& name, int rank) {
    auto it = initializers.find(name);
    return it != initializers.end() && it->second->data_type() == onnx::TensorProto::FLOAT &&
           it->second->dims_size() == rank;
  };
  for (const auto& node : graph->node()) {
    QuantizableLayer layer;
    if (node.op_type() == "Conv") {
      // Dense convolutions and depthwise ones (one filter per channel: weight [C, 1, R, S]);
      // other grouped ones have no int8 kernel and stay float.
      if (node.input_size() < 2 || !constantFloat(node.input(1), 4)) continue;
      const onnx::TensorProto& weight = *initializers.at(node.input(1));
      int64_t group = groupOf(node);
      if (group != 1 && !(weight.dims(0) == group && weight.dims(1) == 1)) continue;
      layer.weightAxis = 0;
    } else if (node.op_type() == "Gemm") {
      // Y = A B' + C with A as is and alpha 1 (PyTorch's Linear exports transB = 1).
      if (node.input_size() < 2 || !constantFloat(node.input(1), 2) || intAttribute(node, "transA", 0) != 0 ||
          floatAttribute(node, "alpha", 1.0f) != 1.0f ||
          (node.input_size() > 2 && !node.input(2).empty() && floatAttribute(node, "beta", 1.0f) != 1.0f))
        continue;
      layer.weightAxis = intAttribute(node, "transB", 0) != 0 ? 0 : 1;
    } else if (node.op_type() == "MatMul") {
      if (node.input_size() != 2 || !constantFloat(node.input(1), 2)) continue;
      layer.weightAxis = 1;
    } else {
      continue;
    }
    auto producer = producers.find(node.input(0));
    if (producer == producers.end() || initializers.count(node.input(0))) continue;
    layer.op = node.op_type();
    layer.node = node.name();
    layer.input = node.input(0);
    std::tie(layer.inputProducer, layer.inputIndex) = producer->second;
    if (auto maker = nodesByName.find(layer.inputProducer); maker != nodesByName.end() && maker->second->input_size() > 0) {
      layer.inputProducerOp = maker->second->op_type();
      layer.inputProducerInput = maker->second->input(0);
    }
    layer.output = node.output(0);
    layer.outputProducer = node.name();
    // A MatMul's bias is the Add after it (PyTorch's Linear on more than 2-D input).
    if (layer.op == "MatMul") {
      const auto& readers = consumers[layer.output];
      if (readers.size() == 1 && readers[0]->op_type() == "Add" && !graphOutputs.count(layer.output)) {
        const onnx::NodeProto& add = *readers[0];
        const std::string& other = add.input(0) == layer.output ? add.input(1) : add.input(0);
        if (constantFloat(other, 1)) {
          layer.bias = add.name();
          layer.output = add.output(0);
          layer.outputProducer = add.name();
        }
      }
    }
    const auto& readers = consumers[layer.output];
    if (readers.size() == 1 && readers[0]->op_type() == "Relu" && !graphOutputs.count(layer.output)) {
      layer.relu = readers[0]->name();
      layer.output = readers[0]->output(0);
      layer.outputProducer = layer.relu;
    }
    // A dense layer's result the model returns stays float (its logits): the int8 kernel
    // dequantizes it in its epilogue.
    layer.quantizeOutput = layer.op == "Conv" || !graphOutputs.count(layer.output);
    out.layers.push_back(layer);
  }
  out.bytes = model->SerializeAsString();
  return out;
}

Expected<std::string> writeQdqModel(const QuantizableModel& source, const std::vector<QuantizableLayer>& layers,
                                    const std::map<std::string, ActivationQuantization>& activations,
                                    bool perChannel) {
  auto model = parseModel(source.bytes, "the model");
  if (!model) return model.error();
  if (perChannel && defaultOpset(*model) < 13)
    return Diagnostic{"per-channel weight scales need opset 13 (DequantizeLinear's axis); the model is opset " +
                          std::to_string(defaultOpset(*model)),
                      "", 0, 0, "quantize without --per-channel, or convert the model to opset 13 first"};
  onnx::GraphProto* graph = model->mutable_graph();
  std::map<std::string, onnx::NodeProto*> nodes;
  for (auto& node : *graph->mutable_node()) nodes[node.name()] = &node;
  std::map<std::string, int> initializerIndex;
  for (int i = 0; i < graph->initializer_size(); ++i) initializerIndex[graph->initializer(i).name()] = i;
  std::vector<onnx::NodeProto> prologue;                         // weight and graph-input quantization
  std::map<std::string, std::vector<onnx::NodeProto>> after;     // nodes to insert after a node, by its name
  std::vector<onnx::TensorProto> newInitializers;
  std::set<std::string> removedInitializers;

  auto activationParams = [&](const std::string& tensor) -> Expected<ActivationQuantization> {
    auto it = activations.find(tensor);
    if (it == activations.end() || !(it->second.scale > 0))
      return Diagnostic{"no calibrated range for tensor '" + tensor + "'", tensor, 0, 0, ""};
    newInitializers.push_back(floatScalar(tensor + "/scale", it->second.scale));
    newInitializers.push_back(uint8Scalar(tensor + "/zero_point", it->second.zeroPoint));
    return it->second;
  };

  std::set<std::string> graphOutputs;
  for (const auto& output : graph->output()) graphOutputs.insert(output.name());
  // Quantizes tensor t where `producer` makes it: the producer's output is renamed t/float and
  // t becomes QuantizeLinear -> DequantizeLinear of it, so every reader of t reads the int8
  // value. Once per tensor: a tensor made by one quantized layer and read by another.
  std::set<std::string> quantizedOutputs;
  auto quantizeAtProducer = [&](const std::string& t, const std::string& producerName) -> Status {
    if (!quantizedOutputs.insert(t).second) return {};
    if (auto params = activationParams(t); !params) return params.error();
    onnx::NodeProto* producer = nodes.at(producerName);
    std::string real = t + "/float";
    for (auto& output : *producer->mutable_output())
      if (output == t) output = real;
    after[producer->name()].push_back(
        quantizationNode("QuantizeLinear", t + "/QuantizeLinear", real, t + "/scale", t + "/zero_point", t + "/quantized"));
    after[producer->name()].push_back(
        quantizationNode("DequantizeLinear", dequantizedProducer(t), t + "/quantized", t + "/scale", t + "/zero_point", t));
    return {};
  };
  for (const QuantizableLayer& layer : layers)
    if (layer.quantizeOutput)
      if (Status done = quantizeAtProducer(layer.output, layer.outputProducer); !done) return done.error();
  // A layer input made inside the graph is quantized where it is made too, so its other
  // readers take the int8 value as well: a residual block's shortcut then carries int8 into
  // its Add (as PyTorch's and ONNX Runtime's quantized ResNets do) instead of a float copy of
  // the tensor, which cost a separate float write and a QuantizeLinear pass per block.
  for (const QuantizableLayer& layer : layers)
    if (layer.inputProducer != layer.input && !graphOutputs.count(layer.input))
      if (Status done = quantizeAtProducer(layer.input, layer.inputProducer); !done) return done.error();
  std::set<std::string> quantizedInputs;
  for (const QuantizableLayer& layer : layers) {
    onnx::NodeProto* node = nodes.at(layer.node);
    const std::string& t = layer.input;
    if (!quantizedOutputs.count(t)) {
      if (quantizedInputs.insert(t).second) {
        if (auto params = activationParams(t); !params) return params.error();
        std::vector<onnx::NodeProto>& place = layer.inputProducer == t ? prologue : after[layer.inputProducer];
        place.push_back(
            quantizationNode("QuantizeLinear", t + "/QuantizeLinear", t, t + "/scale", t + "/zero_point", t + "/quantized"));
        place.push_back(quantizationNode("DequantizeLinear", dequantizedProducer(t), t + "/quantized", t + "/scale",
                                         t + "/zero_point", t + "/dequantized"));
      }
      node->set_input(0, t + "/dequantized");
    }
    // The weight: symmetric int8, dequantized on its way in.
    const std::string w = node->input(1);
    if (removedInitializers.count(w)) {
      node->set_input(1, w + "/dequantized");
      continue;
    }
    const onnx::TensorProto& weight = graph->initializer(initializerIndex.at(w));
    auto values = tensorToArray(weight, "");
    if (!values) return values.error();
    // One scale per output channel: per filter of a Conv ([K, C, R, S], axis 0), per column
    // of a dense layer (axis 0 of a transposed [N, K] weight, axis 1 of a [K, N] one).
    const int64_t filters = weight.dims(int(layer.weightAxis));
    int64_t inner = 1;
    for (int d = int(layer.weightAxis) + 1; d < weight.dims_size(); ++d) inner *= weight.dims(d);
    const float* real = values->dataAs<float>();
    std::vector<int64_t> dims(weight.dims().begin(), weight.dims().end());
    // The quantized weight's scale and zero point are "W/quantized/scale" and ".../zero_point".
    auto tensors = symmetricInt8(
        w + "/quantized", dims, [&](int64_t i) { return real[i]; }, [&](int64_t i) { return i / inner % filters; },
        filters, perChannel);
    newInitializers.insert(newInitializers.end(), tensors.begin(), tensors.end());
    prologue.push_back(quantizationNode("DequantizeLinear", w + "/DequantizeLinear", w + "/quantized",
                                        w + "/quantized/scale", w + "/quantized/zero_point", w + "/dequantized",
                                        perChannel ? std::optional<int64_t>(layer.weightAxis) : std::nullopt));
    node->set_input(1, w + "/dequantized");
    removedInitializers.insert(w);
  }

  // A float weight nothing else reads leaves the file (and the graph's inputs, where models
  // written for IR version 3 list their initializers too).
  std::vector<int> drop;
  std::set<std::string> dropped;
  for (const std::string& w : removedInitializers) {
    int stillRead = 0;
    for (const auto& node : graph->node())
      for (const auto& input : node.input()) stillRead += input == w;
    if (stillRead == 0) {
      drop.push_back(initializerIndex.at(w));
      dropped.insert(w);
    }
  }
  std::sort(drop.rbegin(), drop.rend());
  for (int index : drop) graph->mutable_initializer()->DeleteSubrange(index, 1);
  for (int i = graph->input_size() - 1; i >= 0; --i)
    if (dropped.count(graph->input(i).name())) graph->mutable_input()->DeleteSubrange(i, 1);
  for (auto& initializer : newInitializers) *graph->add_initializer() = std::move(initializer);

  google::protobuf::RepeatedPtrField<onnx::NodeProto> ordered;
  for (auto& node : prologue) *ordered.Add() = std::move(node);
  for (const auto& node : graph->node()) {
    *ordered.Add() = node;
    auto it = after.find(node.name());
    if (it != after.end())
      for (auto& inserted : it->second) *ordered.Add() = inserted;
  }
  graph->mutable_node()->Swap(&ordered);
  return model->SerializeAsString();
}

Expected<std::string> writeDynamicModel(const QuantizableModel& source, const std::vector<QuantizableLayer>& layers,
                                        bool perChannel) {
  auto model = parseModel(source.bytes, "the model");
  if (!model) return model.error();
  if (defaultOpset(*model) < 11)
    return Diagnostic{"dynamic quantization needs opset 11 (DynamicQuantizeLinear); the model is opset " +
                          std::to_string(defaultOpset(*model)),
                      "", 0, 0, "convert the model to opset 13 first"};
  onnx::GraphProto* graph = model->mutable_graph();
  std::map<std::string, int> initializerIndex;
  for (int i = 0; i < graph->initializer_size(); ++i) initializerIndex[graph->initializer(i).name()] = i;
  std::map<std::string, const QuantizableLayer*> byNode;
  for (const QuantizableLayer& layer : layers) {
    TESSEL_ICHECK(layer.op == "Gemm" || layer.op == "MatMul") << "writeDynamicModel: " << layer.op;
    byNode[layer.node] = &layer;
  }
  std::vector<onnx::TensorProto> newInitializers;
  std::set<std::string> quantizedInputs, replacedWeights, floatWeights;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> ordered;
  auto attribute = [](onnx::NodeProto& node, const char* name, int64_t value) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  };
  auto node = [&](const std::string& op, const std::string& name, std::vector<std::string> inputs,
                  std::vector<std::string> outputs) -> onnx::NodeProto& {
    onnx::NodeProto& n = *ordered.Add();
    n.set_op_type(op);
    n.set_name(name);
    for (auto& input : inputs) n.add_input(input);
    for (auto& output : outputs) n.add_output(output);
    return n;
  };
  for (const onnx::NodeProto& original : graph->node()) {
    auto found = byNode.find(original.name());
    if (found == byNode.end()) {
      *ordered.Add() = original;
      continue;
    }
    const QuantizableLayer& layer = *found->second;
    const std::string& t = layer.input;
    if (quantizedInputs.insert(t).second)
      node("DynamicQuantizeLinear", t + "/DynamicQuantizeLinear", {t}, {t + "/quantized", t + "/scale", t + "/zero_point"});
    // The weight as int8 [K, N]: a Gemm's transposed one ([N, K]) is transposed here.
    const std::string w = original.input(1);
    floatWeights.insert(w);
    const onnx::TensorProto& weight = graph->initializer(initializerIndex.at(w));
    auto values = tensorToArray(weight, "");
    if (!values) return values.error();
    const bool transposed = layer.weightAxis == 0;
    const int64_t rows = weight.dims(0), cols = weight.dims(1);
    const int64_t K = transposed ? cols : rows, N = transposed ? rows : cols;
    const float* real = values->dataAs<float>();
    auto at = [&](int64_t k, int64_t n) { return real[transposed ? n * K + k : k * N + n]; };
    std::string q = w + (transposed ? "/transposed" : "") + "/quantized";
    if (replacedWeights.insert(q).second) {
      auto tensors = symmetricInt8(
          q, {K, N}, [&](int64_t i) { return at(i / N, i % N); }, [&](int64_t i) { return i % N; }, N, perChannel);
      newInitializers.insert(newInitializers.end(), tensors.begin(), tensors.end());
    }
    const std::string& name = original.name();
    const std::string out = original.output(0);
    bool hasBias = layer.op == "Gemm" && original.input_size() > 2 && !original.input(2).empty();
    node("MatMulInteger", name + "/MatMulInteger", {t + "/quantized", q, t + "/zero_point", q + "/zero_point"},
         {out + "/int32"});
    attribute(node("Cast", name + "/Cast", {out + "/int32"}, {out + "/int32/float"}), "to", onnx::TensorProto::FLOAT);
    node("Mul", name + "/scale", {t + "/scale", q + "/scale"}, {out + "/scale"});
    node("Mul", name + "/dequantize", {out + "/int32/float", out + "/scale"}, {hasBias ? out + "/product" : out});
    if (hasBias) node("Add", name + "/bias", {out + "/product", original.input(2)}, {out});
  }
  graph->mutable_node()->Swap(&ordered);
  // Float weights nothing reads any more leave the file (and the inputs of IR-3 models).
  std::set<std::string> read;
  for (const auto& n : graph->node())
    for (const auto& input : n.input()) read.insert(input);
  std::set<std::string> dropped;
  for (int i = graph->initializer_size() - 1; i >= 0; --i) {
    const std::string& name = graph->initializer(i).name();
    if (floatWeights.count(name) && !read.count(name)) {
      dropped.insert(name);
      graph->mutable_initializer()->DeleteSubrange(i, 1);
    }
  }
  for (int i = graph->input_size() - 1; i >= 0; --i)
    if (dropped.count(graph->input(i).name())) graph->mutable_input()->DeleteSubrange(i, 1);
  for (auto& initializer : newInitializers) *graph->add_initializer() = std::move(initializer);
  return model->SerializeAsString();
}

}  // namespace tessel::frontend
