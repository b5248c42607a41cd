// Reading ONNX Conv attributes (strides, pads, auto_pad, dilations, group) into Conv2dParams.
#include "compiler/ops/PackedConvParams.h"

namespace tessel {

namespace {
Diagnostic convError(const std::string& message) {
  return Diagnostic{"Conv: " + message, "Conv", 0, 0, "check the Conv node's attributes and shapes"};
}

// An ints attribute of exactly `count` values, `fallback` when absent.
Expected<std::vector<int64_t>> intsOf(const graph::Attributes& attributes, const std::string& key, size_t count,
                                      int64_t fallback) {
  auto it = attributes.find(key);
  if (it == attributes.end()) return std::vector<int64_t>(count, fallback);
  auto* values = std::get_if<std::vector<int64_t>>(&it->second);
  if (!values) return convError("attribute '" + key + "' must be a list of ints");
  if (values->size() != count)
    return convError("attribute '" + key + "' has " + std::to_string(values->size()) + " values, expected " +
                     std::to_string(count));
  return *values;
}
}  // namespace

Expected<Conv2dParams> conv2dParamsFromOnnx(const graph::Attributes& attributes, const std::vector<int64_t>& input,
                                            const std::vector<int64_t>& weight, bool hasBias) {
  if (input.size() != 4 || weight.size() != 4) return convError("only 2-D convolutions (rank-4 input and weight)");
  Conv2dParams p;
  p.batch = input[0];
  p.channels = input[1];
  p.height = input[2];
  p.width = input[3];
  p.filters = weight[0];
  p.kernelH = weight[2];
  p.kernelW = weight[3];
  p.bias = hasBias;
  auto group = attributes.find("group");
  if (group != attributes.end()) {
    auto* value = std::get_if<int64_t>(&group->second);
    if (!value) return convError("attribute 'group' must be an int");
    p.groups = *value;
  }
  if (p.groups < 1 || p.channels % p.groups != 0 || weight[1] * p.groups != p.channels)
    return convError("the weight's " + std::to_string(weight[1]) + " channels times group " + std::to_string(p.groups) +
                     " must equal the input's " + std::to_string(p.channels) + " channels");
  if (auto kernel = attributes.find("kernel_shape"); kernel != attributes.end()) {
    auto* values = std::get_if<std::vector<int64_t>>(&kernel->second);
    if (!values || *values != std::vector<int64_t>{p.kernelH, p.kernelW})
      return convError("attribute 'kernel_shape' does not match the weight's kernel");
  }
  auto strides = intsOf(attributes, "strides", 2, 1);
  auto dilations = intsOf(attributes, "dilations", 2, 1);
  auto pads = intsOf(attributes, "pads", 4, 0);
  if (!strides) return strides.error();
  if (!dilations) return dilations.error();
  if (!pads) return pads.error();
  p.stride = (*strides)[0];
  p.strideH = (*strides)[0];
  p.strideW = (*strides)[1];
  p.dilationH = (*dilations)[0];
  p.dilationW = (*dilations)[1];
  std::vector<int64_t> padding = *pads;  // ONNX order: top, left, bottom, right
  std::string autoPad = "NOTSET";
  if (auto it = attributes.find("auto_pad"); it != attributes.end()) {
    auto* value = std::get_if<std::string>(&it->second);
    if (!value) return convError("attribute 'auto_pad' must be a string");
    autoPad = *value;
  }
  if (autoPad == "VALID") {
    padding = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Output = ceil(input / stride); the total padding splits with the odd one at the end
    // (SAME_UPPER) or at the beginning (SAME_LOWER).
    int64_t sizes[2] = {p.height, p.width}, kernels[2] = {p.kernelH, p.kernelW};
    for (int axis = 0; axis < 2; ++axis) {
      int64_t stride = (*strides)[axis], dilation = (*dilations)[axis];
      if (stride < 1) return convError("strides must be positive");
      int64_t out = (sizes[axis] + stride - 1) / stride;
      int64_t total = std::max<int64_t>(0, (out - 1) * stride + dilation * (kernels[axis] - 1) + 1 - sizes[axis]);
      int64_t small = total / 2, large = total - small;
      padding[axis] = autoPad == "SAME_UPPER" ? small : large;
      padding[axis + 2] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    return convError("auto_pad '" + autoPad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  }
  p.pad = padding[0];
  p.padTop = padding[0];
  p.padLeft = padding[1];
  p.padBottom = padding[2];
  p.padRight = padding[3];
  if (auto tile = attributes.find("winograd_tile"); tile != attributes.end()) {
    auto* value = std::get_if<int64_t>(&tile->second);
    if (!value) return convError("attribute 'winograd_tile' must be an int");
    p.winogradTile = *value;
  }
  if (std::string problem = p.validate(); !problem.empty()) return convError(problem);
  return p;
}

}  // namespace tessel
