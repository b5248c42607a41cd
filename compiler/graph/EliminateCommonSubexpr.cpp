// Common subexpression elimination over the graph IR.
#include "compiler/graph/EliminateCommonSubexpr.h"

#include <cstring>
#include <map>
#include <string>

#include "compiler/graph/GraphRewriter.h"

namespace tessel::graph {

namespace {
std::string valueKey(const Value& v) {
  return std::to_string(reinterpret_cast<uintptr_t>(v.node())) + ":" + std::to_string(v.index());
}

// Constants with equal bytes become one; their key is type plus content.
std::string constantKey(const ConstantNode& c) {
  const runtime::NDArray& data = c.data;
  std::string key = c.outputTypes[0].toString() + "|";
  key.append(static_cast<const char*>(data.data()), data.byteSize());
  return key;
}
}  // namespace

Graph eliminateCommonSubexpr(const Graph& graph) {
  std::map<std::string, Value> constants;
  std::map<std::string, std::vector<Value>> operations;
  std::map<std::string, std::vector<Provenance>> mergedProvenance;
  auto canonical = [&](const Value& v) {
    auto* c = asConstant(v.node());
    if (!c) return v;
    return constants.emplace(constantKey(*c), v).first->second;
  };
  return rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& inputs)
                                 -> std::optional<std::vector<Value>> {
    std::vector<Value> canonicalInputs;
    bool changed = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      canonicalInputs.push_back(canonical(inputs[i]));
      changed = changed || !(canonicalInputs.back() == op.inputs[i]);
    }
    std::string key = op.op + "(";
    for (auto& input : canonicalInputs) key += valueKey(input) + ",";
    key += "){";
    for (auto& [name, value] : op.attributes) key += name + "=" + attributeToString(value) + ";";
    key += "}:";
    for (auto& type : op.outputTypes) key += type.toString() + ";";
    auto seen = operations.find(key);
    if (seen != operations.end()) return seen->second;
    std::vector<Value> outputs;
    if (changed) {
      outputs = makeOperation(op.name, op.op, canonicalInputs, op.attributes, op.outputTypes, op.provenance);
    } else {
      Ref<GraphNode> self(&op);
      for (size_t i = 0; i < op.outputTypes.size(); ++i) outputs.emplace_back(self, int(i));
    }
    operations.emplace(key, outputs);
    return outputs;
  });
}

}  // namespace tessel::graph
