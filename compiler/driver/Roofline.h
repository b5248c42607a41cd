// The roofline bound of a kernel: the least time its arithmetic or its memory traffic allows on
// this machine, and how close a measured time comes to it.
#pragma once

#include <optional>
#include <vector>

#include "core/ir/Stmt.h"

namespace tessel::driver {

struct CompiledKernel;  // Driver.h
struct ModelProfile;    // ModelProfile.h
struct ProfiledNode;

/// The machine's two ceilings as measured (machinePeakGflops and machineBandwidthGBps of
/// MeasureKernel.h); 0: not measured.
struct MachineRoof {
  double peakGflops = 0;     ///< float32 FMA peak, GFLOP/s (an FMA counts as two operations).
  double bandwidthGBps = 0;  ///< Memory (DRAM) bandwidth, reads and writes together, GB/s.
  /// int8 vpdpbusd peak, GOP/s: the compute ceiling of kernels whose arithmetic is int8 dot
  /// products (usesIntegerDot); 0 when not measured or the CPU has no VNNI.
  double int8PeakGops = 0;
  /// int8 AMX tdpbusd peak, GOP/s: the ceiling of kernels on tiles (usesIntegerTiles); 0 when
  /// not measured or the CPU (or its kernel) has no AMX.
  double int8TilePeakGops = 0;
  bool known() const { return peakGflops > 0 && bandwidthGBps > 0; }
};

/// Which ceiling bounds a kernel: its arithmetic at peak, or its bytes at memory bandwidth.
enum class RooflineLimit { Compute, Memory };
const char* toString(RooflineLimit limit);  ///< "compute", "memory".

struct RooflineBound {
  /// max(flops / peak, bytes / bandwidth): no schedule of the kernel runs faster while its
  /// data comes from memory.
  double milliseconds = 0;
  RooflineLimit limit = RooflineLimit::Memory;  ///< The larger of the two terms.
};

/// The bound of a kernel that does `flops` and moves `bytes`; nullopt when the roof is not
/// known, a count is negative, or both are 0 (nothing to bound).
std::optional<RooflineBound> rooflineBound(double flops, double bytes, const MachineRoof& roof);

/// bound / measured: 1 at the roof, toward 0 the further below it; nullopt when nothing was
/// measured. Above 1 when a kernel's data came from caches, which are faster than memory
/// (small kernels, or weights a model reads on every run), or the probes met a busy moment.
std::optional<double> rooflineFraction(const RooflineBound& bound, double measuredMilliseconds);

/// Elements times element size of a tensor of `shape`; nullopt when a dimension is not constant.
std::optional<double> constantShapeBytes(const std::vector<Expr>& shape, DataType dtype);

/// The least bytes a call of `function` moves: each buffer parameter once (its inputs read
/// and its outputs written, weights included); 0 when a parameter's shape is not constant.
double leastBytesMoved(const PrimFunc& function);

/// Whether `function` does its arithmetic in tensorized int8 dot products (dot_u8i8).
bool usesIntegerDot(const PrimFunc& function);
/// Whether `function` does its arithmetic on AMX tiles: a tile_u8i8 nest, and this CPU lets
/// the process use its tiles (elsewhere the nest runs as plain loops).
bool usesIntegerTiles(const PrimFunc& function);
/// Whether `function` does its arithmetic in tensorized bfloat16 dot products (dot_bf16).
bool usesBFloat16Dot(const PrimFunc& function);

/// The bound of a profiled node (an int8 one against roof.int8PeakGops when that is known);
/// nullopt when its flops or bytes are unknown (a module loaded
/// without its compiler, a profile saved before Tessel recorded them) or the roof is.
std::optional<RooflineBound> rooflineBound(const ProfiledNode& node, const MachineRoof& roof);

/// Sets profile.roof, and each node's op, flops, bytes and roofline fraction (of its fastest run,
/// or its median when the fastest is unknown) from the kernel of its name in `kernels`; a node
/// whose kernel is not there keeps them unknown.
void addRooflines(ModelProfile& profile, const std::vector<CompiledKernel>& kernels, const MachineRoof& roof);

}  // namespace tessel::driver
