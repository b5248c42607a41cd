// Operator fusion: greedy grouping by op pattern and the rebuilt graph of fused operations.
#include "compiler/graph/FuseOps.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

namespace {

enum class Anchor { None, OutElemwiseFusable, CommReduce };

struct Group {
  std::vector<int> members;  ///< Operation positions, ascending; the last one computes the output.
  Anchor anchor = Anchor::None;
  TensorType anchorType;  ///< The anchor's output type: what an epilogue must preserve.
  bool extendable = true;  ///< False for opaque ops and anchors without epilogues.
};

using ValueKey = std::pair<const GraphNode*, int>;
ValueKey keyOf(const Value& v) { return {v.node(), v.index()}; }

bool sameTensor(const TensorType& a, const TensorType& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.layout == b.layout;
}

class OperatorFuser {
public:
  OperatorFuser(const Graph& graph, const FuseOptions& options)
      : graph_(graph), options_(options), ops_(graph.operations()) {}

  Expected<Graph> run() {
    for (size_t i = 0; i < ops_.size(); ++i) {
      position_[ops_[i]] = int(i);
      for (auto& type : ops_[i]->outputTypes)
        if (!type.known()) {
          Diagnostic d;
          d.message = "FuseOps needs a typed graph, but " + ops_[i]->op + " '" + ops_[i]->name +
                      "' has an output of unknown type";
          d.location = ops_[i]->name;
          d.hint = "run InferTypes first";
          return d;
        }
    }
    countUses();
    groupOf_.assign(ops_.size(), -1);
    for (size_t i = 0; i < ops_.size(); ++i) place(int(i));
    return rebuild();
  }

private:
  // Distinct consumers of each value; a graph output counts as one more consumer outside
  // every group.
  void countUses() {
    for (const OperationNode* op : ops_) {
      std::set<ValueKey> seen;
      for (auto& input : op->inputs)
        if (input.defined() && seen.insert(keyOf(input)).second) ++uses_[keyOf(input)];
    }
    for (auto& output : graph_.outputs) ++uses_[keyOf(output)];
  }

  // The position of the operation producing a value, -1 for inputs and constants.
  int positionOf(const GraphNode* node) const {
    auto* op = asOperation(node);
    auto it = op ? position_.find(op) : position_.end();
    return it == position_.end() ? -1 : it->second;
  }

  OpPattern patternOf(const OperationNode& op) const {
    if (op.outputTypes.size() != 1 || op.isFused()) return OpPattern::Opaque;
    const OpDef* def = OpRegistry::global().find(op.op);
    return def ? def->pattern : OpPattern::Opaque;
  }

  // The groups whose output `op` reads and could absorb `op`: the output has no other reader.
  std::vector<int> candidateGroups(const OperationNode& op) const {
    std::vector<int> candidates;
    for (auto& input : op.inputs) {
      if (!input.defined()) continue;
      int producer = positionOf(input.node());
      if (producer < 0) continue;
      int group = groupOf_[size_t(producer)];
      const Group& g = groups_[size_t(group)];
      if (!g.extendable || g.members.back() != producer) continue;
      if (uses_.at(keyOf(input)) != 1) continue;
      if (std::find(candidates.begin(), candidates.end(), group) == candidates.end()) candidates.push_back(group);
    }
    return candidates;
  }

  void place(int index) {
    const OperationNode& op = *ops_[size_t(index)];
    OpPattern pattern = patternOf(op);
    const TensorType& outputType = op.outputTypes[0];
    std::vector<int> candidates = candidateGroups(op);
    std::vector<int> unanchored;
    for (int g : candidates)
      if (groups_[size_t(g)].anchor == Anchor::None) unanchored.push_back(g);

    Group group;
    switch (pattern) {
      case OpPattern::Opaque:
        group.extendable = false;
        break;
      case OpPattern::OutElemwiseFusable:
        // Producers stay outside: a convolution reads its input many times over.
        group.anchor = Anchor::OutElemwiseFusable;
        group.anchorType = outputType;
        group.extendable = options_.fuseEpilogues;
        break;
      case OpPattern::CommReduce:
        group = merge(unanchored);
        group.anchor = Anchor::CommReduce;
        group.anchorType = outputType;
        break;
      case OpPattern::Injective:
        group = merge(unanchored);
        break;
      case OpPattern::ElementWise:
      case OpPattern::Broadcast: {
        // An epilogue joins one anchored group; its other operands are computed elsewhere.
        auto epilogueOf = std::find_if(candidates.begin(), candidates.end(), [&](int g) {
          const Group& candidate = groups_[size_t(g)];
          return candidate.anchor != Anchor::None && sameTensor(candidate.anchorType, outputType);
        });
        group = epilogueOf != candidates.end() ? merge({*epilogueOf}) : merge(unanchored);
        break;
      }
    }
    group.members.push_back(index);
    int id = int(groups_.size());
    for (int member : group.members) groupOf_[size_t(member)] = id;
    groups_.push_back(std::move(group));
  }

  // One group holding the members of `ids` (which are retired), anchored as the anchored one.
  Group merge(const std::vector<int>& ids) {
    Group merged;
    for (int id : ids) {
      Group& g = groups_[size_t(id)];
      merged.members.insert(merged.members.end(), g.members.begin(), g.members.end());
      if (g.anchor != Anchor::None) {
        merged.anchor = g.anchor;
        merged.anchorType = g.anchorType;
      }
      g.members.clear();
      g.extendable = false;
    }
    std::sort(merged.members.begin(), merged.members.end());
    return merged;
  }

  Value current(const Value& v) const {
    if (!v.defined()) return v;
    auto it = replaced_.find(v.node());
    return it == replaced_.end() ? v : it->second.at(size_t(v.index()));
  }

  std::string uniqueName(const std::string& base) {
    if (takenNames_.empty())
      for (const GraphNode* node : graph_.topologicalOrder()) takenNames_.insert(node->name);
    std::string name = base;
    for (int suffix = 1; takenNames_.count(name); ++suffix) name = base + "_" + std::to_string(suffix);
    takenNames_.insert(name);
    return name;
  }

  // The fused operation standing for `group` in the rebuilt graph.
  Value fuse(const Group& group) {
    std::set<int> members(group.members.begin(), group.members.end());
    std::vector<Value> externalInputs, bodyInputs;
    std::map<ValueKey, Value> inBody;  // original value -> its counterpart inside the body
    std::vector<Provenance> provenance;
    std::string op = "fused";
    Value output;
    for (int index : group.members) {
      const OperationNode& original = *ops_[size_t(index)];
      const OpDef* def = OpRegistry::global().find(original.op);
      std::vector<Value> inputs;
      for (size_t slot = 0; slot < original.inputs.size(); ++slot) {
        const Value& input = original.inputs[slot];
        if (!input.defined()) {
          inputs.push_back(input);
          continue;
        }
        auto known = inBody.find(keyOf(input));
        if (known != inBody.end()) {
          inputs.push_back(known->second);
          continue;
        }
        bool byValue = def && std::find(def->valueInputs.begin(), def->valueInputs.end(), int(slot)) !=
                                  def->valueInputs.end();
        if (byValue && asConstant(input.node())) {
          // The body's kernel needs the value itself, not a runtime tensor.
          inputs.push_back(input);
          continue;
        }
        TESSEL_ICHECK(!members.count(positionOf(input.node())))
            << "fused op " << original.name << " reads a group value before it is computed";
        Value parameter = makeInput(input.name(), input.type());
        externalInputs.push_back(current(input));
        bodyInputs.push_back(parameter);
        inBody[keyOf(input)] = parameter;
        inputs.push_back(parameter);
      }
      auto outputs = makeOperation(original.name, original.op, inputs, original.attributes, original.outputTypes,
                                   original.provenance);
      for (size_t k = 0; k < outputs.size(); ++k) inBody[{&original, int(k)}] = outputs[k];
      provenance.insert(provenance.end(), original.provenance.begin(), original.provenance.end());
      op += "_" + original.op;
      output = outputs[0];
    }
    const OperationNode& last = *ops_[size_t(group.members.back())];
    Graph body{bodyInputs, {output}, {last.name}};
    return makeFusedOperation(uniqueName(op), op, externalInputs, std::move(body), std::move(provenance))[0];
  }

  Expected<Graph> rebuild() {
    for (size_t i = 0; i < ops_.size(); ++i) {
      const OperationNode* op = ops_[i];
      const Group& group = groups_[size_t(groupOf_[i])];
      if (group.members.size() > 1) {
        if (group.members.back() == int(i)) replaced_[op] = {fuse(group)};
        continue;  // the group's other members live on only inside its body
      }
      std::vector<Value> inputs;
      bool changed = false;
      for (auto& input : op->inputs) {
        inputs.push_back(current(input));
        changed = changed || !(inputs.back() == input);
      }
      if (changed)
        replaced_[op] = op->isFused() ? makeFusedOperation(op->name, op->op, inputs, *op->body, op->provenance)
                                      : makeOperation(op->name, op->op, inputs, op->attributes, op->outputTypes,
                                                      op->provenance);
    }
    Graph out = graph_;
    for (auto& output : out.outputs) output = current(output);
    return out;
  }

  const Graph& graph_;
  const FuseOptions& options_;
  std::vector<const OperationNode*> ops_;
  std::unordered_map<const OperationNode*, int> position_;
  std::map<ValueKey, int> uses_;
  std::vector<Group> groups_;
  std::vector<int> groupOf_;
  std::unordered_map<const GraphNode*, std::vector<Value>> replaced_;
  std::unordered_set<std::string> takenNames_;
};

}  // namespace

Expected<Graph> fuseOps(const Graph& graph, const FuseOptions& options) {
  return OperatorFuser(graph, options).run();
}

}  // namespace tessel::graph
