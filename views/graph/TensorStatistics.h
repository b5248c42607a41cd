// Summary statistics and a histogram of a constant tensor (a weight), for the properties panel.
#pragma once

#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/NDArray.h"

namespace tessel::views {

struct TensorStatistics {
  int64_t count = 0;     ///< Finite elements summarized.
  int64_t nonFinite = 0; ///< NaN and infinite elements (left out of everything else).
  double minimum = 0, maximum = 0, mean = 0, standardDeviation = 0;
  double zeroPercent = 0;  ///< Share of elements exactly zero, 0-100.
  /// `bins` equal-width bins over [minimum, maximum]; counts per bin.
  std::vector<int64_t> histogram;
  double binWidth() const { return histogram.empty() ? 0 : (maximum - minimum) / double(histogram.size()); }
};

/// Statistics of a host array of a float or integer element type; nullopt for other types
/// (bool, float16, handles) and for an undefined array.
std::optional<TensorStatistics> computeTensorStatistics(const runtime::NDArray& data, int bins = 50);

}  // namespace tessel::views
