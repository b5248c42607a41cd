// An operator instance ready to schedule: its tensors, arguments and work.
#pragma once

#include <string>
#include <vector>

#include "compiler/schedule/Schedule.h"
#include "core/te/Tensor.h"

namespace tessel {

struct Workload {
  std::string name;                  ///< Function name ("matmul_1024x1024x1024").
  std::vector<te::Tensor> inputs;    ///< Placeholders, in argument order.
  std::vector<te::Tensor> outputs;   ///< Results, after the inputs in argument order.
  double flops = 0;                  ///< Floating-point operations per call (multiply-add = 2).

  std::vector<te::Tensor> args() const {
    std::vector<te::Tensor> all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    return all;
  }
};

/// The target facts default schedules depend on.
struct ScheduleTarget {
  int vectorLanes = 16;  ///< float32 lanes of the widest vector unit (16 for AVX-512, 8 for AVX2).
  int threads = 1;
  /// The host's vector width and the runtime's thread count.
  static ScheduleTarget host();
};

}  // namespace tessel
