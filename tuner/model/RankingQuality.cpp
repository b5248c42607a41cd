// Pairwise accuracy and top-k recall of predicted scores against measurements.
#include "tuner/model/RankingQuality.h"

#include <algorithm>
#include <cmath>
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

// Ranks from 1, tied values sharing the mean of their ranks.
std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> rank(values.size());
  for (size_t start = 0; start < order.size();) {
    size_t end = start;
    while (end + 1 < order.size() && values[order[end + 1]] == values[order[start]]) ++end;
    double shared = (double(start) + double(end)) / 2 + 1;
    for (size_t i = start; i <= end; ++i) rank[order[i]] = shared;
    start = end + 1;
  }
  return rank;
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

double spearmanRho(const std::vector<double>& predicted, const std::vector<double>& measured) {
  TESSEL_ICHECK(predicted.size() == measured.size())
      << predicted.size() << " predictions for " << measured.size() << " measurements";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (measured.size() < 2) return nan;
  std::vector<double> a = ranks(predicted), b = ranks(measured);
  double n = double(a.size());
  double meanA = std::accumulate(a.begin(), a.end(), 0.0) / n, meanB = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double covariance = 0, varianceA = 0, varianceB = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    covariance += (a[i] - meanA) * (b[i] - meanB);
    varianceA += (a[i] - meanA) * (a[i] - meanA);
    varianceB += (b[i] - meanB) * (b[i] - meanB);
  }
  if (varianceA == 0 || varianceB == 0) return nan;
  return covariance / std::sqrt(varianceA * varianceB);
}

double kendallTau(const std::vector<double>& predicted, const std::vector<double>& measured) {
  TESSEL_ICHECK(predicted.size() == measured.size())
      << predicted.size() << " predictions for " << measured.size() << " measurements";
  double concordant = 0, discordant = 0, untiedPredicted = 0, untiedMeasured = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    for (size_t j = i + 1; j < measured.size(); ++j) {
      double dp = predicted[i] - predicted[j], dm = measured[i] - measured[j];
      if (dp != 0) ++untiedPredicted;
      if (dm != 0) ++untiedMeasured;
      if (dp == 0 || dm == 0) continue;
      if ((dp > 0) == (dm > 0)) ++concordant;
      else ++discordant;
    }
  }
  if (untiedPredicted == 0 || untiedMeasured == 0) return std::numeric_limits<double>::quiet_NaN();
  return (concordant - discordant) / std::sqrt(untiedPredicted * untiedMeasured);
}

}  // namespace tessel::tuner
