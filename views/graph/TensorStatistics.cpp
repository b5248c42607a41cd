// Two passes over the data: moments and range first, then the histogram over that range.
#include "views/graph/TensorStatistics.h"

#include <cmath>
#include <cstring>

namespace tessel::views {

namespace {

template <class T>
std::optional<TensorStatistics> summarize(const runtime::NDArray& data, int bins) {
  const T* values = static_cast<const T*>(data.data());
  const int64_t n = data.numElements();
  TensorStatistics stats;
  double sum = 0, sumSquares = 0;
  int64_t zeros = 0;
  bool first = true;
  for (int64_t i = 0; i < n; ++i) {
    double v = double(values[i]);
    if (!std::isfinite(v)) {
      ++stats.nonFinite;
      continue;
    }
    if (first) {
      stats.minimum = stats.maximum = v;
      first = false;
    }
    stats.minimum = std::min(stats.minimum, v);
    stats.maximum = std::max(stats.maximum, v);
    sum += v;
    sumSquares += v * v;
    if (v == 0) ++zeros;
    ++stats.count;
  }
  if (stats.count > 0) {
    stats.mean = sum / double(stats.count);
    stats.standardDeviation = std::sqrt(std::max(0.0, sumSquares / double(stats.count) - stats.mean * stats.mean));
    stats.zeroPercent = 100.0 * double(zeros) / double(stats.count);
  }
  stats.histogram.assign(size_t(std::max(1, bins)), 0);
  double range = stats.maximum - stats.minimum;
  for (int64_t i = 0; i < n && stats.count > 0; ++i) {
    double v = double(values[i]);
    if (!std::isfinite(v)) continue;
    size_t bin = range > 0 ? size_t((v - stats.minimum) / range * double(stats.histogram.size())) : 0;
    stats.histogram[std::min(bin, stats.histogram.size() - 1)]++;
  }
  return stats;
}

}  // namespace

std::optional<TensorStatistics> computeTensorStatistics(const runtime::NDArray& data, int bins) {
  if (!data.defined() || data.device().type != runtime::DeviceType::CPU) return std::nullopt;
  using Code = runtime::DataType::Code;
  const runtime::DataType type = data.dtype();
  if (type.lanes != 1) return std::nullopt;
  auto is = [&](Code code, int bits) { return type.code == code && type.bits == bits; };
  if (is(Code::Float, 32)) return summarize<float>(data, bins);
  if (is(Code::Float, 64)) return summarize<double>(data, bins);
  if (is(Code::Int, 8)) return summarize<int8_t>(data, bins);
  if (is(Code::Int, 16)) return summarize<int16_t>(data, bins);
  if (is(Code::Int, 32)) return summarize<int32_t>(data, bins);
  if (is(Code::Int, 64)) return summarize<int64_t>(data, bins);
  if (is(Code::UInt, 8)) return summarize<uint8_t>(data, bins);
  if (is(Code::UInt, 16)) return summarize<uint16_t>(data, bins);
  if (is(Code::UInt, 32)) return summarize<uint32_t>(data, bins);
  if (is(Code::UInt, 64)) return summarize<uint64_t>(data, bins);
  return std::nullopt;
}

}  // namespace tessel::views
