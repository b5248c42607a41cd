// Compile-time evaluation of constant operations with their own JIT-compiled kernels.
#include "compiler/graph/FoldConstant.h"

#include <unordered_set>

#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_map>

#include "compiler/graph/GraphRewriter.h"
#include "core/ir/IRPrinter.h"
#include "compiler/lower/Build.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

namespace {

// Operators whose result is meant to differ from run to run.
bool isRandom(const std::string& op) {
  static const std::set<std::string> random{"RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial", "Bernoulli"};
  return random.count(op) != 0;
}

bool allInputsConstant(const std::vector<Value>& inputs) {
  return std::all_of(inputs.begin(), inputs.end(),
                     [](const Value& v) { return !v.defined() || asConstant(v.node()) != nullptr; });
}

// Operators whose result holds their first input's elements unchanged, in the same order: a
// constant's data viewed with the output's shape is their result, no kernel needed (shape
// plumbing is most of what folds, and a JIT compile per operation adds up).
bool keepsElementsInOrder(const std::string& op) {
  static const std::set<std::string> ops{"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"};
  return ops.count(op) != 0;
}

// "<node>[+<other ONNX nodes it stands for>][.<output>].folded": the name says where the
// value came from, including nodes an earlier rewrite merged into this one.
std::string foldedName(const OperationNode& op, size_t output) {
  std::string name = op.name;
  std::set<std::string> seen{op.name};
  for (auto& origin : op.provenance)
    if (!origin.nodeName.empty() && seen.insert(origin.nodeName).second) name += "+" + origin.nodeName;
  return name + (output ? "." + std::to_string(output) : "") + ".folded";
}

std::optional<std::vector<Value>> foldWithoutKernel(const OperationNode& op, const std::vector<Value>& inputs) {
  if (!keepsElementsInOrder(op.op) || op.outputTypes.size() != 1 || inputs.empty() || !inputs[0].defined())
    return std::nullopt;
  auto* data = asConstant(inputs[0].node());
  const TensorType& type = op.outputTypes[0];
  if (!data || data->outputTypes[0].dtype != type.dtype || data->data.numElements() != type.elementCount())
    return std::nullopt;
  runtime::NDArray view = data->data.view(type.shape, toRuntimeType(type.dtype));
  return std::vector<Value>{makeConstant(foldedName(op, 0), view, type.layout)};
}

Diagnostic foldError(const OperationNode& op, const std::string& message) {
  Diagnostic d;
  d.message = "cannot fold " + op.op + " '" + op.name + "': " + message;
  d.location = op.name;
  d.hint = "its inputs are all constants, so its kernel must build and run at compile time";
  return d;
}

bool readsOnlyConstants(const OpKernel& kernel, const std::vector<Value>& inputs) {
  return std::all_of(kernel.inputIndices.begin(), kernel.inputIndices.end(), [&](int i) {
    return i >= 0 && size_t(i) < inputs.size() && inputs[size_t(i)].defined() &&
           asConstant(inputs[size_t(i)].node()) != nullptr;
  });
}

// A fold's kernel, compiled once per process: the same small kernels recur across a model
// and across the models a session loads (Swin-T folds about 3,000 shape computations, most
// of them one of a few dozen kernels, and a JIT compile costs milliseconds each). The key
// is the lowered function's text, name included, so a hit is the same code. A kernel
// computing little (shape arithmetic, masks) runs once, so it is compiled quickly rather
// than well; one over a weight is optimized, as its run costs more than its compile.
Expected<std::shared_ptr<runtime::Module>> compiledFoldKernel(const PrimFunc& func, const Target& target,
                                                              int64_t outputElements) {
  constexpr int64_t kQuickCompileElements = 1 << 16;
  CodeQuality quality = outputElements < kQuickCompileElements ? CodeQuality::QuickToCompile : CodeQuality::Optimized;
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<runtime::Module>> cache;
  constexpr size_t kMaxCachedKernels = 4096;  // a few MiB of JIT code at most
  std::string key = target.toString() + (quality == CodeQuality::Optimized ? " optimized\n" : " quick\n") +
                    tessel::toString(func);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = cache.find(key); found != cache.end()) return found->second;
  }
  auto module = makeJitModule({func}, target, quality);
  if (!module) return module.error();
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxCachedKernels) cache.clear();
  cache.emplace(std::move(key), *module);
  return *module;
}

// Runs the operation's kernel on its constant inputs; one new constant per output.
Expected<std::vector<Value>> evaluate(const OperationNode& op, const OpCall& call, const OpKernel& kernel,
                                      const std::vector<Value>& inputs) {
  const Workload& workload = kernel.workload;
  if (workload.outputs.size() != op.outputTypes.size() || workload.inputs.size() != kernel.inputIndices.size())
    return foldError(op, "its kernel's arguments do not match the operation");
  std::vector<runtime::NDArray> outputs;
  bool empty = false;
  for (auto& type : op.outputTypes) {
    outputs.push_back(runtime::NDArray::empty(type.shape, toRuntimeType(type.dtype)));
    empty = empty || type.elementCount() == 0;
  }
  // Nothing to compute for an empty result; its kernel would have no iterations anyway.
  if (!empty) {
    Expected<Schedule> schedule = Schedule(workload.outputs);
    if (kernel.schedule) {
      auto tuned = kernel.schedule(workload, call.target);
      if (tuned) schedule = std::move(*tuned);  // else the plain schedule computes the same values
    }
    auto lowered = lower(*schedule, workload.args(), workload.name);
    if (!lowered) return foldError(op, lowered.error().message);
    int64_t outputElements = 0;
    for (auto& type : op.outputTypes) outputElements += type.elementCount();
    auto module = compiledFoldKernel(lowered->func, call.target, outputElements);
    if (!module) return foldError(op, module.error().message);
    std::vector<runtime::Value> args;
    for (int index : kernel.inputIndices) args.push_back(asConstant(inputs[size_t(index)].node())->data);
    for (auto& output : outputs) args.push_back(output);
    (*module)->getFunction(workload.name).callPacked(args);
  }
  std::vector<Value> constants;
  for (size_t i = 0; i < outputs.size(); ++i) {
    constants.push_back(makeConstant(foldedName(op, i), outputs[i], op.outputTypes[i].layout));
    TESSEL_ICHECK(constants.back().type() == op.outputTypes[i])
        << "folding " << op.name << " changed its type from " << op.outputTypes[i].toString() << " to "
        << constants.back().type().toString();
  }
  return constants;
}

}  // namespace

Expected<std::optional<std::vector<Value>>> foldOperation(const OperationNode& op, const std::vector<Value>& inputs) {
  using Folded = std::optional<std::vector<Value>>;
  if (op.isFused() || isRandom(op.op)) return Folded();
  for (auto& type : op.outputTypes)
    if (!type.known()) return foldError(op, "an output's type is unknown (run InferTypes first)");
  // The call sees `inputs`, so constants folded upstream count as constants.
  Value probe = makeOperation(op.name, op.op, inputs, op.attributes, op.outputTypes, op.provenance)[0];
  OpCall call = makeOpCall(*asOperation(probe.node()));
  bool mustFold = allInputsConstant(inputs);
  if (mustFold)
    if (auto viewed = foldWithoutKernel(op, inputs)) return Folded(std::move(*viewed));
  if (!mustFold && !OpRegistry::global().find(op.op)) return Folded();
  // An operator that throws while building (a bug of its own) only matters for an operation
  // that has to fold; the others are left to the graph compiler to report.
  Expected<OpKernel> kernel = Diagnostic{};
  try {
    kernel = buildOpKernel(call);
  } catch (const UserError& e) {
    kernel = e.diagnostic;
  } catch (const runtime::Error& e) {
    kernel = Diagnostic{e.what()};
  }
  if (!kernel) {
    if (mustFold) return foldError(op, kernel.error().message);
    return Folded();
  }
  if (!mustFold && !readsOnlyConstants(*kernel, inputs)) return Folded();
  try {
    auto constants = evaluate(op, call, *kernel, inputs);
    if (!constants) return constants.error();
    return Folded(std::move(*constants));
  } catch (const UserError& e) {
    return foldError(op, e.diagnostic.message);
  } catch (const runtime::Error& e) {
    return foldError(op, e.what());
  }
}

Expected<Graph> foldConstant(const Graph& graph) {
  std::optional<Diagnostic> failure;
  Graph folded = rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& inputs)
                                         -> std::optional<std::vector<Value>> {
    if (failure) return std::nullopt;
    auto constants = foldOperation(op, inputs);
    if (!constants) {
      failure = constants.error();
      return std::nullopt;
    }
    return std::move(*constants);
  });
  if (failure) return *failure;
  return folded;
}

std::vector<const InputNode*> inputsFeeding(const std::vector<Value>& values) {
  std::vector<const InputNode*> inputs;
  std::vector<const GraphNode*> pending;
  for (const Value& value : values) pending.push_back(value.node());
  std::unordered_set<const GraphNode*> seen;
  while (!pending.empty()) {
    const GraphNode* node = pending.back();
    pending.pop_back();
    if (!node || !seen.insert(node).second) continue;
    if (auto* input = asInput(node)) inputs.push_back(input);
    auto* op = asOperation(node);
    if (op && op->op != "Shape" && op->op != "Size")
      for (const Value& source : op->inputs) pending.push_back(source.node());
  }
  return inputs;
}

}  // namespace tessel::graph
