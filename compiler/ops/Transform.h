// Data-movement operators with ONNX semantics (Transpose, Reshape, Concat, Slice, Gather,
// Split, Where, Expand, Pad, Tile, Trilu, DepthToSpace, SpaceToDepth, Cast) on static shapes,
// and their default schedule.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

// Every builder returns a Workload whose outputs are stages named "out" (Split: "out0",
// "out1", ...) with axes ax0, ax1, ...; invalid attributes or shapes become a Diagnostic
// naming the operator. Axes may be negative (counted from the end) wherever ONNX allows it.
// Tensors with a zero-sized dimension are refused, except by Reshape, Concat, Slice, Split,
// Tile (results) and Trilu, which ONNX models use on empty tensors: their loops never run.

/// out = transpose(in): output axis d is input axis perm[d]. An empty perm reverses the axes.
Expected<Workload> transpose(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm,
                             DataType dtype = DataType::float32());

/// The same elements in row-major order under `target`: 0 copies the input dimension at the
/// same position (unless allowZero, where 0 is a literal zero and is refused here), and one
/// -1 is inferred from the element count.
Expected<Workload> reshape(const std::vector<int64_t>& shape, const std::vector<int64_t>& target,
                           DataType dtype = DataType::float32(), bool allowZero = false);

/// The inputs joined along `axis`; all other dimensions must match. Inputs in0, in1, ...,
/// except that an input with extent 0 along the axis has no placeholder (nothing to read).
Expected<Workload> concat(const std::vector<std::vector<int64_t>>& shapes, int64_t axis,
                          DataType dtype = DataType::float32());

/// ONNX Slice: for each listed axis (empty axes: 0, 1, ...), elements start, start + step, ...
/// before end. Negative starts/ends count from the end; they are clamped to [0, dim] for a
/// positive step and to [-1, dim - 1] for a negative one. Steps default to 1; 0 is refused.
Expected<Workload> slice(const std::vector<int64_t>& shape, const std::vector<int64_t>& starts,
                         const std::vector<int64_t>& ends, const std::vector<int64_t>& axes = {},
                         const std::vector<int64_t>& steps = {}, DataType dtype = DataType::float32());

/// ONNX Gather: out[a..., j..., b...] = data[a..., indices[j...], b...] along `axis`.
/// Inputs "data" and "indices" (int32 or int64). A negative index counts from the end. An
/// index still outside [0, dim) after that is clamped to the nearest end (ONNX leaves it
/// undefined; clamping keeps the kernel from reading outside `data`).
Expected<Workload> gather(const std::vector<int64_t>& dataShape, const std::vector<int64_t>& indicesShape,
                          int64_t axis, DataType dtype = DataType::float32(),
                          DataType indexType = DataType::int64());

/// ONNX Split: consecutive pieces along `axis` of the given sizes (which must add up to the
/// dimension); empty sizes split into `parts` equal pieces (the last smaller when the
/// dimension does not divide, as ONNX opset 18 does). Outputs out0, out1, ...
Expected<Workload> split(const std::vector<int64_t>& shape, int64_t axis, const std::vector<int64_t>& sizes,
                         DataType dtype = DataType::float32(), int64_t parts = 2);

/// out = condition ? x : y with NumPy broadcasting of the three shapes. The condition is bool.
Expected<Workload> where(const std::vector<int64_t>& conditionShape, const std::vector<int64_t>& xShape,
                         const std::vector<int64_t>& yShape, DataType dtype = DataType::float32());

/// ONNX Expand: `in` broadcast against `target` (both ways: a 1 in `target` keeps the input's
/// dimension), as NumPy broadcasting of the two shapes.
Expected<Workload> expand(const std::vector<int64_t>& shape, const std::vector<int64_t>& target,
                          DataType dtype = DataType::float32());

/// How Pad fills the new elements: a constant, the input mirrored at its edge (without
/// repeating the edge element), the edge element repeated, or the input repeated
/// periodically (opset 19's wrap).
enum class PadMode { Constant, Reflect, Edge, Wrap };

/// ONNX Pad: `pads` = [begin_0, ..., begin_{r-1}, end_0, ..., end_{r-1}]; new elements are
/// `value` (constant mode) or read from the input as `mode` says; negative pads remove elements.
Expected<Workload> pad(const std::vector<int64_t>& shape, const std::vector<int64_t>& pads, double value = 0.0,
                       DataType dtype = DataType::float32(), PadMode mode = PadMode::Constant);

/// ONNX Col2Im (opset 18; PyTorch's fold): the input [N, C * product(blockShape), L] holds L
/// sliding blocks of a C-channel image; each block element is added back where the block sat
/// in the image of `imageShape` (overlaps sum). strides and dilations have one entry per
/// spatial axis, pads a begin and an end each ([begins..., ends...]).
Expected<Workload> col2im(const std::vector<int64_t>& shape, const std::vector<int64_t>& imageShape,
                          const std::vector<int64_t>& blockShape, const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& pads, const std::vector<int64_t>& dilations,
                          DataType dtype = DataType::float32());

/// ONNX Tile: the input repeated repeats[d] times along each axis d (0 gives an empty result).
Expected<Workload> tile(const std::vector<int64_t>& shape, const std::vector<int64_t>& repeats,
                        DataType dtype = DataType::float32());

/// ONNX Trilu over the last two axes: keeps elements with column - row >= k (upper) or
/// <= k (lower), zero elsewhere.
Expected<Workload> trilu(const std::vector<int64_t>& shape, int64_t k, bool upper, DataType dtype = DataType::float32());

/// ONNX DepthToSpace on NCHW: channel blocks of blockSize^2 become blockSize x blockSize
/// pixels; the depth is read as (row, column, channel) (DCR) or (channel, row, column) (CRD).
Expected<Workload> depthToSpace(const std::vector<int64_t>& shape, int64_t blockSize, bool columnRowDepth,
                                DataType dtype = DataType::float32());

/// ONNX SpaceToDepth on NCHW: the inverse of DepthToSpace in DCR order.
Expected<Workload> spaceToDepth(const std::vector<int64_t>& shape, int64_t blockSize,
                                DataType dtype = DataType::float32());

/// ONNX Cast: each element converted to `to` (floats to integers truncate toward zero,
/// anything to bool is value != 0).
Expected<Workload> castTensor(const std::vector<int64_t>& shape, DataType from, DataType to);

/// The default schedule of every output stage of a transform workload: the leading axes
/// fused and run in parallel when there is enough work, and the innermost axis split into
/// vectors when every input is read contiguously along it (a plain copy).
Expected<Schedule> defaultTransformSchedule(const Workload& workload,
                                            const Target& target = hostTarget());

}  // namespace tessel
