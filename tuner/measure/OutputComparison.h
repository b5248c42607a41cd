// Comparing a candidate schedule's outputs with the default schedule's: the tuner's
// correctness check, so that a fast but wrong kernel never becomes "the best".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/NDArray.h"

namespace tessel::tuner {

/// An element of a float output matches when |actual - expected| <= absolute + relative *
/// |expected|. The defaults suit float32 reductions summed in another order: a schedule that
/// splits, reorders or vectorizes a reduction changes the rounding, by a few units in the
/// last place of the partial sums, which for sums of thousands of products of values in
/// [-1, 1) (measureKernel's inputs) stays far below 1e-4 absolute or 0.1 % relative; a wrong
/// index or a missing iteration is off by about the size of the values themselves. NaN
/// matches NaN, an infinity only itself. Integer and boolean outputs must match exactly.
struct OutputTolerance {
  double absolute = 1e-4;
  double relative = 1e-3;
};

/// The element furthest out of tolerance (largest |actual - expected| over its allowance).
struct OutputMismatch {
  size_t output = 0;   ///< Which output (0 for a kernel's only one).
  int64_t index = 0;   ///< Its flat (row-major) index in that output.
  std::vector<int64_t> coordinates;  ///< The same as coordinates in the output's shape.
  double actual = 0;
  double expected = 0;
  int64_t mismatchedElements = 0;  ///< How many elements of all outputs are out of tolerance.

  /// "output 0 element [3, 17] is 0.25 where the default schedule gives 1.5 (42 elements
  /// differ)".
  std::string describe() const;
};

struct OutputComparison {
  double maxAbsError = 0;  ///< Over every element of every output (NaN pairs count as 0).
  std::optional<OutputMismatch> mismatch;  ///< Set when some element is out of tolerance.
};

/// Compares `actual` with `expected` output by output (same count, shapes and types; a
/// difference there is a compiler bug and fails an internal check).
OutputComparison compareOutputs(const std::vector<runtime::NDArray>& actual,
                                const std::vector<runtime::NDArray>& expected, const OutputTolerance& tolerance = {});

}  // namespace tessel::tuner
