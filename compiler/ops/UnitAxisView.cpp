// Rewrites a workload's tensor expressions to read inputs without a unit axis.
#include "compiler/ops/UnitAxisView.h"

#include <map>

#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// Points loads of replaced placeholders at their replacements, dropping the unit axis' index.
class DropAxisInLoads : public IRMutator {
public:
  DropAxisInLoads(const std::map<const Node*, te::Tensor>& replaced, size_t axis) : replaced_(replaced), axis_(axis) {}

protected:
  Expr visit(const BufferLoadNode* node, const Expr& self) override {
    Expr rebuilt = IRMutator::visit(node, self);
    const auto* load = rebuilt.as<BufferLoadNode>();
    auto it = replaced_.find(load->buffer.get());
    if (it == replaced_.end()) return rebuilt;
    std::vector<Expr> indices = load->indices;
    indices.erase(indices.begin() + long(axis_));
    return it->second(indices);
  }

private:
  const std::map<const Node*, te::Tensor>& replaced_;
  size_t axis_;
};

std::vector<Expr> withoutAxis(const std::vector<Expr>& shape, size_t axis) {
  std::vector<Expr> out = shape;
  out.erase(out.begin() + long(axis));
  return out;
}
}  // namespace

Workload dropUnitAxis(const Workload& workload, const std::vector<size_t>& inputs, size_t axis,
                      const std::string& viewName) {
  std::map<const Node*, te::Tensor> replacedBuffers;  // old placeholder buffer -> new placeholder
  std::map<const Node*, te::Tensor> newOps;           // old operation -> its rewritten tensor
  Workload out = workload;
  for (size_t i : inputs) {
    const te::Tensor& old = workload.inputs[i];
    TESSEL_ICHECK(axis < size_t(old.ndim()) && isConstInt(old.shape()[axis], 1))
        << "dropUnitAxis: input " << old.name() << " has no unit axis " << axis;
    te::Tensor fresh = te::placeholder(withoutAxis(old.shape(), axis), old.dtype(), old.name());
    replacedBuffers[old.buffer().get()] = fresh;
    newOps[old.op().get()] = fresh;
    out.inputs[i] = fresh;
  }
  DropAxisInLoads mutator(replacedBuffers, axis);
  for (const te::Operation& op : te::postOrder(workload.outputs)) {
    const auto* compute = te::asCompute(op);
    if (!compute) continue;
    Expr body = mutator.mutate(compute->body);
    std::vector<te::Tensor> reads;
    bool changed = !body.same(compute->body);
    for (const te::Tensor& input : compute->inputs) {
      auto it = newOps.find(input.op().get());
      reads.push_back(it == newOps.end() ? input : it->second);
      changed = changed || it != newOps.end();
    }
    if (!changed) continue;
    newOps[op.get()] = te::Tensor(te::makeComputeOp(compute->name, compute->tag, compute->buffer, compute->axes, body, reads));
  }
  const te::Tensor& result = workload.outputs[0];
  TESSEL_ICHECK(axis < size_t(result.ndim()) && isConstInt(result.shape()[axis], 1))
      << "dropUnitAxis: output " << result.name() << " has no unit axis " << axis;
  auto it = newOps.find(result.op().get());
  te::Tensor rewritten = it == newOps.end() ? result : it->second;
  std::vector<std::string> names;
  for (const IterVar& iv : te::asCompute(rewritten.op())->axes) names.push_back(iv.name());
  names.erase(names.begin() + long(axis));
  out.outputs = {te::compute(
      withoutAxis(result.shape(), axis),
      [&](const std::vector<Var>& at) {
        std::vector<Expr> indices = asExprs(at);
        indices.insert(indices.begin() + long(axis), Expr(int64_t(0)));
        return rewritten(indices);
      },
      viewName, names, "view")};
  return out;
}

}  // namespace tessel
