// Operators that read or write tensors at positions given by other tensors, with ONNX
// semantics: GatherElements, GatherND, ScatterElements, ScatterND, OneHot, ReverseSequence,
// and Compress with a constant condition.
#pragma once

#include <optional>

#include "compiler/ops/Workload.h"

namespace tessel {

// As in Transform.h: outputs are stages named "out" with axes ax0, ax1, ...; index tensors
// are int32 or int64; negative indices count from the end and indices still out of range
// are clamped (ONNX leaves them undefined; clamping keeps reads inside their buffers).

/// ONNX GatherElements: out[i] = data[i with axis replaced by indices[i]]; out has the
/// indices' shape. Inputs "data", "indices".
Expected<Workload> gatherElements(const std::vector<int64_t>& dataShape, const std::vector<int64_t>& indicesShape,
                                  int64_t axis, DataType dtype = DataType::float32(),
                                  DataType indexType = DataType::int64());

/// ONNX GatherND with `batchDims` leading batch axes: the last indices axis holds k
/// coordinates into data's axes after the batch axes. Inputs "data", "indices".
Expected<Workload> gatherND(const std::vector<int64_t>& dataShape, const std::vector<int64_t>& indicesShape,
                            int64_t batchDims, DataType dtype = DataType::float32(),
                            DataType indexType = DataType::int64());

/// How a scatter combines an update with what is already there (ONNX `reduction`).
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// ONNX ScatterElements: data with updates[u] written at u with axis replaced by indices[u].
/// With reduction None and duplicate targets the last update (highest position along the
/// axis) wins. Inputs "data", "indices", "updates".
Expected<Workload> scatterElements(const std::vector<int64_t>& dataShape, const std::vector<int64_t>& indicesShape,
                                   int64_t axis, ScatterReduction reduction, DataType dtype = DataType::float32(),
                                   DataType indexType = DataType::int64());

/// ONNX ScatterND: data with the slices updates[u, ...] written at data[indices[u], ...].
/// With reduction None and duplicate targets the last update (highest u) wins. Inputs
/// "data", "indices", "updates".
Expected<Workload> scatterND(const std::vector<int64_t>& dataShape, const std::vector<int64_t>& indicesShape,
                             ScatterReduction reduction, DataType dtype = DataType::float32(),
                             DataType indexType = DataType::int64());

/// ONNX OneHot: a new axis of `depth` at `axis` (-1: last), on where it equals the index
/// (negative indices count from the end of depth), off elsewhere. Inputs "indices" (any
/// numeric type; floats are truncated) and "values" ([off, on], of the output type).
Expected<Workload> oneHot(const std::vector<int64_t>& indicesShape, int64_t depth, int64_t axis, DataType indexType,
                          DataType dtype = DataType::float32());

/// ONNX ReverseSequence: for each batch entry b, the first sequenceLengths[b] elements along
/// timeAxis reversed, the rest copied. Inputs "in", "lengths" (int64 of the batch size).
Expected<Workload> reverseSequence(const std::vector<int64_t>& shape, int64_t batchAxis, int64_t timeAxis,
                                   DataType dtype = DataType::float32());

/// ONNX Compress with a condition known when compiling: the slices along `axis` whose
/// condition entry is true (entries past the axis are ignored); without an axis, the
/// elements of the flattened input. Input "in".
Expected<Workload> compress(const std::vector<int64_t>& shape, std::optional<int64_t> axis,
                            const std::vector<bool>& condition, DataType dtype = DataType::float32());

}  // namespace tessel
