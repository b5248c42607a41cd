// Copying tensor-expression operations onto other inputs, and inlining computes into readers.
#include "core/te/Rewire.h"

#include <unordered_set>

#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"
#include "core/support/Error.h"

namespace tessel::te {

namespace {

// Points loads of some buffers at others (the copies' buffers and the replacements').
class LoadRedirector : public IRMutator {
public:
  explicit LoadRedirector(const std::unordered_map<const Node*, Buffer>& targets) : targets_(targets) {}
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Expr visit(const BufferLoadNode* node, const Expr& self) override {
    Expr e = IRMutator::visit(node, self);
    auto* load = e.as<BufferLoadNode>();
    auto it = targets_.find(load->buffer.get());
    if (it == targets_.end()) return e;
    return BufferLoadNode::make(it->second, load->indices);
  }

private:
  const std::unordered_map<const Node*, Buffer>& targets_;
};

// Replaces loads of inlined computes by their bodies at the load's indices.
class ReadInliner : public IRMutator {
public:
  explicit ReadInliner(const std::vector<Tensor>& inlined) {
    for (const Tensor& tensor : inlined) {
      const ComputeOpNode* compute = asCompute(tensor.op());
      TESSEL_ICHECK(compute) << "inlining " << tensor.name() << ", which is not a compute";
      TESSEL_ICHECK(compute->reduceAxes.empty()) << "inlining the reduction " << tensor.name();
      computes_[tensor.buffer().get()] = compute;
    }
  }
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Expr visit(const BufferLoadNode* node, const Expr& self) override {
    Expr e = IRMutator::visit(node, self);
    auto* load = e.as<BufferLoadNode>();
    auto it = computes_.find(load->buffer.get());
    if (it == computes_.end()) return e;
    const ComputeOpNode* compute = it->second;
    VarMap map;
    for (size_t d = 0; d < compute->axes.size(); ++d) map[compute->axes[d].var().get()] = load->indices[d];
    // The body may itself read inlined tensors; their loads get the substituted indices.
    return mutate(substitute(compute->body, map));
  }

private:
  std::unordered_map<const Node*, const ComputeOpNode*> computes_;
};

}  // namespace

std::vector<Tensor> rewire(const std::vector<Tensor>& outputs, const TensorReplacements& replacements,
                           const std::function<std::string(const std::string&)>& rename, TensorReplacements* copies) {
  // Producers before consumers, stopping at replaced tensors (their producers are not needed).
  std::vector<Operation> order;
  std::unordered_set<const Node*> visited;
  std::function<void(const Operation&)> visit = [&](const Operation& op) {
    if (replacements.count(op.get()) || !visited.insert(op.get()).second) return;
    if (const ComputeOpNode* compute = asCompute(op))
      for (const Tensor& input : compute->inputs) visit(input.op());
    order.push_back(op);
  };
  for (const Tensor& output : outputs) visit(output.op());

  TensorReplacements mapped = replacements;  // every operation -> the tensor that now stands for it
  std::unordered_map<const Node*, Buffer> buffers;
  for (auto& [op, replacement] : replacements) {
    const Buffer& from = static_cast<const OperationNode*>(op)->buffer;
    TESSEL_ICHECK(from->dtype == replacement.dtype() && from->shape.size() == replacement.shape().size())
        << "replacing " << from.name() << " by " << replacement.name() << " of another type or rank";
    buffers[from.get()] = replacement.buffer();
  }
  for (const Operation& op : order) {
    const ComputeOpNode* compute = asCompute(op);
    if (!compute) continue;  // a placeholder nobody replaced stays shared
    std::string name = rename(compute->name);
    const Buffer& old = compute->buffer;
    Buffer buffer(name, old->dtype, old->shape, old->scope, old->strides);
    LoadRedirector redirect(buffers);
    Expr body = redirect.mutate(compute->body);
    std::vector<Tensor> inputs;
    for (const Tensor& input : compute->inputs) {
      auto it = mapped.find(input.op().get());
      inputs.push_back(it == mapped.end() ? input : it->second);
    }
    Tensor copy(makeComputeOp(name, compute->tag, buffer, compute->axes, body, std::move(inputs)));
    mapped[op.get()] = copy;
    buffers[old.get()] = buffer;
    if (copies) (*copies)[op.get()] = copy;
  }
  std::vector<Tensor> result;
  for (const Tensor& output : outputs) result.push_back(mapped.count(output.op().get()) ? mapped[output.op().get()] : output);
  return result;
}

Expr inlineReads(const Expr& body, const std::vector<Tensor>& inlined) {
  if (inlined.empty()) return body;
  ReadInliner inliner(inlined);
  return inliner.mutate(body);
}

std::vector<Tensor> tensorsReadBy(const Expr& body, const std::vector<Tensor>& candidates) {
  std::unordered_map<const Node*, const Tensor*> byBuffer;
  for (const Tensor& candidate : candidates) byBuffer[candidate.buffer().get()] = &candidate;
  std::vector<Tensor> read;
  std::unordered_set<const Node*> seen;
  postOrderVisit(body, [&](const Expr& e) {
    auto* load = e.as<BufferLoadNode>();
    if (!load) return;
    auto it = byBuffer.find(load->buffer.get());
    if (it != byBuffer.end() && seen.insert(load->buffer.get()).second) read.push_back(*it->second);
  });
  return read;
}

}  // namespace tessel::te
