// Tensor expressions (TE): placeholders, computes and reductions, the algorithm half of
// Halide's algorithm/schedule split.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/Expr.h"

namespace tessel::te {

struct OperationNode;

/// Handle to an operation (placeholder or compute). Identity is the node.
class Operation : public NodeHandle {
public:
  Operation() = default;
  explicit Operation(const OperationNode* node);
  const OperationNode* get() const;
  const OperationNode* operator->() const { return get(); }
  const std::string& name() const;
};

/// The output of an operation. Calling it with indices reads an element (in TE bodies).
class Tensor {
public:
  Tensor() = default;
  explicit Tensor(Operation op) : op_(std::move(op)) {}
  const Operation& op() const { return op_; }
  bool defined() const { return op_.defined(); }
  const std::string& name() const { return op_.name(); }
  const std::vector<Expr>& shape() const;
  DataType dtype() const;
  int ndim() const { return int(shape().size()); }
  /// The buffer that holds this tensor; TE bodies read it with BufferLoad.
  const Buffer& buffer() const;
  bool operator==(const Tensor& other) const { return op_.same(other.op_); }

  Expr operator()(std::vector<Expr> indices) const;
  template <class... Args>
  Expr operator()(Args... indices) const { return (*this)(std::vector<Expr>{Expr(indices)...}); }

private:
  Operation op_;
};

enum class OperationKind : uint8_t { Placeholder, Compute };

struct OperationNode : Node {
  OperationNode(OperationKind kind, std::string name, std::string tag, Buffer buffer)
      : Node(NodeKind::Other), opKind(kind), name(std::move(name)), tag(std::move(tag)), buffer(std::move(buffer)) {}
  const OperationKind opKind;
  const std::string name;
  const std::string tag;  ///< Op category for schedules and fusion ("matmul", "elemwise", ...).
  const Buffer buffer;    ///< Where the output lives; shape and dtype of the output.
};

struct PlaceholderOpNode : OperationNode {
  PlaceholderOpNode(std::string name, Buffer buffer)
      : OperationNode(OperationKind::Placeholder, std::move(name), "placeholder", std::move(buffer)) {}
};

/// out[axes...] = body, where body may be a Reduce over reduceAxes.
struct ComputeOpNode : OperationNode {
  ComputeOpNode(std::string name, std::string tag, Buffer buffer, std::vector<IterVar> axes,
                std::vector<IterVar> reduceAxes, Expr body, std::vector<Tensor> inputs)
      : OperationNode(OperationKind::Compute, std::move(name), std::move(tag), std::move(buffer)),
        axes(std::move(axes)), reduceAxes(std::move(reduceAxes)), body(std::move(body)),
        inputs(std::move(inputs)) {}
  const std::vector<IterVar> axes;
  const std::vector<IterVar> reduceAxes;
  const Expr body;
  /// The tensors the body reads, in first-use order.
  const std::vector<Tensor> inputs;
};

inline const PlaceholderOpNode* asPlaceholder(const Operation& op) {
  return op.defined() && op->opKind == OperationKind::Placeholder ? static_cast<const PlaceholderOpNode*>(op.get())
                                                                     : nullptr;
}
inline const ComputeOpNode* asCompute(const Operation& op) {
  return op.defined() && op->opKind == OperationKind::Compute ? static_cast<const ComputeOpNode*>(op.get())
                                                                 : nullptr;
}

/// An input tensor of the given shape and type.
Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name);

/// A tensor whose element at (axes...) is fn(axes...). `axisNames` names the axes
/// ("i", "j", ...; defaults i, j, k, l, m, n); `tag` says what kind of op it is.
Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& fn, std::string name,
               std::vector<std::string> axisNames = {}, std::string tag = "");
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var)>& fn, std::string name,
               std::vector<std::string> axisNames = {}, std::string tag = "");
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var)>& fn, std::string name,
               std::vector<std::string> axisNames = {}, std::string tag = "");
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var)>& fn, std::string name,
               std::vector<std::string> axisNames = {}, std::string tag = "");
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var, Var)>& fn, std::string name,
               std::vector<std::string> axisNames = {}, std::string tag = "");

/// A reduction axis over [dom.min, dom.min + dom.extent).
IterVar reduceAxis(Range dom, std::string name);
IterVar reduceAxis(Expr extent, std::string name);

/// Reductions for compute bodies.
Expr sum(Expr source, std::vector<IterVar> axes, Expr condition = Expr());
Expr maximum(Expr source, std::vector<IterVar> axes, Expr condition = Expr());
Expr minimum(Expr source, std::vector<IterVar> axes, Expr condition = Expr());

/// Every operation reachable from `outputs`, producers before consumers.
std::vector<Operation> postOrder(const std::vector<Tensor>& outputs);

/// A compute op from parts, for schedule rewrites (cache stages, inlining). `inputs` must
/// list every tensor whose buffer `body` reads.
Operation makeComputeOp(std::string name, std::string tag, Buffer buffer, std::vector<IterVar> axes, Expr body,
                        std::vector<Tensor> inputs);

}  // namespace tessel::te
