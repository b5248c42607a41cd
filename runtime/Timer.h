// Times a callable the way benchmarks should: warm up, repeat, report the median.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

namespace tessel::runtime {

/// How hard to try when timing a callable.
struct TimerOptions {
  /// Untimed calls first (caches, page faults, CPU frequency, lazy initialization).
  int warmupCalls = 1;
  /// Keep sampling until the samples add up to at least this long...
  double minTotalSeconds = 0.1;
  /// ...and there are at least this many samples...
  int minSamples = 5;
  /// ...but never more than this many.
  int maxSamples = 10000;
  /// Calls shorter than this are batched so that each sample spans at least this long;
  /// a single call of a microsecond is dominated by clock resolution and overhead.
  double minSampleSeconds = 1e-4;
  /// Told after every timed sample how many there are and how long they took together;
  /// returning false stops sampling early (a cancelled measurement). May be empty.
  std::function<bool(int samples, double totalSeconds)> afterSample;
};

/// Seconds per call of each sample (each sample is one timed batch of calls divided by
/// its size), in the order taken.
template <class Callable>
std::vector<double> sampleSecondsPerCall(Callable&& callable, const TimerOptions& options = {}) {
  using Clock = std::chrono::steady_clock;
  auto timeBatch = [&](long calls) {
    auto start = Clock::now();
    for (long call = 0; call < calls; ++call) callable();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  for (int call = 0; call < options.warmupCalls; ++call) callable();
  // One timed call sizes the batches; it also counts as the first sample when long enough.
  double firstCall = timeBatch(1);
  long batch = 1;
  if (firstCall < options.minSampleSeconds)
    batch = static_cast<long>(std::ceil(options.minSampleSeconds / std::max(firstCall, 1e-9)));
  std::vector<double> samples;
  if (batch == 1) samples.push_back(firstCall);
  double total = batch == 1 ? firstCall : 0.0;
  while (static_cast<int>(samples.size()) < options.maxSamples &&
         (static_cast<int>(samples.size()) < options.minSamples || total < options.minTotalSeconds)) {
    double seconds = timeBatch(batch);
    total += seconds;
    samples.push_back(seconds / static_cast<double>(batch));
    if (options.afterSample && !options.afterSample(static_cast<int>(samples.size()), total)) break;
  }
  return samples;
}

/// Samples of a call that times itself (a GPU run timed by the device's clock): `timedCall`
/// runs once and returns its seconds. The same warm-up and stopping rules as
/// sampleSecondsPerCall, one call per sample (minSampleSeconds does not apply).
template <class TimedCall>
std::vector<double> sampleTimedCalls(TimedCall&& timedCall, const TimerOptions& options = {}) {
  for (int call = 0; call < options.warmupCalls; ++call) timedCall();
  std::vector<double> samples;
  double total = 0;
  while (static_cast<int>(samples.size()) < options.maxSamples &&
         (static_cast<int>(samples.size()) < options.minSamples || total < options.minTotalSeconds)) {
    samples.push_back(timedCall());
    total += samples.back();
    if (options.afterSample && !options.afterSample(static_cast<int>(samples.size()), total)) break;
  }
  return samples;
}

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2.0;
}

/// Median seconds per call of `callable`: robust to the occasional preempted sample on a
/// noisy machine, unlike the mean.
template <class Callable>
double medianSecondsPerCall(Callable&& callable, const TimerOptions& options = {}) {
  return median(sampleSecondsPerCall(callable, options));
}

}  // namespace tessel::runtime
