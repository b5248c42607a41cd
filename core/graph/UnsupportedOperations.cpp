// Placeholders for unsupported ONNX nodes and the message listing them.
#include "core/graph/UnsupportedOperations.h"

#include <algorithm>

namespace tessel::graph {

namespace {

// Enough to see what a model needs at a glance; the rest is counted, not listed.
constexpr size_t kListedOperators = 8;
constexpr size_t kListedNodesPerOperator = 4;

std::string plural(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// One operator's part of the message: "Det (nodes 'a', 'b' and 3 more)".
std::string describeGroup(const OnnxOperatorName& op, const std::vector<std::string>& nodes) {
  std::string text = op.opType;
  text += op.domain.empty() ? " (" : " from domain '" + op.domain + "' (";
  text += nodes.size() == 1 ? "node " : "nodes ";
  size_t listed = std::min(nodes.size(), kListedNodesPerOperator);
  for (size_t i = 0; i < listed; ++i) text += (i ? ", '" : "'") + nodes[i] + "'";
  if (nodes.size() > listed) text += " and " + std::to_string(nodes.size() - listed) + " more";
  return text + ")";
}

}  // namespace

bool isUnsupported(const OperationNode& op) { return op.op == kUnsupportedOp; }

OnnxOperatorName unsupportedOperator(const OperationNode& placeholder) {
  std::string qualified = placeholder.provenance.empty() ? placeholder.name : placeholder.provenance.front().opType;
  // ONNX op types have no dots; domains ("com.microsoft") do.
  size_t dot = qualified.rfind('.');
  if (dot == std::string::npos) return {"", qualified};
  return {qualified.substr(0, dot), qualified.substr(dot + 1)};
}

std::vector<const OperationNode*> unsupportedOperations(const Graph& graph) {
  std::vector<const OperationNode*> placeholders;
  for (const OperationNode* op : graph.operations())
    if (isUnsupported(*op)) placeholders.push_back(op);
  return placeholders;
}

Diagnostic unsupportedOperationsError(const std::vector<const OperationNode*>& placeholders,
                                      const std::string& location) {
  std::vector<UnsupportedNode> nodes;
  for (const OperationNode* placeholder : placeholders) nodes.push_back({unsupportedOperator(*placeholder), placeholder->name});
  return unsupportedOperationsError(nodes, location);
}

Diagnostic unsupportedOperationsError(const std::vector<UnsupportedNode>& nodes, const std::string& location) {
  TESSEL_ICHECK(!nodes.empty()) << "no unsupported operations to describe";
  // Grouped by operator, in the order each was first used.
  std::vector<std::pair<OnnxOperatorName, std::vector<std::string>>> groups;
  bool otherDomains = false;
  for (const UnsupportedNode& node : nodes) {
    const OnnxOperatorName& op = node.op;
    otherDomains = otherDomains || !op.domain.empty();
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& entry) { return entry.first.qualified() == op.qualified(); });
    if (group == groups.end()) group = groups.insert(groups.end(), {op, {}});
    group->second.push_back(node.node);
  }
  std::string message = "uses " + plural(groups.size(), "unsupported operator");
  if (nodes.size() != groups.size()) message += " in " + plural(nodes.size(), "node");
  message += ": ";
  size_t listed = std::min(groups.size(), kListedOperators);
  for (size_t i = 0; i < listed; ++i) message += (i ? ", " : "") + describeGroup(groups[i].first, groups[i].second);
  if (groups.size() > listed) {
    size_t moreNodes = 0;
    for (size_t i = listed; i < groups.size(); ++i) moreNodes += groups[i].second.size();
    message += " and " + plural(groups.size() - listed, "more operator") + " in " + plural(moreNodes, "node");
  }
  Diagnostic diagnostic;
  diagnostic.message = message;
  diagnostic.location = location;
  diagnostic.hint = std::string("Tessel does not implement ") + (groups.size() == 1 ? "it" : "them") +
                    (otherDomains ? "; it implements only operators of the default ONNX domain" : "") +
                    "; `tessel ops` lists the operators it supports";
  return diagnostic;
}

}  // namespace tessel::graph
