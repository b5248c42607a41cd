// Applying schedule primitives to stages, with a diagnostic for every illegal request. The
// primitives that put a new stage into the schedule (cache_read, cache_write, rfactor) are in
// StageRewrites.cpp.
#include "compiler/schedule/Schedule.h"

#include "compiler/schedule/ScheduleSupport.h"
#include "compiler/schedule/TensorIntrinsic.h"

#include <algorithm>
#include <set>

#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"

namespace tessel {

const char* primitiveName(PrimitiveKind kind) {
  switch (kind) {
#define TESSEL_PRIMITIVE_NAME(Name, text) \
  case PrimitiveKind::Name: return text;
    TESSEL_SCHEDULE_PRIMITIVES(TESSEL_PRIMITIVE_NAME)
#undef TESSEL_PRIMITIVE_NAME
  }
  return "?";
}

std::optional<PrimitiveKind> parsePrimitiveName(const std::string& name) {
#define TESSEL_PRIMITIVE_PARSE(Name, text) \
  if (name == text) return PrimitiveKind::Name;
  TESSEL_SCHEDULE_PRIMITIVES(TESSEL_PRIMITIVE_PARSE)
#undef TESSEL_PRIMITIVE_PARSE
  return std::nullopt;
}

Diagnostic scheduleError(const Primitive& p, std::string message, std::string hint) {
  Diagnostic d;
  d.message = std::string(primitiveName(p.kind)) + ": " + std::move(message);
  d.location = "schedule";
  d.line = p.location.line;
  d.column = p.location.column;
  d.hint = std::move(hint);
  return d;
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

IterVar freshCopy(const IterVar& axis, VarMap& rename) {
  IterVar fresh(Var(axis.name()), axis.dom(), axis.type());
  rename[axis.var().get()] = fresh.var();
  return fresh;
}

namespace {

std::vector<std::string> leafNames(const Stage& stage) {
  std::vector<std::string> names;
  for (auto& iv : stage.leafIterVars) names.push_back(iv.name());
  return names;
}

bool isValidName(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
}

// Refuses to split or fuse `loop` of `stage` while a stage is computed at it: the loop
// must stay a loop for the attachment to mean anything.
Status checkNotAttachLoop(const std::vector<Stage>& stages, const Primitive& p, const Stage& stage,
                          const IterVar& loop, const std::string& verb) {
  for (auto& other : stages)
    if (other.attach == AttachKind::At && other.attachStage == stage.name && other.attachIterVar.same(loop))
      return scheduleError(p, other.name + " is computed at loop '" + loop.name() + "' of " + stage.name +
                                  ", so that loop cannot be " + verb,
                           std::string(primitiveName(p.kind)) + " before compute_at(" + other.name +
                               ", ...), or compute " + other.name + " at another loop first");
  return Status::success();
}

IterVar freshIterVar(const IterVar& like, const std::string& name, Range dom) {
  return IterVar(Var(name), std::move(dom), like.type());
}

}  // namespace

// --- Stage ---------------------------------------------------------------------------------

IterVar Stage::findIterVar(const std::string& name) const {
  for (auto& iv : allIterVars)
    if (iv.name() == name) return iv;
  return IterVar();
}

int Stage::leafPosition(const IterVar& iv) const {
  for (size_t i = 0; i < leafIterVars.size(); ++i)
    if (leafIterVars[i].same(iv)) return int(i);
  return -1;
}

const IterVarAttr* Stage::attr(const IterVar& iv) const {
  auto it = attrs.find(iv.get());
  return it == attrs.end() ? nullptr : &it->second;
}

// --- Schedule ------------------------------------------------------------------------------

Stage makeStage(const te::Operation& op, bool isOutput) {
  Stage stage;
  stage.op = op;
  stage.name = op.name();
  stage.isOutput = isOutput;
  if (auto* compute = te::asCompute(op)) {
    stage.rootIterVars = compute->axes;
    stage.rootIterVars.insert(stage.rootIterVars.end(), compute->reduceAxes.begin(), compute->reduceAxes.end());
  }
  stage.allIterVars = stage.rootIterVars;
  stage.leafIterVars = stage.rootIterVars;
  stage.scope = op->buffer->scope;
  return stage;
}

Schedule::Schedule(std::vector<te::Tensor> outputs) : outputs_(std::move(outputs)) {
  std::set<std::string> names;
  for (auto& op : te::postOrder(outputs_)) {
    bool isOutput = std::any_of(outputs_.begin(), outputs_.end(), [&](const te::Tensor& t) { return t.op().same(op); });
    // Schedules name stages, so a pipeline with two operations of one name cannot be
    // scheduled; that is a mistake in how the pipeline was written, not a compiler bug.
    if (!names.insert(op.name()).second)
      throw UserError({"two operations are named '" + op.name() + "'", "schedule", 0, 0,
                       "give every placeholder and compute a distinct name"});
    stages_.push_back(makeStage(op, isOutput));
  }
}

const Stage* Schedule::findStage(const std::string& name) const {
  for (auto& stage : stages_)
    if (stage.name == name) return &stage;
  return nullptr;
}
Stage* Schedule::findStage(const std::string& name) {
  for (auto& stage : stages_)
    if (stage.name == name) return &stage;
  return nullptr;
}

std::vector<const Stage*> Schedule::consumersOf(const Stage& producer) const {
  std::vector<const Stage*> consumers;
  for (auto& stage : stages_) {
    auto* compute = te::asCompute(stage.op);
    if (!compute) continue;
    for (auto& input : compute->inputs)
      if (input.buffer().same(producer.buffer())) {
        consumers.push_back(&stage);
        break;
      }
  }
  return consumers;
}

Expected<Schedule> Schedule::replay(std::vector<te::Tensor> outputs, const Trace& trace) {
  Schedule schedule(std::move(outputs));
  for (auto& primitive : trace.primitives) {
    Status status = schedule.apply(primitive);
    if (!status) return status.error();
  }
  return schedule;
}

Status Schedule::apply(const Primitive& p) {
  Status status = applyUnrecorded(p);
  if (status) trace_.primitives.push_back(p);
  return status;
}

Status Schedule::applyUnrecorded(const Primitive& p) {
  if (p.kind == PrimitiveKind::CacheRead) return applyCacheRead(p);
  Stage* stage = findStage(p.stage);
  if (!stage) {
    std::vector<std::string> names;
    for (auto& s : stages_) names.push_back(s.name);
    return scheduleError(p, "there is no stage named '" + p.stage + "'", "stages: " + joinNames(names));
  }
  switch (p.kind) {
    case PrimitiveKind::Split: return applySplit(p, *stage);
    case PrimitiveKind::Fuse: return applyFuse(p, *stage);
    case PrimitiveKind::Reorder: return applyReorder(p, *stage);
    case PrimitiveKind::Tile: return applyTile(p, *stage);
    case PrimitiveKind::Vectorize:
    case PrimitiveKind::Unroll:
    case PrimitiveKind::Parallel: return applyLoopKind(p, *stage);
    case PrimitiveKind::ComputeAt: return applyComputeAt(p, *stage);
    case PrimitiveKind::ComputeInline: return applyComputeInline(p, *stage);
    case PrimitiveKind::ComputeRoot:
      if (!p.axes.empty() || !p.target.empty()) return scheduleError(p, "takes only a stage name");
      if (!te::asCompute(stage->op)) return scheduleError(p, stage->name + " is an input; it is not computed");
      stage->attach = AttachKind::Root;
      stage->attachStage.clear();
      stage->attachIterVar = IterVar();
      return Status::success();
    case PrimitiveKind::CacheWrite: return applyCacheWrite(p, *stage);
    case PrimitiveKind::Rfactor: return applyRfactor(p, *stage);
    case PrimitiveKind::StorageAlign: return applyStorageAlign(p, *stage);
    case PrimitiveKind::Pragma: return applyPragma(p, *stage);
    case PrimitiveKind::Bind: return applyBind(p, *stage);
    case PrimitiveKind::Tensorize: return applyTensorize(p, *stage);
    case PrimitiveKind::CacheRead: break;
  }
  return scheduleError(p, "unknown primitive");
}

Expected<IterVar> Schedule::leafAxis(const Primitive& p, const Stage& stage, const std::string& name) const {
  IterVar iv = stage.findIterVar(name);
  if (!iv.defined()) {
    for (auto& other : stages_)
      if (&other != &stage && other.findIterVar(name).defined())
        return scheduleError(p, "loop '" + name + "' belongs to stage " + other.name + ", not " + stage.name,
                             "a primitive works on the loops of one stage; " + stage.name +
                                 "'s loops are: " + joinNames(leafNames(stage)));
    return scheduleError(p, "stage " + stage.name + " has no loop named '" + name + "'",
                         "its loops are: " + joinNames(leafNames(stage)));
  }
  if (stage.leafPosition(iv) < 0) {
    for (auto& rel : stage.relations) {
      if (rel.kind == IterVarRelation::Kind::Split && rel.parent.same(iv))
        return scheduleError(p, "loop '" + name + "' of " + stage.name + " was split into " + rel.outer.name() +
                                    " and " + rel.inner.name(),
                             "use " + rel.outer.name() + " or " + rel.inner.name());
      if (rel.kind == IterVarRelation::Kind::Fuse && (rel.outer.same(iv) || rel.inner.same(iv)))
        return scheduleError(p, "loop '" + name + "' of " + stage.name + " was fused into " + rel.fused.name(),
                             "use " + rel.fused.name());
    }
    return scheduleError(p, "loop '" + name + "' of " + stage.name + " is no longer a loop");
  }
  return iv;
}

Status Schedule::checkNewNames(const Primitive& p, const Stage& stage, const std::vector<std::string>& names) const {
  std::set<std::string> seen;
  for (auto& name : names) {
    if (!isValidName(name))
      return scheduleError(p, "'" + name + "' is not a valid loop name",
                           "use letters, digits, '_' and '.', starting with a letter");
    if (stage.findIterVar(name).defined() || !seen.insert(name).second)
      return scheduleError(p, "stage " + stage.name + " already has a loop named '" + name + "'",
                           "choose a new name");
  }
  return Status::success();
}

Status Schedule::checkNewStageName(const Primitive& p, const std::string& name) const {
  if (!isValidName(name)) return scheduleError(p, "'" + name + "' is not a valid stage name");
  if (findStage(name)) return scheduleError(p, "there is already a stage named '" + name + "'", "choose a new name");
  return Status::success();
}

Status Schedule::applySplit(const Primitive& p, Stage& stage) {
  if (p.axes.size() != 1 || p.results.size() != 2 || p.values.size() != 1)
    return scheduleError(p, "expects one loop, one factor (or nparts) and two result names",
                         "e.g. io, ii = split(C, i, factor=32)");
  auto parent = leafAxis(p, stage, p.axes[0]);
  if (!parent) return parent.error();
  if (Status s = checkNotAttachLoop(stages_, p, stage, *parent, "split"); !s) return s;
  if (p.values[0] <= 0)
    return scheduleError(p, std::string(p.byParts ? "nparts" : "factor") + " must be positive, got " +
                                std::to_string(p.values[0]));
  if (Status s = checkNewNames(p, stage, p.results); !s) return s;
  IterVar outer = freshIterVar(*parent, p.results[0], {});
  IterVar inner = freshIterVar(*parent, p.results[1], {});
  IterVarRelation rel;
  rel.kind = IterVarRelation::Kind::Split;
  rel.parent = *parent;
  rel.outer = outer;
  rel.inner = inner;
  (p.byParts ? rel.nparts : rel.factor) = Expr(p.values[0]);
  stage.relations.push_back(rel);
  stage.allIterVars.push_back(outer);
  stage.allIterVars.push_back(inner);
  int position = stage.leafPosition(*parent);
  stage.leafIterVars[position] = outer;
  stage.leafIterVars.insert(stage.leafIterVars.begin() + position + 1, inner);
  return Status::success();
}

Status Schedule::applyFuse(const Primitive& p, Stage& stage) {
  if (p.axes.size() < 2 || p.results.size() != 1)
    return scheduleError(p, "expects two or more adjacent loops and one result name", "e.g. f = fuse(C, io, jo)");
  std::vector<IterVar> axes;
  for (auto& name : p.axes) {
    auto iv = leafAxis(p, stage, name);
    if (!iv) return iv.error();
    if (Status s = checkNotAttachLoop(stages_, p, stage, *iv, "fused"); !s) return s;
    axes.push_back(*iv);
  }
  for (size_t i = 1; i < axes.size(); ++i) {
    if (stage.leafPosition(axes[i]) != stage.leafPosition(axes[i - 1]) + 1)
      return scheduleError(p, "loops " + p.axes[i - 1] + " and " + p.axes[i] + " are not adjacent in " + stage.name,
                           "fuse needs neighbouring loops, outer first; the loop order is " +
                               joinNames(leafNames(stage)) + " (reorder first)");
    if (axes[i].type() != axes[0].type())
      return scheduleError(p, "cannot fuse a reduction loop with a data-parallel loop (" + p.axes[0] + ", " +
                                  p.axes[i] + ")");
  }
  if (Status s = checkNewNames(p, stage, p.results); !s) return s;
  // Fuse pairwise, outer first; intermediate results get derived names.
  IterVar current = axes[0];
  int position = stage.leafPosition(axes[0]);
  for (size_t i = 1; i < axes.size(); ++i) {
    std::string name = i + 1 == axes.size() ? p.results[0] : p.results[0] + ".part" + std::to_string(i);
    IterVar fused = freshIterVar(current, name, {});
    IterVarRelation rel;
    rel.kind = IterVarRelation::Kind::Fuse;
    rel.outer = current;
    rel.inner = axes[i];
    rel.fused = fused;
    stage.relations.push_back(rel);
    stage.allIterVars.push_back(fused);
    current = fused;
  }
  stage.leafIterVars.erase(stage.leafIterVars.begin() + position,
                           stage.leafIterVars.begin() + position + int(axes.size()));
  stage.leafIterVars.insert(stage.leafIterVars.begin() + position, current);
  return Status::success();
}

Status Schedule::applyReorder(const Primitive& p, Stage& stage) {
  if (p.axes.size() < 2) return scheduleError(p, "expects at least two loops", "e.g. reorder(C, jo, io)");
  std::vector<IterVar> order;
  std::vector<int> positions;
  for (auto& name : p.axes) {
    auto iv = leafAxis(p, stage, name);
    if (!iv) return iv.error();
    for (auto& seen : order)
      if (seen.same(*iv)) return scheduleError(p, "loop '" + name + "' appears twice");
    order.push_back(*iv);
    positions.push_back(stage.leafPosition(*iv));
  }
  std::sort(positions.begin(), positions.end());
  for (size_t i = 0; i < order.size(); ++i) stage.leafIterVars[positions[i]] = order[i];
  return Status::success();
}

Status Schedule::applyTile(const Primitive& p, Stage& stage) {
  if (p.axes.size() != 2 || p.values.size() != 2 || p.results.size() != 4)
    return scheduleError(p, "expects two loops, two factors and four result names",
                         "e.g. io, jo, ii, ji = tile(C, i, j, 32, 32)");
  if (Status s = checkNewNames(p, stage, p.results); !s) return s;
  // Validate everything before changing anything, then compose split/split/reorder.
  for (auto& axis : p.axes) {
    auto iv = leafAxis(p, stage, axis);
    if (!iv) return iv.error();
    if (Status s = checkNotAttachLoop(stages_, p, stage, *iv, "split"); !s) return s;
  }
  if (p.axes[0] == p.axes[1]) return scheduleError(p, "the two loops must differ");
  for (int64_t factor : p.values)
    if (factor <= 0) return scheduleError(p, "factors must be positive, got " + std::to_string(factor));
  Stage saved = stage;
  Primitive split = p;
  split.kind = PrimitiveKind::Split;
  split.byParts = false;
  auto step = [&](const std::string& axis, int64_t factor, const std::string& outer, const std::string& inner) {
    split.axes = {axis};
    split.values = {factor};
    split.results = {outer, inner};
    return applySplit(split, stage);
  };
  Status s = step(p.axes[0], p.values[0], p.results[0], p.results[2]);
  if (s) s = step(p.axes[1], p.values[1], p.results[1], p.results[3]);
  if (s) {
    Primitive reorder = p;
    reorder.kind = PrimitiveKind::Reorder;
    reorder.axes = {p.results[0], p.results[1], p.results[2], p.results[3]};
    s = applyReorder(reorder, stage);
  }
  if (!s) stage = saved;
  return s;
}

Status Schedule::applyLoopKind(const Primitive& p, Stage& stage) {
  if (p.axes.size() != 1) return scheduleError(p, "expects one loop", "e.g. vectorize(C, ji)");
  auto iv = leafAxis(p, stage, p.axes[0]);
  if (!iv) return iv.error();
  if (iv->type() == IterVarType::Reduce && p.kind != PrimitiveKind::Unroll)
    return scheduleError(p, "loop '" + p.axes[0] + "' of " + stage.name + " is a reduction loop",
                         std::string(p.kind == PrimitiveKind::Parallel
                                          ? "its iterations all update the same outputs, so running them in parallel "
                                            "would race; parallelize a data-parallel loop instead"
                                          : "its lanes would all update the same output; vectorize a "
                                            "data-parallel loop instead"));
  IterVarAttr& attr = stage.attrs[iv->get()];
  attr.forKind = p.kind == PrimitiveKind::Vectorize ? ForKind::Vectorized
                 : p.kind == PrimitiveKind::Unroll  ? ForKind::Unrolled
                                                    : ForKind::Parallel;
  attr.setAt = p.location;
  return Status::success();
}

Status Schedule::applyComputeAt(const Primitive& p, Stage& stage) {
  if (p.target.empty() || p.axes.size() != 1)
    return scheduleError(p, "expects a stage, the consumer stage and one of its loops", "e.g. compute_at(B, C, jo)");
  if (stage.isOutput)
    return scheduleError(p, stage.name + " is an output of the function; it must be computed at root");
  if (!te::asCompute(stage.op)) return scheduleError(p, stage.name + " is an input; it is not computed");
  Stage* target = findStage(p.target);
  if (!target) return scheduleError(p, "there is no stage named '" + p.target + "'");
  if (target == &stage) return scheduleError(p, "a stage cannot be computed inside its own loops");
  auto iv = leafAxis(p, *target, p.axes[0]);
  if (!iv) return iv.error();
  // The target's loop must enclose every use: the target has to read this stage, directly
  // or through stages inlined into it.
  // Consumers that have loops, looking through stages inlined into them.
  std::vector<const Stage*> frontier = consumersOf(stage);
  std::vector<const Stage*> readers;
  std::set<const Stage*> visited;
  while (!frontier.empty()) {
    const Stage* consumer = frontier.back();
    frontier.pop_back();
    if (!visited.insert(consumer).second) continue;
    if (consumer->attach == AttachKind::Inline)
      for (const Stage* next : consumersOf(*consumer)) frontier.push_back(next);
    else
      readers.push_back(consumer);
  }
  // Every reader must run inside the chosen loop: the target itself, or a stage already
  // computed (directly or through others) at that loop of the target or a loop inside it.
  // Softmax's max and sum stages, read by stages that are themselves attached per row,
  // are the typical case.
  int attachPosition = target->leafPosition(*iv);
  auto insideTargetLoop = [&](const Stage* reader) {
    for (const Stage* walk = reader; walk && walk->attach == AttachKind::At; walk = findStage(walk->attachStage)) {
      if (walk->attachStage == target->name) return target->leafPosition(walk->attachIterVar) >= attachPosition;
    }
    return false;
  };
  bool anyInside = false;
  for (const Stage* reader : readers) anyInside = anyInside || reader == target || insideTargetLoop(reader);
  if (!anyInside)
    return scheduleError(p, target->name + " does not read " + stage.name + ", so its loop " + p.axes[0] +
                                " does not enclose the uses of " + stage.name,
                         "attach a stage to a loop of a stage that uses it");
  for (const Stage* reader : readers)
    if (reader != target && !insideTargetLoop(reader))
      return scheduleError(p, stage.name + " is also read by " + reader->name + ", which is outside loop " +
                                  p.axes[0] + " of " + target->name,
                           "compute_at needs a loop that encloses every use: compute " + reader->name + " at " +
                               target->name + ", " + p.axes[0] + " (or a loop inside it) first, compute " +
                               stage.name + " at root, or inline the stages in between");
  // No cycles: the target must not itself be computed inside this stage.
  for (const Stage* walk = target; walk && walk->attach == AttachKind::At; walk = findStage(walk->attachStage))
    if (walk->attachStage == stage.name)
      return scheduleError(p, target->name + " is itself computed inside " + stage.name + "; that would be a cycle");
  stage.attach = AttachKind::At;
  stage.attachStage = target->name;
  stage.attachIterVar = *iv;
  stage.attachedAt = p.location;
  return Status::success();
}

Status Schedule::applyComputeInline(const Primitive& p, Stage& stage) {
  if (!p.axes.empty() || !p.target.empty()) return scheduleError(p, "takes only a stage name");
  auto* compute = te::asCompute(stage.op);
  if (!compute) return scheduleError(p, stage.name + " is an input; only computed stages can be inlined");
  if (stage.isOutput) return scheduleError(p, stage.name + " is an output of the function; it cannot be inlined");
  if (!compute->reduceAxes.empty())
    return scheduleError(p, stage.name + " is a reduction; inlining it would repeat the whole reduction per use",
                         "use compute_at instead");
  for (auto& other : stages_)
    if (other.attach == AttachKind::At && other.attachStage == stage.name)
      return scheduleError(p, other.name + " is computed inside " + stage.name + ", which would have no loops left",
                           "move " + other.name + " first (compute_root or compute_at elsewhere)");
  stage.attach = AttachKind::Inline;
  stage.attachStage.clear();
  stage.attachIterVar = IterVar();
  return Status::success();
}

void Schedule::replaceOp(Stage& stage, te::Operation op) { stage.op = std::move(op); }

Status Schedule::applyStorageAlign(const Primitive& p, Stage& stage) {
  if (p.axes.size() != 1 || p.values.size() != 2)
    return scheduleError(p, "expects a stage, an axis, a factor and an offset", "e.g. storage_align(AA, i, 16, 1)");
  auto* compute = te::asCompute(stage.op);
  if (!compute) return scheduleError(p, stage.name + " is an input; its storage is given");
  int dimension = -1;
  for (size_t d = 0; d < compute->axes.size(); ++d)
    if (compute->axes[d].name() == p.axes[0]) dimension = int(d);
  if (dimension < 0)
    return scheduleError(p, stage.name + " has no dimension named '" + p.axes[0] + "'",
                         "storage_align takes one of the stage's original axes");
  if (p.values[0] <= 0 || p.values[1] < 0 || p.values[1] >= p.values[0])
    return scheduleError(p, "needs factor > 0 and 0 <= offset < factor");
  stage.alignments.push_back({dimension, p.values[0], p.values[1], p.location});
  return Status::success();
}

Status Schedule::applyPragma(const Primitive& p, Stage& stage) {
  if (p.axes.size() != 1 || p.target.empty() || p.values.size() > 1)
    return scheduleError(p, "expects a stage, a loop, a pragma name and an optional value",
                         "e.g. pragma(C, io, auto_unroll_max_step, 16)");
  auto iv = leafAxis(p, stage, p.axes[0]);
  if (!iv) return iv.error();
  stage.attrs[iv->get()].pragmas.push_back({p.target, Expr(p.values.empty() ? int64_t(1) : p.values[0])});
  return Status::success();
}

Status Schedule::applyBind(const Primitive& p, Stage& stage) {
  static const std::set<std::string> tags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                             "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  if (p.axes.size() != 1 || p.target.empty())
    return scheduleError(p, "expects a stage, a loop and a thread tag", "e.g. bind(C, io, blockIdx.x)");
  if (!tags.count(p.target))
    return scheduleError(p, "'" + p.target + "' is not a thread tag",
                         "use blockIdx.x/y/z or threadIdx.x/y/z");
  auto iv = leafAxis(p, stage, p.axes[0]);
  if (!iv) return iv.error();
  // A reduction loop bound to threads is reduced across the block (see ScheduleOps); blocks
  // cannot combine their results, so binding it to blocks is refused.
  if (iv->type() == IterVarType::Reduce && p.target.rfind("blockIdx", 0) == 0)
    return scheduleError(p, "cannot bind reduction loop '" + p.axes[0] + "' of " + stage.name + " to " + p.target +
                                ": blocks cannot combine their partial results",
                         "bind it to threadIdx.x (the block reduces it in shared memory), or rfactor it first and "
                         "bind the partial sums' loop to blocks");
  IterVarAttr& attr = stage.attrs[iv->get()];
  attr.forKind = ForKind::ThreadBinding;
  attr.threadTag = p.target;
  attr.setAt = p.location;
  return Status::success();
}

// What can be checked before lowering: the intrinsic exists, the stage is a sum into its
// accumulator type, and the loop is the outer of the stage's two innermost loops, one
// data-parallel and one a reduction. Extents, strides and operand types are checked when the
// loop nest exists (TensorizeLoops), with a message naming the same loop.
Status Schedule::applyTensorize(const Primitive& p, Stage& stage) {
  if (p.axes.size() != 1 || p.target.empty())
    return scheduleError(p, "expects a stage, a loop and a tensor intrinsic", "e.g. tensorize(conv, k.i, dot_16x4_u8i8)");
  const TensorIntrinsic* intrinsic = findTensorIntrinsic(p.target);
  if (!intrinsic)
    return scheduleError(p, "'" + p.target + "' is not a tensor intrinsic", "known: " + tensorIntrinsicNames());
  auto iv = leafAxis(p, stage, p.axes[0]);
  if (!iv) return iv.error();
  const auto* compute = te::asCompute(stage.op);
  const auto* reduce = compute ? compute->body.as<ReduceNode>() : nullptr;
  if (!reduce || reduce->reducer != Reducer::Sum || reduce->dtype != intrinsic->accumulatorType)
    return scheduleError(p, stage.name + " is not a sum into " + intrinsic->accumulatorType.toString(),
                         intrinsic->name + " computes " + intrinsic->summary);
  const auto& leaves = stage.leafIterVars;
  int position = stage.leafPosition(*iv);
  if (intrinsic->wholeReduction) {
    // The rows loop (or blocks of rows and rows), the columns loop, then every reduction loop
    // of the stage.
    auto isReduction = [](const IterVar& loop) { return loop.type() == IterVarType::Reduce; };
    size_t dataParallel = 0;
    while (size_t(position) + dataParallel < leaves.size() && !isReduction(leaves[size_t(position) + dataParallel]))
      ++dataParallel;
    bool shaped = (dataParallel == 2 || dataParallel == 3) && size_t(position) + dataParallel < leaves.size();
    for (size_t i = size_t(position) + dataParallel; shaped && i < leaves.size(); ++i) shaped = isReduction(leaves[i]);
    if (!shaped)
      return scheduleError(p, "loop '" + p.axes[0] + "' of " + stage.name +
                                  " must be the rows loop of a tile: it, one or two more data-parallel loops (rows, "
                                  "then the columns), then only reduction loops",
                           "reorder so that " + p.axes[0] + ", the 16-column loop and the reduction loops come last; " +
                               intrinsic->name + " computes " + intrinsic->summary);
  } else {
    if (position != int(leaves.size()) - 2)
      return scheduleError(p, "loop '" + p.axes[0] + "' of " + stage.name + " must be the outer of its two innermost loops",
                           "reorder so that " + p.axes[0] + " and one loop inside it come last; " + intrinsic->name +
                               " replaces a loop of " + std::to_string(intrinsic->lanes) + " outputs around a reduction of " +
                               std::to_string(intrinsic->reduction));
    const IterVar& inner = leaves.back();
    if ((iv->type() == IterVarType::Reduce) == (inner.type() == IterVarType::Reduce))
      return scheduleError(p, "loops '" + p.axes[0] + "' and '" + inner.name() + "' of " + stage.name +
                                  " must be one data-parallel loop and one reduction loop",
                           intrinsic->name + " computes " + intrinsic->summary);
  }
  // The loops from the marked one inward are the intrinsic's: they stay plain.
  for (size_t i = size_t(position); i < leaves.size(); ++i)
    if (const IterVarAttr* attr = stage.attr(leaves[i]); attr && attr->forKind != ForKind::Serial)
      return scheduleError(p, "loop '" + leaves[i].name() + "' of " + stage.name + " is already " +
                                  forKindName(attr->forKind) + "; the intrinsic does the whole nest",
                           "leave the loops inside a tensorized loop plain");
  IterVarAttr& attr = stage.attrs[iv->get()];
  attr.tensorize = intrinsic->name;
  attr.setAt = p.location;
  return Status::success();
}

// --- convenience wrappers ---------------------------------------------------------------

namespace {
Primitive make(PrimitiveKind kind, std::string stage) {
  Primitive p;
  p.kind = kind;
  p.stage = std::move(stage);
  return p;
}
}  // namespace

Status Schedule::split(const std::string& stage, const std::string& axis, int64_t factor, const std::string& outer,
                       const std::string& inner) {
  Primitive p = make(PrimitiveKind::Split, stage);
  p.axes = {axis};
  p.values = {factor};
  p.results = {outer, inner};
  return apply(p);
}
Status Schedule::splitParts(const std::string& stage, const std::string& axis, int64_t nparts,
                            const std::string& outer, const std::string& inner) {
  Primitive p = make(PrimitiveKind::Split, stage);
  p.axes = {axis};
  p.values = {nparts};
  p.byParts = true;
  p.results = {outer, inner};
  return apply(p);
}
Status Schedule::fuse(const std::string& stage, const std::vector<std::string>& axes, const std::string& fused) {
  Primitive p = make(PrimitiveKind::Fuse, stage);
  p.axes = axes;
  p.results = {fused};
  return apply(p);
}
Status Schedule::reorder(const std::string& stage, const std::vector<std::string>& order) {
  Primitive p = make(PrimitiveKind::Reorder, stage);
  p.axes = order;
  return apply(p);
}
Status Schedule::tile(const std::string& stage, const std::string& x, const std::string& y, int64_t fx, int64_t fy,
                      const std::string& xo, const std::string& yo, const std::string& xi, const std::string& yi) {
  Primitive p = make(PrimitiveKind::Tile, stage);
  p.axes = {x, y};
  p.values = {fx, fy};
  p.results = {xo, yo, xi, yi};
  return apply(p);
}
Status Schedule::vectorize(const std::string& stage, const std::string& axis) {
  Primitive p = make(PrimitiveKind::Vectorize, stage);
  p.axes = {axis};
  return apply(p);
}
Status Schedule::unroll(const std::string& stage, const std::string& axis) {
  Primitive p = make(PrimitiveKind::Unroll, stage);
  p.axes = {axis};
  return apply(p);
}
Status Schedule::parallel(const std::string& stage, const std::string& axis) {
  Primitive p = make(PrimitiveKind::Parallel, stage);
  p.axes = {axis};
  return apply(p);
}
Status Schedule::computeAt(const std::string& stage, const std::string& target, const std::string& axis) {
  Primitive p = make(PrimitiveKind::ComputeAt, stage);
  p.target = target;
  p.axes = {axis};
  return apply(p);
}
Status Schedule::computeInline(const std::string& stage) { return apply(make(PrimitiveKind::ComputeInline, stage)); }
Status Schedule::computeRoot(const std::string& stage) { return apply(make(PrimitiveKind::ComputeRoot, stage)); }
Status Schedule::cacheRead(const std::string& tensor, const std::string& scope,
                           const std::vector<std::string>& readers, const std::string& newStage) {
  Primitive p = make(PrimitiveKind::CacheRead, tensor);
  p.target = scope;
  p.readers = readers;
  p.results = {newStage};
  return apply(p);
}
Status Schedule::cacheWrite(const std::string& stage, const std::string& scope, const std::string& newStage) {
  Primitive p = make(PrimitiveKind::CacheWrite, stage);
  p.target = scope;
  p.results = {newStage};
  return apply(p);
}
Status Schedule::rfactor(const std::string& stage, const std::string& axis, int64_t factor,
                         const std::string& newStage) {
  Primitive p = make(PrimitiveKind::Rfactor, stage);
  p.axes = {axis};
  p.values = {factor};
  p.results = {newStage};
  return apply(p);
}
Status Schedule::storageAlign(const std::string& stage, const std::string& axis, int64_t factor, int64_t offset) {
  Primitive p = make(PrimitiveKind::StorageAlign, stage);
  p.axes = {axis};
  p.values = {factor, offset};
  return apply(p);
}
Status Schedule::pragma(const std::string& stage, const std::string& axis, const std::string& name,
                        std::optional<int64_t> value) {
  Primitive p = make(PrimitiveKind::Pragma, stage);
  p.axes = {axis};
  p.target = name;
  if (value) p.values = {*value};
  return apply(p);
}
Status Schedule::bind(const std::string& stage, const std::string& axis, const std::string& threadTag) {
  Primitive p = make(PrimitiveKind::Bind, stage);
  p.axes = {axis};
  p.target = threadTag;
  return apply(p);
}

Status Schedule::tensorize(const std::string& stage, const std::string& axis, const std::string& intrinsic) {
  Primitive p = make(PrimitiveKind::Tensorize, stage);
  p.axes = {axis};
  p.target = intrinsic;
  return apply(p);
}

}  // namespace tessel
