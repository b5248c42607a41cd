// Operators that look along one axis at every position: CumSum (running sums) and TopK
// (the k largest or smallest elements, sorted, with their indices).
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

struct CumSumParams {
  std::vector<int64_t> shape;
  int64_t axis = 0;        ///< Negative counts from the end.
  bool exclusive = false;  ///< Each sum leaves out its own element.
  bool reverse = false;    ///< Sums run from the end of the axis.
};

/// out[.., i, ..] = sum of x[.., k, ..] over k <= i (k < i exclusive; k >= i / k > i reversed).
/// One stage "cumsum" with axes ax0.. and reduction axis "k": a direct O(n^2) sum along the
/// axis, which vectorizes along the other axes.
Expected<Workload> cumulativeSum(const CumSumParams& params, DataType dtype = DataType::float32());
Expected<Schedule> defaultCumulativeSumSchedule(const Workload& workload, const CumSumParams& params,
                                                const Target& target = hostTarget());

struct TopKParams {
  std::vector<int64_t> shape;
  int64_t axis = -1;     ///< Negative counts from the end.
  int64_t k = 1;         ///< How many elements per line, 0 < k <= extent.
  bool largest = true;   ///< The largest (or smallest) k.
};

/// TopK by ranking: "topk.rank" counts, for every element, the elements of its line that
/// come before it (larger, or equal at a lower index; smaller when !largest), then
/// "topk.values" and "topk.indices" (int64) pick the element of rank r for output r < k.
/// Outputs: values, indices, sorted, ties by lower index first.
Expected<Workload> topK(const TopKParams& params, DataType dtype = DataType::float32());
Expected<Schedule> defaultTopKSchedule(const Workload& workload, const Target& target = hostTarget());

}  // namespace tessel
