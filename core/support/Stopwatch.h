// Wall-clock time of a phase, for the reports that say where a compile's time went.
#pragma once

#include <chrono>

namespace tessel {

/// Started when made; seconds() reads it, lap() reads it and starts it again.
class Stopwatch {
public:
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double milliseconds() const { return seconds() * 1e3; }
  double lap() {
    auto now = Clock::now();
    double elapsed = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return elapsed;
  }

private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
};

}  // namespace tessel
