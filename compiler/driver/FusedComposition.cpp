// Fused kernels: the body's primitive kernels rewired into one pipeline and scheduled by
// replaying the anchor operator's default schedule on it.
#include "compiler/driver/FusedComposition.h"

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/lower/Lower.h"
#include "compiler/ops/Elementwise.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/te/Rewire.h"

namespace tessel::driver {

namespace {

using graph::OpPattern;

// One primitive operation of the body and what became of its kernel's tensors.
struct BodyOperation {
  const graph::OperationNode* node = nullptr;
  OpPattern pattern = OpPattern::Opaque;
  graph::OpKernel kernel;
  std::vector<te::Tensor> outputs;   ///< The rewired outputs, one per node output.
  std::vector<te::Tensor> computes;  ///< Every rewired compute of the kernel.
  bool isEpilogue = false;           ///< Reads the anchor's result (directly or not).
};

// A composed pipeline in one of its forms, with the trace that schedules it.
struct ComposedForm {
  Workload workload;
  std::vector<int> inputIndices;
  Trace trace;
};

std::vector<int64_t> constantShape(const te::Tensor& tensor) {
  std::vector<int64_t> shape;
  for (const Expr& extent : tensor.shape()) {
    const int64_t* value = asConstInt(extent);
    shape.push_back(value ? *value : -1);
  }
  return shape;
}

// A name that the schedule text accepts: letters, digits, '_' and '.', not starting with a digit.
std::string identifierFrom(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "fused_" + out;
  return out;
}

// `source`'s elements in row-major order under `like`'s shape: a kernel may read a value
// through a placeholder of another shape with as many elements (the driver passes buffers
// by element count). Inlined like any other injective stage.
te::Tensor rowMajorView(const te::Tensor& source, const te::Tensor& like, const std::string& name) {
  std::vector<int64_t> from = constantShape(source), to = constantShape(like);
  return te::compute(
      like.shape(),
      [&](const std::vector<Var>& index) {
        Expr flat = Expr(int64_t(0));
        for (size_t d = 0; d < to.size(); ++d) flat = flat * Expr(to[d]) + index[d];
        std::vector<Expr> at(from.size());
        for (size_t d = from.size(); d-- > 0;) {
          at[d] = d == 0 ? flat : flat % Expr(from[d]);
          if (d > 0) flat = flat / Expr(from[d]);
        }
        return source(at);
      },
      name, axisNames(to.size()), "view");
}

class FusedKernelComposer {
public:
  FusedKernelComposer(const graph::OperationNode& node, const Target& target, const graph::OpRegistry& registry)
      : node_(node), target_(target), registry_(registry) {}

  Expected<graph::OpKernel> compose() {
    if (Status st = buildPrimitiveKernels(); !st) return st.error();
    chooseAnchor();
    if (Status st = rewireKernels(); !st) return st.error();
    anchorTrace_ = traceOfAnchor();

    // The fastest form that schedules and lowers wins; the plain one always lowers.
    // A form that throws (a pipeline the schedule or lowering rejects in a way it did not
    // foresee) counts as failed like one that returns a Diagnostic: the next form is correct.
    std::vector<std::string> failures;
    auto accept = [&](const std::function<Expected<ComposedForm>()>& makeForm) -> std::optional<graph::OpKernel> {
      try {
        Expected<ComposedForm> form = makeForm();
        if (!form) {
          failures.push_back(form.error().message);
          return std::nullopt;
        }
        if (Status st = checkLowers(*form); !st) {
          failures.push_back(st.error().message);
          return std::nullopt;
        }
        return kernelFrom(std::move(*form));
      } catch (const std::exception& e) {
        failures.push_back(e.what());
        return std::nullopt;
      }
    };
    if (hasEpilogue())
      if (auto kernel = accept([&] { return mergedForm(); })) return *kernel;
    if (auto kernel = accept([&] { return materializedForm(true); })) return *kernel;
    if (auto kernel = accept([&] { return materializedForm(false); })) return *kernel;
    std::string reasons;
    for (const std::string& failure : failures) reasons += (reasons.empty() ? "" : "; ") + failure;
    return error("cannot be compiled as one kernel: " + reasons);
  }

private:
  Diagnostic error(const std::string& message, const std::string& hint = "") const {
    Diagnostic d;
    d.message = node_.op + " '" + node_.name + "': " + message;
    d.location = node_.name;
    d.hint = hint;
    return d;
  }

  // Step 1: each body operation's kernel from the registry, seeing the constants an unfused
  // node would see (body constants, and the fused node's constant inputs).
  Status buildPrimitiveKernels() {
    const graph::Graph& body = *node_.body;
    if (body.outputs.size() != 1)
      return error("its body has " + std::to_string(body.outputs.size()) + " outputs; a fused kernel computes one",
                   "FuseOps makes groups with a single output");
    if (body.inputs.size() != node_.inputs.size())
      return error("its body has " + std::to_string(body.inputs.size()) + " inputs for " +
                   std::to_string(node_.inputs.size()) + " node inputs");
    for (size_t k = 0; k < body.inputs.size(); ++k) bodyInputIndex_[body.inputs[k].node()] = int(k);
    for (const graph::OperationNode* op : body.operations()) {
      const graph::OpDef* def = registry_.find(op->op);
      if (!def || !def->build) return error("its body operation " + op->op + " '" + op->name + "' has no kernel");
      graph::OpCall call = graph::makeOpCall(*op, target_);
      for (size_t i = 0; i < op->inputs.size(); ++i) {
        const graph::Value& input = op->inputs[i];
        if (!input.defined() || !graph::asInput(input.node())) continue;
        const graph::Value& outer = node_.inputs[size_t(bodyInputIndex_.at(input.node()))];
        if (const graph::ConstantNode* constant = outer.defined() ? graph::asConstant(outer.node()) : nullptr)
          call.constantInputs[i] = constant->data;
      }
      auto kernel = def->build(call);
      if (!kernel) {
        Diagnostic d = kernel.error();
        d.message = node_.op + " '" + node_.name + "': " + d.message;
        return d;
      }
      BodyOperation operation;
      operation.node = op;
      operation.pattern = def->pattern;
      operation.kernel = std::move(*kernel);
      operations_.push_back(std::move(operation));
    }
    if (operations_.empty()) return error("its body has no operations");
    return Status::success();
  }

  // Step 2: the anchor (the complex op, else the reduction, else the output's producer), and
  // the epilogue: every operation reading the anchor's result.
  void chooseAnchor() {
    anchor_ = -1;
    for (OpPattern wanted : {OpPattern::OutElemwiseFusable, OpPattern::CommReduce})
      for (size_t i = 0; i < operations_.size() && anchor_ < 0; ++i)
        if (operations_[i].pattern == wanted) anchor_ = int(i);
    if (anchor_ < 0) {
      const graph::GraphNode* output = node_.body->outputs[0].node();
      for (size_t i = 0; i < operations_.size(); ++i)
        if (operations_[i].node == output) anchor_ = int(i);
      if (anchor_ < 0) anchor_ = int(operations_.size()) - 1;
    }
    std::unordered_set<const graph::GraphNode*> downstream{operations_[size_t(anchor_)].node};
    for (size_t i = size_t(anchor_) + 1; i < operations_.size(); ++i)
      for (const graph::Value& input : operations_[i].node->inputs)
        if (input.defined() && downstream.count(input.node())) {
          operations_[i].isEpilogue = true;
          downstream.insert(operations_[i].node);
          break;
        }
  }

  bool hasEpilogue() const {
    for (const BodyOperation& op : operations_)
      if (op.isEpilogue) return true;
    return false;
  }

  // Step 3: every kernel copied onto its producers' outputs. The anchor keeps its stage names
  // (its schedule refers to them); other operations' stages are prefixed with their index.
  Status rewireKernels() {
    const BodyOperation& anchor = operations_[size_t(anchor_)];
    for (const te::Operation& op : te::postOrder(anchor.kernel.workload.outputs))
      if (te::asCompute(op)) takenNames_.insert(op.name());
    fusedInputs_.assign(node_.inputs.size(), te::Tensor());
    std::map<std::pair<const graph::GraphNode*, int>, te::Tensor> tensorOf;
    for (size_t i = 0; i < operations_.size(); ++i) {
      BodyOperation& operation = operations_[i];
      const graph::OpKernel& kernel = operation.kernel;
      bool isAnchor = int(i) == anchor_;
      TESSEL_ICHECK(kernel.inputIndices.size() == kernel.workload.inputs.size())
          << operation.node->op << " kernel with " << kernel.workload.inputs.size() << " placeholders and "
          << kernel.inputIndices.size() << " input indices";
      te::TensorReplacements replacements;
      for (size_t j = 0; j < kernel.workload.inputs.size(); ++j) {
        const te::Tensor& placeholder = kernel.workload.inputs[j];
        const graph::Value& value = operation.node->inputs.at(size_t(kernel.inputIndices[j]));
        TESSEL_ICHECK(value.defined()) << operation.node->op << " kernel reads an omitted input";
        te::Tensor source;
        if (graph::asInput(value.node())) {
          int k = bodyInputIndex_.at(value.node());
          auto fused = fusedInput(k, placeholder, isAnchor ? placeholder.name() : "input" + std::to_string(k));
          if (!fused) return fused.error();
          source = *fused;
        } else if (graph::asOperation(value.node())) {
          auto it = tensorOf.find({value.node(), value.index()});
          TESSEL_ICHECK(it != tensorOf.end()) << "body operation " << operation.node->name << " before its producer";
          source = it->second;
        } else {
          return error("its body operation " + operation.node->op + " '" + operation.node->name +
                           "' reads the constant '" + value.name() + "' at run time",
                       "FuseOps keeps only constants needed by value inside a body; pass the others as inputs");
        }
        if (source.dtype() == placeholder.dtype() && constantShape(source) != constantShape(placeholder) &&
            elementCount(constantShape(source)) == elementCount(constantShape(placeholder)))
          source = rowMajorView(source, placeholder, "op" + std::to_string(i) + ".view" + std::to_string(j));
        if (source.dtype() != placeholder.dtype() || constantShape(source) != constantShape(placeholder))
          return error("inside its body, " + operation.node->op + " '" + operation.node->name + "' expects " +
                       placeholder.dtype().toString() + "[" + shapeName(constantShape(placeholder)) + "] for '" +
                       value.name() + "', which is " + source.dtype().toString() + "[" +
                       shapeName(constantShape(source)) + "]");
        replacements[placeholder.op().get()] = source;
      }
      std::string prefix = isAnchor ? "" : "op" + std::to_string(i) + ".";
      te::TensorReplacements copies;
      operation.outputs = te::rewire(kernel.workload.outputs, replacements,
                                     [&](const std::string& name) { return prefix + name; }, &copies);
      for (auto& [original, copy] : copies) {
        operation.computes.push_back(copy);
        allTensors_.push_back(copy);
        if (isAnchor) anchorStages_.insert(copy.name());
      }
      for (size_t o = 0; o < operation.outputs.size(); ++o) tensorOf[{operation.node, int(o)}] = operation.outputs[o];
    }
    const graph::Value& result = node_.body->outputs[0];
    auto it = tensorOf.find({result.node(), result.index()});
    if (it == tensorOf.end()) return error("its body output is not computed by a body operation");
    result_ = it->second;
    return Status::success();
  }

  // The placeholder standing for fused input k, made on first use, named unlike any stage.
  Expected<te::Tensor> fusedInput(int k, const te::Tensor& like, const std::string& preferredName) {
    te::Tensor& slot = fusedInputs_[size_t(k)];
    if (!slot.defined()) {
      std::string base = identifierFrom(preferredName), name = base;
      for (int n = 1; takenNames_.count(name); ++n) name = base + "_" + std::to_string(n);
      takenNames_.insert(name);
      slot = te::placeholder(like.shape(), like.dtype(), name);
      allTensors_.push_back(slot);
    }
    return slot;
  }

  // The anchor's default schedule, as a trace made on the anchor's own workload; an
  // elementwise anchor that computes the group's result sees the whole composed pipeline
  // instead, so its schedule finds the reads of the operations inlined into it (the
  // per-channel scale of a batch norm before a Relu).
  Trace traceOfAnchor() const {
    const BodyOperation& anchor = operations_[size_t(anchor_)];
    const graph::OpKernel& kernel = anchor.kernel;
    if (!kernel.schedule) return {};
    Workload subject = kernel.workload;
    bool elementwise = anchor.pattern == OpPattern::ElementWise || anchor.pattern == OpPattern::Broadcast;
    if (elementwise && anchor.outputs.size() == 1 && anchor.outputs[0] == result_) subject.outputs = {result_};
    auto schedule = kernel.schedule(subject, target_);
    if (!schedule && !(subject.outputs[0] == kernel.workload.outputs[0])) schedule = kernel.schedule(kernel.workload, target_);
    return schedule ? schedule->trace() : Trace();
  }

  // The fused placeholders that `outputs` read, in node-input order, with their indices.
  void setInputs(ComposedForm& form) const {
    std::unordered_set<const Node*> reached;
    for (const te::Operation& op : te::postOrder(form.workload.outputs)) reached.insert(op.get());
    for (size_t k = 0; k < fusedInputs_.size(); ++k)
      if (fusedInputs_[k].defined() && reached.count(fusedInputs_[k].op().get())) {
        form.workload.inputs.push_back(fusedInputs_[k]);
        form.inputIndices.push_back(int(k));
      }
    form.workload.name = identifierFrom(node_.op) + "_" + shapeName(constantShape(form.workload.outputs[0]));
    form.workload.flops = 0;
    for (const BodyOperation& op : operations_) {
      form.workload.flops += op.kernel.workload.flops;
      form.workload.fixedStructure = form.workload.fixedStructure || op.kernel.workload.fixedStructure;
    }
  }

  // A schedule of `outputs` with every stage outside the anchor inlined where it can be
  // (reductions stay at root), then the anchor's trace replayed through `replay`.
  Expected<Schedule> scheduleAroundAnchor(const std::vector<te::Tensor>& outputs,
                                          const std::function<Status(Schedule&, const Primitive&)>& replay) const {
    std::optional<Schedule> made;
    try {
      made.emplace(outputs);
    } catch (const UserError& e) {
      return e.diagnostic;
    }
    Schedule& s = *made;
    std::vector<std::string> others;
    for (const Stage& stage : s.stages())
      if (te::asCompute(stage.op) && !stage.isOutput && !anchorStages_.count(stage.name)) others.push_back(stage.name);
    for (const std::string& name : others) (void)s.computeInline(name);  // a reduction refuses and stays at root
    for (const Primitive& primitive : anchorTrace_.primitives)
      if (Status st = replay(s, primitive); !st) return st.error();
    return s;
  }

  // Form 1: the epilogue merged into the anchor's output stage.
  Expected<ComposedForm> mergedForm() const {
    const BodyOperation& anchor = operations_[size_t(anchor_)];
    if (anchor.outputs.size() != 1) return error("the anchor has several outputs");
    const te::Tensor& anchorOutput = anchor.outputs[0];
    const te::ComputeOpNode* anchorCompute = te::asCompute(anchorOutput.op());
    const te::ComputeOpNode* resultCompute = te::asCompute(result_.op());
    if (!anchorCompute || !resultCompute) return error("the anchor or the result is not a compute");
    if (constantShape(result_) != constantShape(anchorOutput))
      return error("the epilogue changes the anchor's shape");
    std::vector<te::Tensor> inlined;
    for (const BodyOperation& op : operations_)
      if (op.isEpilogue)
        for (const te::Tensor& compute : op.computes) {
          if (!te::asCompute(compute.op())->reduceAxes.empty()) return error("the epilogue has a reduction");
          if (!(compute == result_)) inlined.push_back(compute);
        }
    bool anchorReduces = !anchorCompute->reduceAxes.empty();
    if (!anchorReduces) inlined.push_back(anchorOutput);
    if (anchorReduces && !cacheWritesFirst(anchorOutput.name()))
      return error("the anchor's output is a reduction its schedule does not keep in registers");

    // The merged stage has the anchor output's axis names over the result's extents.
    std::vector<IterVar> axes;
    VarMap toMergedAxes;
    for (size_t d = 0; d < anchorCompute->axes.size(); ++d) {
      const IterVar& like = anchorCompute->axes[d];
      IterVar axis(Var(like.name()), Range::fromMinExtent(Expr(0), result_.shape()[d]), IterVarType::DataParallel);
      toMergedAxes[resultCompute->axes[d].var().get()] = axis.var();
      axes.push_back(axis);
    }
    Expr body = substitute(te::inlineReads(resultCompute->body, inlined), toMergedAxes);
    std::string name = anchorReduces ? anchorOutput.name() + ".epilogue" : anchorOutput.name();
    Buffer buffer(name, result_.dtype(), result_.shape());
    te::Tensor merged(
        te::makeComputeOp(name, anchorCompute->tag, buffer, axes, body, te::tensorsReadBy(body, allTensors_)));

    ComposedForm form;
    form.workload.outputs = {merged};
    setInputs(form);
    const std::string anchorName = anchorOutput.name();
    auto schedule = scheduleAroundAnchor(form.workload.outputs, [&](Schedule& s, const Primitive& step) -> Status {
      if (!anchorReduces) return s.apply(step);
      // As Gemm does: the register tile stays a cache stage of the reduction, the reduction
      // itself becomes a copy that is inlined, and the merged stage takes its loops.
      if (step.kind == PrimitiveKind::CacheWrite && step.stage == anchorName) {
        if (Status st = s.apply(step); !st) return st;
        return s.computeInline(anchorName);
      }
      Primitive moved = step;
      if (moved.stage == anchorName) moved.stage = name;
      if (moved.kind == PrimitiveKind::ComputeAt && moved.target == anchorName) moved.target = name;
      for (std::string& reader : moved.readers)
        if (reader == anchorName) reader = name;
      return s.apply(moved);
    });
    if (!schedule) return schedule.error();
    form.trace = schedule->trace();
    return form;
  }

  // True when the anchor's trace moves `stage`'s reduction into a cache stage before doing
  // anything else to it (the matmul recipe), so its loops can go to a merged epilogue.
  bool cacheWritesFirst(const std::string& stage) const {
    for (const Primitive& step : anchorTrace_.primitives) {
      bool touches = step.stage == stage || step.target == stage;
      if (!touches) continue;
      return step.kind == PrimitiveKind::CacheWrite && step.stage == stage;
    }
    return false;
  }

  // Form 2 (scheduled) and 3 (every stage at root): each operation's result in its own
  // stage; with `scheduled`, producers inlined, the anchor's schedule replayed and the
  // epilogue's output given an elementwise schedule.
  Expected<ComposedForm> materializedForm(bool scheduled) const {
    ComposedForm form;
    form.workload.outputs = {result_};
    setInputs(form);
    if (!scheduled) {
      try {
        form.trace = Schedule(form.workload.outputs).trace();
      } catch (const UserError& e) {
        return e.diagnostic;
      }
      return form;
    }
    auto schedule = scheduleAroundAnchor(form.workload.outputs,
                                         [](Schedule& s, const Primitive& step) { return s.apply(step); });
    if (!schedule) return schedule.error();
    if (!anchorStages_.count(result_.name())) scheduleAsElementwise(*schedule, result_);
    form.trace = schedule->trace();
    return form;
  }

  // Gives stage `output` the elementwise operators' default schedule (axes fused, vectors,
  // parallel blocks) as far as it applies; a step that does not apply ends it early.
  void scheduleAsElementwise(Schedule& s, const te::Tensor& output) const {
    const te::ComputeOpNode* compute = te::asCompute(output.op());
    if (!compute || !compute->reduceAxes.empty()) return;
    for (size_t d = 0; d < compute->axes.size(); ++d)
      if (compute->axes[d].name() != axisName(int64_t(d))) return;
    auto reference = defaultElementwiseSchedule(unaryElementwise(UnaryOp::Relu, constantShape(output), output.dtype()),
                                                target_);
    if (!reference) return;
    for (Primitive step : reference->trace().primitives) {
      if (step.stage == "out") step.stage = output.name();
      if (!s.apply(step)) return;
    }
  }

  Status checkLowers(const ComposedForm& form) const {
    auto schedule = Schedule::replay(form.workload.outputs, form.trace);
    if (!schedule) return schedule.error();
    auto lowered = lower(*schedule, form.workload.args(), form.workload.name);
    if (!lowered) return lowered.error();
    return Status::success();
  }

  static graph::OpKernel kernelFrom(ComposedForm form) {
    graph::OpKernel kernel;
    kernel.workload = std::move(form.workload);
    kernel.inputIndices = std::move(form.inputIndices);
    // The schedule was chosen (and checked) for this very pipeline; replaying it is exact.
    kernel.schedule = [trace = std::move(form.trace)](const Workload& workload, const Target&) {
      return Schedule::replay(workload.outputs, trace);
    };
    return kernel;
  }

  const graph::OperationNode& node_;
  const Target target_;
  const graph::OpRegistry& registry_;
  std::unordered_map<const graph::GraphNode*, int> bodyInputIndex_;
  std::vector<BodyOperation> operations_;
  int anchor_ = -1;
  std::vector<te::Tensor> fusedInputs_;
  std::vector<te::Tensor> allTensors_;  ///< Fused placeholders and every rewired compute.
  std::unordered_set<std::string> takenNames_;
  std::unordered_set<std::string> anchorStages_;
  te::Tensor result_;
  Trace anchorTrace_;
};

}  // namespace

Expected<graph::OpKernel> composeFusedKernel(const graph::OperationNode& node, const Target& target,
                                            const graph::OpRegistry& registry) {
  TESSEL_ICHECK(node.isFused()) << "composeFusedKernel on the primitive operation " << node.name;
  return FusedKernelComposer(node, target, registry).compose();
}

}  // namespace tessel::driver
