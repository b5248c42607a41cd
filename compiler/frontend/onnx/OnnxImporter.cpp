// The ONNX frontend: a model file (protobuf) to Tessel's graph IR.
#include "compiler/frontend/onnx/OnnxImporter.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <new>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/frontend/onnx/OnnxAttributes.h"
#include "compiler/frontend/onnx/OnnxControlFlow.h"
#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxModelFile.h"
#include "compiler/frontend/onnx/OnnxContribOps.h"
#include "compiler/frontend/onnx/OnnxOpsetConversion.h"
#include "compiler/frontend/onnx/OnnxOpsets.h"
#include "compiler/frontend/onnx/OnnxProgram.h"
#include "compiler/frontend/onnx/OnnxRecurrent.h"
#include "compiler/frontend/onnx/OnnxTensor.h"
#include "compiler/graph/FoldConstant.h"
#include "compiler/graph/InferTypes.h"
#include "compiler/opdefs/OpRegistry.h"
#include "core/graph/UnsupportedOperations.h"

namespace tessel::frontend {
namespace {

const char* const kImportCancelled = "the import was cancelled";
// What to do about control flow decided while the model runs.
const char* const kDecidedAtRunTimeHint =
    "`tessel run` and `tessel bench` run such a model with its control flow interpreted and the operations between "
    "compiled; a compiled or exported model needs the values deciding it known while compiling (constants, or "
    "integer and boolean inputs given to tessel run --input)";

using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::ValueInfoProto;

// IR version 3 introduced opset_import; older files cannot say which operators they mean.
constexpr int64_t kOldestIrVersion = 3;

// The opset the model declares for the default domain (the last entry, as checkVersions
// reads it); nullopt when it declares none.
std::optional<int64_t> defaultDomainOpset(const ModelProto& model) {
  std::optional<int64_t> version;
  for (const auto& opset : model.opset_import())
    if (isDefaultDomain(opset.domain())) version = opset.version();
  return version;
}

// Whether some node (subgraphs included) uses an operator whose definition at `opset`
// differs from the one Tessel implements.
bool usesChangedDefinition(const GraphProto& graph, int opset) {
  for (const NodeProto& node : graph.node()) {
    if (isDefaultDomain(node.domain()) && !definitionUnchangedSinceOpset(node.op_type(), opset)) return true;
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g() && usesChangedDefinition(attribute.g(), opset)) return true;
      for (const GraphProto& body : attribute.graphs())
        if (usesChangedDefinition(body, opset)) return true;
    }
  }
  return false;
}

// A model older than the oldest opset Tessel implements, using an operator defined
// differently back then, is converted by ONNX's own version converter to kConversionOpset;
// the step it took is returned for `tessel inspect` and the pass timeline. Models of a
// supported opset, and old ones whose operators all kept their definitions, are left alone:
// the converter is then not worth its time or its risks. Anything unreadable about the
// versions is left for checkVersions to explain.
Expected<std::optional<graph::ImportStep>> convertOldOpset(ModelProto& model, const std::string& sourceName) {
  std::optional<int64_t> opset = defaultDomainOpset(model);
  if (model.ir_version() < kOldestIrVersion || !opset || *opset < 1 || *opset >= kOldestSupportedOpset)
    return std::optional<graph::ImportStep>();
  if (!usesChangedDefinition(model.graph(), int(*opset))) return std::optional<graph::ImportStep>();
  auto conversion = convertOpset(model, int(*opset), kConversionOpset, sourceName);
  if (!conversion) return conversion.error();
  const std::string from = std::to_string(conversion->fromOpset), to = std::to_string(conversion->toOpset);
  return std::optional<graph::ImportStep>(graph::ImportStep{
      "ConvertOpset " + from + "→" + to,
      "The model's opset " + from + " was converted to opset " + to +
          " by ONNX's version converter: Tessel implements the operators of opsets " +
          std::to_string(kOldestSupportedOpset) + " to " + std::to_string(kNewestSupportedOpset) + ".",
      conversion->milliseconds});
}

std::set<std::string> initializerNames(const GraphProto& graph) {
  std::set<std::string> names;
  for (const auto& tensor : graph.initializer()) names.insert(tensor.name());
  return names;
}

// Builds the graph IR from one parsed model. Each step returns a Diagnostic located at the
// model file on the first problem; nothing is partially returned.
class GraphImporter : public ExpansionContext {
public:
  /// `controlFlowInputs`: inputs to bind to their known values (OnnxImportOptions::
  /// knownInputValues) because control flow is decided by them.
  GraphImporter(const ModelProto& model, std::string sourceName, const OnnxImportOptions& options,
                std::set<std::string> controlFlowInputs)
      : model_(model), graph_(model.graph()), sourceName_(std::move(sourceName)),
        modelDirectory_(directoryOf(sourceName_)), options_(options), controlFlowInputs_(std::move(controlFlowInputs)) {
    for (const auto* infos : {&graph_.value_info(), &graph_.output()})
      for (const ValueInfoProto& info : *infos) declaredValues_.emplace(info.name(), &info);
  }

  Expected<graph::Graph> run() {
    for (auto step : {&GraphImporter::checkVersions, &GraphImporter::importInitializers, &GraphImporter::importInputs,
                      &GraphImporter::nameNodes})
      if (Status status = (this->*step)(); !status.ok()) return status.error();
    auto order = orderNodes();
    if (!order) return order.error();
    const size_t count = order->size();
    for (size_t i = 0; i < count; ++i) {
      // Every few dozen nodes: asking costs little, and a node imports in microseconds.
      if (i % 32 == 0) {
        if (options_.cancelled && options_.cancelled()) return error(kImportCancelled);
        if (options_.progress)
          options_.progress(int(i * 100 / count), "Importing node " + std::to_string(i + 1) + " of " + std::to_string(count));
      }
      const int index = (*order)[i];
      if (Status status = importNode(graph_.node(index), nodeNames_[size_t(index)], scope_); !status.ok())
        return status.error();
    }
    // Every node has been seen, so the refusal names all those Tessel cannot compile at once.
    if (!placeholders_.empty() && !options_.unsupportedAsPlaceholders) {
      std::vector<const graph::OperationNode*> unsupported;
      for (const graph::Value& output : placeholders_) unsupported.push_back(graph::asOperation(output.node()));
      return graph::unsupportedOperationsError(unsupported, sourceName_);
    }
    if (Status status = importOutputs(); !status.ok()) return status.error();
    return std::move(result_);
  }

  /// Inputs with a known value that control flow turned out to be decided by: importing again
  /// with them bound lets it expand (importOnnxBytes does).
  const std::set<std::string>& inputsWantedByValue() const { return wantedInputs_; }

  // ExpansionContext
  Expected<std::vector<ImportedValue>> importBody(const GraphProto& body, const std::vector<ImportedValue>& arguments,
                                                  const ImportScope& scope, const std::string& prefix) override {
    ImportScope bodyScope(&scope);
    for (const auto& tensor : body.initializer()) {
      auto data = tensorToArray(tensor, modelDirectory_);
      if (!data) return importError("has a body '" + body.name() + "' with initializer " + data.error().message);
      bodyScope.bind(tensor.name(), ImportedValue::ofTensor(graph::makeConstant(prefix + tensor.name(), *data)));
    }
    for (int i = 0; i < body.input_size(); ++i) bodyScope.bind(body.input(i).name(), arguments.at(size_t(i)));
    for (int i = 0; i < body.node_size(); ++i) {
      const NodeProto& node = body.node(i);
      std::string base = prefix + (node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name());
      std::string name = base;
      for (int suffix = 1; takenNames_.count(name); ++suffix) name = base + "_" + std::to_string(suffix);
      takenNames_.insert(name);
      if (Status status = importNode(node, name, bodyScope); !status.ok()) return status.error();
    }
    std::vector<ImportedValue> outputs;
    for (const auto& output : body.output()) {
      const ImportedValue* value = bodyScope.find(output.name());
      if (!value) return importError("has a body '" + body.name() + "' whose output '" + output.name() + "' nothing produces");
      outputs.push_back(*value);
    }
    return outputs;
  }

  Expected<runtime::NDArray> knownValue(const graph::Value& value, const std::string& role) override {
    if (auto* constant = graph::asConstant(value.node())) return constant->data;
    graph::Graph prefix{result_.inputs, {value}, {"value"}};
    auto typed = graph::inferTypes(prefix);
    if (!typed) return typed.error();
    auto folded = graph::foldConstant(*typed);
    if (!folded) return folded.error();
    if (auto* constant = graph::asConstant(folded->outputs[0].node())) return constant->data;
    std::string wanted, unknown;
    for (const graph::InputNode* input : graph::inputsFeeding({value})) {
      if (options_.knownInputValues.count(input->name)) {
        wantedInputs_.insert(input->name);
        wanted += (wanted.empty() ? "'" : ", '") + input->name + "'";
      } else {
        unknown += (unknown.empty() ? "'" : ", '") + input->name + "'";
      }
    }
    if (!wanted.empty()) return importError("needs " + role + " while compiling; it comes from input " + wanted);
    if (!unknown.empty())
      return importError("needs " + role + " while compiling, but it comes from the graph input " + unknown +
                             ", whose value is known only when the model runs",
                         "", kDecidedAtRunTimeHint);
    return importError("needs " + role + " while compiling, but it is computed from the data when the model runs", "",
                       kDecidedAtRunTimeHint);
  }

  Expected<graph::TensorType> typeOf(const graph::Value& value) override {
    if (value.type().known()) return value.type();
    graph::Graph prefix{result_.inputs, {value}, {"value"}};
    auto typed = graph::inferTypes(prefix);
    if (!typed) return typed.error();
    return typed->outputs[0].type();
  }

  int opset() const override { return opset_; }

private:
  Diagnostic error(const std::string& message, const std::string& hint = "") const {
    return importError(message, sourceName_, hint);
  }
  std::string describeNode(int index) const {
    return "node '" + nodeNames_[size_t(index)] + "' (" + graph_.node(index).op_type() + ")";
  }
  Diagnostic nodeError(int index, const std::string& problem, const std::string& hint = "") const {
    return error(describeNode(index) + " " + problem, hint);
  }

  Status checkVersions() {
    if (model_.ir_version() < kOldestIrVersion)
      return error("has IR version " + std::to_string(model_.ir_version()) + "; Tessel reads IR version " +
                       std::to_string(kOldestIrVersion) + " and newer",
                   "re-export the model with a newer ONNX exporter");
    bool found = false;
    for (const auto& opset : model_.opset_import()) {
      if (!isDefaultDomain(opset.domain())) continue;
      found = true;
      opset_ = int(std::clamp<int64_t>(opset.version(), -1, 1 << 20));
    }
    const std::string supported = "Tessel supports opsets " + std::to_string(kOldestSupportedOpset) + " to " +
                                  std::to_string(kNewestSupportedOpset);
    if (!found) {
      std::string others;
      for (const auto& opset : model_.opset_import()) others += (others.empty() ? "" : ", ") + opset.domain();
      return error("declares no opset for the default ONNX domain" +
                   (others.empty() ? std::string() : " (only for " + others + ")") + "; " + supported +
                   " of the default domain only");
    }
    if (opset_ < 1 || opset_ > kNewestSupportedOpset)
      return error("uses opset " + std::to_string(opset_) + " of the default ONNX domain; " + supported,
                   "convert the model with onnx.version_converter to opset " + std::to_string(kNewestSupportedOpset));
    return Status::success();
  }

  Status importInitializers() {
    if (graph_.sparse_initializer_size() > 0)
      return error("has sparse initializer '" + graph_.sparse_initializer(0).values().name() +
                   "'; sparse tensors are not supported");
    for (const auto& tensor : graph_.initializer()) {
      if (tensor.name().empty()) return error("has an initializer without a name");
      if (scope_.bindsHere(tensor.name())) return error("has two initializers named '" + tensor.name() + "'");
      auto data = tensorToArray(tensor, modelDirectory_);
      if (!data) return error("initializer " + data.error().message);
      scope_.bind(tensor.name(), ImportedValue::ofTensor(graph::makeConstant(tensor.name(), *data)));
    }
    return Status::success();
  }

  Status importInputs() {
    std::set<std::string> initializers = initializerNames(graph_);
    // Exporters for opset < 9 list every initializer as a graph input too; the
    // initializer's data wins and the name is no input of the graph.
    std::vector<const ValueInfoProto*> inputs;
    for (const auto& info : graph_.input())
      if (!initializers.count(info.name())) inputs.push_back(&info);
    auto isInput = [&](const std::string& name) {
      auto length = options_.sequenceLengths.find(name.substr(0, name.rfind('[')));
      for (size_t i = 0; length != options_.sequenceLengths.end() && i < length->second; ++i)
        if (name == sequenceElementName(length->first, i)) return true;
      return std::any_of(inputs.begin(), inputs.end(), [&](auto* info) { return info->name() == name; });
    };
    for (const auto& [name, shape] : options_.inputShapes)
      if (!isInput(name)) return unknownInputError(name, "--input-shape", inputs);
    for (const auto& [name, value] : options_.inputValues)
      if (!isInput(name)) return unknownInputError(name, "an input value", inputs);
    // Control flow decided by an input binds it (the Diagnostic that asked named it).
    std::map<std::string, runtime::NDArray> boundValues = options_.inputValues;
    for (const std::string& name : controlFlowInputs_) boundValues.emplace(name, options_.knownInputValues.at(name));
    for (const ValueInfoProto* info : inputs) {
      if (info->name().empty()) return error("has a graph input without a name");
      if (scope_.bindsHere(info->name())) return error("has two graph inputs named '" + info->name() + "'");
      auto declared = declaredTypeOf(*info);
      if (!declared) return error(declared.error().message);
      if (declared->strings)
        return error("input '" + info->name() + "' is " + kStringsRefusal,
                     "`tessel run` runs such a model interpreted (StringNormalizer is the operator it runs on strings)");
      if (declared->sequence) {
        if (Status status = importSequenceInput(info->name(), *declared); !status.ok()) return status.error();
        continue;
      }
      auto bound = boundValues.find(info->name());
      Expected<graph::Value> value = bound != boundValues.end()
                                         ? bindInputValue(info->name(), *declared, bound->second)
                                         : makeInputValue(info->name(), *declared);
      if (!value) return value.error();
      scope_.bind(info->name(), ImportedValue::ofTensor(*value));
      if (bound == boundValues.end()) result_.inputs.push_back(*value);
    }
    return Status::success();
  }

  // A sequence input: each of its tensors is a graph input of its own.
  Status importSequenceInput(const std::string& name, const DeclaredType& declared) {
    auto length = options_.sequenceLengths.find(name);
    if (length == options_.sequenceLengths.end())
      return error("input '" + name + "' is a sequence of tensors and its length was not given",
                   "Tessel compiles a sequence input for the number of tensors it holds: run the model with a "
                   "value for it (tessel run --inputs-dir with an ONNX SequenceProto file)");
    std::vector<graph::Value> elements;
    for (size_t i = 0; i < length->second; ++i) {
      auto element = makeInputValue(sequenceElementName(name, i), declared);
      if (!element) return element.error();
      elements.push_back(*element);
      result_.inputs.push_back(*element);
    }
    scope_.bind(name, ImportedValue::ofSequence(std::move(elements)));
    return Status::success();
  }

  Diagnostic unknownInputError(const std::string& name, const std::string& what,
                               const std::vector<const ValueInfoProto*>& inputs) const {
    std::string names;
    for (auto* input : inputs) names += (names.empty() ? "" : ", ") + input->name();
    return error(what + " names '" + name + "', which is not an input of the model",
                 names.empty() ? "the model has no inputs" : "its inputs are " + names);
  }

  // A graph input with its shape from the model, completed or checked by --input-shape.
  Expected<graph::Value> makeInputValue(const std::string& name, const DeclaredType& declared) {
    std::vector<int64_t> shape = declared.shape;
    auto given = options_.inputShapes.find(name);
    if (given != options_.inputShapes.end()) {
      if (auto mismatch = checkAgainstDeclared(name, declared, given->second, "--input-shape")) return *mismatch;
      shape = given->second;
    } else {
      bool dynamic = !declared.rankKnown;
      for (int64_t dim : shape) dynamic = dynamic || dim < 0;
      if (dynamic) {
        std::string dims;  // "D0,D1,D2" for the declared rank, "D0,D1,..." when unknown
        for (size_t i = 0; i < (declared.rankKnown ? shape.size() : 2); ++i) {
          dims.append(i ? ",D" : "D");
          dims.append(std::to_string(i));
        }
        if (!declared.rankKnown) dims.append(",...");
        std::string what = declared.rankKnown ? "has dynamic dimensions (declared " +
                                                    shapeText(declared.shape, declared.dimNames) + ")"
                                              : "declares no shape";
        return error("input '" + name + "' " + what + " and no shape was given for it",
                     "pass --input-shape " + name + ":" + dims);
      }
    }
    return graph::makeInput(name, graph::TensorType{declared.dtype, shape, ""});
  }

  // A graph input the caller gave a value for: a constant with that data.
  Expected<graph::Value> bindInputValue(const std::string& name, const DeclaredType& declared,
                                        const runtime::NDArray& data) {
    if (!data.defined()) return error("the value given for input '" + name + "' is empty (undefined array)");
    if (data.dtype() != toRuntimeType(declared.dtype))
      return error("the value given for input '" + name + "' is " + data.dtype().toString() + " but the model declares " +
                   declared.dtype.toString());
    if (auto mismatch = checkAgainstDeclared(name, declared, data.shape(), "the value given")) return *mismatch;
    return graph::makeConstant(name, data);
  }

  std::optional<Diagnostic> checkAgainstDeclared(const std::string& name, const DeclaredType& declared,
                                                 const std::vector<int64_t>& shape, const std::string& what) const {
    bool agrees = !declared.rankKnown || declared.shape.size() == shape.size();
    for (size_t i = 0; agrees && declared.rankKnown && i < shape.size(); ++i)
      agrees = declared.shape[i] < 0 || declared.shape[i] == shape[i];
    for (int64_t dim : shape) agrees = agrees && dim >= 0;
    if (agrees) return std::nullopt;
    return error(what + " for input '" + name + "' has shape " + shapeText(shape) + " but the model declares " +
                 shapeText(declared.shape, declared.dimNames));
  }

  // Node names: the ONNX name when it has one and it is still free, else "<OpType>_<index>"
  // (with a suffix if that is taken); every operation node gets its own.
  Status nameNodes() {
    std::unordered_set<std::string> explicitNames, taken;
    for (const auto& node : graph_.node()) explicitNames.insert(node.name());
    for (int i = 0; i < graph_.node_size(); ++i) {
      const NodeProto& node = graph_.node(i);
      if (node.op_type().empty()) return error("node " + std::to_string(i) + " ('" + node.name() + "') has no op type");
      std::string name = node.name();
      if (name.empty() || taken.count(name)) {
        std::string base = name.empty() ? node.op_type() + "_" + std::to_string(i) : name;
        name = base;
        for (int suffix = 1; taken.count(name) || (name != node.name() && explicitNames.count(name)); ++suffix)
          name = base + "_" + std::to_string(suffix);
      }
      taken.insert(name);
      nodeNames_.push_back(name);
      takenNames_.insert(name);
    }
    return Status::success();
  }

  // The order to import nodes in. ONNX requires producers before consumers; files that
  // break only that (but are acyclic) are sorted, keeping the file's order where it is free.
  Expected<std::vector<int>> orderNodes() {
    std::unordered_map<std::string, int> producer;
    int count = graph_.node_size();
    for (int i = 0; i < count; ++i)
      for (const auto& output : graph_.node(i).output()) {
        if (output.empty()) continue;
        if (scope_.bindsHere(output))
          return nodeError(i, "writes '" + output + "', which is already a graph input or initializer");
        auto [it, inserted] = producer.emplace(output, i);
        if (!inserted) return nodeError(i, "writes '" + output + "', which " + describeNode(it->second) + " writes too");
      }
    std::vector<std::vector<int>> consumers(static_cast<size_t>(count));
    std::vector<int> waitingFor(static_cast<size_t>(count), 0);
    for (int i = 0; i < count; ++i) {
      std::set<int> producers;
      for (const auto& input : graph_.node(i).input()) {
        if (input.empty() || scope_.bindsHere(input)) continue;
        auto it = producer.find(input);
        if (it == producer.end())
          return nodeError(i, "reads '" + input + "', which no node, graph input or initializer produces");
        producers.insert(it->second);
      }
      // A subgraph (If's branches, a Loop's body) may read values of this graph by name.
      for (const auto& attribute : graph_.node(i).attribute())
        if (attribute.has_g())
          for (const std::string& name : outerNamesRead(attribute.g())) {
            auto it = producer.find(name);
            if (it != producer.end() && it->second != i) producers.insert(it->second);
          }
      waitingFor[size_t(i)] = int(producers.size());
      for (int p : producers) consumers[size_t(p)].push_back(i);
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < count; ++i)
      if (waitingFor[size_t(i)] == 0) ready.push(i);
    std::vector<int> order;
    while (!ready.empty()) {
      int next = ready.top();
      ready.pop();
      order.push_back(next);
      for (int consumer : consumers[size_t(next)])
        if (--waitingFor[size_t(consumer)] == 0) ready.push(consumer);
    }
    if (int(order.size()) < count) return cycleError(producer, waitingFor);
    return order;
  }

  // Names one cycle among the nodes that could not be ordered: from any of them, follow
  // inputs whose producers are also stuck until a node repeats.
  Diagnostic cycleError(const std::unordered_map<std::string, int>& producer, const std::vector<int>& waitingFor) const {
    int start = 0;
    while (waitingFor[size_t(start)] == 0) ++start;
    std::vector<int> path;
    std::unordered_map<int, size_t> positionInPath;
    std::vector<std::string> readValues;
    int current = start;
    while (!positionInPath.count(current)) {
      positionInPath[current] = path.size();
      path.push_back(current);
      for (const auto& input : graph_.node(current).input()) {
        auto it = producer.find(input);
        if (it != producer.end() && waitingFor[size_t(it->second)] > 0) {
          readValues.push_back(input);
          current = it->second;
          break;
        }
      }
    }
    std::string cycle;
    for (size_t i = positionInPath[current]; i < path.size(); ++i)
      cycle += describeNode(path[i]) + " reads '" + readValues[i] + "'" + (i + 1 < path.size() ? ", " : "");
    return nodeError(current, "reads a value before anything produces it: the nodes form a cycle (" + cycle + ")",
                     "ONNX requires every value to be produced before it is used");
  }

  Diagnostic nodeError(const NodeProto& node, const std::string& name, const std::string& problem,
                       const std::string& hint = "") const {
    return error("node '" + name + "' (" + node.op_type() + ") " + problem, hint);
  }

  Status importNode(const NodeProto& node, const std::string& name, ImportScope& scope) {
    if (node.output_size() == 0) return nodeError(node, name, "has no outputs");
    if (!implementsOnnxOperator(node.domain(), node.op_type())) return importPlaceholder(node, name, scope);
    if (node.op_type() == "Constant") return importConstant(node, name, scope);
    auto inputs = inputsOf(node, name, scope);
    if (!inputs) return inputs.error();
    if (isControlFlowOperator(node.op_type())) return importControlFlow(node, name, std::move(*inputs), scope);
    if (node.op_type() == "Identity" && inputs->size() == 1 && (*inputs)[0].isSequence()) {
      scope.bind(node.output(0), (*inputs)[0]);  // a sequence's Identity is the sequence
      return Status::success();
    }
    std::vector<graph::Value> tensors;
    for (size_t i = 0; i < inputs->size(); ++i) {
      if ((*inputs)[i].isSequence())
        return nodeError(node, name, "reads the sequence '" + node.input(int(i)) + "' where a tensor is expected");
      tensors.push_back((*inputs)[i].tensor);
    }
    if (node.op_type() == "Cast")
      for (const auto& attribute : node.attribute())
        if (attribute.name() == "to" && attribute.i() == onnx::TensorProto::STRING)
          return nodeError(node, name, std::string("makes ") + kStringsRefusal,
                           "`tessel run` runs such a model interpreted");
    auto attributes = convertAttributes(node, modelDirectory_);
    if (!attributes) return nodeError(node, name, attributes.error().message);
    if (isRecurrentOperator(node.op_type()))
      return importRecurrent(node, name, std::move(tensors), std::move(*attributes), scope);
    if (node.op_type() == "GroupNormalization")
      return importGroupNormalization(node, name, std::move(tensors), *attributes, scope);
    std::vector<graph::Value> outputs =
        graph::makeOperation(name, node.op_type(), std::move(tensors), std::move(*attributes), outputTypesOf(node),
                             {graph::Provenance{name, node.op_type(), opset_}});
    bindOutputs(node, outputs, scope);
    return Status::success();
  }

  // If, Loop, Scan and the sequence operators become the operations they stand for
  // (OnnxControlFlow.h). In a graph only to be viewed, one that cannot be expanded is shown
  // as a placeholder, as an unsupported operator is.
  Status importControlFlow(const NodeProto& node, const std::string& name, std::vector<ImportedValue> inputs,
                           ImportScope& scope) {
    auto outputs = expandControlFlow(ExpansionNode{node, name, std::move(inputs)}, scope, *this);
    if (!outputs) {
      if (options_.unsupportedAsPlaceholders && wantedInputs_.empty()) return importPlaceholder(node, name, scope);
      return nodeError(node, name, outputs.error().message, outputs.error().hint);
    }
    if (outputs->size() < size_t(node.output_size()))
      return nodeError(node, name, "gives " + std::to_string(outputs->size()) + " values for " +
                                       std::to_string(node.output_size()) + " outputs");
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty()) scope.bind(node.output(i), (*outputs)[size_t(i)]);
    return Status::success();
  }

  // A node whose operator Tessel does not implement becomes a placeholder that keeps its place
  // in the graph (UnsupportedOperations.h); a plain import refuses the model once every node
  // has been seen, naming them all.
  Status importPlaceholder(const NodeProto& node, const std::string& name, ImportScope& scope) {
    graph::OnnxOperatorName op{isDefaultDomain(node.domain()) ? "" : node.domain(), node.op_type()};
    std::vector<graph::Value> inputs;
    for (const auto& input : node.input()) {
      const ImportedValue* value = input.empty() ? nullptr : scope.find(input);
      inputs.push_back(value && !value->isSequence() ? value->tensor : graph::Value());
    }
    std::vector<graph::Value> outputs = graph::makeOperation(
        name, graph::kUnsupportedOp, std::move(inputs), attributesForDisplay(node, modelDirectory_), outputTypesOf(node),
        {graph::Provenance{name, op.qualified(), opset_}});
    placeholders_.push_back(outputs[0]);
    bindOutputs(node, outputs, scope);
    return Status::success();
  }

  Expected<std::vector<ImportedValue>> inputsOf(const NodeProto& node, const std::string& name,
                                                const ImportScope& scope) const {
    std::vector<ImportedValue> inputs;
    for (const auto& input : node.input()) {
      if (input.empty()) {
        inputs.emplace_back();
        continue;
      }
      const ImportedValue* value = scope.find(input);
      if (!value) return nodeError(node, name, "reads '" + input + "', which nothing produces before it");
      inputs.push_back(*value);
    }
    return inputs;
  }

  // Unknown (InferTypes gives them), except in a graph only to be viewed: there the types the
  // model declares (value_info, graph outputs) are all the types there are.
  std::vector<graph::TensorType> outputTypesOf(const NodeProto& node) const {
    std::vector<graph::TensorType> types(size_t(node.output_size()));
    if (!options_.unsupportedAsPlaceholders) return types;
    for (int i = 0; i < node.output_size(); ++i) {
      auto info = declaredValues_.find(node.output(i));
      if (info == declaredValues_.end()) continue;
      auto declared = declaredTypeOf(*info->second);
      bool isStatic = declared && declared->rankKnown &&
                      std::all_of(declared->shape.begin(), declared->shape.end(), [](int64_t d) { return d >= 0; });
      if (isStatic) types[size_t(i)] = graph::TensorType{declared->dtype, declared->shape, ""};
    }
    return types;
  }

  void bindOutputs(const NodeProto& node, const std::vector<graph::Value>& outputs, ImportScope& scope) {
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty()) scope.bind(node.output(i), ImportedValue::ofTensor(outputs[size_t(i)]));
  }

  // LSTM, GRU and RNN become the operations of their time steps (OnnxRecurrent.h).
  Status importRecurrent(const NodeProto& node, const std::string& name, std::vector<graph::Value> inputs,
                         graph::Attributes attributes, ImportScope& scope) {
    std::vector<bool> used;
    for (const auto& output : node.output()) used.push_back(!output.empty());
    auto outputs = expandRecurrentNode({name, node.op_type(), opset_, std::move(attributes), std::move(inputs), used},
                                       result_.inputs);
    if (!outputs) return nodeError(node, name, outputs.error().message, outputs.error().hint);
    bindOutputs(node, *outputs, scope);
    return Status::success();
  }

  // GroupNormalization (opset 18: scale and bias per group) is InstanceNormalization of the
  // input seen as [N, groups, everything else]: Reshape, InstanceNormalization, and a Reshape
  // back to the input's shape (which FoldConstant makes constant).
  Status importGroupNormalization(const NodeProto& node, const std::string& name, std::vector<graph::Value> inputs,
                                  const graph::Attributes& attributes, ImportScope& scope) {
    auto groups = attributes.find("num_groups");
    if (groups == attributes.end() || !std::holds_alternative<int64_t>(groups->second) ||
        std::get<int64_t>(groups->second) < 1)
      return nodeError(node, name, "needs a positive num_groups attribute");
    if (inputs.size() != 3 || !inputs[0].defined() || !inputs[1].defined() || !inputs[2].defined())
      return nodeError(node, name, "needs its three inputs X, scale and bias");
    std::vector<graph::Provenance> provenance = {graph::Provenance{name, node.op_type(), opset_}};
    auto operation = [&](const std::string& suffix, const std::string& op, std::vector<graph::Value> in,
                         graph::Attributes attrs = {}) {
      return graph::makeOperation(name + "/" + suffix, op, std::move(in), std::move(attrs), {graph::TensorType{}},
                                  provenance)[0];
    };
    const int64_t grouped[] = {0, std::get<int64_t>(groups->second), -1};
    auto groupedShape = runtime::NDArray::empty({3}, runtime::DataType::int64());
    groupedShape.copyFrom(grouped, sizeof grouped);
    graph::Value perGroup =
        operation("group", "Reshape", {inputs[0], graph::makeConstant(name + "/grouped_shape", groupedShape)});
    graph::Attributes normAttributes;
    if (auto epsilon = attributes.find("epsilon"); epsilon != attributes.end()) normAttributes["epsilon"] = epsilon->second;
    graph::Value normalized =
        operation("normalize", "InstanceNormalization", {perGroup, inputs[1], inputs[2]}, std::move(normAttributes));
    graph::Value shape = operation("shape", "Shape", {inputs[0]});
    bindOutputs(node, {operation("ungroup", "Reshape", {normalized, shape})}, scope);
    return Status::success();
  }

  // A Constant node becomes a ConstantNode named after its output, like an initializer.
  Status importConstant(const NodeProto& node, const std::string& name, ImportScope& scope) {
    if (node.output_size() != 1 || node.output(0).empty()) return nodeError(node, name, "must have exactly one output");
    for (const auto& attribute : node.attribute()) {
      const std::string& key = attribute.name();
      if (key == "sparse_value") return nodeError(node, name, "holds a sparse tensor, which Tessel does not support");
      if (key == "value_string" || key == "value_strings")
        return nodeError(node, name, "holds strings; string tensors are not supported");
    }
    runtime::NDArray data;
    auto makeArray = [&](std::vector<int64_t> shape, runtime::DataType dtype, const void* source) {
      data = runtime::NDArray::empty(std::move(shape), dtype);
      data.copyFrom(source, size_t(data.byteSize()));
    };
    for (const auto& attribute : node.attribute()) {
      const std::string& key = attribute.name();
      if (key == "value") {
        auto array = tensorToArray(attribute.t(), modelDirectory_);
        if (!array) return nodeError(node, name, "holds a bad tensor: " + array.error().message);
        data = *array;
      } else if (key == "value_float") {
        float value = attribute.f();
        makeArray({}, runtime::DataType::float32(), &value);
      } else if (key == "value_int") {
        int64_t value = attribute.i();
        makeArray({}, runtime::DataType::int64(), &value);
      } else if (key == "value_floats") {
        std::vector<float> values(attribute.floats().begin(), attribute.floats().end());
        makeArray({int64_t(values.size())}, runtime::DataType::float32(), values.data());
      } else if (key == "value_ints") {
        std::vector<int64_t> values(attribute.ints().begin(), attribute.ints().end());
        makeArray({int64_t(values.size())}, runtime::DataType::int64(), values.data());
      }
    }
    if (!data.defined())
      return nodeError(node, name, "has none of the attributes value, value_float(s) or value_int(s)");
    // A top-level constant is named after its output, like an initializer; one in a subgraph
    // after its node, which is unique however often the subgraph is expanded.
    const std::string constantName = &scope == &scope_ ? node.output(0) : name;
    scope.bind(node.output(0), ImportedValue::ofTensor(graph::makeConstant(constantName, data)));
    return Status::success();
  }

  // A sequence output becomes one graph output per element, "NAME[0]", "NAME[1]", ...
  Status importOutputs() {
    if (graph_.output_size() == 0) return error("declares no graph outputs");
    for (const auto& output : graph_.output()) {
      const ImportedValue* value = output.name().empty() ? nullptr : scope_.find(output.name());
      if (!value) return error("graph output '" + output.name() + "' is produced by no node, graph input or initializer");
      if (!value->isSequence()) {
        result_.outputs.push_back(value->tensor);
        result_.outputNames.push_back(output.name());
        continue;
      }
      for (size_t i = 0; i < value->sequence->size(); ++i) {
        result_.outputs.push_back((*value->sequence)[i]);
        result_.outputNames.push_back(sequenceElementName(output.name(), i));
      }
    }
    return Status::success();
  }

  const ModelProto& model_;
  const GraphProto& graph_;
  std::string sourceName_;
  std::string modelDirectory_;
  const OnnxImportOptions& options_;
  int opset_ = 0;
  std::vector<std::string> nodeNames_;
  /// The nodes Tessel cannot compile, as placeholders, in import order: held by an output each,
  /// since a later node of the same output name replaces the value in scope and would free a
  /// placeholder nothing else uses (found by fuzz_onnx_model).
  std::vector<graph::Value> placeholders_;
  /// The types the model declares for values (value_info, graph outputs), by value name.
  std::unordered_map<std::string, const ValueInfoProto*> declaredValues_;
  /// The inputs bound to their values because control flow is decided by them, and those found
  /// so while importing (to bind on the next import).
  std::set<std::string> controlFlowInputs_, wantedInputs_;
  /// Every operation's name so far: names in expanded subgraphs must not repeat them.
  std::unordered_set<std::string> takenNames_;
  /// The top-level graph's names: initializers, inputs, node outputs.
  ImportScope scope_;
  graph::Graph result_;
};

}  // namespace

std::string sequenceElementName(const std::string& name, size_t index) {
  return name + "[" + std::to_string(index) + "]";
}

bool importCancelled(const Diagnostic& diagnostic) { return diagnostic.message.find(kImportCancelled) != std::string::npos; }

Expected<graph::Graph> importOnnxBytes(const std::string& bytes, const std::string& sourceName,
                                       const OnnxImportOptions& options) {
  auto model = parseModel(bytes, sourceName);
  if (!model) return model.error();
  auto conversion = convertOldOpset(*model, sourceName);
  if (!conversion) return conversion.error();
  auto contrib = expandContribQuantizedOps(*model, sourceName);
  if (!contrib) return contrib.error();
  try {
    // Control flow decided by inputs whose values are known is found while importing: import
    // again with those bound, until none is new.
    std::set<std::string> controlFlowInputs;
    for (;;) {
      GraphImporter importer(*model, sourceName, options, controlFlowInputs);
      auto graph = importer.run();
      size_t known = controlFlowInputs.size();
      if (!graph) controlFlowInputs.insert(importer.inputsWantedByValue().begin(), importer.inputsWantedByValue().end());
      if (!graph && controlFlowInputs.size() > known) continue;
      if (graph && *conversion) graph->importSteps.push_back(**conversion);
      if (graph && *contrib) graph->importSteps.push_back(**contrib);
      return graph;
    }
  } catch (const std::bad_alloc&) {
    return importError("needs more memory than is available to import", sourceName);
  } catch (const runtime::Error& failure) {
    return importError(std::string("cannot be imported: ") + failure.what(), sourceName);
  }
}

Expected<graph::Graph> importOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  auto bytes = readFileBytes(path);
  if (!bytes) return bytes.error();
  return importOnnxBytes(*bytes, path, options);
}

}  // namespace tessel::frontend
