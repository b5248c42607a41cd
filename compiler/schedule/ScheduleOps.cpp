// Loop nest construction: loops from each stage's leaf iteration variables, bodies from
// its op with root variables replaced by loop expressions, reductions split into an init
// and an update, predicates for non-divisible splits, and attached stages realized
// inside the loop they are computed at.
#include "compiler/schedule/ScheduleOps.h"

#include <algorithm>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/Simplify.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"

namespace tessel {

namespace {

class NestBuilder {
public:
  NestBuilder(const ScheduleView& view, const BoundMap& bounds, BoundMode mode)
      : view_(view), bounds_(bounds), mode_(mode) {}

  Expected<Stmt> buildFunctionBody() {
    // Root stages in producer-first order, each realized around everything after it.
    std::vector<const LoweredStage*> roots;
    for (auto& lowered : view_.stages())
      if (lowered.stage->attach == AttachKind::Root) roots.push_back(&lowered);
    Stmt body;
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
      auto nest = buildStage(**it);
      if (!nest) return nest.error();
      body = body.defined() ? SeqStmtNode::make({*nest, body}) : *nest;
      if (!(*it)->stage->isOutput) {
        auto realized = realize(**it, body);
        if (!realized) return realized.error();
        body = *realized;
      }
    }
    return body;
  }

private:
  // Wraps `body` in the realization of `lowered`'s buffer over its region. With
  // storage_align, the buffer is replaced by one with padded strides.
  Expected<Stmt> realize(const LoweredStage& lowered, Stmt body) {
    const Stage& stage = *lowered.stage;
    std::vector<Range> region;
    for (auto& axis : lowered.compute->axes) region.push_back(bounds_.at(axis.get()));
    Buffer buffer = stage.buffer();
    if (!stage.alignments.empty()) {
      auto strides = alignedStrides(stage, region);
      if (!strides) return strides.error();
      Buffer aligned(buffer.name(), buffer.dtype(), buffer.shape(), buffer->scope, *strides);
      body = replaceBuffer(body, buffer, aligned);
      buffer = aligned;
    }
    return BufferRealizeNode::make(buffer, region, body);
  }

  // Row-major strides over the realized region, each aligned dimension rounded up to the
  // next k*factor + offset.
  Expected<std::vector<Expr>> alignedStrides(const Stage& stage, const std::vector<Range>& region) {
    std::vector<Expr> strides(region.size());
    int64_t stride = 1;
    for (int d = int(region.size()) - 1; d >= 0; --d) {
      for (auto& alignment : stage.alignments) {
        if (alignment.dimension != d) continue;
        int64_t remainder = ((stride - alignment.offset) % alignment.factor + alignment.factor) % alignment.factor;
        if (remainder != 0) stride += alignment.factor - remainder;
      }
      strides[d] = Expr(stride);
      const int64_t* extent = asConstInt(simplify(region[d].extent));
      if (!extent) {
        Primitive where;
        where.kind = PrimitiveKind::StorageAlign;
        where.location = stage.alignments.front().setAt;
        return scheduleError(where, "the region of " + stage.name + " has a non-constant extent " +
                                        toString(region[d].extent),
                             "storage_align needs constant-size buffers");
      }
      stride *= *extent;
    }
    return strides;
  }

  // Producers attached at `loop` of `stage`, producer first.
  std::vector<const LoweredStage*> attachedAt(const Stage& stage, const IterVar& loop) {
    std::vector<const LoweredStage*> attached;
    for (auto& lowered : view_.stages())
      if (lowered.stage->attach == AttachKind::At && lowered.stage->attachStage == stage.name &&
          lowered.stage->attachIterVar.same(loop))
        attached.push_back(&lowered);
    return attached;
  }

  Expected<Stmt> wrapAttached(const Stage& stage, const IterVar& loop, Stmt body) {
    auto attached = attachedAt(stage, loop);
    for (auto it = attached.rbegin(); it != attached.rend(); ++it) {
      auto nest = buildStage(**it);
      if (!nest) return nest.error();
      auto realized = realize(**it, SeqStmtNode::make({*nest, body}));
      if (!realized) return realized.error();
      body = *realized;
    }
    return body;
  }

  Status checkLoopKind(const Stage& stage, const IterVar& leaf, const Range& range, ForKind kind,
                       const IterVarAttr& attr) {
    // The whole-domain view is only shown, never compiled; its extents are not the real ones.
    if (mode_ == BoundMode::FullDomain) return Status::success();
    if (kind != ForKind::Vectorized && kind != ForKind::Unrolled) return Status::success();
    Primitive where;
    where.kind = kind == ForKind::Vectorized ? PrimitiveKind::Vectorize : PrimitiveKind::Unroll;
    where.location = attr.setAt;
    const int64_t* extent = asConstInt(range.extent);
    if (!extent)
      return scheduleError(where, "loop '" + leaf.name() + "' of " + stage.name + " has extent " +
                                      toString(range.extent) + ", which is not a constant",
                           "split it by a constant factor and " + std::string(primitiveName(where.kind)) +
                               " the inner loop");
    int64_t limit = kind == ForKind::Vectorized ? kMaxVectorizedExtent : kMaxUnrolledExtent;
    if (*extent > limit)
      return scheduleError(where, "loop '" + leaf.name() + "' of " + stage.name + " has " + std::to_string(*extent) +
                                      " iterations, more than " + std::to_string(limit),
                           "split it and " + std::string(primitiveName(where.kind)) + " the inner loop");
    return Status::success();
  }

  // Conditions that keep a stage inside its domain: non-divisible splits, and regions of
  // attached stages that may reach past the op's domain.
  std::pair<Expr, Expr> predicates(const LoweredStage& lowered, const std::unordered_map<const Node*, Expr>& values,
                                   const std::unordered_map<const Node*, Expr>& offsets) {
    const Stage& stage = *lowered.stage;
    Analyzer analyzer;
    for (auto& loop : enclosingLoops(view_, stage)) analyzer.bind(loop->var, bounds_.at(loop.get()));
    for (auto& leaf : stage.leafIterVars) analyzer.bind(leaf->var, Range::fromMinExtent(Expr(0), bounds_.at(leaf.get()).extent));
    Expr dataCondition, reduceCondition;
    auto add = [](Expr& into, Expr condition) { into = into.defined() ? (into && condition) : condition; };
    for (auto& rel : stage.relations) {
      if (rel.kind != IterVarRelation::Kind::Split) continue;
      const Range& parent = bounds_.at(rel.parent.get());
      Expr covered = bounds_.at(rel.outer.get()).extent * bounds_.at(rel.inner.get()).extent;
      if (analyzer.canProve(covered <= parent.extent)) continue;
      Expr condition = likely(offsets.at(rel.parent.get()) < parent.extent);
      add(rel.parent.type() == IterVarType::Reduce ? reduceCondition : dataCondition, condition);
    }
    if (mode_ != BoundMode::FullDomain && stage.attach == AttachKind::At) {
      for (auto& axis : lowered.compute->axes) {
        const Range& region = bounds_.at(axis.get());
        Expr end = axis.dom().min + axis.dom().extent;
        if (!analyzer.canProve(region.min + region.extent <= end))
          add(dataCondition, likely(values.at(axis.get()) < end));
        if (!analyzer.canProve(region.min >= axis.dom().min))
          add(dataCondition, likely(values.at(axis.get()) >= axis.dom().min));
      }
    }
    return {dataCondition, reduceCondition};
  }

  Expected<Stmt> buildStage(const LoweredStage& lowered) {
    const Stage& stage = *lowered.stage;
    const auto* compute = lowered.compute;
    auto values = iterVarValues(stage, bounds_);
    VarMap rootToLoops;
    for (auto& root : stage.rootIterVars) rootToLoops[root->var.get()] = values.at(root.get());

    auto offsets = iterVarOffsets(stage, bounds_);
    auto [dataCondition, reduceCondition] = predicates(lowered, values, offsets);

    std::vector<Expr> outputIndices;
    for (auto& axis : compute->axes) outputIndices.push_back(values.at(axis.get()));
    const Buffer& output = stage.buffer();

    Stmt update, init;
    if (auto* reduce = lowered.body.as<ReduceNode>()) {
      Expr source = substitute(reduce->source, rootToLoops);
      Expr accumulated = BufferLoadNode::make(output, outputIndices);
      update = BufferStoreNode::make(output, reducerCombine(reduce->reducer, accumulated, source), outputIndices);
      Expr condition = substitute(reduce->condition, rootToLoops);
      if (!isConstInt(condition, 1)) update = IfThenElseNode::make(condition, update);
      Expr all = dataCondition.defined() && reduceCondition.defined() ? (dataCondition && reduceCondition)
                 : dataCondition.defined()                            ? dataCondition
                                                                      : reduceCondition;
      if (all.defined()) update = IfThenElseNode::make(all, update);
      init = BufferStoreNode::make(output, reducerIdentity(reduce->reducer, output.dtype()), outputIndices);
      if (dataCondition.defined()) init = IfThenElseNode::make(dataCondition, init);
    } else {
      update = BufferStoreNode::make(output, substitute(lowered.body, rootToLoops), outputIndices);
      if (dataCondition.defined()) update = IfThenElseNode::make(dataCondition, update);
    }

    const auto& leaves = stage.leafIterVars;
    auto crossThread = crossThreadReductionLoop(stage);
    if (!crossThread) return crossThread.error();
    if (*crossThread >= 0) {
      const auto* reduce = lowered.body.as<ReduceNode>();
      Expr source = substitute(reduce->source, rootToLoops);
      Expr condition = substitute(reduce->condition, rootToLoops);
      Expr all = dataCondition.defined() && reduceCondition.defined() ? (dataCondition && reduceCondition)
                 : dataCondition.defined()                            ? dataCondition
                                                                      : reduceCondition;
      if (!isConstInt(condition, 1)) all = all.defined() ? (all && condition) : condition;
      return buildCrossThreadReduction(stage, *crossThread, reduce->reducer, source, all, dataCondition, outputIndices);
    }

    // The first loop over a reduction variable: the init goes just before it, inside
    // copies of the data-parallel loops nested below it.
    int firstReduce = -1;
    for (size_t i = 0; i < leaves.size(); ++i)
      if (leaves[i].type() == IterVarType::Reduce) { firstReduce = int(i); break; }
    Stmt initNest;
    if (init.defined()) {
      initNest = init;
      for (int i = int(leaves.size()) - 1; i > firstReduce; --i) {
        if (leaves[i].type() == IterVarType::Reduce) continue;
        auto loop = makeLoop(stage, leaves[i], initNest, /*initialization=*/true);
        if (!loop) return loop.error();
        initNest = *loop;
      }
    }

    Stmt body = update;
    // Producers attached at the innermost loop are computed right before the update.
    if (!leaves.empty()) {
      auto wrapped = wrapAttached(stage, leaves.back(), body);
      if (!wrapped) return wrapped.error();
      body = *wrapped;
    }
    for (int i = int(leaves.size()) - 1; i >= 0; --i) {
      auto loop = makeLoop(stage, leaves[i], body);
      if (!loop) return loop.error();
      body = *loop;
      if (i == firstReduce) body = SeqStmtNode::make({initNest, body});
      if (i > 0) {
        auto wrapped = wrapAttached(stage, leaves[i - 1], body);
        if (!wrapped) return wrapped.error();
        body = *wrapped;
      }
    }
    if (leaves.empty()) body = init.defined() ? SeqStmtNode::make({init, update}) : update;
    return body;
  }

  // The position of the stage's reduction loop bound to a GPU thread index, -1 when none is.
  // Such a loop makes the reduction cross-thread (see buildCrossThreadReduction), which needs
  // it to be the stage's outermost reduction loop with only reduction loops inside it, and
  // the stage computed at root (its block reduces its own outputs).
  Expected<int> crossThreadReductionLoop(const Stage& stage) {
    const auto& leaves = stage.leafIterVars;
    int bound = -1;
    for (size_t i = 0; i < leaves.size(); ++i) {
      const IterVarAttr* attr = stage.attr(leaves[i]);
      if (leaves[i].type() != IterVarType::Reduce || !attr || attr->forKind != ForKind::ThreadBinding) continue;
      Primitive where;
      where.kind = PrimitiveKind::Bind;
      where.location = attr->setAt;
      if (bound >= 0)
        return scheduleError(where, "reduction loops '" + leaves[size_t(bound)].name() + "' and '" + leaves[i].name() +
                                        "' of " + stage.name + " are both bound to threads",
                             "fuse them into one loop and bind that, or bind one and keep the other serial");
      for (size_t j = 0; j < i; ++j)
        if (leaves[j].type() == IterVarType::Reduce)
          return scheduleError(where, "reduction loop '" + leaves[j].name() + "' of " + stage.name +
                                          " is outside '" + leaves[i].name() +
                                          "', which is bound to threads: each pass of it would need its own "
                                          "reduction across the block",
                               "reorder " + stage.name + " so that '" + leaves[i].name() +
                                   "' is its outermost reduction loop");
      for (size_t j = i + 1; j < leaves.size(); ++j)
        if (leaves[j].type() != IterVarType::Reduce)
          return scheduleError(where, "data-parallel loop '" + leaves[j].name() + "' of " + stage.name +
                                          " is inside '" + leaves[i].name() +
                                          "', which is bound to threads: the threads reduce one output at a time",
                               "reorder " + stage.name + " so that '" + leaves[j].name() + "' is outside '" +
                                   leaves[i].name() + "'");
      if (stage.attach != AttachKind::Root)
        return scheduleError(where, stage.name + " reduces across threads, so it must be computed at root (its own kernel)",
                             "remove the compute_at of " + stage.name + ", or keep '" + leaves[i].name() + "' serial");
      if (!asConstInt(bounds_.at(leaves[i].get()).extent))
        return scheduleError(where, "loop '" + leaves[i].name() + "' of " + stage.name +
                                        " has no constant extent, so its threads' partial results have no fixed place",
                             "split the reduction by a constant factor and bind the inner loop");
      bound = int(i);
    }
    return bound;
  }

  // A reduction spread over a block's threads (TVM's cross-thread allreduce, in shared
  // memory): each thread t of the bound loop combines its share (the serial reduction loops
  // inside) in a register, writes it to slot t of a shared buffer, and the block folds the
  // buffer in halves, each step a barrier apart (InsertBarriers places them), until thread 0
  // holds the result and stores it. Every thread takes every step: only loads and stores are
  // guarded, so no barrier sits in code some threads skip. Data-parallel loops bound to other
  // thread indices reduce their own rows of the buffer side by side.
  Expected<Stmt> buildCrossThreadReduction(const Stage& stage, int boundLoop, Reducer reducer, const Expr& source,
                                           const Expr& updateCondition, const Expr& outputCondition,
                                           const std::vector<Expr>& outputIndices) {
    const auto& leaves = stage.leafIterVars;
    const IterVar& threadLoop = leaves[size_t(boundLoop)];
    int64_t threads = *asConstInt(bounds_.at(threadLoop.get()).extent);
    const Buffer& output = stage.buffer();
    DataType dtype = output.dtype();
    // Independent reductions in the block: one per combination of the data-parallel loops
    // bound to thread indices (they run side by side).
    Expr row = Expr(int64_t(0));
    int64_t rows = 1;
    for (int i = boundLoop - 1; i >= 0; --i) {
      const IterVarAttr* attr = stage.attr(leaves[size_t(i)]);
      if (!attr || attr->forKind != ForKind::ThreadBinding || attr->threadTag.rfind("threadIdx", 0) != 0) continue;
      const int64_t* extent = asConstInt(bounds_.at(leaves[size_t(i)].get()).extent);
      if (!extent) {
        Primitive where;
        where.kind = PrimitiveKind::Bind;
        where.location = attr->setAt;
        return scheduleError(where, "loop '" + leaves[size_t(i)].name() + "' of " + stage.name +
                                        " has no constant extent", "split it by a constant factor and bind the inner loop");
      }
      row = row + leaves[size_t(i)].var() * Expr(rows);
      rows *= *extent;
    }
    Buffer partials(stage.name + ".red", dtype, {Expr(rows * threads)}, "shared");
    Buffer accumulator(stage.name + ".acc", dtype, {Expr(int64_t(1))}, "local");
    Expr zero(int64_t(0));
    Expr t = threadLoop.var();
    // Thread-major slots: threads next to each other in a warp (the bound data-parallel
    // loop is usually threadIdx.x) touch consecutive banks.
    Expr slot = t * Expr(rows) + row;

    // The thread's own share, in a register.
    Stmt update = BufferStoreNode::make(
        accumulator, reducerCombine(reducer, BufferLoadNode::make(accumulator, {zero}), source), {zero});
    if (updateCondition.defined()) update = IfThenElseNode::make(updateCondition, update);
    Stmt share = update;
    if (boundLoop + 1 < int(leaves.size())) {
      auto wrapped = wrapAttached(stage, leaves.back(), share);
      if (!wrapped) return wrapped.error();
      share = *wrapped;
    }
    for (int i = int(leaves.size()) - 1; i > boundLoop; --i) {
      auto loop = makeLoop(stage, leaves[size_t(i)], share);
      if (!loop) return loop.error();
      share = *loop;
      auto wrapped = wrapAttached(stage, leaves[size_t(i - 1)], share);
      if (!wrapped) return wrapped.error();
      share = *wrapped;
    }
    std::vector<Stmt> steps;
    steps.push_back(BufferStoreNode::make(accumulator, reducerIdentity(reducer, dtype), {zero}));
    steps.push_back(share);
    steps.push_back(BufferStoreNode::make(partials, BufferLoadNode::make(accumulator, {zero}), {slot}));
    // Halving steps over the next power of two; a partner past the last thread is skipped.
    int64_t span = 1;
    while (span < threads) span *= 2;
    for (int64_t half = span / 2; half >= 1; half /= 2) {
      Expr active = t < Expr(std::min(half, threads - half));
      Expr folded = reducerCombine(reducer, BufferLoadNode::make(partials, {slot}),
                                   BufferLoadNode::make(partials, {slot + Expr(half * rows)}));
      steps.push_back(IfThenElseNode::make(active, BufferStoreNode::make(partials, folded, {slot})));
    }
    Expr first = eq(t, zero);
    if (outputCondition.defined()) first = first && outputCondition;
    steps.push_back(IfThenElseNode::make(
        first, BufferStoreNode::make(output, BufferLoadNode::make(partials, {row}), outputIndices)));
    Stmt body = AllocateNode::make(accumulator, SeqStmtNode::make(steps));

    auto loop = makeLoop(stage, threadLoop, body);
    if (!loop) return loop.error();
    body = AllocateNode::make(partials, *loop);
    for (int i = boundLoop; i >= 1; --i) {
      auto wrapped = wrapAttached(stage, leaves[size_t(i - 1)], body);
      if (!wrapped) return wrapped.error();
      auto outer = makeLoop(stage, leaves[size_t(i - 1)], *wrapped);
      if (!outer) return outer.error();
      body = *outer;
    }
    return body;
  }

  // One loop over `leaf` around `body`, with the attached producers inside it handled by
  // the caller; annotations become the loop kind and pragma attributes.
  // In the copy of a tensorized loop that initializes the outputs, the loop is vectorized
  // instead: the intrinsic's outputs are contiguous along it, so it is one vector store.
  Expected<Stmt> makeLoop(const Stage& stage, const IterVar& leaf, Stmt body, bool initialization = false) {
    const Range& range = bounds_.at(leaf.get());
    ForKind kind = ForKind::Serial;
    std::string threadTag;
    const IterVarAttr* attr = stage.attr(leaf);
    if (attr && initialization && !attr->tensorize.empty()) {
      Stmt loop = ForNode::make(leaf.var(), Expr(0), simplify(range.extent), ForKind::Vectorized, body);
      return loop;
    }
    if (attr) {
      kind = attr->forKind;
      threadTag = attr->threadTag;
      if (Status s = checkLoopKind(stage, leaf, range, kind, *attr); !s) return s.error();
    }
    Stmt loop = ForNode::make(leaf.var(), Expr(0), simplify(range.extent), kind, body, threadTag);
    if (attr) {
      // Marks the nest for TensorizeLoops, which replaces it once indices are flat.
      if (const TensorIntrinsic* intrinsic = attr->tensorize.empty() ? nullptr : findTensorIntrinsic(attr->tensorize))
        loop = AttrStmtNode::make(tensorizeAttrKey(*intrinsic), Expr(int64_t(1)), loop);
      for (auto it = attr->pragmas.rbegin(); it != attr->pragmas.rend(); ++it)
        loop = AttrStmtNode::make("pragma_" + it->first, it->second, loop);
    }
    return loop;
  }

  const ScheduleView& view_;
  const BoundMap& bounds_;
  BoundMode mode_;
};

}  // namespace

Expected<PrimFunc> scheduleOps(const Schedule& schedule, const std::vector<te::Tensor>& args, const std::string& name,
                               BoundMode mode) {
  ScheduleView view(schedule);
  // Every input read must be an argument, and every argument an input or an output.
  std::vector<Buffer> params;
  for (auto& arg : args) {
    const Stage* stage = nullptr;
    for (auto& s : schedule.stages())
      if (s.buffer().same(arg.buffer())) stage = &s;
    if (!stage || !(stage->isOutput || te::asPlaceholder(stage->op)))
      return Diagnostic{"argument " + arg.name() + " is neither an input nor an output of the schedule", name, 0, 0,
                        "pass the placeholders the outputs read and the outputs themselves"};
    params.push_back(arg.buffer());
  }
  for (const Stage* input : view.inputs()) {
    bool passed = false;
    for (auto& param : params) passed = passed || param.same(input->buffer());
    bool read = false;
    for (auto& lowered : view.stages()) read = read || !loadsOf(lowered.body, input->buffer()).empty();
    if (read && !passed)
      return Diagnostic{"input " + input->name + " is read but is not in the argument list", name, 0, 0,
                        "add " + input->name + " to the function's arguments"};
  }
  for (auto& lowered : view.stages())
    if (lowered.stage->isOutput) {
      bool passed = false;
      for (auto& param : params) passed = passed || param.same(lowered.stage->buffer());
      if (!passed)
        return Diagnostic{"output " + lowered.stage->name + " is not in the argument list", name, 0, 0,
                          "add " + lowered.stage->name + " to the function's arguments"};
    }
  BoundMap bounds = inferBound(view, mode);
  auto body = NestBuilder(view, bounds, mode).buildFunctionBody();
  if (!body) return body.error();
  return PrimFunc(name, params, *body);
}

}  // namespace tessel
