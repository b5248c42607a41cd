// Pairwise accuracy and top-k recall of predicted scores against measurements.
#include "tuner/model/RankingQuality.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <numeric>

#include "core/support/Error.h"

namespace tessel::tuner {

namespace {

// Indices of the k largest values, earlier index first among equals.
std::vector<size_t> topIndices(const std::vector<double>& values, size_t k) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] > values[b]; });
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

double pairwiseAccuracy(const std::vector<double>& predicted, const std::vector<double>& measured) {
  TESSEL_ICHECK(predicted.size() == measured.size())
      << predicted.size() << " predictions for " << measured.size() << " measurements";
  double agreeing = 0;
  size_t pairs = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    for (size_t j = i + 1; j < measured.size(); ++j) {
      if (measured[i] == measured[j]) continue;
      ++pairs;
      if (predicted[i] == predicted[j])
        agreeing += 0.5;
      else if ((predicted[i] < predicted[j]) == (measured[i] < measured[j]))
        agreeing += 1;
    }
  }
  return pairs == 0 ? std::numeric_limits<double>::quiet_NaN() : agreeing / double(pairs);
}

double topKRecall(const std::vector<double>& predicted, const std::vector<double>& measured, int k) {
  TESSEL_ICHECK(predicted.size() == measured.size())
      << predicted.size() << " predictions for " << measured.size() << " measurements";
  if (k < 1 || measured.empty()) return std::numeric_limits<double>::quiet_NaN();
  size_t count = std::min(size_t(k), measured.size());
  std::vector<size_t> byPrediction = topIndices(predicted, count);
  std::vector<size_t> byMeasurement = topIndices(measured, count);
  std::vector<size_t> both;
  std::set_intersection(byPrediction.begin(), byPrediction.end(), byMeasurement.begin(), byMeasurement.end(),
                        std::back_inserter(both));
  return double(both.size()) / double(count);
}

}  // namespace tessel::tuner
