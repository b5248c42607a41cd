// NonMaxSuppression: greedy selection of the best-scoring, little-overlapping boxes per batch
// and class. How many boxes survive decides the output's shape, and Tessel's shapes are
// static, so the selection runs at compile time on constant inputs and the kernel is the
// resulting table.
#include <algorithm>
#include <numeric>

#include "compiler/opdefs/SignalVisionSupport.h"
#include "compiler/ops/Generate.h"

namespace tessel::graph::signal_vision {

namespace {

/// A box as its extent along each axis, whatever the input's encoding.
struct Box {
  double yMin = 0, xMin = 0, yMax = 0, xMax = 0;
  double area() const { return (yMax - yMin) * (xMax - xMin); }
};

/// Box `i` of `data` ([..., 4] from offset `i * 4`): corners [y1, x1, y2, x2] in any order
/// (center_point_box 0), or [x_center, y_center, width, height] (center_point_box 1).
Box boxAt(const std::vector<double>& data, int64_t i, bool centerFormat) {
  const double* v = data.data() + i * 4;
  if (centerFormat)
    return Box{v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
  return Box{std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

/// Whether `a` and `b` overlap by more than `threshold` (intersection over union); boxes
/// without area never suppress each other.
bool overlapsTooMuch(const Box& a, const Box& b, double threshold) {
  double width = std::min(a.xMax, b.xMax) - std::max(a.xMin, b.xMin);
  double height = std::min(a.yMax, b.yMax) - std::max(a.yMin, b.yMin);
  if (width <= 0 || height <= 0 || a.area() <= 0 || b.area() <= 0) return false;
  double intersection = width * height;
  return intersection / (a.area() + b.area() - intersection) > threshold;
}

/// The single value of optional input `i`, or `fallback` when it is omitted.
Expected<double> optionalScalar(const OpCall& call, size_t i, const std::string& what, double fallback) {
  if (!call.hasInput(i)) return fallback;
  auto values = call.constantDoubles(i, what);
  if (!values) return values.error();
  if (values->size() > 1) return call.error(what + " must hold one value, got " + std::to_string(values->size()));
  return values->empty() ? fallback : values->front();
}

Expected<OpKernel> buildNonMaxSuppression(const OpCall& call) {
  const TensorType& boxesType = call.inputTypes[0];
  const TensorType& scoresType = call.inputTypes[1];
  if (boxesType.shape.size() != 3 || boxesType.shape[2] != 4)
    return call.error("boxes (input 0) must be [batches, boxes, 4], got " + boxesType.toString());
  if (scoresType.shape.size() != 3 || scoresType.shape[0] != boxesType.shape[0] ||
      scoresType.shape[2] != boxesType.shape[1])
    return call.error("scores (input 1) must be [batches, classes, boxes] matching boxes " + boxesType.toString() +
                      ", got " + scoresType.toString());
  auto boxes = call.constantDoubles(0, "boxes");
  if (!boxes) return boxes.error();
  auto scores = call.constantDoubles(1, "scores");
  if (!scores) return scores.error();
  auto maxPerClass = optionalScalar(call, 2, "max_output_boxes_per_class", 0);
  if (!maxPerClass) return maxPerClass.error();
  auto iouThreshold = optionalScalar(call, 3, "iou_threshold", 0);
  if (!iouThreshold) return iouThreshold.error();
  bool hasScoreThreshold = call.hasInput(4);
  auto scoreThreshold = optionalScalar(call, 4, "score_threshold", 0);
  if (!scoreThreshold) return scoreThreshold.error();
  auto centerPointBox = call.intAttr("center_point_box", 0);
  if (!centerPointBox) return centerPointBox.error();
  if (*centerPointBox != 0 && *centerPointBox != 1) return call.error("center_point_box must be 0 or 1");

  int64_t batches = boxesType.shape[0], classes = scoresType.shape[1], count = boxesType.shape[1];
  auto limit = int64_t(std::max(*maxPerClass, 0.0));
  std::vector<double> selected;  // rows of (batch, class, box)
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const double* classScores = scores->data() + (b * classes + c) * count;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < count; ++i)
        if (!hasScoreThreshold || classScores[i] > *scoreThreshold) order.push_back(i);
      // Best score first; equal scores keep the lower box index first.
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t l, int64_t r) { return classScores[l] > classScores[r]; });
      std::vector<Box> kept;
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= limit) break;
        Box box = boxAt(*boxes, b * count + i, *centerPointBox == 1);
        bool suppressed = std::any_of(kept.begin(), kept.end(),
                                      [&](const Box& k) { return overlapsTooMuch(box, k, *iouThreshold); });
        if (suppressed) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {double(b), double(c), double(i)});
      }
    }
  if (selected.empty())
    return call.error("selects no boxes", "empty tensors are not supported; the output would be [0, 3]");
  int64_t rows = int64_t(selected.size()) / 3;
  return opaqueKernel(call, constantTensor({rows, 3}, selected, DataType::int64()), {});
}

}  // namespace

void registerBoxOps(OpRegistry& registry) {
  registry.add(kernelTypedOpaqueOp("NonMaxSuppression", 2, 5, {0, 1, 2, 3, 4}, buildNonMaxSuppression));
}

}  // namespace tessel::graph::signal_vision
