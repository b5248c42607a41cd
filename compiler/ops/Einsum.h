// Einstein summation (ONNX Einsum): any equation of lettered axes, with "..." for broadcast
// batch axes and an implicit output when there is no "->".
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

struct EinsumParams {
  std::string equation;                      ///< "bij,bjk->bik"; spaces are ignored.
  std::vector<std::vector<int64_t>> shapes;  ///< One per operand.
};

/// The result shape, or why the equation does not fit the operands.
Expected<std::vector<int64_t>> einsumOutputShape(const EinsumParams& params);

/// out[output letters] = sum over the other letters of the product of the operands, each
/// read at its letters (a letter repeated within one operand reads its diagonal). One stage
/// "einsum" with axes named after the output letters (e0, e1.. for "..." axes) and reduction
/// axes after the summed letters. Inputs: one placeholder per operand, "in0", "in1", ...
Expected<Workload> einsum(const EinsumParams& params, DataType dtype = DataType::float32());

/// The default schedule: the outermost output axis in parallel.
Expected<Schedule> defaultEinsumSchedule(const Workload& workload, const Target& target = hostTarget());

}  // namespace tessel
