// Normalization computes and their default schedule.
#include "compiler/ops/Normalization.h"

#include <cmath>
#include <optional>

#include "compiler/ops/Reduction.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
std::string prefixOf(NormKind kind) {
  switch (kind) {
    case NormKind::Layer: return "layernorm";
    case NormKind::Batch: return "batchnorm";
    case NormKind::Instance: return "instancenorm";
  }
  return "?";
}

std::vector<Expr> toExprs(std::vector<int64_t>::const_iterator begin, std::vector<int64_t>::const_iterator end) {
  std::vector<Expr> out;
  for (auto it = begin; it != end; ++it) out.push_back(Expr(*it));
  return out;
}

// The first normalized axis (Layer, Instance) or the channel axis (Batch), or why the
// parameters are invalid.
Expected<int64_t> firstNormalizedAxis(const NormParams& p) {
  std::string op = prefixOf(p.kind);
  for (int64_t d : p.shape)
    if (d < 1) return Diagnostic{"input dimensions must be positive, got " + shapeName(p.shape), op, 0, 0, ""};
  if (!(p.epsilon >= 0) || !std::isfinite(p.epsilon))
    return Diagnostic{"epsilon must be a finite number >= 0, got " + std::to_string(p.epsilon), op, 0, 0, ""};
  int64_t rank = int64_t(p.shape.size());
  if (p.kind == NormKind::Layer) {
    if (rank < 1) return Diagnostic{"the input must have at least one dimension", op, 0, 0, ""};
    if (p.axis < -rank || p.axis >= rank)
      return Diagnostic{"axis " + std::to_string(p.axis) + " is out of range for rank " + std::to_string(rank), op, 0,
                        0, "use an axis in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]"};
    return p.axis < 0 ? p.axis + rank : p.axis;
  }
  int64_t minimum = p.kind == NormKind::Batch ? 2 : 3;
  if (rank < minimum)
    return Diagnostic{"the input must be N x C" + std::string(minimum == 3 ? " x D1 .. Dn" : " (x D1 .. Dn)") +
                          ", got rank " + std::to_string(rank),
                      op, 0, 0, ""};
  return p.kind == NormKind::Batch ? int64_t(1) : int64_t(2);
}

// Layer and Instance: statistics over the axes from `axis` on, then an affine map with
// scale and bias over those axes (Layer) or per channel (Instance).
Workload normalizeTrailing(const NormParams& p, int64_t axis, DataType dtype) {
  std::string prefix = prefixOf(p.kind);
  int64_t rank = int64_t(p.shape.size());
  std::vector<Expr> fullShape = toExprs(p.shape.begin(), p.shape.end());
  std::vector<Expr> rowShape = toExprs(p.shape.begin(), p.shape.begin() + axis);
  std::vector<std::string> fullNames, rowNames;
  for (int64_t d = 0; d < rank; ++d) {
    fullNames.push_back(axisName(d));
    if (d < axis) rowNames.push_back(axisName(d));
  }
  bool perChannel = p.kind == NormKind::Instance;
  std::vector<Expr> affineShape = perChannel ? std::vector<Expr>{Expr(p.shape[1])}
                                             : toExprs(p.shape.begin() + axis, p.shape.end());
  te::Tensor x = te::placeholder(fullShape, dtype, "x");
  te::Tensor scale = te::placeholder(affineShape, dtype, "scale");
  bool hasBias = perChannel || p.hasBias;
  te::Tensor bias = hasBias ? te::placeholder(affineShape, dtype, "bias") : te::Tensor();
  int64_t count = 1;
  for (int64_t d = axis; d < rank; ++d) count *= p.shape[d];
  Expr inverseCount = makeConst(dtype, 1.0 / double(count));
  // The normalized axes flattened into one reduction index k, so the statistics reduce
  // in vector lanes (laneSplitReduce) whatever the number of normalized axes.
  auto inputAt = [&](const std::vector<Expr>& row, Expr k) {
    std::vector<Expr> indices = row;
    int64_t stride = count;
    for (int64_t d = axis; d < rank; ++d) {
      stride /= p.shape[d];
      indices.push_back(d == axis ? floordiv(k, Expr(stride)) : floormod(floordiv(k, Expr(stride)), Expr(p.shape[d])));
    }
    return indices;
  };
  te::Tensor mean = laneSplitReduce(
      Reducer::Sum, rowShape, rowNames, count,
      [&](const std::vector<Expr>& row, Expr k) { return x(inputAt(row, k)) * inverseCount; }, dtype,
      prefix + ".mean", "norm");
  // Two passes: the variance of the centered values, which does not cancel catastrophically
  // when the mean is large against the spread.
  te::Tensor variance = laneSplitReduce(
      Reducer::Sum, rowShape, rowNames, count,
      [&](const std::vector<Expr>& row, Expr k) {
        Expr centered = x(inputAt(row, k)) - mean(row);
        return centered * centered * inverseCount;
      },
      dtype, prefix + ".var", "norm");
  te::Tensor rstd = te::compute(
      rowShape,
      [&](const std::vector<Var>& row) {
        return makeConst(dtype, 1.0) / sqrt(variance(asExprs(row)) + makeConst(dtype, p.epsilon));
      },
      prefix + ".rstd", rowNames, "norm");
  te::Tensor out = te::compute(
      fullShape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> all = asExprs(i);
        std::vector<Expr> row(all.begin(), all.begin() + axis);
        std::vector<Expr> affine =
            perChannel ? std::vector<Expr>{all[1]} : std::vector<Expr>(all.begin() + axis, all.end());
        Expr value = (x(all) - mean(row)) * rstd(row) * scale(affine);
        return hasBias ? value + bias(affine) : value;
      },
      prefix, fullNames, "norm");
  Workload w;
  w.name = prefix + "_" + shapeName(p.shape) + (p.kind == NormKind::Layer ? "_axis" + std::to_string(axis) : "");
  w.inputs = {x, scale};
  if (hasBias) w.inputs.push_back(bias);
  w.outputs = {out};
  if (p.kind == NormKind::Layer && p.statisticsOutputs) {
    // The statistics with the normalized axes kept as ones, as ONNX returns them.
    std::vector<Expr> keptShape = rowShape;
    for (int64_t d = axis; d < rank; ++d) keptShape.push_back(Expr(int64_t(1)));
    for (const te::Tensor& statistic : {mean, rstd})
      w.outputs.push_back(te::compute(
          keptShape,
          [&](const std::vector<Var>& i) { return statistic(std::vector<Expr>(i.begin(), i.begin() + axis)); },
          statistic.name() + ".out", fullNames, "norm"));
    w.name += "_stats";
  }
  // Per element: mean (1), centered square (3), normalize and affine map (4).
  int64_t elements = 1;
  for (int64_t d : p.shape) elements *= d;
  w.flops = 8.0 * double(elements);
  return w;
}

Workload batchNormalization(const NormParams& p, DataType dtype) {
  std::vector<Expr> fullShape = toExprs(p.shape.begin(), p.shape.end());
  std::vector<std::string> names;
  for (int64_t d = 0; d < int64_t(p.shape.size()); ++d) names.push_back(axisName(d));
  std::vector<Expr> channels = {Expr(p.shape[1])};
  te::Tensor x = te::placeholder(fullShape, dtype, "x");
  te::Tensor scale = te::placeholder(channels, dtype, "scale");
  te::Tensor bias = te::placeholder(channels, dtype, "bias");
  te::Tensor mean = te::placeholder(channels, dtype, "mean");
  te::Tensor var = te::placeholder(channels, dtype, "var");
  // (x - mean) * scale / sqrt(var + eps) + bias, folded per channel into x * factor + shift.
  te::Tensor factor = te::compute(
      channels, [&](Var c) { return scale(c) / sqrt(var(c) + makeConst(dtype, p.epsilon)); }, "batchnorm.factor",
      {"ax1"}, "norm");
  te::Tensor shift = te::compute(
      channels, [&](Var c) { return bias(c) - mean(c) * factor(c); }, "batchnorm.shift", {"ax1"}, "norm");
  te::Tensor out = te::compute(
      fullShape, [&](const std::vector<Var>& i) { return x(asExprs(i)) * factor(i[1]) + shift(i[1]); }, "batchnorm",
      names, "norm");
  Workload w;
  w.name = "batchnorm_" + shapeName(p.shape);
  w.inputs = {x, scale, bias, mean, var};
  w.outputs = {out};
  int64_t elements = 1;
  for (int64_t d : p.shape) elements *= d;
  w.flops = 2.0 * double(elements);
  return w;
}
}  // namespace

Expected<Workload> normalization(const NormParams& p, DataType dtype) {
  auto axis = firstNormalizedAxis(p);
  if (!axis) return axis.error();
  if (p.kind == NormKind::Batch) return batchNormalization(p, dtype);
  return normalizeTrailing(p, *axis, dtype);
}

Expected<Schedule> defaultNormalizationSchedule(const Workload& workload, const NormParams& p,
                                                const Target& target) {
  auto axis = firstNormalizedAxis(p);
  if (!axis) return axis.error();
  std::string prefix = prefixOf(p.kind);
  Schedule s(workload.outputs);
  if (!s.findStage(prefix))
    return Diagnostic{"the workload has no stage named '" + prefix + "'", workload.name, 0, 0, ""};
  int64_t rank = int64_t(p.shape.size());
  std::vector<Status> steps;
  auto vectorizeInner = [&](const std::string& stage, const std::string& inner, int64_t extent) {
    if (extent < target.vectorLanes()) return;
    steps.push_back(s.split(stage, inner, target.vectorLanes(), inner + "o", inner + "i"));
    steps.push_back(s.vectorize(stage, inner + "i"));
  };
    if (p.kind == NormKind::Batch) {
    // Rows of (n, c); each row's pixels fused into one vectorized loop.
    int64_t pixels = 1;
    std::vector<std::string> spatial;
    for (int64_t d = 2; d < rank; ++d) {
      pixels *= p.shape[d];
      spatial.push_back(axisName(d));
    }
    if (rank == 2) {
      parallelizeRows(s, prefix, {"ax0"}, p.shape[0], target, steps);
      vectorizeInner(prefix, "ax1", p.shape[1]);
    } else {
      parallelizeRows(s, prefix, {"ax0", "ax1"}, p.shape[0] * p.shape[1], target, steps);
      std::string inner = spatial.front();
      if (spatial.size() > 1) {
        inner = "pixels";
        steps.push_back(s.fuse(prefix, spatial, inner));
      }
      vectorizeInner(prefix, inner, pixels);
    }
  } else {
    // The mean is read by the variance and the output, so the statistics stay at root
    // (compute_at needs a single reader); each stage runs its rows in parallel.
    std::vector<std::string> rowAxes;
    int64_t rows = 1;
    for (int64_t d = 0; d < *axis; ++d) {
      rowAxes.push_back(axisName(d));
      rows *= p.shape[d];
    }
    // 1/sqrt per row is too little work to share out.
    for (const std::string& stage : {prefix + ".mean", prefix + ".var", prefix})
      parallelizeRows(s, stage, rowAxes, rows, target, steps);
    scheduleLaneSplitReduce(s, prefix + ".mean", steps);
    scheduleLaneSplitReduce(s, prefix + ".var", steps);
    vectorizeInner(prefix, axisName(rank - 1), p.shape[rank - 1]);
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

namespace {
Diagnostic normError(const char* op, std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), op, 0, 0, std::move(hint)};
}

std::optional<Diagnostic> checkPositive(const char* op, const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 1) return normError(op, "input dimensions must be positive, got " + shapeName(shape));
  return std::nullopt;
}
}  // namespace

Expected<Workload> lpNormalization(const std::vector<int64_t>& shape, int64_t axis, int64_t p, DataType dtype) {
  if (auto e = checkPositive("lpnorm", shape)) return *e;
  int64_t rank = int64_t(shape.size());
  if (rank < 1) return normError("lpnorm", "the input must have at least one dimension");
  if (axis < -rank || axis >= rank)
    return normError("lpnorm", "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (p != 1 && p != 2) return normError("lpnorm", "p must be 1 or 2, got " + std::to_string(p));
  if (axis < 0) axis += rank;
  std::vector<Expr> fullShape = toExprs(shape.begin(), shape.end()), lineShape = fullShape;
  lineShape[size_t(axis)] = Expr(int64_t(1));
  std::vector<std::string> names = axisNames(size_t(rank));
  te::Tensor x = te::placeholder(fullShape, dtype, "x");
  IterVar k = te::reduceAxis(Expr(shape[size_t(axis)]), "k");
  te::Tensor norm = te::compute(
      lineShape,
      [&](const std::vector<Var>& at) {
        std::vector<Expr> indices = asExprs(at);
        indices[size_t(axis)] = k.var();
        Expr v = x(indices);
        return te::sum(p == 1 ? Expr(fabs(v)) : v * v, {k});
      },
      "lpnorm.norm", names, "norm");
  te::Tensor out = te::compute(
      fullShape,
      [&](const std::vector<Var>& at) {
        std::vector<Expr> line = asExprs(at);
        line[size_t(axis)] = Expr(int64_t(0));
        Expr n = p == 1 ? norm(line) : sqrt(norm(line));
        return x(asExprs(at)) / n;
      },
      "lpnorm", names, "norm");
  Workload w;
  w.name = "lpnorm_" + shapeName(shape) + "_axis" + std::to_string(axis) + "_p" + std::to_string(p);
  w.inputs = {x};
  w.outputs = {out};
  w.flops = 3.0 * double(elementCount(shape));
  return w;
}

Expected<Workload> meanVarianceNormalization(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes,
                                             DataType dtype) {
  if (auto e = checkPositive("mvn", shape)) return *e;
  int64_t rank = int64_t(shape.size());
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return normError("mvn", "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    reduced[size_t(a < 0 ? a + rank : a)] = true;
  }
  std::vector<Expr> fullShape = toExprs(shape.begin(), shape.end()), statShape;
  std::vector<IterVar> meanAxes, varAxes;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    statShape.push_back(Expr(reduced[size_t(d)] ? int64_t(1) : shape[size_t(d)]));
    if (!reduced[size_t(d)]) continue;
    count *= shape[size_t(d)];
    meanAxes.push_back(te::reduceAxis(Expr(shape[size_t(d)]), "r" + std::to_string(d)));
    varAxes.push_back(te::reduceAxis(Expr(shape[size_t(d)]), "r" + std::to_string(d)));
  }
  std::vector<std::string> names = axisNames(size_t(rank));
  te::Tensor x = te::placeholder(fullShape, dtype, "x");
  Expr inverseCount = makeConst(dtype, 1.0 / double(count));
  // The input position of a statistics position and reduction axes.
  auto inputAt = [&](const std::vector<Var>& at, const std::vector<IterVar>& window) {
    std::vector<Expr> indices;
    size_t r = 0;
    for (int64_t d = 0; d < rank; ++d) indices.push_back(reduced[size_t(d)] ? Expr(window[r++].var()) : Expr(at[size_t(d)]));
    return indices;
  };
  auto statAt = [&](const std::vector<Var>& at) {
    std::vector<Expr> indices;
    for (int64_t d = 0; d < rank; ++d) indices.push_back(reduced[size_t(d)] ? Expr(int64_t(0)) : Expr(at[size_t(d)]));
    return indices;
  };
  auto reduceOver = [&](Expr value, const std::vector<IterVar>& window) {
    return window.empty() ? value : te::sum(value, window);
  };
  te::Tensor mean = te::compute(
      statShape, [&](const std::vector<Var>& at) { return reduceOver(x(inputAt(at, meanAxes)) * inverseCount, meanAxes); },
      "mvn.mean", names, "norm");
  te::Tensor variance = te::compute(
      statShape,
      [&](const std::vector<Var>& at) {
        Expr centered = x(inputAt(at, varAxes)) - mean(asExprs(at));
        return reduceOver(centered * centered * inverseCount, varAxes);
      },
      "mvn.var", names, "norm");
  te::Tensor out = te::compute(
      fullShape,
      [&](const std::vector<Var>& at) {
        return (x(asExprs(at)) - mean(statAt(at))) / sqrt(variance(statAt(at)) + makeConst(dtype, 1e-9));
      },
      "mvn", names, "norm");
  Workload w;
  std::vector<int64_t> sortedAxes;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[size_t(d)]) sortedAxes.push_back(d);
  w.name = "mvn_" + shapeName(shape) + "_axes" + shapeName(sortedAxes);
  w.inputs = {x};
  w.outputs = {out};
  w.flops = 6.0 * double(elementCount(shape));
  return w;
}

Expected<Workload> localResponseNormalization(const LrnParams& p, DataType dtype) {
  if (auto e = checkPositive("lrn", p.shape)) return *e;
  if (p.shape.size() < 3) return normError("lrn", "the input must be N x C x D1 .. Dn");
  if (p.size < 1) return normError("lrn", "size must be positive");
  int64_t channels = p.shape[1];
  int64_t before = (p.size - 1) / 2;
  std::vector<Expr> fullShape = toExprs(p.shape.begin(), p.shape.end());
  std::vector<std::string> names = axisNames(p.shape.size());
  te::Tensor x = te::placeholder(fullShape, dtype, "x");
  IterVar r = te::reduceAxis(Expr(p.size), "r");
  te::Tensor squares = te::compute(
      fullShape,
      [&](const std::vector<Var>& at) {
        std::vector<Expr> indices = asExprs(at);
        Expr channel = at[1] + r.var() - before;
        Expr inside = channel >= Expr(int64_t(0)) && channel < Expr(channels);
        indices[1] = min(max(channel, Expr(int64_t(0))), Expr(channels - 1));
        Expr v = x(indices);
        return te::sum(select(inside, v * v, makeZero(dtype)), {r});
      },
      "lrn.sum", names, "norm");
  te::Tensor out = te::compute(
      fullShape,
      [&](const std::vector<Var>& at) {
        Expr scaled = makeConst(dtype, p.bias) + makeConst(dtype, p.alpha / double(p.size)) * squares(asExprs(at));
        return x(asExprs(at)) / pow(scaled, makeConst(dtype, p.beta));
      },
      "lrn", names, "norm");
  Workload w;
  w.name = "lrn_" + shapeName(p.shape) + "_size" + std::to_string(p.size);
  w.inputs = {x};
  w.outputs = {out};
  w.flops = double(elementCount(p.shape)) * double(2 * p.size + 4);
  return w;
}

Expected<Workload> batchNormalizationTraining(const std::vector<int64_t>& shape, double epsilon, double momentum,
                                              DataType dtype) {
  if (auto e = checkPositive("batchnorm", shape)) return *e;
  if (shape.size() < 2) return normError("batchnorm", "the input must be N x C (x D1 .. Dn)");
  int64_t rank = int64_t(shape.size()), count = elementCount(shape) / shape[1];
  std::vector<Expr> fullShape = toExprs(shape.begin(), shape.end()), channels = {Expr(shape[1])};
  std::vector<std::string> names = axisNames(size_t(rank));
  te::Tensor x = te::placeholder(fullShape, dtype, "x");
  te::Tensor scale = te::placeholder(channels, dtype, "scale");
  te::Tensor bias = te::placeholder(channels, dtype, "bias");
  te::Tensor runningMean = te::placeholder(channels, dtype, "mean");
  te::Tensor runningVar = te::placeholder(channels, dtype, "var");
  Expr inverseCount = makeConst(dtype, 1.0 / double(count));
  // Every axis but the channel's is reduced.
  auto window = [&]() {
    std::vector<IterVar> axes;
    for (int64_t d = 0; d < rank; ++d)
      if (d != 1) axes.push_back(te::reduceAxis(Expr(shape[size_t(d)]), "r" + std::to_string(d)));
    return axes;
  };
  auto inputAt = [&](Expr c, const std::vector<IterVar>& axes) {
    std::vector<Expr> indices = {axes[0].var(), c};
    for (size_t a = 1; a < axes.size(); ++a) indices.push_back(axes[a].var());
    return indices;
  };
  std::vector<IterVar> meanAxes = window(), varAxes = window();
  te::Tensor mean = te::compute(
      channels, [&](Var c) { return te::sum(x(inputAt(c, meanAxes)) * inverseCount, meanAxes); }, "batchnorm.mean",
      {"ax1"}, "norm");
  te::Tensor variance = te::compute(
      channels,
      [&](Var c) {
        Expr centered = x(inputAt(c, varAxes)) - mean(c);
        return te::sum(centered * centered * inverseCount, varAxes);
      },
      "batchnorm.var", {"ax1"}, "norm");
  te::Tensor out = te::compute(
      fullShape,
      [&](const std::vector<Var>& i) {
        Expr c = i[1];
        return (x(asExprs(i)) - mean(c)) / sqrt(variance(c) + makeConst(dtype, epsilon)) * scale(c) + bias(c);
      },
      "batchnorm", names, "norm");
  Expr keep = makeConst(dtype, momentum), take = makeConst(dtype, 1.0 - momentum);
  te::Tensor newMean = te::compute(
      channels, [&](Var c) { return runningMean(c) * keep + mean(c) * take; }, "batchnorm.running_mean", {"ax1"},
      "norm");
  te::Tensor newVar = te::compute(
      channels, [&](Var c) { return runningVar(c) * keep + variance(c) * take; }, "batchnorm.running_var", {"ax1"},
      "norm");
  Workload w;
  w.name = "batchnorm_training_" + shapeName(shape);
  w.inputs = {x, scale, bias, runningMean, runningVar};
  w.outputs = {out, newMean, newVar};
  w.flops = 6.0 * double(elementCount(shape));
  return w;
}

Expected<Schedule> defaultSimpleNormalizationSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  // The sum of squares of LRN is needed only by its own output element.
  if (s.findStage("lrn.sum")) {
    const auto* out = te::asCompute(s.findStage("lrn")->op);
    steps.push_back(s.computeAt("lrn.sum", "lrn", out->axes.back().name()));
  }
  parallelizeRootStages(s, target, steps);
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
