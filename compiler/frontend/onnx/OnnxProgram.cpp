// Reading a model as a ControlFlowProgram: each graph cut at its control-flow nodes into staged
// segments of plain operations.
#include "compiler/frontend/onnx/OnnxProgram.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "compiler/frontend/onnx/OnnxContribOps.h"
#include "compiler/frontend/onnx/OnnxControlFlow.h"
#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxModelFile.h"
#include "compiler/frontend/onnx/OnnxOpsets.h"
#include "compiler/frontend/onnx/OnnxTensor.h"
#include "core/graph/UnsupportedOperations.h"

namespace tessel::frontend {
namespace {

using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;

}  // namespace

const char* const kStringsRefusal = "a tensor of strings, which no compiled kernel takes";

namespace {

// The phrases OnnxControlFlow's and the importer's refusals use when a deciding value is known
// only while the model runs, a loop is too long to unroll, or an input holds strings (kept in
// step with them by the control-flow tests, which check both the refusal and the program that
// runs instead).
const char* const kRunTimePhrases[] = {
    "whose value is known only when the model runs",
    "it is computed from the data when the model runs",
    "iterations; Tessel compiles a Loop by unrolling it",
    kStringsRefusal,
};

// The names each node reads: its inputs, and what its subgraphs read from around them.
std::vector<std::string> namesRead(const NodeProto& node) {
  std::vector<std::string> names(node.input().begin(), node.input().end());
  for (const auto& attribute : node.attribute())
    if (attribute.type() == onnx::AttributeProto::GRAPH)
      for (std::string& name : outerNamesRead(attribute.g())) names.push_back(std::move(name));
  names.erase(std::remove(names.begin(), names.end(), std::string()), names.end());
  return names;
}

class ProgramReader {
public:
  ProgramReader(const ModelProto& model, std::string sourceName)
      : model_(model), sourceName_(std::move(sourceName)), modelDirectory_(directoryOf(sourceName_)) {}

  Expected<ControlFlowProgram> run() {
    ControlFlowProgram program;
    program.sourceName = sourceName_;
    ModelProto header;
    header.set_ir_version(model_.ir_version());
    *header.mutable_opset_import() = model_.opset_import();
    program.modelHeaderBytes = header.SerializeAsString();
    for (const auto& opset : model_.opset_import())
      if (opset.domain().empty() || opset.domain() == "ai.onnx") program.opset = int(opset.version());
    auto main = readGraph(model_.graph(), /*topLevel=*/true);
    if (!main) return main.error();
    program.main = std::move(*main);
    // Every node Tessel cannot compile is named at once, before anything runs.
    if (!unsupported_.empty()) return graph::unsupportedOperationsError(unsupported_, sourceName_);
    program.segmentCount = segmentCount_;
    program.controlNodeCount = controlNodeCount_;
    return program;
  }

private:
  Diagnostic error(const std::string& message, const std::string& hint = "") const {
    return importError(message, sourceName_, hint);
  }

  Expected<ProgramGraph> readGraph(const GraphProto& graph, bool topLevel) {
    ProgramGraph result;
    result.name = graph.name();
    std::set<std::string> initializers;
    std::unordered_map<std::string, const onnx::TensorProto*> initializerByName;
    for (const auto& tensor : graph.initializer()) {
      initializers.insert(tensor.name());
      initializerByName[tensor.name()] = &tensor;
    }
    for (const auto& input : graph.input())
      if (!topLevel || !initializers.count(input.name())) result.inputs.push_back(input.name());
    for (const auto& output : graph.output()) result.outputs.push_back(output.name());

    // Node names as the importer gives them, for messages.
    const int count = graph.node_size();
    std::vector<std::string> names(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
      names[size_t(i)] = graph.node(i).name().empty() ? graph.node(i).op_type() + "_" + std::to_string(i)
                                                     : graph.node(i).name();

    auto order = orderNodes(graph, initializers, names);
    if (!order) return order.error();

    // Which nodes the interpreter carries out: control flow and StringNormalizer by their
    // operator, casts by whether strings go in or come out (values of strings are followed
    // from the inputs declared STRING through the nodes that make strings).
    for (const auto& input : graph.input())
      if (input.type().has_tensor_type() && input.type().tensor_type().elem_type() == onnx::TensorProto::STRING)
        stringValues_.insert(input.name());
    std::vector<bool> interpreted(static_cast<size_t>(count), false);
    for (int index : *order) {
      const NodeProto& node = graph.node(index);
      bool makesStrings = node.op_type() == "StringNormalizer";
      if (node.op_type() == "Cast" || node.op_type() == "CastLike") {
        bool toStrings = false;
        for (const auto& attribute : node.attribute())
          toStrings = toStrings || (attribute.name() == "to" && attribute.i() == onnx::TensorProto::STRING);
        if (node.op_type() == "CastLike" && node.input_size() > 1) toStrings = stringValues_.count(node.input(1)) != 0;
        bool fromStrings = node.input_size() > 0 && stringValues_.count(node.input(0)) != 0;
        makesStrings = toStrings;
        interpreted[size_t(index)] = toStrings || fromStrings;
      }
      if (isInterpretedOperator(node.op_type())) interpreted[size_t(index)] = true;
      if (makesStrings)
        for (const auto& output : node.output()) stringValues_.insert(output);
    }

    // Stages: a node runs in the stage of what it reads, or the one after a control node it
    // reads. Each stage's plain nodes form one segment, run before the stage's control nodes.
    std::unordered_map<std::string, int> stageOfValue;   // produced in this graph
    std::unordered_map<std::string, bool> fromControl;   // produced by a control node
    std::vector<int> stage(static_cast<size_t>(count), 0);
    int lastStage = 0;
    for (int index : *order) {
      const NodeProto& node = graph.node(index);
      int s = 0;
      for (const std::string& name : namesRead(node)) {
        auto it = stageOfValue.find(name);
        if (it != stageOfValue.end()) s = std::max(s, it->second + (fromControl[name] ? 1 : 0));
      }
      stage[size_t(index)] = s;
      lastStage = std::max(lastStage, s);
      bool control = interpreted[size_t(index)];
      for (const auto& output : node.output()) {
        if (output.empty()) continue;
        stageOfValue[output] = s;
        fromControl[output] = control;
      }
    }

    // Who reads each value after the stage that makes it: later stages, control nodes and
    // the graph's outputs (a segment gives those as its outputs).
    std::set<std::string> readByControlOrOutput(result.outputs.begin(), result.outputs.end());
    std::unordered_map<std::string, int> lastReadingStage;
    for (int index : *order) {
      const NodeProto& node = graph.node(index);
      bool control = interpreted[size_t(index)];
      for (const std::string& name : namesRead(node)) {
        if (control) readByControlOrOutput.insert(name);
        else lastReadingStage[name] = std::max(lastReadingStage[name], stage[size_t(index)]);
      }
    }

    for (int s = 0; s <= lastStage; ++s) {
      std::vector<int> plain, control;
      for (int index : *order)
        if (stage[size_t(index)] == s) (interpreted[size_t(index)] ? control : plain).push_back(index);
      if (!plain.empty()) {
        auto segment = makeSegment(graph, plain, names, initializerByName, lastReadingStage,
                                   readByControlOrOutput, s);
        if (!segment) return segment.error();
        ProgramStep step;
        step.isSegment = true;
        step.segment = std::move(*segment);
        result.steps.push_back(std::move(step));
        ++segmentCount_;
      }
      for (int index : control) {
        auto node = makeControlNode(graph.node(index), names[size_t(index)]);
        if (!node) return node.error();
        ProgramStep step;
        step.control = std::move(*node);
        result.steps.push_back(std::move(step));
        ++controlNodeCount_;
      }
    }

    // Initializers read by control nodes or given as outputs are values the interpreter holds.
    for (const std::string& name : readByControlOrOutput) {
      auto it = initializerByName.find(name);
      if (it == initializerByName.end()) continue;
      auto data = tensorToArray(*it->second, modelDirectory_);
      if (!data) return error("initializer " + data.error().message);
      result.initializers.emplace(name, std::move(*data));
    }
    return result;
  }

  // The nodes in an order where each comes after the producers of what it (and its subgraphs)
  // reads, keeping the file's order where it already is one.
  Expected<std::vector<int>> orderNodes(const GraphProto& graph, const std::set<std::string>& initializers,
                                        const std::vector<std::string>& names) {
    const int count = graph.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < count; ++i)
      for (const auto& output : graph.node(i).output())
        if (!output.empty()) producer.emplace(output, i);
    std::vector<std::vector<int>> consumers(static_cast<size_t>(count));
    std::vector<int> waiting(static_cast<size_t>(count), 0);
    for (int i = 0; i < count; ++i) {
      std::set<int> producers;
      for (const std::string& name : namesRead(graph.node(i))) {
        if (initializers.count(name)) continue;
        auto it = producer.find(name);
        if (it != producer.end() && it->second != i) producers.insert(it->second);
      }
      waiting[size_t(i)] = int(producers.size());
      for (int p : producers) consumers[size_t(p)].push_back(i);
    }
    std::set<int> ready;
    for (int i = 0; i < count; ++i)
      if (waiting[size_t(i)] == 0) ready.insert(i);
    std::vector<int> order;
    while (!ready.empty()) {
      int next = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(next);
      for (int consumer : consumers[size_t(next)])
        if (--waiting[size_t(consumer)] == 0) ready.insert(consumer);
    }
    if (int(order.size()) != count) {
      for (int i = 0; i < count; ++i)
        if (waiting[size_t(i)] > 0)
          return error("node '" + names[size_t(i)] + "' (" + graph.node(i).op_type() +
                       ") is part of a cycle: it reads a value computed from its own output");
    }
    return order;
  }

  Expected<ProgramSegment> makeSegment(const GraphProto& graph, const std::vector<int>& nodes,
                                       const std::vector<std::string>& names,
                                       const std::unordered_map<std::string, const onnx::TensorProto*>& initializers,
                                       const std::unordered_map<std::string, int>& lastReadingStage,
                                       const std::set<std::string>& readByControlOrOutput, int stage) {
    ProgramSegment segment;
    GraphProto body;
    body.set_name(graph.name() + "/segment" + std::to_string(segmentCount_));
    std::set<std::string> produced, inputs, embedded;
    for (int index : nodes) {
      const NodeProto& node = graph.node(index);
      if (!implementsOnnxOperator(node.domain(), node.op_type()))
        unsupported_.push_back({{isDefaultDomain(node.domain()) ? "" : node.domain(), node.op_type()}, names[size_t(index)]});
      *body.add_node() = node;
      body.mutable_node(body.node_size() - 1)->set_name(names[size_t(index)]);
      for (const std::string& name : namesRead(node)) {
        if (produced.count(name) || inputs.count(name) || embedded.count(name)) continue;
        auto initializer = initializers.find(name);
        if (initializer != initializers.end()) {
          *body.add_initializer() = *initializer->second;
          embedded.insert(name);
          continue;
        }
        inputs.insert(name);
        segment.inputs.push_back(name);
      }
      for (const auto& output : node.output())
        if (!output.empty()) produced.insert(output);
    }
    for (int index : nodes)
      for (const auto& output : graph.node(index).output()) {
        if (output.empty()) continue;
        auto reader = lastReadingStage.find(output);
        bool readLater = reader != lastReadingStage.end() && reader->second > stage;
        if (readLater || readByControlOrOutput.count(output)) {
          segment.outputs.push_back(output);
          body.add_output()->set_name(output);
        }
      }
    segment.nodeCount = int(nodes.size());
    segment.firstNode = names[size_t(nodes.front())];
    segment.graphBytes = body.SerializeAsString();
    return segment;
  }

  Expected<ProgramControlNode> makeControlNode(const NodeProto& node, const std::string& name) {
    ProgramControlNode control;
    control.name = name;
    control.opType = node.op_type();
    control.inputs.assign(node.input().begin(), node.input().end());
    control.outputs.assign(node.output().begin(), node.output().end());
    for (const auto& attribute : node.attribute()) {
      switch (attribute.type()) {
        case onnx::AttributeProto::INT:
          control.ints[attribute.name()] = attribute.i();
          if (attribute.name() == "to") {
            // A cast's target, as the interpreter names types: "string", or Tessel's name.
            auto type = elementTypeFromOnnx(int(attribute.i()));
            control.strings["to"] = attribute.i() == onnx::TensorProto::STRING ? "string"
                                    : type                                     ? type->toString()
                                                                               : "unsupported";
          }
          break;
        case onnx::AttributeProto::INTS:
          control.intLists[attribute.name()].assign(attribute.ints().begin(), attribute.ints().end());
          break;
        case onnx::AttributeProto::STRING:
          control.strings[attribute.name()] = attribute.s();
          break;
        case onnx::AttributeProto::STRINGS:
          control.stringLists[attribute.name()].assign(attribute.strings().begin(), attribute.strings().end());
          break;
        case onnx::AttributeProto::GRAPH: {
          auto body = readGraph(attribute.g(), /*topLevel=*/false);
          if (!body) return body.error();
          control.bodies[attribute.name()] = std::make_shared<const ProgramGraph>(std::move(*body));
          break;
        }
        case onnx::AttributeProto::TYPE_PROTO:
          // SequenceEmpty's and Optional's element type: the dtype attribute says it for
          // SequenceEmpty; an Optional's type matters only for an absent value.
          if (attribute.tp().has_tensor_type()) control.ints[attribute.name() + ".elem_type"] = attribute.tp().tensor_type().elem_type();
          break;
        default:
          break;  // Operators the interpreter runs take no other attributes it needs.
      }
    }
    return control;
  }

  const ModelProto& model_;
  std::string sourceName_;
  std::string modelDirectory_;
  int segmentCount_ = 0;
  int controlNodeCount_ = 0;
  std::vector<graph::UnsupportedNode> unsupported_;
  /// The values known to hold strings, in every graph read so far.
  std::set<std::string> stringValues_;
};

// The ONNX element type of a runtime array's.
int onnxElementType(runtime::DataType dtype) {
  using Code = runtime::DataType::Code;
  switch (dtype.code) {
    case Code::Float:
      return dtype.bits == 16 ? onnx::TensorProto::FLOAT16 : dtype.bits == 64 ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT;
    case Code::BFloat: return onnx::TensorProto::BFLOAT16;
    case Code::Bool: return onnx::TensorProto::BOOL;
    case Code::Int:
      return dtype.bits == 8 ? onnx::TensorProto::INT8 : dtype.bits == 16 ? onnx::TensorProto::INT16
           : dtype.bits == 32 ? onnx::TensorProto::INT32 : onnx::TensorProto::INT64;
    case Code::UInt:
      return dtype.bits == 8 ? onnx::TensorProto::UINT8 : dtype.bits == 16 ? onnx::TensorProto::UINT16
           : dtype.bits == 32 ? onnx::TensorProto::UINT32 : onnx::TensorProto::UINT64;
  }
  return onnx::TensorProto::UNDEFINED;
}

}  // namespace

Expected<ControlFlowProgram> readControlFlowProgramBytes(const std::string& bytes, const std::string& sourceName) {
  auto model = parseModel(bytes, sourceName);
  if (!model) return model.error();
  auto contrib = expandContribQuantizedOps(*model, sourceName);
  if (!contrib) return contrib.error();
  return ProgramReader(*model, sourceName).run();
}

Expected<ControlFlowProgram> readControlFlowProgram(const std::string& path) {
  auto bytes = readFileBytes(path);
  if (!bytes) return bytes.error();
  return readControlFlowProgramBytes(*bytes, path);
}

std::string segmentModelBytes(const ControlFlowProgram& program, const ProgramSegment& segment,
                              const std::vector<SegmentInputType>& inputTypes) {
  ModelProto model;
  model.ParseFromString(program.modelHeaderBytes);
  GraphProto* graph = model.mutable_graph();
  graph->ParseFromString(segment.graphBytes);
  for (size_t i = 0; i < segment.inputs.size() && i < inputTypes.size(); ++i) {
    auto* input = graph->add_input();
    input->set_name(segment.inputs[i]);
    auto* tensorType = input->mutable_type()->mutable_tensor_type();
    tensorType->set_elem_type(onnxElementType(inputTypes[i].dtype));
    auto* shape = tensorType->mutable_shape();
    for (int64_t dim : inputTypes[i].shape) shape->add_dim()->set_dim_value(dim);
  }
  return model.SerializeAsString();
}

bool isInterpretedOperator(const std::string& opType) {
  return isControlFlowOperator(opType) || opType == "StringNormalizer";
}

bool needsInterpreter(const Diagnostic& diagnostic) {
  return std::any_of(std::begin(kRunTimePhrases), std::end(kRunTimePhrases),
                     [&](const char* phrase) { return diagnostic.message.find(phrase) != std::string::npos; });
}

}  // namespace tessel::frontend
