// Loop nest construction: loops from each stage's leaf iteration variables, bodies from
// its op with root variables replaced by loop expressions, reductions split into an init
// and an update, predicates for non-divisible splits, and attached stages realized
// inside the loop they are computed at.
#include "compiler/schedule/ScheduleOps.h"

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

    // The first loop over a reduction variable: the init goes just before it, inside
    // copies of the data-parallel loops nested below it.
    const auto& leaves = stage.leafIterVars;
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
