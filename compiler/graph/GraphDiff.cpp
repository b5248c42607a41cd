// GraphDiff: matches the nodes of two graphs and classifies what happened to each.
#include "compiler/graph/GraphDiff.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "core/support/Error.h"

namespace tessel::graph {

const char* nodeChangeName(NodeChange change) {
  switch (change) {
    case NodeChange::Unchanged: return "unchanged";
    case NodeChange::Added: return "added";
    case NodeChange::Removed: return "removed";
    case NodeChange::Fused: return "fused";
    case NodeChange::Relaid: return "relaid";
    case NodeChange::Modified: return "modified";
  }
  return "?";
}

const NodeDiff* GraphDiff::forBefore(const GraphNode* node) const {
  auto it = beforeIndex.find(node);
  return it == beforeIndex.end() ? nullptr : &entries[it->second];
}

const NodeDiff* GraphDiff::forAfter(const GraphNode* node) const {
  auto it = afterIndex.find(node);
  return it == afterIndex.end() ? nullptr : &entries[it->second];
}

namespace {
bool isOperationEntry(const NodeDiff& entry) {
  return asOperation(entry.after ? entry.after : entry.before) != nullptr;
}
}  // namespace

int GraphDiff::count(NodeChange change, bool operationsOnly) const {
  return int(std::count_if(entries.begin(), entries.end(), [&](const NodeDiff& entry) {
    return entry.change == change && (!operationsOnly || isOperationEntry(entry));
  }));
}

int GraphDiff::absorbedCount() const {
  int absorbed = 0;
  for (auto& entry : entries) absorbed += int(entry.absorbed.size());
  return absorbed;
}

std::string GraphDiff::summary() const {
  std::vector<std::string> parts;
  int64_t delta = int64_t(after.operationCount()) - int64_t(before.operationCount());
  if (delta != 0)
    parts.push_back((delta > 0 ? "+" : "") + std::to_string(delta) + (delta == 1 || delta == -1 ? " node" : " nodes"));
  for (NodeChange change : {NodeChange::Fused, NodeChange::Relaid, NodeChange::Modified, NodeChange::Added,
                            NodeChange::Removed}) {
    int n = count(change, true);
    if (n > 0) parts.push_back(std::to_string(n) + " " + nodeChangeName(change));
  }
  if (parts.empty()) {
    // Constants may still differ (a weight refolded); say so rather than "no change".
    for (auto& entry : entries)
      if (entry.change != NodeChange::Unchanged) return "constants changed";
    return "no change";
  }
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return text;
}

namespace {

std::string sigil(const GraphNode* node) { return (asConstant(node) ? "@" : "%") + node->name; }

std::string layoutName(const std::string& layout) { return layout.empty() ? "plain" : layout; }

std::set<std::string> provenanceNames(const OperationNode* op) {
  std::set<std::string> names;
  for (auto& p : op->provenance)
    if (!p.nodeName.empty()) names.insert(p.nodeName);
  return names;
}

bool sameConstantData(const ConstantNode* a, const ConstantNode* b) {
  if (a->data.data() == b->data.data()) return true;
  if (!a->data.defined() || !b->data.defined()) return false;
  if (a->data.dtype() != b->data.dtype() || a->data.shape() != b->data.shape()) return false;
  return std::memcmp(a->data.data(), b->data.data(), a->data.byteSize()) == 0;
}

class GraphDiffer {
public:
  GraphDiffer(const Graph& before, const Graph& after) {
    diff_.before = before;
    diff_.after = after;
    beforeOrder_ = diff_.before.topologicalOrder();
    afterOrder_ = diff_.after.topologicalOrder();
    for (const GraphNode* node : beforeOrder_) {
      beforePosition_.emplace(node, beforePosition_.size());
      if (auto* op = asOperation(node)) {
        provenance_[node] = provenanceNames(op);
        for (auto& name : provenance_[node]) byProvenance_[name].push_back(node);
      }
    }
  }

  GraphDiff run() {
    matchByName();
    matchFusedByProvenance();
    absorbIntoFusedNodes();
    matchOperationsByProvenance();
    pairConstantsThroughInputSlots();
    buildEntries();
    return std::move(diff_);
  }

private:
  const std::set<std::string>& provenanceOf(const GraphNode* before) const { return provenance_.at(before); }

  // The before graph's operations naming any of `names` in their provenance, in topological
  // order (an index, so large graphs do not compare every pair of nodes).
  std::vector<const GraphNode*> beforeOperationsSharingProvenance(const std::set<std::string>& names) const {
    std::vector<const GraphNode*> found;
    for (auto& name : names)
      if (auto it = byProvenance_.find(name); it != byProvenance_.end())
        found.insert(found.end(), it->second.begin(), it->second.end());
    std::sort(found.begin(), found.end(), [&](const GraphNode* a, const GraphNode* b) {
      return beforePosition_.at(a) < beforePosition_.at(b);
    });
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
  }

  bool matched(const GraphNode* before) const { return partner_.count(before) || absorbedBy_.count(before); }
  bool afterMatched(const GraphNode* after) const { return reverse_.count(after) || absorbed_.count(after); }

  void pair(const GraphNode* before, const GraphNode* after) {
    partner_[before] = after;
    reverse_[after] = before;
  }

  void matchByName() {
    // Names are unique in an imported graph, but rewritten graphs may repeat one; the first
    // unmatched node of the same kind wins, in topological order.
    std::unordered_map<std::string, std::vector<const GraphNode*>> afterByName;
    for (const GraphNode* node : afterOrder_) afterByName[node->name].push_back(node);
    for (const GraphNode* node : beforeOrder_) {
      auto it = afterByName.find(node->name);
      if (it == afterByName.end()) continue;
      for (const GraphNode* candidate : it->second) {
        if (candidate->graphKind != node->graphKind || afterMatched(candidate)) continue;
        // A fused node and a primitive of the same name are different things.
        if (auto* op = asOperation(node); op && op->isFused() != asOperation(candidate)->isFused()) continue;
        pair(node, candidate);
        break;
      }
    }
  }

  // A fused node renamed by a later fusion (its uniquing suffix moved) still stands for the
  // same ONNX nodes.
  void matchFusedByProvenance() {
    for (const GraphNode* node : afterOrder_) {
      auto* fused = asOperation(node);
      if (!fused || !fused->isFused() || afterMatched(node)) continue;
      auto names = provenanceNames(fused);
      for (const GraphNode* candidate : beforeOperationsSharingProvenance(names)) {
        auto* op = asOperation(candidate);
        if (op->isFused() && !matched(candidate) && provenanceOf(candidate) == names) {
          pair(candidate, node);
          break;
        }
      }
    }
  }

  void absorbIntoFusedNodes() {
    std::unordered_map<std::string, const GraphNode*> unmatchedBeforeByName;
    for (const GraphNode* node : beforeOrder_)
      if (asOperation(node) && !matched(node)) unmatchedBeforeByName.emplace(node->name, node);
    for (const GraphNode* node : afterOrder_) {
      auto* fused = asOperation(node);
      if (!fused || !fused->isFused() || afterMatched(node)) continue;
      // The body keeps its primitives' names; provenance covers primitives a pass renamed.
      std::vector<const GraphNode*> absorbed;
      for (const OperationNode* primitive : fused->body->operations()) {
        auto it = unmatchedBeforeByName.find(primitive->name);
        if (it == unmatchedBeforeByName.end() || matched(it->second)) continue;
        absorbed.push_back(it->second);
        absorbedBy_[it->second] = node;
        bodyPartner_[it->second] = primitive;
      }
      auto names = provenanceNames(fused);
      for (const GraphNode* candidate : beforeOperationsSharingProvenance(names)) {
        if (matched(candidate)) continue;
        const auto& own = provenanceOf(candidate);
        if (own.empty() || !std::includes(names.begin(), names.end(), own.begin(), own.end())) continue;
        absorbed.push_back(candidate);
        absorbedBy_[candidate] = node;
      }
      if (absorbed.empty()) continue;
      std::sort(absorbed.begin(), absorbed.end(), [&](const GraphNode* a, const GraphNode* b) {
        return beforePosition_.at(a) < beforePosition_.at(b);
      });
      absorbed_[node] = std::move(absorbed);
    }
  }

  // A primitive a pass renamed (or split, keeping the ONNX node in its provenance) pairs
  // with the before node standing for the same ONNX nodes, one to one, the same op first.
  void matchOperationsByProvenance() {
    for (bool sameOpOnly : {true, false}) {
      for (const GraphNode* node : afterOrder_) {
        auto* op = asOperation(node);
        if (!op || op->isFused() || afterMatched(node)) continue;
        auto names = provenanceNames(op);
        if (names.empty()) continue;
        for (const GraphNode* candidate : beforeOperationsSharingProvenance(names)) {
          auto* other = asOperation(candidate);
          if (other->isFused() || matched(candidate)) continue;
          if (sameOpOnly && other->op != op->op) continue;
          if (provenanceOf(candidate) != names) continue;
          pair(candidate, node);
          break;
        }
      }
    }
  }

  // The values an after operation reads in the slots of `before`'s inputs: its own inputs, or
  // for a before node absorbed by a fused node, its body primitive's inputs seen from outside
  // the fused node (body inputs line up with the fused node's inputs).
  std::vector<Value> outerInputsOf(const GraphNode* before) const {
    if (auto it = partner_.find(before); it != partner_.end()) {
      auto* op = asOperation(it->second);
      return op ? op->inputs : std::vector<Value>{};
    }
    auto fusedIt = absorbedBy_.find(before);
    auto primitiveIt = bodyPartner_.find(before);
    if (fusedIt == absorbedBy_.end() || primitiveIt == bodyPartner_.end()) return {};
    auto* fused = asOperation(fusedIt->second);
    const Graph& body = *fused->body;
    std::vector<Value> outer;
    for (const Value& input : primitiveIt->second->inputs) {
      auto slot = std::find(body.inputs.begin(), body.inputs.end(), input);
      size_t k = size_t(slot - body.inputs.begin());
      outer.push_back(slot != body.inputs.end() && k < fused->inputs.size() ? fused->inputs[k] : Value());
    }
    return outer;
  }

  void pairConstantsThroughInputSlots() {
    for (const GraphNode* node : beforeOrder_) {
      auto* op = asOperation(node);
      if (!op) continue;
      auto afterInputs = outerInputsOf(node);
      for (size_t i = 0; i < op->inputs.size() && i < afterInputs.size(); ++i) {
        const GraphNode* was = op->inputs[i].node();
        const GraphNode* now = afterInputs[i].node();
        if (asConstant(was) && asConstant(now) && !matched(was) && !afterMatched(now)) pair(was, now);
      }
    }
  }

  // The after value standing for a before value, looking through inserted LayoutTransforms.
  static const GraphNode* throughLayoutTransforms(const GraphNode* node) {
    for (auto* op = asOperation(node); op && op->op == "LayoutTransform" && !op->inputs.empty();
         op = asOperation(node))
      node = op->inputs[0].node();
    return node;
  }

  bool sameSource(const Value& before, const Value& after) const {
    if (!before.defined() || !after.defined()) return before.defined() == after.defined();
    if (before.index() != after.index()) return false;
    const GraphNode* now = throughLayoutTransforms(after.node());
    auto it = partner_.find(before.node());
    if (it != partner_.end() && it->second == now) return true;
    // An equal constant under another name (EliminateCommonSubexpr merged duplicates) is the
    // same input.
    auto* was = asConstant(before.node());
    auto* constant = asConstant(now);
    if (was && constant) return was->outputTypes == constant->outputTypes && sameConstantData(was, constant);
    if (it != partner_.end()) return false;
    auto fused = absorbedBy_.find(before.node());
    return fused != absorbedBy_.end() && fused->second == now;
  }

  static std::vector<std::string> layoutAttributes(const OperationNode* op) {
    std::vector<std::string> keys;
    for (auto& [key, value] : op->attributes)
      if (key.find("layout") != std::string::npos) keys.push_back(key);
    return keys;
  }

  // What changed in layout between a matched pair of operations, one phrase per change.
  static std::vector<std::string> layoutChanges(const OperationNode* was, const OperationNode* now) {
    std::vector<std::string> changes;
    for (size_t i = 0; i < now->outputTypes.size() && i < was->outputTypes.size(); ++i)
      if (now->outputTypes[i].layout != was->outputTypes[i].layout)
        changes.push_back((now->outputTypes.size() > 1 ? "output " + std::to_string(i) + " layout " : "output layout ") +
                          layoutName(now->outputTypes[i].layout));
    for (size_t i = 0; i < now->inputs.size() && i < was->inputs.size(); ++i) {
      if (!now->inputs[i].defined() || !was->inputs[i].defined()) continue;
      if (now->inputs[i].type().layout != was->inputs[i].type().layout)
        changes.push_back("input " + std::to_string(i) + " layout " + layoutName(now->inputs[i].type().layout));
    }
    std::set<std::string> keys;
    for (auto& key : layoutAttributes(was)) keys.insert(key);
    for (auto& key : layoutAttributes(now)) keys.insert(key);
    for (auto& key : keys) {
      auto a = was->attributes.find(key), b = now->attributes.find(key);
      std::string old = a == was->attributes.end() ? "" : attributeToString(a->second);
      std::string fresh = b == now->attributes.end() ? "" : attributeToString(b->second);
      if (old != fresh) changes.push_back(key + " " + (fresh.empty() ? "removed" : fresh));
    }
    return changes;
  }

  // Everything else that changed between a matched pair of operations.
  std::vector<std::string> otherChanges(const OperationNode* was, const OperationNode* now) const {
    std::vector<std::string> changes;
    std::set<std::string> keys;
    for (auto& [key, value] : was->attributes) keys.insert(key);
    for (auto& [key, value] : now->attributes) keys.insert(key);
    for (auto& key : keys) {
      if (key.find("layout") != std::string::npos) continue;
      auto a = was->attributes.find(key), b = now->attributes.find(key);
      if (a == was->attributes.end()) changes.push_back("attribute " + key + " added");
      else if (b == now->attributes.end()) changes.push_back("attribute " + key + " removed");
      else if (attributeToString(a->second) != attributeToString(b->second))
        changes.push_back("attribute " + key + " " + attributeToString(a->second) + " -> " +
                          attributeToString(b->second));
    }
    if (was->inputs.size() != now->inputs.size()) {
      changes.push_back(std::to_string(was->inputs.size()) + " -> " + std::to_string(now->inputs.size()) + " inputs");
    } else {
      for (size_t i = 0; i < now->inputs.size(); ++i) {
        if (!sameSource(was->inputs[i], now->inputs[i])) {
          changes.push_back("input " + std::to_string(i) + " now " +
                            (now->inputs[i].defined() ? sigil(now->inputs[i].node()) : std::string("none")));
          continue;
        }
        // A weight paired through this slot whose values changed (folded into).
        auto* a = asConstant(was->inputs[i].node());
        auto* b = asConstant(now->inputs[i].node());
        if (a && b && a->outputTypes == b->outputTypes && !sameConstantData(a, b))
          changes.push_back("input " + std::to_string(i) + " values changed");
      }
    }
    for (size_t i = 0; i < now->outputTypes.size() && i < was->outputTypes.size(); ++i) {
      TensorType a = was->outputTypes[i], b = now->outputTypes[i];
      a.layout = b.layout = "";
      if (a != b) changes.push_back("type " + a.toString() + " -> " + b.toString());
    }
    if (was->outputTypes.size() != now->outputTypes.size())
      changes.push_back(std::to_string(was->outputTypes.size()) + " -> " + std::to_string(now->outputTypes.size()) +
                        " outputs");
    if (was->isFused() && now->isFused() && structuralHash(*was->body) != structuralHash(*now->body))
      changes.push_back("body changed");
    return changes;
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string text;
    for (size_t i = 0; i < parts.size(); ++i) text += (i ? "; " : "") + parts[i];
    return text;
  }

  NodeDiff classifyPair(const GraphNode* was, const GraphNode* now) const {
    NodeDiff entry;
    entry.before = was;
    entry.after = now;
    if (was == now) return entry;
    auto* a = asOperation(was);
    auto* b = asOperation(now);
    if (a && b) {
      auto layout = layoutChanges(a, b);
      auto other = otherChanges(a, b);
      if (a->op != b->op) other.insert(other.begin(), "op " + a->op + " -> " + b->op);
      if (!layout.empty()) {
        entry.change = NodeChange::Relaid;
        if (a->op != b->op) layout.insert(layout.begin(), "op " + a->op + " -> " + b->op);
        entry.detail = join(layout);
      } else if (!other.empty()) {
        entry.change = NodeChange::Modified;
        entry.detail = join(other);
      }
      if (entry.change != NodeChange::Unchanged && was->name != now->name)
        entry.detail = "was " + sigil(was) + "; " + entry.detail;
      return entry;
    }
    // Graph inputs and constants: their type, and a constant's values.
    const TensorType& typeA = was->outputTypes.at(0);
    const TensorType& typeB = now->outputTypes.at(0);
    if (typeA.layout != typeB.layout) {
      entry.change = NodeChange::Relaid;
      entry.detail = "layout " + layoutName(typeB.layout);
    } else if (typeA != typeB) {
      entry.change = NodeChange::Modified;
      entry.detail = "type " + typeA.toString() + " -> " + typeB.toString();
    } else if (auto *ca = asConstant(was), *cb = asConstant(now); ca && cb && !sameConstantData(ca, cb)) {
      entry.change = NodeChange::Modified;
      entry.detail = "values changed";
    }
    if (entry.change != NodeChange::Unchanged && was->name != now->name)
      entry.detail = "was " + sigil(was) + "; " + entry.detail;
    return entry;
  }

  void buildEntries() {
    for (const GraphNode* node : afterOrder_) {
      NodeDiff entry;
      if (auto it = reverse_.find(node); it != reverse_.end()) {
        entry = classifyPair(it->second, node);
      } else if (auto fused = absorbed_.find(node); fused != absorbed_.end()) {
        entry.change = NodeChange::Fused;
        entry.after = node;
        entry.absorbed = fused->second;
        std::vector<std::string> names;
        for (const GraphNode* n : entry.absorbed) names.push_back(sigil(n));
        entry.detail = "absorbed " + join(names);
      } else {
        entry.after = node;
        auto* op = asOperation(node);
        entry.change = op && op->op == "LayoutTransform" ? NodeChange::Relaid : NodeChange::Added;
        if (op && op->op == "LayoutTransform") {
          entry.detail = "layout " + layoutName(op->inputs.empty() ? "" : op->inputs[0].type().layout) + " -> " +
                         layoutName(op->outputTypes.at(0).layout);
        } else if (op && !op->provenance.empty()) {
          auto names = provenanceNames(op);
          entry.detail = "from " + join(std::vector<std::string>(names.begin(), names.end()));
        }
      }
      diff_.afterIndex[node] = diff_.entries.size();
      if (entry.before) diff_.beforeIndex[entry.before] = diff_.entries.size();
      for (const GraphNode* n : entry.absorbed) diff_.beforeIndex[n] = diff_.entries.size();
      diff_.entries.push_back(std::move(entry));
    }
    for (const GraphNode* node : beforeOrder_) {
      if (diff_.beforeIndex.count(node)) continue;
      TESSEL_ICHECK(!partner_.count(node)) << "matched node " << node->name << " has no entry";
      NodeDiff entry;
      entry.change = NodeChange::Removed;
      entry.before = node;
      diff_.beforeIndex[node] = diff_.entries.size();
      diff_.entries.push_back(std::move(entry));
    }
  }

  GraphDiff diff_;
  std::vector<const GraphNode*> beforeOrder_, afterOrder_;
  std::unordered_map<const GraphNode*, size_t> beforePosition_;
  std::unordered_map<const GraphNode*, std::set<std::string>> provenance_;  // before operations
  std::unordered_map<std::string, std::vector<const GraphNode*>> byProvenance_;
  std::unordered_map<const GraphNode*, const GraphNode*> partner_;  // before -> after
  std::unordered_map<const GraphNode*, const GraphNode*> reverse_;  // after -> before
  std::unordered_map<const GraphNode*, const GraphNode*> absorbedBy_;  // before -> fused after node
  std::unordered_map<const GraphNode*, const OperationNode*> bodyPartner_;  // before -> body primitive
  std::unordered_map<const GraphNode*, std::vector<const GraphNode*>> absorbed_;  // fused after node -> before
};

}  // namespace

GraphDiff diffGraphs(const Graph& before, const Graph& after) { return GraphDiffer(before, after).run(); }

std::string printGraphDiff(const GraphDiff& diff) {
  std::ostringstream out;
  for (const NodeDiff& entry : diff.entries) {
    std::string name = nodeChangeName(entry.change);
    out << name << std::string(10 - name.size(), ' ');
    const GraphNode* node = entry.after ? entry.after : entry.before;
    out << sigil(node);
    if (entry.change == NodeChange::Fused) {
      out << " <-";
      for (size_t i = 0; i < entry.absorbed.size(); ++i) out << (i ? ", " : " ") << sigil(entry.absorbed[i]);
    } else if (!entry.detail.empty()) {
      out << "  (" << entry.detail << ")";
    }
    out << "\n";
  }
  out << "counts:";
  for (int kind = 0; kind < kNodeChangeCount; ++kind)
    out << (kind ? ", " : " ") << diff.count(NodeChange(kind)) << " " << nodeChangeName(NodeChange(kind));
  out << "\n";
  return out.str();
}

}  // namespace tessel::graph
