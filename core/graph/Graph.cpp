// Graph construction, traversal, printing and hashing.
#include "core/graph/Graph.h"

#include <functional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/support/Error.h"

namespace tessel::graph {

int64_t TensorType::elementCount() const {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

std::string TensorType::toString() const {
  if (!known()) return "?";
  std::string out = dtype.toString() + "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  out += "]";
  if (!layout.empty()) out += "@" + layout;
  return out;
}

namespace {
template <class T>
std::string listToString(const std::vector<T>& items, const std::function<std::string(const T&)>& one) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + one(items[i]);
  return out + "]";
}
std::string doubleToString(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::string attributeToString(const Attribute& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return doubleToString(v);
        else if constexpr (std::is_same_v<T, std::string>) return "\"" + v + "\"";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return listToString<int64_t>(v, [](const int64_t& x) { return std::to_string(x); });
        else if constexpr (std::is_same_v<T, std::vector<double>>)
          return listToString<double>(v, [](const double& x) { return doubleToString(x); });
        else
          return listToString<std::string>(v, [](const std::string& x) { return "\"" + x + "\""; });
      },
      value);
}

const TensorType& Value::type() const {
  TESSEL_ICHECK(defined() && index_ >= 0 && index_ < int(node_->outputTypes.size()))
      << "value " << index_ << " of a node with " << (defined() ? node_->outputTypes.size() : 0) << " outputs";
  return node_->outputTypes[index_];
}

std::string Value::name() const {
  if (!defined()) return "<undefined>";
  return index_ == 0 ? node_->name : node_->name + ":" + std::to_string(index_);
}

Value makeInput(std::string name, TensorType type) {
  return Value(Ref<GraphNode>(new InputNode(std::move(name), std::move(type))), 0);
}

Value makeConstant(std::string name, runtime::NDArray data, std::string layout) {
  TESSEL_ICHECK(data.defined()) << "constant " << name << " without data";
  auto dtype = DataType::parse(data.dtype().toString());
  TESSEL_ICHECK(dtype.has_value()) << "constant " << name << " of unknown type " << data.dtype().toString();
  TensorType type{*dtype, data.shape(), std::move(layout)};
  return Value(Ref<GraphNode>(new ConstantNode(std::move(name), std::move(type), std::move(data))), 0);
}

std::vector<Value> makeOperation(std::string name, std::string op, std::vector<Value> inputs, Attributes attributes,
                                 std::vector<TensorType> outputTypes, std::vector<Provenance> provenance) {
  TESSEL_ICHECK(!outputTypes.empty()) << "operation " << name << " without outputs";
  size_t count = outputTypes.size();
  Ref<GraphNode> node(new OperationNode(std::move(name), std::move(op), std::move(inputs), std::move(attributes),
                                        std::move(outputTypes), std::move(provenance)));
  std::vector<Value> outputs;
  for (size_t i = 0; i < count; ++i) outputs.emplace_back(node, int(i));
  return outputs;
}

std::vector<Value> makeFusedOperation(std::string name, std::string op, std::vector<Value> inputs, Graph body,
                                      std::vector<Provenance> provenance) {
  TESSEL_ICHECK(inputs.size() == body.inputs.size()) << "fused operation " << name << " with mismatched inputs";
  std::vector<TensorType> outputTypes;
  for (auto& output : body.outputs) outputTypes.push_back(output.type());
  TESSEL_ICHECK(!outputTypes.empty()) << "fused operation " << name << " without outputs";
  size_t count = outputTypes.size();
  Ref<GraphNode> node(new OperationNode(std::move(name), std::move(op), std::move(inputs), {}, std::move(outputTypes),
                                        std::move(provenance), std::make_shared<const Graph>(std::move(body))));
  std::vector<Value> outputs;
  for (size_t i = 0; i < count; ++i) outputs.emplace_back(node, int(i));
  return outputs;
}

std::vector<const GraphNode*> Graph::topologicalOrder() const {
  std::vector<const GraphNode*> order;
  std::unordered_set<const GraphNode*> done;
  // Iterative depth-first search: models have long chains that would overflow recursion.
  for (auto& input : inputs)
    if (done.insert(input.node()).second) order.push_back(input.node());
  std::vector<std::pair<const GraphNode*, size_t>> stack;
  for (auto& output : outputs) {
    if (done.count(output.node())) continue;
    stack.push_back({output.node(), 0});
    std::unordered_set<const GraphNode*> onStack{output.node()};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const OperationNode* op = asOperation(node);
      if (op && next < op->inputs.size()) {
        const GraphNode* input = op->inputs[next++].node();
        if (input && !done.count(input) && onStack.insert(input).second) stack.push_back({input, 0});
        continue;
      }
      done.insert(node);
      onStack.erase(node);
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<const OperationNode*> Graph::operations() const {
  std::vector<const OperationNode*> ops;
  for (const GraphNode* node : topologicalOrder())
    if (auto* op = asOperation(node)) ops.push_back(op);
  return ops;
}

namespace {
// Gives every node a unique printed name: the first holder keeps its name, later ones get
// a numeric suffix (ONNX names are unique per model, rewritten graphs may repeat them).
class NameTable {
public:
  std::string of(const GraphNode* node) {
    auto it = names_.find(node);
    if (it != names_.end()) return it->second;
    std::string base = node->name.empty() ? "t" : node->name;
    std::string chosen = base;
    for (int suffix = 1; taken_.count(chosen); ++suffix) chosen = base + "_" + std::to_string(suffix);
    taken_.insert(chosen);
    return names_[node] = chosen;
  }
  std::string value(const Value& v) {
    if (!v.defined()) return "none";
    std::string sigil = asConstant(v.node()) ? "@" : "%";
    std::string name = sigil + of(v.node());
    return v.index() == 0 ? name : name + ":" + std::to_string(v.index());
  }

private:
  std::unordered_map<const GraphNode*, std::string> names_;
  std::unordered_set<std::string> taken_;
};
}  // namespace

std::string printGraph(const Graph& graph) {
  NameTable names;
  std::ostringstream out;
  auto order = graph.topologicalOrder();
  out << "graph(";
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    out << (i ? ", " : "") << names.value(graph.inputs[i]) << ": " << graph.inputs[i].type().toString();
  out << ") {\n";
  for (const GraphNode* node : order)
    if (auto* constant = asConstant(node))
      out << "  const " << names.value(Value(Ref<GraphNode>(node), 0)) << ": " << constant->outputTypes[0].toString()
          << "\n";
  for (const GraphNode* node : order) {
    auto* op = asOperation(node);
    if (!op) continue;
    Ref<GraphNode> ref(node);
    out << "  ";
    for (size_t i = 0; i < op->outputTypes.size(); ++i) out << (i ? ", " : "") << names.value(Value(ref, int(i)));
    out << " = " << op->op << "(";
    for (size_t i = 0; i < op->inputs.size(); ++i) out << (i ? ", " : "") << names.value(op->inputs[i]);
    out << ")";
    if (!op->attributes.empty()) {
      out << " {";
      bool first = true;
      for (auto& [key, value] : op->attributes) {
        out << (first ? "" : ", ") << key << "=" << attributeToString(value);
        first = false;
      }
      out << "}";
    }
    out << " : ";
    if (op->outputTypes.size() > 1) out << "(";
    for (size_t i = 0; i < op->outputTypes.size(); ++i) out << (i ? ", " : "") << op->outputTypes[i].toString();
    if (op->outputTypes.size() > 1) out << ")";
    if (!op->provenance.empty()) {
      out << "  # ";
      for (size_t i = 0; i < op->provenance.size(); ++i) out << (i ? ", " : "") << op->provenance[i].nodeName;
    }
    out << "\n";
    if (op->body) {
      // The fused primitives, indented under the fused node.
      std::istringstream body(printGraph(*op->body));
      for (std::string line; std::getline(body, line);) out << "    " << line << "\n";
    }
  }
  out << "  return ";
  for (size_t i = 0; i < graph.outputs.size(); ++i) out << (i ? ", " : "") << names.value(graph.outputs[i]);
  out << "\n}\n";
  return out.str();
}

namespace {
uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}
uint64_t hashString(const std::string& s) { return std::hash<std::string>()(s); }
uint64_t hashType(const TensorType& t) {
  uint64_t h = hashString(t.dtype.toString() + "@" + t.layout);
  for (int64_t d : t.shape) h = mix(h, uint64_t(d));
  return h;
}
}  // namespace

uint64_t structuralHash(const Graph& graph) {
  std::unordered_map<const GraphNode*, uint64_t> position;
  uint64_t h = 0xcbf29ce484222325ull;
  for (const GraphNode* node : graph.topologicalOrder()) {
    position[node] = position.size();
    h = mix(h, uint64_t(node->graphKind));
    for (auto& type : node->outputTypes) h = mix(h, hashType(type));
    if (auto* op = asOperation(node)) {
      h = mix(h, hashString(op->op));
      for (auto& input : op->inputs)
        h = input.defined() ? mix(mix(h, position.at(input.node())), uint64_t(input.index())) : mix(h, ~0ull);
      if (op->body) h = mix(h, structuralHash(*op->body));
      for (auto& [key, value] : op->attributes) h = mix(mix(h, hashString(key)), hashString(attributeToString(value)));
    }
  }
  for (auto& input : graph.inputs) h = mix(h, position.at(input.node()));
  for (auto& output : graph.outputs) h = mix(mix(h, position.at(output.node())), uint64_t(output.index()));
  return h;
}

}  // namespace tessel::graph
