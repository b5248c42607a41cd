// Operators whose output does not read tensor inputs at run time: constant tables (Shape,
// Size, NonZero of a constant), fills (ConstantOfShape), Range and EyeLike.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

/// The element of `values` at `index` (an index expression in [0, values.size())), as a
/// balanced tree of selects over runs of equal values: compiled code with no table in memory.
/// `values` must not be empty.
Expr constantTableLookup(const std::vector<double>& values, const Expr& index, DataType dtype);

/// The largest constant computed by a table kernel (larger ones belong in the model as data).
constexpr int64_t kMaxConstantTable = 4096;

/// The compute stage `name` of `shape` holding `values` in row-major order (at most
/// kMaxConstantTable elements), for workloads with several constant outputs.
Expected<te::Tensor> constantStage(const std::vector<int64_t>& shape, const std::vector<double>& values, DataType dtype,
                                   const std::string& name);

/// A tensor of `shape` holding `values` in row-major order (at most kMaxConstantTable
/// elements); no inputs. The output stage is "out".
Expected<Workload> constantTensor(const std::vector<int64_t>& shape, const std::vector<double>& values, DataType dtype);

/// ONNX ConstantOfShape: every element `value`; no inputs.
Expected<Workload> fill(const std::vector<int64_t>& shape, double value, DataType dtype);

/// ONNX Range: `count` elements start, start + delta, ... (none when count is 0); no inputs.
Expected<Workload> range(double start, double delta, int64_t count, DataType dtype);

/// ONNX EyeLike: ones on the diagonal shifted by k (column - row == k), zeros elsewhere; no inputs.
Expected<Workload> eyeLike(const std::vector<int64_t>& shape, int64_t k, DataType dtype);

}  // namespace tessel
