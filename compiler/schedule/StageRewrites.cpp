// The primitives that put a new stage into a schedule: cache_read (a copy of a tensor for
// its readers), cache_write (the computation moved into a local stage, the original copying
// it out) and rfactor (a reduction summed in two stages). Each builds the new operation from
// the old one's body over fresh axes and rewires the stages that read it.
#include <algorithm>
#include <set>

#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/ScheduleSupport.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"

namespace tessel {

void Schedule::insertStage(size_t position, Stage stage) {
  stages_.insert(stages_.begin() + position, std::move(stage));
}

Status Schedule::applyCacheRead(const Primitive& p) {
  Stage* source = findStage(p.stage);
  if (!source) return scheduleError(p, "there is no tensor named '" + p.stage + "'");
  if (p.results.size() != 1 || p.target.empty() || p.readers.empty())
    return scheduleError(p, "expects a tensor, a scope, the stages that should read the copy and one result name",
                         "e.g. AA = cache_read(A, local, [C])");
  if (Status s = checkNewStageName(p, p.results[0]); !s) return s;
  std::vector<Stage*> readers;
  auto consumers = consumersOf(*source);
  for (auto& name : p.readers) {
    Stage* reader = findStage(name);
    if (!reader) return scheduleError(p, "there is no stage named '" + name + "'");
    if (std::find(consumers.begin(), consumers.end(), reader) == consumers.end())
      return scheduleError(p, name + " does not read " + source->name);
    readers.push_back(reader);
  }
  // The readers would read the copy instead, so the loop the source is computed at would no
  // longer enclose its uses.
  if (source->attach == AttachKind::At)
    return scheduleError(p, "cache_read(" + source->name + ") must come before " + source->name +
                                " is placed with compute_at",
                         "move this line above compute_at(" + source->name + ", ...)");
  // The copy: name[axes] = source[axes].
  te::Tensor sourceTensor(source->op);
  std::vector<IterVar> axes;
  std::vector<Expr> indices;
  for (size_t d = 0; d < sourceTensor.shape().size(); ++d) {
    Var v("ax" + std::to_string(d));
    axes.push_back(IterVar(v, Range::fromMinExtent(Expr(0), sourceTensor.shape()[d]), IterVarType::DataParallel));
    indices.push_back(v);
  }
  Buffer buffer(p.results[0], sourceTensor.dtype(), sourceTensor.shape(), p.target);
  te::Operation copy = te::makeComputeOp(p.results[0], "cache_read", buffer, axes,
                                         BufferLoadNode::make(sourceTensor.buffer(), indices), {sourceTensor});
  te::Tensor copyTensor(copy);
  for (Stage* reader : readers) {
    auto* compute = te::asCompute(reader->op);
    std::vector<te::Tensor> inputs = compute->inputs;
    for (auto& input : inputs)
      if (input.buffer().same(sourceTensor.buffer())) input = copyTensor;
    Expr body = replaceBuffer(compute->body, sourceTensor.buffer(), buffer);
    replaceOp(*reader, te::makeComputeOp(compute->name, compute->tag, compute->buffer, compute->axes, body, inputs));
  }
  // The copy goes right after the source, so producers still precede consumers.
  size_t position = size_t(source - stages_.data()) + 1;
  Stage stage = makeStage(copy, false);
  insertStage(position, std::move(stage));
  return Status::success();
}

// cache_write and rfactor replace a stage's computation, so they must come before anything
// else is done to it: its loops split or annotated, it or a producer placed at its loops.
Status Schedule::checkStageUntouched(const Primitive& p, const Stage& stage) const {
  const std::string call = std::string(primitiveName(p.kind)) + "(" + stage.name + ")";
  if (!stage.relations.empty() || !stage.attrs.empty() || !stage.alignments.empty())
    return scheduleError(p, call + " must come before the loops of " + stage.name + " are split, fused or annotated",
                         "move this line above the other primitives on " + stage.name);
  if (stage.attach != AttachKind::Root)
    return scheduleError(p, call + " must come before " + stage.name + " is placed with compute_at or compute_inline",
                         "move this line above the other primitives on " + stage.name);
  for (auto& other : stages_)
    if (other.attach == AttachKind::At && other.attachStage == stage.name)
      return scheduleError(p, call + " must come before stages are computed at its loops (" + other.name + " is)",
                           "move this line above compute_at(" + other.name + ", " + stage.name + ", ...)");
  return Status::success();
}

Status Schedule::applyCacheWrite(const Primitive& p, Stage& stage) {
  auto* compute = te::asCompute(stage.op);
  if (!compute) return scheduleError(p, stage.name + " is an input; only computed stages can be cached");
  if (p.results.size() != 1 || p.target.empty())
    return scheduleError(p, "expects a stage, a scope and one result name", "e.g. CC = cache_write(C, local)");
  // The stage becomes a copy out of the cache, so its loops and where it and its producers
  // are computed would no longer describe the computation.
  if (Status s = checkStageUntouched(p, stage); !s) return s;
  if (Status s = checkNewStageName(p, p.results[0]); !s) return s;
  // The cache computes the original body over fresh copies of the axes; the stage itself
  // becomes a copy out of the cache, keeping its axes so its loops keep their names.
  VarMap rename;
  std::vector<IterVar> cacheAxes;
  for (auto& axis : compute->axes) cacheAxes.push_back(freshCopy(axis, rename));
  Expr cacheBody = compute->body;
  if (auto* reduce = cacheBody.as<ReduceNode>()) {
    std::vector<IterVar> reduceAxes;
    for (auto& axis : reduce->axes) reduceAxes.push_back(freshCopy(axis, rename));
    cacheBody = ReduceNode::make(reduce->reducer, substitute(reduce->source, rename), reduceAxes,
                                 substitute(reduce->condition, rename));
  } else {
    cacheBody = substitute(cacheBody, rename);
  }
  Buffer cacheBuffer(p.results[0], compute->buffer.dtype(), compute->buffer.shape(), p.target);
  te::Operation cacheOp = te::makeComputeOp(p.results[0], compute->tag, cacheBuffer, cacheAxes, cacheBody, compute->inputs);
  std::vector<Expr> indices;
  for (auto& axis : compute->axes) indices.push_back(axis.var());
  te::Operation copyOp = te::makeComputeOp(compute->name, compute->tag, compute->buffer, compute->axes,
                                           BufferLoadNode::make(cacheBuffer, indices), {te::Tensor(cacheOp)});
  splitStage(stage, cacheOp, copyOp);
  return Status::success();
}

void Schedule::splitStage(Stage& stage, te::Operation producer, te::Operation consumer) {
  size_t position = size_t(&stage - stages_.data());
  bool isOutput = stage.isOutput;
  std::string scope = stage.scope;
  stages_[position] = makeStage(consumer, isOutput);
  stages_[position].scope = scope;
  insertStage(position, makeStage(producer, false));
}

// rfactor(C, k, f): the reduction over k is done in two steps. A new stage sums, for every
// k.inner in [0, f), the elements k = k.outer * f + k.inner, keeping k.inner as a
// data-parallel axis (the last one); C then sums those f partial results. k.inner can
// then be vectorized: a dot product along a contiguous row becomes f-wide vector
// accumulators and one short horizontal sum, where C alone would reduce one scalar.
Status Schedule::applyRfactor(const Primitive& p, Stage& stage) {
  auto* compute = te::asCompute(stage.op);
  auto* reduce = compute ? compute->body.as<ReduceNode>() : nullptr;
  if (!reduce) return scheduleError(p, stage.name + " is not a reduction; rfactor splits a reduction in two");
  if (p.axes.size() != 1 || p.values.size() != 1 || p.results.size() != 1)
    return scheduleError(p, "expects a stage, one of its reduction loops, a factor and one result name",
                         "e.g. C.rf = rfactor(C, k, 8)");
  const int64_t factor = p.values[0];
  if (factor < 2) return scheduleError(p, "the factor must be at least 2");
  if (Status s = checkStageUntouched(p, stage); !s) return s;
  int axisPosition = -1;
  for (size_t i = 0; i < reduce->axes.size(); ++i)
    if (reduce->axes[i].name() == p.axes[0]) axisPosition = int(i);
  if (axisPosition < 0) {
    std::vector<std::string> names;
    for (auto& axis : reduce->axes) names.push_back(axis.name());
    return scheduleError(p, stage.name + " has no reduction loop named '" + p.axes[0] + "'",
                         "its reduction loops are: " + joinNames(names));
  }
  const IterVar& reduced = reduce->axes[axisPosition];
  const int64_t* extent = asConstInt(reduced.dom().extent);
  if (!extent) return scheduleError(p, "loop '" + reduced.name() + "' has no constant extent");
  if (Status s = checkNewStageName(p, p.results[0]); !s) return s;
  const std::string outerName = reduced.name() + ".outer", innerName = reduced.name() + ".inner";
  for (auto& axis : compute->axes)
    if (axis.name() == outerName || axis.name() == innerName)
      return scheduleError(p, stage.name + " already has a loop named '" + axis.name() + "'");

  // The partial stage: fresh copies of the axes, then k.inner; k becomes k.outer.
  VarMap rename;
  std::vector<IterVar> partialAxes;
  for (auto& axis : compute->axes) partialAxes.push_back(freshCopy(axis, rename));
  IterVar inner(Var(innerName), Range::fromMinExtent(Expr(0), Expr(factor)), IterVarType::DataParallel);
  partialAxes.push_back(inner);
  const int64_t outerExtent = (*extent + factor - 1) / factor;
  IterVar outer(Var(outerName), Range::fromMinExtent(Expr(0), Expr(outerExtent)), IterVarType::Reduce);
  std::vector<IterVar> partialReduceAxes;
  for (size_t i = 0; i < reduce->axes.size(); ++i)
    partialReduceAxes.push_back(int(i) == axisPosition ? outer : freshCopy(reduce->axes[i], rename));
  Expr offset = outer.var() * Expr(factor) + inner.var();
  rename[reduced.var().get()] = reduced.dom().min + offset;
  Expr condition = reduce->condition.defined() ? substitute(reduce->condition, rename) : Expr();
  // A factor that does not divide the loop (or exceeds it) leaves a ragged last step.
  if (*extent % factor != 0) {
    Expr inRange = offset < Expr(*extent);
    condition = condition.defined() && !isConstInt(condition, 1) ? (condition && inRange) : inRange;
  }
  Expr partialBody = ReduceNode::make(reduce->reducer, substitute(reduce->source, rename), partialReduceAxes, condition);
  std::vector<Expr> partialShape = compute->buffer.shape();
  partialShape.push_back(Expr(factor));
  Buffer partialBuffer(p.results[0], compute->buffer.dtype(), partialShape, "global");
  te::Operation partialOp =
      te::makeComputeOp(p.results[0], compute->tag, partialBuffer, partialAxes, partialBody, compute->inputs);

  // The stage itself keeps its axes (and their names) and now reduces over k.inner.
  IterVar finalInner(Var(innerName), Range::fromMinExtent(Expr(0), Expr(factor)), IterVarType::Reduce);
  std::vector<Expr> indices;
  for (auto& axis : compute->axes) indices.push_back(axis.var());
  indices.push_back(finalInner.var());
  Expr finalBody = ReduceNode::make(reduce->reducer, BufferLoadNode::make(partialBuffer, indices), {finalInner});
  te::Operation finalOp = te::makeComputeOp(compute->name, compute->tag, compute->buffer, compute->axes, finalBody,
                                            {te::Tensor(partialOp)});
  splitStage(stage, partialOp, finalOp);
  return Status::success();
}

}  // namespace tessel
