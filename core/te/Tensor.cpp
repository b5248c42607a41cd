// Construction of tensor expressions and traversal of the operation graph.
#include "core/te/Tensor.h"

#include <unordered_set>

#include "core/ir/IRVisitor.h"
#include "core/ir/IROperators.h"
#include "core/support/Error.h"

namespace tessel::te {

Operation::Operation(const OperationNode* node) : NodeHandle(node) {}
const OperationNode* Operation::get() const { return static_cast<const OperationNode*>(NodeHandle::get()); }
const std::string& Operation::name() const { return get()->name; }

const std::vector<Expr>& Tensor::shape() const { return op_->buffer.shape(); }
DataType Tensor::dtype() const { return op_->buffer.dtype(); }
const Buffer& Tensor::buffer() const { return op_->buffer; }

namespace {
// The tensors read while a compute() body function runs. A body is built by calling
// tensors, so recording those calls gives the op's inputs without any global registry.
thread_local std::vector<Tensor>* currentInputs = nullptr;

void recordInput(const Tensor& tensor) {
  if (!currentInputs) return;
  for (auto& seen : *currentInputs)
    if (seen == tensor) return;
  currentInputs->push_back(tensor);
}

std::vector<IterVar> collectReduceAxes(const Expr& body) {
  std::vector<IterVar> axes;
  if (auto* reduce = body.as<ReduceNode>()) axes = reduce->axes;
  // A reduction anywhere else is not supported: lowering expects it at the root.
  postOrderVisit(body, [&](const Expr& e) {
    if (e.as<ReduceNode>() && !e.same(body))
      throw UserError({"a reduction (sum/max/min) must be the whole body of a compute, not part of it", "", 0, 0,
                       "compute the reduction as its own tensor and use it in a second compute"});
  });
  return axes;
}
}  // namespace

Expr Tensor::operator()(std::vector<Expr> indices) const {
  TESSEL_ICHECK(indices.size() == shape().size())
      << "tensor " << name() << " has " << shape().size() << " dimensions, indexed with " << indices.size();
  for (auto& index : indices) index = cast(DataType::index(), index);
  recordInput(*this);
  return BufferLoadNode::make(buffer(), std::move(indices));
}

Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  for (auto& extent : shape) extent = cast(DataType::index(), extent);
  Buffer buffer(name, dtype, shape);
  return Tensor(Operation(new PlaceholderOpNode(std::move(name), std::move(buffer))));
}

Operation makeComputeOp(std::string name, std::string tag, Buffer buffer, std::vector<IterVar> axes, Expr body,
                        std::vector<Tensor> inputs) {
  auto reduceAxes = collectReduceAxes(body);
  return Operation(new ComputeOpNode(std::move(name), std::move(tag), std::move(buffer), std::move(axes),
                                     std::move(reduceAxes), std::move(body), std::move(inputs)));
}

Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& fn, std::string name,
               std::vector<std::string> axisNames, std::string tag) {
  static const char* defaultNames[] = {"i", "j", "k", "l", "m", "n", "p", "q"};
  std::vector<IterVar> axes;
  std::vector<Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    shape[d] = cast(DataType::index(), shape[d]);
    std::string axisName = d < axisNames.size() ? axisNames[d]
                           : d < 8              ? defaultNames[d]
                                                : "ax" + std::to_string(d);
    Var var(axisName);
    vars.push_back(var);
    axes.push_back(IterVar(var, Range::fromMinExtent(Expr(0), shape[d]), IterVarType::DataParallel));
  }
  std::vector<Tensor> inputs;
  std::vector<Tensor>* saved = currentInputs;
  currentInputs = &inputs;
  Expr body;
  try {
    body = fn(vars);
  } catch (...) {
    currentInputs = saved;
    throw;
  }
  currentInputs = saved;
  TESSEL_ICHECK(body.defined()) << "compute " << name << ": the body function returned nothing";
  Buffer buffer(name, body.dtype(), shape);
  return Tensor(makeComputeOp(std::move(name), std::move(tag), std::move(buffer), std::move(axes), std::move(body),
                              std::move(inputs)));
}

Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var)>& fn, std::string name,
               std::vector<std::string> axisNames, std::string tag) {
  TESSEL_ICHECK(shape.size() == 1) << "compute " << name << ": body takes 1 index for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return fn(v[0]); }, std::move(name),
                 std::move(axisNames), std::move(tag));
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var)>& fn, std::string name,
               std::vector<std::string> axisNames, std::string tag) {
  TESSEL_ICHECK(shape.size() == 2) << "compute " << name << ": body takes 2 indices for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return fn(v[0], v[1]); }, std::move(name),
                 std::move(axisNames), std::move(tag));
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var)>& fn, std::string name,
               std::vector<std::string> axisNames, std::string tag) {
  TESSEL_ICHECK(shape.size() == 3) << "compute " << name << ": body takes 3 indices for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return fn(v[0], v[1], v[2]); }, std::move(name),
                 std::move(axisNames), std::move(tag));
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var, Var)>& fn, std::string name,
               std::vector<std::string> axisNames, std::string tag) {
  TESSEL_ICHECK(shape.size() == 4) << "compute " << name << ": body takes 4 indices for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return fn(v[0], v[1], v[2], v[3]); },
                 std::move(name), std::move(axisNames), std::move(tag));
}

IterVar reduceAxis(Range dom, std::string name) {
  dom.min = cast(DataType::index(), dom.min);
  dom.extent = cast(DataType::index(), dom.extent);
  return IterVar(Var(std::move(name)), std::move(dom), IterVarType::Reduce);
}
IterVar reduceAxis(Expr extent, std::string name) { return reduceAxis(Range::fromMinExtent(Expr(0), extent), name); }

Expr sum(Expr source, std::vector<IterVar> axes, Expr condition) {
  return ReduceNode::make(Reducer::Sum, std::move(source), std::move(axes), std::move(condition));
}
Expr maximum(Expr source, std::vector<IterVar> axes, Expr condition) {
  return ReduceNode::make(Reducer::Max, std::move(source), std::move(axes), std::move(condition));
}
Expr minimum(Expr source, std::vector<IterVar> axes, Expr condition) {
  return ReduceNode::make(Reducer::Min, std::move(source), std::move(axes), std::move(condition));
}

std::vector<Operation> postOrder(const std::vector<Tensor>& outputs) {
  std::vector<Operation> order;
  std::unordered_set<const Node*> visited;
  std::function<void(const Operation&)> visit = [&](const Operation& op) {
    if (!visited.insert(op.get()).second) return;
    if (auto* compute = asCompute(op))
      for (auto& input : compute->inputs) visit(input.op());
    order.push_back(op);
  };
  for (auto& output : outputs) visit(output.op());
  return order;
}

}  // namespace tessel::te
