// Inlining of compute_inline stages and the consumer graph lowering walks.
#include "compiler/schedule/ScheduleView.h"

#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {
struct InlinedBody {
  std::vector<Var> axes;
  Expr body;
};

// Replaces reads of inlined stages by their bodies at the read's indices.
class Inliner : public IRMutator {
public:
  explicit Inliner(const std::unordered_map<const Node*, InlinedBody>& inlined) : inlined_(inlined) {}
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Expr visit(const BufferLoadNode* node, const Expr& self) override {
    Expr e = IRMutator::visit(node, self);
    auto* load = e.as<BufferLoadNode>();
    auto it = inlined_.find(load->buffer.get());
    if (it == inlined_.end()) return e;
    VarMap map;
    for (size_t d = 0; d < it->second.axes.size(); ++d) map[it->second.axes[d].get()] = load->indices[d];
    return substitute(it->second.body, map);
  }

private:
  const std::unordered_map<const Node*, InlinedBody>& inlined_;
};

Expr inlineInto(const Expr& body, const std::unordered_map<const Node*, InlinedBody>& inlined) {
  if (inlined.empty()) return body;
  Inliner inliner(inlined);
  if (auto* reduce = body.as<ReduceNode>())
    return ReduceNode::make(reduce->reducer, inliner.mutate(reduce->source), reduce->axes,
                            inliner.mutate(reduce->condition));
  return inliner.mutate(body);
}
}  // namespace

ScheduleView::ScheduleView(const Schedule& schedule) : schedule_(schedule) {
  std::unordered_map<const Node*, InlinedBody> inlined;
  for (auto& stage : schedule.stages()) {
    auto* compute = te::asCompute(stage.op);
    if (!compute) continue;
    Expr body = inlineInto(compute->body, inlined);
    if (stage.attach == AttachKind::Inline) {
      InlinedBody entry;
      for (auto& axis : compute->axes) entry.axes.push_back(axis.var());
      entry.body = body;
      inlined[stage.buffer().get()] = entry;
      continue;
    }
    stages_.push_back({&stage, compute, body});
  }
}

const LoweredStage* ScheduleView::find(const std::string& name) const {
  for (auto& s : stages_)
    if (s.stage->name == name) return &s;
  return nullptr;
}

const LoweredStage* ScheduleView::findByBuffer(const Buffer& buffer) const {
  for (auto& s : stages_)
    if (s.stage->buffer().same(buffer)) return &s;
  return nullptr;
}

std::vector<const LoweredStage*> ScheduleView::consumersOf(const LoweredStage& producer) const {
  std::vector<const LoweredStage*> consumers;
  for (auto& s : stages_)
    if (!loadsOf(s.body, producer.stage->buffer()).empty()) consumers.push_back(&s);
  return consumers;
}

std::vector<const Stage*> ScheduleView::inputs() const {
  std::vector<const Stage*> out;
  for (auto& stage : schedule_.stages())
    if (te::asPlaceholder(stage.op)) out.push_back(&stage);
  return out;
}

std::vector<const BufferLoadNode*> loadsOf(const Expr& e, const Buffer& buffer) {
  std::vector<const BufferLoadNode*> loads;
  postOrderVisit(e, [&](const Expr& sub) {
    if (auto* load = sub.as<BufferLoadNode>(); load && load->buffer.same(buffer)) loads.push_back(load);
  });
  return loads;
}

}  // namespace tessel
