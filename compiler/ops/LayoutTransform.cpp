// Layout transforms between NCHW and NCHW<b>c: compute and default schedule.
#include "compiler/ops/LayoutTransform.h"

#include "core/ir/IROperators.h"

namespace tessel {

std::string blockedChannelLayout(int64_t block) { return "NCHW" + std::to_string(block) + "c"; }

std::optional<int64_t> channelBlockOf(const std::string& layout) {
  if (layout.empty() || layout == "NCHW") return 0;
  if (layout.size() < 6 || layout.compare(0, 4, "NCHW") != 0 || layout.back() != 'c') return std::nullopt;
  std::string digits = layout.substr(4, layout.size() - 5);
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int64_t block = std::stoll(digits);
  if (block < 1) return std::nullopt;
  return block;
}

std::vector<int64_t> unblockedChannelShape(const std::vector<int64_t>& physical, int64_t block) {
  if (block == 0) return physical;
  TESSEL_ICHECK(physical.size() == 5 && physical[4] == block) << "not an NCHW" << block << "c shape";
  return {physical[0], physical[1] * block, physical[2], physical[3]};
}

std::vector<int64_t> blockedChannelShape(const std::vector<int64_t>& nchw, int64_t block) {
  if (block == 0) return nchw;
  TESSEL_ICHECK(nchw.size() == 4 && nchw[1] % block == 0) << "channels do not split into blocks of " << block;
  return {nchw[0], nchw[1] / block, nchw[2], nchw[3], block};
}

Workload layoutTransform(const std::vector<int64_t>& shape, int64_t sourceBlock, int64_t destinationBlock,
                         DataType dtype) {
  TESSEL_ICHECK(shape.size() == 4 && sourceBlock != destinationBlock) << "layoutTransform: not a 4-D relayout";
  te::Tensor data = te::placeholder(toExprs(blockedChannelShape(shape, sourceBlock)), dtype, "data");
  // Reads channel `c` of the source, whatever its layout.
  auto read = [&](Expr n, Expr c, Expr y, Expr x) {
    if (sourceBlock == 0) return data(n, c, y, x);
    return data(n, c / sourceBlock, y, x, c % sourceBlock);
  };
  te::Tensor out;
  if (destinationBlock == 0) {
    out = te::compute(
        toExprs(shape), [&](const std::vector<Var>& v) { return read(v[0], v[1], v[2], v[3]); }, "layout_transform",
        {"n", "c", "y", "x"}, "layout_transform");
  } else {
    out = te::compute(
        toExprs(blockedChannelShape(shape, destinationBlock)),
        [&](const std::vector<Var>& v) { return read(v[0], v[1] * destinationBlock + v[4], v[2], v[3]); },
        "layout_transform", {"n", "co", "y", "x", "ci"}, "layout_transform");
  }
  Workload w;
  w.name = "layout_transform_" + shapeName(shape) + "_" + blockedChannelLayout(sourceBlock) + "_to_" +
           blockedChannelLayout(destinationBlock);
  w.inputs = {data};
  w.outputs = {out};
  return w;
}

Expected<Schedule> defaultLayoutTransformSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  const te::Tensor& out = workload.outputs[0];
  std::vector<int64_t> shape;
  for (const Expr& extent : out.shape()) {
    const int64_t* value = asConstInt(extent);
    shape.push_back(value ? *value : 1);
  }
  std::vector<Status> steps;
  bool blocked = shape.size() == 5;
  // One task per (image, channel or channel block, row): plenty, and each one contiguous.
  parallelizeRows(s, "layout_transform", {"n", blocked ? "co" : "c", "y"}, shape[0] * shape[1] * shape[2], target,
                  steps);
  std::string inner = blocked ? "ci" : "x";
  const int64_t lanes = target.vectorLanes(), extent = shape.back();
  if (extent >= lanes && extent % lanes == 0) {
    if (extent <= kMaxVectorizedExtent) {
      steps.push_back(s.vectorize("layout_transform", inner));
    } else {
      // A wide row (MobileNetV3's 112 columns): vectors of the most lanes that divide it.
      int64_t chunk = lanes;
      for (int64_t c = lanes; c <= kMaxVectorizedExtent; c += lanes)
        if (extent % c == 0) chunk = c;
      steps.push_back(s.split("layout_transform", inner, chunk, inner + "o", inner + "i"));
      steps.push_back(s.vectorize("layout_transform", inner + "i"));
    }
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
