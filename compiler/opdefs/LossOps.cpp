// The ONNX loss operators NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12+):
// per-element losses picked by integer labels, optional class weights and an ignored label,
// reduced to none, sum or a weighted mean.
#include "compiler/opdefs/OpRegistry.h"

#include "core/ir/IROperators.h"

namespace tessel::graph {

namespace {

enum class Reduction { None, Sum, Mean };

/// What both losses share: input [N, C, d1..dk] (log-probabilities or scores), labels
/// [N, d1..dk] of an integer type, optional weights [C].
struct LossParams {
  std::vector<int64_t> inputShape;  ///< [N, C, d...]
  std::vector<int64_t> labelShape;  ///< [N, d...]
  Reduction reduction = Reduction::Mean;
  std::optional<int64_t> ignoreIndex;
  bool weighted = false;
  DataType dtype;
  DataType labelType;
};

Expected<LossParams> lossParams(const OpCall& call) {
  LossParams p;
  const TensorType& input = call.inputTypes[0];
  const TensorType& labels = call.inputTypes[1];
  if (!input.dtype.isFloat()) return call.error("input 0 must be a floating-point tensor, got " + input.dtype.toString());
  if (!labels.dtype.isIntegral()) return call.error("the labels (input 1) must be integers, got " + labels.dtype.toString());
  if (input.shape.size() < 2) return call.error("input 0 needs at least 2 dimensions [N, C, ...]");
  p.inputShape = input.shape;
  p.labelShape = labels.shape;
  std::vector<int64_t> expected{input.shape[0]};
  expected.insert(expected.end(), input.shape.begin() + 2, input.shape.end());
  if (labels.shape != expected)
    return call.error("the labels' shape " + labels.toString() + " does not match the input's [N, d1, ...] " +
                      TensorType{labels.dtype, expected, ""}.toString());
  p.weighted = call.hasInput(2);
  if (p.weighted && (call.inputTypes[2].shape != std::vector<int64_t>{input.shape[1]} ||
                     call.inputTypes[2].dtype != input.dtype))
    return call.error("the weights (input 2) must be " + TensorType{input.dtype, {input.shape[1]}, ""}.toString());
  auto reduction = call.stringAttr("reduction", "mean");
  if (!reduction) return reduction.error();
  if (*reduction == "none") p.reduction = Reduction::None;
  else if (*reduction == "sum") p.reduction = Reduction::Sum;
  else if (*reduction == "mean") p.reduction = Reduction::Mean;
  else return call.error("reduction '" + *reduction + "' is not one of none, sum, mean");
  if (call.hasAttr("ignore_index")) {
    auto ignore = call.intAttr("ignore_index", 0);
    if (!ignore) return ignore.error();
    p.ignoreIndex = *ignore;
  }
  p.dtype = input.dtype;
  p.labelType = labels.dtype;
  return p;
}

std::vector<int64_t> lossShape(const LossParams& p) {
  return p.reduction == Reduction::None ? p.labelShape : std::vector<int64_t>{};
}

/// The loss of every labelled element of `logProb` ([N, C, d...] log-probabilities), reduced
/// as asked. `weights` may be undefined. Stages: "loss" (per element), then "loss.sum",
/// "weight.sum" and "out" for the reductions.
te::Tensor negativeLogLikelihood(const LossParams& p, const te::Tensor& logProb, const te::Tensor& labels,
                                 const te::Tensor& weights) {
  int64_t classes = p.inputShape[1];
  DataType index = DataType::index();
  // The label of element (n, d...), its class index clamped into range (an ignored label may
  // lie outside it) and whether it counts.
  auto labelAt = [&](const std::vector<Expr>& position) { return cast(index, labels(position)); };
  auto counts = [&](const Expr& label) -> Expr {
    Expr inRange = label >= IntImmNode::make(index, 0) && label < IntImmNode::make(index, classes);
    if (!p.ignoreIndex) return inRange;
    return inRange && ne(label, IntImmNode::make(index, *p.ignoreIndex));
  };
  auto clampClass = [&](const Expr& label) {
    return max(min(label, IntImmNode::make(index, classes - 1)), IntImmNode::make(index, 0));
  };
  Expr zero = FloatImmNode::make(p.dtype, 0.0), one = FloatImmNode::make(p.dtype, 1.0);
  auto weightOf = [&](const Expr& label) {
    Expr w = p.weighted ? weights({clampClass(label)}) : one;
    return select(counts(label), w, zero);
  };
  auto lossAt = [&](const std::vector<Expr>& position) {
    Expr label = labelAt(position);
    std::vector<Expr> inputIndex{position[0], clampClass(label)};
    inputIndex.insert(inputIndex.end(), position.begin() + 1, position.end());
    return select(counts(label), -logProb(inputIndex) * weightOf(label), zero);
  };
  std::vector<std::string> names{"n"};
  for (size_t d = 1; d < p.labelShape.size(); ++d) names.push_back("d" + std::to_string(d));
  if (p.reduction == Reduction::None)
    return te::compute(toExprs(p.labelShape), [&](const std::vector<Var>& axes) { return lossAt(asExprs(axes)); },
                       "out", names, "loss");

  std::vector<IterVar> reduceAxes;
  std::vector<Expr> position;
  for (size_t d = 0; d < p.labelShape.size(); ++d) {
    reduceAxes.push_back(te::reduceAxis(IntImmNode::make(index, p.labelShape[d]), "r" + names[d]));
    position.push_back(reduceAxes.back()->var);
  }
  te::Tensor lossSum = te::compute(
      {}, [&](const std::vector<Var>&) { return te::sum(lossAt(position), reduceAxes); }, "loss.sum", {}, "loss");
  if (p.reduction == Reduction::Sum) return lossSum;
  std::vector<IterVar> weightAxes;
  std::vector<Expr> weightPosition;
  for (size_t d = 0; d < p.labelShape.size(); ++d) {
    weightAxes.push_back(te::reduceAxis(IntImmNode::make(index, p.labelShape[d]), "w" + names[d]));
    weightPosition.push_back(weightAxes.back()->var);
  }
  te::Tensor weightSum = te::compute(
      {}, [&](const std::vector<Var>&) { return te::sum(weightOf(labelAt(weightPosition)), weightAxes); },
      "weight.sum", {}, "loss");
  return te::compute(
      {}, [&](const std::vector<Var>&) { return lossSum(std::vector<Expr>{}) / weightSum(std::vector<Expr>{}); },
      "out", {}, "loss");
}

/// log_softmax of [N, C, d...] along C. Stages "scores.max", "scores.sumexp", "log_prob".
te::Tensor logSoftmaxAlongClasses(const LossParams& p, const te::Tensor& scores) {
  std::vector<int64_t> rowShape = p.labelShape;  // [N, d...]
  int64_t classes = p.inputShape[1];
  auto withClass = [](const std::vector<Expr>& row, Expr c) {
    std::vector<Expr> index{row[0], std::move(c)};
    index.insert(index.end(), row.begin() + 1, row.end());
    return index;
  };
  IterVar rc = te::reduceAxis(IntImmNode::make(DataType::index(), classes), "rc");
  te::Tensor rowMax = te::compute(
      toExprs(rowShape),
      [&](const std::vector<Var>& row) { return te::maximum(scores(withClass(asExprs(row), rc->var)), {rc}); },
      "scores.max", axisNames(rowShape.size()), "loss");
  IterVar rs = te::reduceAxis(IntImmNode::make(DataType::index(), classes), "rs");
  te::Tensor sumExp = te::compute(
      toExprs(rowShape),
      [&](const std::vector<Var>& row) {
        std::vector<Expr> r = asExprs(row);
        return te::sum(exp(scores(withClass(r, rs->var)) - rowMax(r)), {rs});
      },
      "scores.sumexp", axisNames(rowShape.size()), "loss");
  return te::compute(
      toExprs(p.inputShape),
      [&](const std::vector<Var>& axes) {
        std::vector<Expr> all = asExprs(axes);
        std::vector<Expr> row{all[0]};
        row.insert(row.end(), all.begin() + 2, all.end());
        return scores(all) - rowMax(row) - log(sumExp(row));
      },
      "log_prob", axisNames(p.inputShape.size()), "loss");
}

Expected<OpKernel> buildLoss(const OpCall& call, bool withSoftmax) {
  auto p = lossParams(call);
  if (!p) return p.error();
  OpKernel kernel;
  Workload& w = kernel.workload;
  w.name = call.op + "_" + shapeName(p->inputShape);
  te::Tensor input = te::placeholder(toExprs(p->inputShape), p->dtype, withSoftmax ? "scores" : "input");
  te::Tensor labels = te::placeholder(toExprs(p->labelShape), p->labelType, "labels");
  w.inputs = {input, labels};
  kernel.inputIndices = {0, 1};
  te::Tensor weights;
  if (p->weighted) {
    weights = te::placeholder(toExprs({p->inputShape[1]}), p->dtype, "weights");
    w.inputs.push_back(weights);
    kernel.inputIndices.push_back(2);
  }
  te::Tensor logProb = withSoftmax ? logSoftmaxAlongClasses(*p, input) : input;
  w.outputs = {negativeLogLikelihood(*p, logProb, labels, weights)};
  if (withSoftmax && call.outputCount > 1) w.outputs.push_back(logProb);
  w.flops = double(elementCount(p->inputShape)) * (withSoftmax ? 4 : 1);
  return kernel;
}

OpDef lossDef(const char* name, bool withSoftmax) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::Opaque;
  def.minInputs = 2;
  def.maxInputs = 3;
  def.maxOutputs = withSoftmax ? 2 : 1;
  def.inferTypes = [withSoftmax](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = lossParams(call);
    if (!p) return p.error();
    std::vector<TensorType> types{TensorType{p->dtype, lossShape(*p), ""}};
    if (withSoftmax) types.push_back(TensorType{p->dtype, p->inputShape, ""});
    return types;
  };
  def.build = [withSoftmax](const OpCall& call) { return buildLoss(call, withSoftmax); };
  return def;
}

}  // namespace

void registerLossOps(OpRegistry& registry) {
  registry.add(lossDef("NegativeLogLikelihoodLoss", false));
  registry.add(lossDef("SoftmaxCrossEntropyLoss", true));
}

}  // namespace tessel::graph
