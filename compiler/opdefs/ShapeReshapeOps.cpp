// Operator definitions that move data without looking at it: Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat, Split, Slice, Expand, Tile, Pad, CenterCropPad, Trilu,
// DepthToSpace, SpaceToDepth and Col2Im (which adds overlapping blocks), with their ONNX
// attribute defaults and the inputs they need by value.
#include <algorithm>

#include "compiler/opdefs/ShapeOpSupport.h"
#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/Transform.h"

namespace tessel::graph::shape_ops {

namespace {
using Shape = std::vector<int64_t>;

// Reshape-like operators copy the input into a new shape: one injective kernel FuseOps
// merges into its neighbours, so the copy usually costs nothing.
Expected<OpKernel> copyToShape(const OpCall& call, const Shape& target) {
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, reshape(in.shape, target, in.dtype), {0});
}

Expected<OpKernel> buildReshape(const OpCall& call) {
  auto target = call.constantInts(1, "shape");
  if (!target) return target.error();
  auto allowZero = call.intAttr("allowzero", 0);
  if (!allowZero) return allowZero.error();
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, reshape(in.shape, *target, in.dtype, *allowZero != 0), {0});
}

Expected<OpKernel> buildFlatten(const OpCall& call) {
  const Shape& shape = inputType(call, 0).shape;
  auto axis = call.intAttr("axis", 1);
  if (!axis) return axis.error();
  int64_t rank = int64_t(shape.size());
  // Flatten's axis may equal the rank (everything goes to the first dimension).
  if (*axis < -rank || *axis > rank)
    return call.error("axis " + std::to_string(*axis) + " is outside [" + std::to_string(-rank) + ", " +
                      std::to_string(rank) + "]");
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < a ? outer : inner) *= shape[size_t(d)];
  return copyToShape(call, {outer, inner});
}

Expected<OpKernel> buildSqueeze(const OpCall& call) {
  const Shape& shape = inputType(call, 0).shape;
  auto axes = axesFromAttributeOrInput(call, "axes", 1);
  if (!axes) return axes.error();
  std::vector<bool> drop(shape.size(), false);
  if (axes->empty()) {
    for (size_t d = 0; d < shape.size(); ++d) drop[d] = shape[d] == 1;
  }
  for (int64_t axis : *axes) {
    auto a = normalizedAxis(call, axis, shape.size(), "axes entry");
    if (!a) return a.error();
    if (shape[size_t(*a)] != 1)
      return call.error("cannot squeeze axis " + std::to_string(*a) + " of extent " + std::to_string(shape[size_t(*a)]),
                        "only axes of extent 1 can be squeezed");
    drop[size_t(*a)] = true;
  }
  Shape target;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!drop[d]) target.push_back(shape[d]);
  return copyToShape(call, target);
}

Expected<OpKernel> buildUnsqueeze(const OpCall& call) {
  const Shape& shape = inputType(call, 0).shape;
  auto axes = axesFromAttributeOrInput(call, "axes", 1);
  if (!axes) return axes.error();
  if (axes->empty()) return call.error("axes are missing", "give the axes to insert");
  size_t rank = shape.size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    auto a = normalizedAxis(call, axis, rank, "axes entry");
    if (!a) return a.error();
    if (inserted[size_t(*a)]) return call.error("axis " + std::to_string(*a) + " is listed twice");
    inserted[size_t(*a)] = true;
  }
  Shape target;
  for (size_t d = 0, from = 0; d < rank; ++d) target.push_back(inserted[d] ? 1 : shape[from++]);
  return copyToShape(call, target);
}

Expected<OpKernel> buildTranspose(const OpCall& call) {
  auto perm = call.intsAttr("perm", {});
  if (!perm) return perm.error();
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, transpose(in.shape, *perm, in.dtype), {0});
}

// The channel block that Concat's inputs share: 0 when none has a layout. Blocked inputs
// (NCHW<b>c, [N, C / b, H, W, b], as AlterLayout keeps them between convolutions) must all
// have the same block and be joined along the logical channel axis, which is then their outer
// block axis: a blocked tensor holds whole blocks, so the blocks of input k follow those of
// the inputs before it exactly as its channels do in the NCHW result.
Expected<int64_t> concatChannelBlock(const OpCall& call, int64_t axis) {
  const std::string& layout = call.inputTypes[0].layout;
  for (size_t i = 1; i < call.inputTypes.size(); ++i)
    if (call.inputTypes[i].layout != layout)
      return call.error("input " + std::to_string(i) + " has layout '" + call.inputTypes[i].layout + "', input 0 '" +
                            layout + "'",
                        "transform the inputs to one layout first");
  if (layout.empty()) return int64_t(0);
  std::optional<int64_t> block = channelBlockOf(layout);
  if (!block) return call.error("the inputs have layout '" + layout + "'; Concat reads NCHW or NCHW<block>c tensors");
  if (*block == 0) return int64_t(0);
  for (size_t i = 0; i < call.inputTypes.size(); ++i) {
    const std::vector<int64_t>& shape = call.inputTypes[i].shape;
    if (shape.size() != 5 || shape[4] != *block)
      return call.error("input " + std::to_string(i) + " is " + call.inputTypes[i].toString() + ", not a 2-D " +
                        layout + " tensor");
  }
  if (axis != 1 && axis != -3)
    return call.error("axis " + std::to_string(axis) + " of " + layout + " inputs",
                      "blocked inputs are joined along channels (axis 1) only");
  return *block;
}

Expected<OpKernel> buildConcat(const OpCall& call) {
  if (!call.hasAttr("axis")) return call.error("attribute 'axis' is missing", "Concat requires an axis");
  auto axis = call.intAttr("axis", 0);
  if (!axis) return axis.error();
  std::vector<Shape> shapes;
  std::vector<int> indices;
  for (size_t i = 0; i < call.inputTypes.size(); ++i) {
    if (!call.hasInput(i)) return call.error("input " + std::to_string(i) + " is missing");
    if (call.inputTypes[i].dtype != call.inputTypes[0].dtype)
      return call.error("input " + std::to_string(i) + " is " + call.inputTypes[i].dtype.toString() + ", input 0 " +
                        call.inputTypes[0].dtype.toString());
    shapes.push_back(call.inputTypes[i].shape);
  }
  auto block = concatChannelBlock(call, *axis);
  if (!block) return block.error();
  // Blocked: the logical channel axis is the physical block axis.
  int64_t physicalAxis = *block ? 1 : *axis;
  auto axisIndex = normalizedAxis(call, physicalAxis, shapes[0].size());
  if (!axisIndex) return axisIndex.error();
  // Inputs empty along the axis have no placeholder in the kernel.
  for (size_t i = 0; i < shapes.size(); ++i)
    if (shapes[i].size() != shapes[0].size() || shapes[i][size_t(*axisIndex)] > 0) indices.push_back(int(i));
  return transformKernel(call, concat(shapes, physicalAxis, call.inputTypes[0].dtype), indices);
}

// Concat's output is in its inputs' layout (buildConcat checks they share one).
OpDef concatDefinition() {
  OpDef def = kernelTypedOp("Concat", OpPattern::Injective, 1, -1, {}, buildConcat);
  def.inferTypes = [shapes = def.inferTypes](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto types = shapes(call);
    if (!types) return types;
    for (TensorType& type : *types) type.layout = call.inputTypes[0].layout;
    return types;
  };
  return def;
}

Expected<OpKernel> buildSplit(const OpCall& call) {
  auto axis = call.intAttr("axis", 0);
  if (!axis) return axis.error();
  auto sizes = axesFromAttributeOrInput(call, "split", 1);
  if (!sizes) return sizes.error();
  auto parts = call.intAttr("num_outputs", call.outputCount);
  if (!parts) return parts.error();
  if (!sizes->empty() && int64_t(sizes->size()) != call.outputCount)
    return call.error(std::to_string(sizes->size()) + " split sizes for " + std::to_string(call.outputCount) +
                      " outputs");
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, split(in.shape, *axis, *sizes, in.dtype, *parts), {0});
}

Expected<OpKernel> buildSlice(const OpCall& call) {
  Shape starts, ends, axes, steps;
  if (call.hasAttr("starts")) {  // opset 1-9: attributes
    auto s = call.intsAttr("starts", {});
    auto e = call.intsAttr("ends", {});
    auto a = call.intsAttr("axes", {});
    if (!s) return s.error();
    if (!e) return e.error();
    if (!a) return a.error();
    starts = *s, ends = *e, axes = *a;
  } else {  // opset 10+: inputs starts, ends, axes, steps
    auto s = call.constantInts(1, "starts");
    if (!s) return s.error();
    auto e = call.constantInts(2, "ends");
    if (!e) return e.error();
    starts = *s, ends = *e;
    if (call.hasInput(3)) {
      auto a = call.constantInts(3, "axes");
      if (!a) return a.error();
      axes = *a;
    }
    if (call.hasInput(4)) {
      auto st = call.constantInts(4, "steps");
      if (!st) return st.error();
      steps = *st;
    }
  }
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, slice(in.shape, starts, ends, axes, steps, in.dtype), {0});
}

Expected<OpKernel> buildExpand(const OpCall& call) {
  auto target = call.constantInts(1, "shape");
  if (!target) return target.error();
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, expand(in.shape, *target, in.dtype), {0});
}

Expected<OpKernel> buildTile(const OpCall& call) {
  auto repeats = call.constantInts(1, "repeats");
  if (!repeats) return repeats.error();
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, tile(in.shape, *repeats, in.dtype), {0});
}

Expected<OpKernel> buildPad(const OpCall& call) {
  const TensorType& in = inputType(call, 0);
  auto modeName = call.stringAttr("mode", "constant");
  if (!modeName) return modeName.error();
  PadMode mode;
  if (*modeName == "constant")
    mode = PadMode::Constant;
  else if (*modeName == "reflect")
    mode = PadMode::Reflect;
  else if (*modeName == "edge")
    mode = PadMode::Edge;
  else if (*modeName == "wrap")
    mode = PadMode::Wrap;
  else
    return call.error("mode '" + *modeName + "' is not supported", "use constant, reflect, edge or wrap");
  Shape pads;
  double value = 0;
  if (call.hasAttr("pads")) {  // opset < 11: attributes pads and value
    auto p = call.intsAttr("pads", {});
    if (!p) return p.error();
    auto v = call.floatAttr("value", 0.0);
    if (!v) return v.error();
    pads = *p;
    value = *v;
  } else {  // opset 11+: inputs pads, constant_value, axes
    auto p = call.constantInts(1, "pads");
    if (!p) return p.error();
    pads = *p;
    if (call.hasInput(2)) {
      auto v = constantElements(call, 2, "constant_value");
      if (!v) return v.error();
      if (v->size() != 1) return call.error("constant_value must hold one value");
      value = v->front();
    }
    if (call.hasInput(3)) {  // opset 18: pads for the listed axes only
      auto axes = call.constantInts(3, "axes");
      if (!axes) return axes.error();
      if (pads.size() != 2 * axes->size())
        return call.error("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes->size()) +
                          " axes");
      size_t rank = in.shape.size();
      Shape full(2 * rank, 0);
      for (size_t k = 0; k < axes->size(); ++k) {
        auto a = normalizedAxis(call, (*axes)[k], rank, "axes entry");
        if (!a) return a.error();
        full[size_t(*a)] = pads[k];
        full[size_t(*a) + rank] = pads[k + axes->size()];
      }
      pads = full;
    }
  }
  return transformKernel(call, pad(in.shape, pads, value, in.dtype, mode), {0});
}

// ONNX CenterCropPad (opset 18): each axis listed (all by default) becomes shape[k] long,
// cropped around its centre when longer and padded with zeros on both sides when shorter. An
// odd difference puts the extra element at the end, as ONNX's reference does. That is Pad with
// negative pads where it crops.
Expected<OpKernel> buildCenterCropPad(const OpCall& call) {
  const TensorType& in = inputType(call, 0);
  auto target = call.constantInts(1, "shape");
  if (!target) return target.error();
  const size_t rank = in.shape.size();
  Shape axes;
  if (call.hasAttr("axes")) {
    auto listed = call.intsAttr("axes", {});
    if (!listed) return listed.error();
    for (int64_t axis : *listed) {
      auto a = normalizedAxis(call, axis, rank, "axes entry");
      if (!a) return a.error();
      if (std::find(axes.begin(), axes.end(), *a) != axes.end())
        return call.error("axis " + std::to_string(*a) + " is listed twice in axes");
      axes.push_back(*a);
    }
  } else {
    for (size_t a = 0; a < rank; ++a) axes.push_back(int64_t(a));
  }
  if (target->size() != axes.size())
    return call.error("shape has " + std::to_string(target->size()) + " entries for " + std::to_string(axes.size()) +
                          " axes",
                      "give one size per axis (all axes, or those the 'axes' attribute lists)");
  Shape pads(2 * rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t want = (*target)[k], have = in.shape[size_t(axes[k])];
    if (want < 1) return call.error("shape entry " + std::to_string(k) + " is " + std::to_string(want), "sizes are positive");
    int64_t change = want - have;  // > 0 pads, < 0 crops
    int64_t before = change >= 0 ? change / 2 : -((-change) / 2);
    pads[size_t(axes[k])] = before;
    pads[size_t(axes[k]) + rank] = change - before;
  }
  return transformKernel(call, pad(in.shape, pads, 0.0, in.dtype, PadMode::Constant), {0});
}

Expected<OpKernel> buildCol2Im(const OpCall& call) {
  const TensorType& in = inputType(call, 0);
  auto image = call.constantInts(1, "image_shape");
  if (!image) return image.error();
  auto block = call.constantInts(2, "block_shape");
  if (!block) return block.error();
  const size_t k = image->size();
  auto strides = call.intsAttr("strides", Shape(k, 1));
  if (!strides) return strides.error();
  auto dilations = call.intsAttr("dilations", Shape(k, 1));
  if (!dilations) return dilations.error();
  auto pads = call.intsAttr("pads", Shape(2 * k, 0));
  if (!pads) return pads.error();
  return transformKernel(call, col2im(in.shape, *image, *block, *strides, *pads, *dilations, in.dtype), {0});
}

Expected<OpKernel> buildTrilu(const OpCall& call) {
  auto upper = call.intAttr("upper", 1);
  if (!upper) return upper.error();
  int64_t k = 0;
  if (call.hasInput(1)) {
    auto values = call.constantInts(1, "k");
    if (!values) return values.error();
    if (values->size() != 1) return call.error("k must hold one value");
    k = values->front();
  }
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, trilu(in.shape, k, *upper != 0, in.dtype), {0});
}

Expected<OpKernel> buildDepthToSpace(const OpCall& call) {
  if (!call.hasAttr("blocksize")) return call.error("attribute 'blocksize' is missing");
  auto blockSize = call.intAttr("blocksize", 1);
  if (!blockSize) return blockSize.error();
  auto mode = call.stringAttr("mode", "DCR");
  if (!mode) return mode.error();
  if (*mode != "DCR" && *mode != "CRD") return call.error("mode '" + *mode + "'", "mode is DCR or CRD");
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, depthToSpace(in.shape, *blockSize, *mode == "CRD", in.dtype), {0});
}

Expected<OpKernel> buildSpaceToDepth(const OpCall& call) {
  if (!call.hasAttr("blocksize")) return call.error("attribute 'blocksize' is missing");
  auto blockSize = call.intAttr("blocksize", 1);
  if (!blockSize) return blockSize.error();
  const TensorType& in = inputType(call, 0);
  return transformKernel(call, spaceToDepth(in.shape, *blockSize, in.dtype), {0});
}
}  // namespace

void registerReshapeOps(OpRegistry& registry) {
  const OpPattern injective = OpPattern::Injective;
  registry.add(kernelTypedOp("Reshape", injective, 2, 2, {1}, buildReshape));
  registry.add(kernelTypedOp("Flatten", injective, 1, 1, {}, buildFlatten));
  registry.add(kernelTypedOp("Squeeze", injective, 1, 2, {1}, buildSqueeze));
  registry.add(kernelTypedOp("Unsqueeze", injective, 1, 2, {1}, buildUnsqueeze));
  registry.add(kernelTypedOp("Transpose", injective, 1, 1, {}, buildTranspose));
  registry.add(concatDefinition());
  registry.add(kernelTypedOp("Split", injective, 1, 2, {1}, buildSplit, 1, -1));
  registry.add(kernelTypedOp("Slice", injective, 1, 5, {1, 2, 3, 4}, buildSlice));
  registry.add(kernelTypedOp("Expand", injective, 2, 2, {1}, buildExpand));
  registry.add(kernelTypedOp("Tile", injective, 2, 2, {1}, buildTile));
  registry.add(kernelTypedOp("Pad", injective, 1, 4, {1, 2, 3}, buildPad));
  registry.add(kernelTypedOp("CenterCropPad", injective, 2, 2, {1}, buildCenterCropPad));  // opset 18
  registry.add(kernelTypedOp("Col2Im", OpPattern::Opaque, 3, 3, {1, 2}, buildCol2Im));      // opset 18
  registry.add(kernelTypedOp("Trilu", injective, 1, 2, {1}, buildTrilu));
  registry.add(kernelTypedOp("DepthToSpace", injective, 1, 1, {}, buildDepthToSpace));
  registry.add(kernelTypedOp("SpaceToDepth", injective, 1, 1, {}, buildSpaceToDepth));
}

}  // namespace tessel::graph::shape_ops
