// Canonical workload keys of graph kernels and bare operators.
#include "compiler/driver/WorkloadKey.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <unordered_map>

namespace tessel::driver {

namespace {

uint64_t fnv1a(const unsigned char* bytes, size_t count, uint64_t h = 0xcbf29ce484222325ull) {
  for (size_t i = 0; i < count; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t fnv1a(const std::string& text, uint64_t h = 0xcbf29ce484222325ull) {
  return fnv1a(reinterpret_cast<const unsigned char*>(text.data()), text.size(), h);
}

std::string hex16(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string typeText(const graph::TensorType& type) {
  std::ostringstream out;
  out << type.dtype.toString() << "[";
  for (size_t i = 0; i < type.shape.size(); ++i) out << (i ? "," : "") << type.shape[i];
  out << "]";
  if (!type.layout.empty()) out << "@" << type.layout;
  return out.str();
}

std::string attributesText(const graph::Attributes& attributes) {
  if (attributes.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : attributes) {  // a std::map: sorted by name
    if (!first) out += ",";
    first = false;
    std::string printed = graph::attributeToString(value);
    printed.erase(std::remove(printed.begin(), printed.end(), ' '), printed.end());
    out += name + "=" + printed;
  }
  return out + "}";
}

int opsetOf(const graph::OperationNode& op) {
  return op.provenance.empty() ? 0 : op.provenance.front().opset;
}

// A constant read by value: its element type and a hash of its bytes.
std::string constantText(const runtime::NDArray& data) {
  const auto* bytes = static_cast<const unsigned char*>(data.data());
  return data.dtype().toString() + "#" + hex16(fnv1a(bytes, size_t(data.byteSize())));
}

// "Op{attrs}@opset" for one primitive operation.
std::string operationText(const graph::OperationNode& op) {
  std::string out = op.op + attributesText(op.attributes);
  if (int opset = opsetOf(op)) out += "@" + std::to_string(opset);
  return out;
}

// A fused body in topological order, each operation's inputs named by position: $i for the
// body's input i, %k for operation k's first output (%k.j for its output j), c<hash> for a
// constant inside the body.
std::string bodyText(const graph::Graph& body) {
  std::unordered_map<const graph::GraphNode*, std::string> names;
  for (size_t i = 0; i < body.inputs.size(); ++i) names[body.inputs[i].node()] = "$" + std::to_string(i);
  std::ostringstream out;
  size_t index = 0;
  for (const graph::GraphNode* node : body.topologicalOrder()) {
    if (auto* constant = graph::asConstant(node)) {
      if (!names.count(node)) names[node] = "c" + constantText(constant->data);
      continue;
    }
    auto* op = graph::asOperation(node);
    if (!op) continue;
    std::string name = "%" + std::to_string(index++);
    names[node] = name;
    out << (index > 1 ? "; " : "") << name << "=" << operationText(*op) << "(";
    for (size_t i = 0; i < op->inputs.size(); ++i) {
      out << (i ? "," : "");
      const graph::Value& input = op->inputs[i];
      if (!input.defined()) continue;
      auto found = names.find(input.node());
      out << (found == names.end() ? std::string("?") : found->second);
      if (input.index() != 0) out << "." << input.index();
    }
    out << ")";
  }
  out << "; out=(";
  for (size_t i = 0; i < body.outputs.size(); ++i) {
    auto found = names.find(body.outputs[i].node());
    out << (i ? "," : "") << (found == names.end() ? std::string("?") : found->second);
    if (body.outputs[i].index() != 0) out << "." << body.outputs[i].index();
  }
  out << ")";
  return out.str();
}

}  // namespace

std::string workloadKeyHash(const std::string& text, const Target& target) {
  return hex16(fnv1a(target.toString(), fnv1a(text + "\n")));
}

WorkloadKey workloadKeyOf(const graph::OperationNode& node, const graph::OpKernel& kernel, const Target& target) {
  std::ostringstream out;
  if (node.body) out << "fused[" << bodyText(*node.body) << "]";
  else {
    out << operationText(node) << " (";
    for (size_t i = 0; i < node.inputs.size(); ++i) out << (i ? "," : "") << (node.inputs[i].defined() ? "$" + std::to_string(i) : "_");
    out << ")";
  }
  out << " in=[";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    out << (i ? "; " : "");
    if (!node.inputs[i].defined()) {
      out << "none";
      continue;
    }
    out << typeText(node.inputs[i].type());
    bool readAsData = std::find(kernel.inputIndices.begin(), kernel.inputIndices.end(), int(i)) != kernel.inputIndices.end();
    auto* constant = graph::asConstant(node.inputs[i].node());
    if (constant && !readAsData) out << "=" << constantText(constant->data);
  }
  out << "] out=[";
  for (size_t i = 0; i < node.outputTypes.size(); ++i) out << (i ? "; " : "") << typeText(node.outputTypes[i]);
  out << "]";
  WorkloadKey key;
  key.text = out.str();
  key.hash = workloadKeyHash(key.text, target);
  return key;
}

WorkloadKey operatorWorkloadKey(const Workload& workload, const Target& target) {
  std::ostringstream out;
  out << "operator " << workload.name << " in=[";
  for (size_t i = 0; i < workload.inputs.size(); ++i) {
    const te::Tensor& t = workload.inputs[i];
    out << (i ? "; " : "") << t.dtype().toString() << "[";
    for (size_t d = 0; d < t.shape().size(); ++d) out << (d ? "," : "") << *asConstInt(t.shape()[d]);
    out << "]";
  }
  out << "]";
  WorkloadKey key;
  key.text = out.str();
  key.hash = workloadKeyHash(key.text, target);
  return key;
}

}  // namespace tessel::driver
