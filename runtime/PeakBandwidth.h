// Measures the machine's memory bandwidth, the roofline's slanted ceiling for generated kernels.
#pragma once

#include <cstddef>

namespace tessel::runtime {

/// The last (largest) data cache level as this machine reports it.
struct LastLevelCache {
  size_t bytes = 0;   ///< One instance's size; 0 when the machine does not say.
  int instances = 0;  ///< How many separate instances (sockets, chiplets) the CPUs share out.
};

/// Read from /sys/devices/system/cpu (sysconf's L3, then L2, when that is missing).
LastLevelCache lastLevelCache();

/// Sustainable memory (DRAM) bandwidth in GB/s (10^9 bytes per second) with `threads` threads
/// of a runtime ThreadPool (0 or less: the default count), read and write together.
///
/// Each thread runs a STREAM triad, a[i] = b[i] + s * c[i], over its share of three float
/// arrays that together hold four times the last-level cache its threads can fill (at least
/// 64 MiB), so the data comes from memory. Bytes count as a kernel's do: what it reads plus
/// what it writes (the cache's read-for-ownership of the written line is not counted on
/// either side), so a kernel's bytes over this bandwidth is the least time its traffic takes.
/// The fastest of the passes run in 0.1 s (interference only ever slows a pass down); takes
/// about 0.2 s in all and, for that moment, that much memory. Not cached: driver::machineBandwidthGBps is.
double measureMemoryBandwidthGBps(int threads);

}  // namespace tessel::runtime
