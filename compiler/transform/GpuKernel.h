// What a GPU kernel needs to be launched, read from its lowered body: the grid and block
// shape from the loops bound to blockIdx/threadIdx, and its shared memory. The one place
// that knows it; verification, code generation and export all ask here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/ir/Stmt.h"
#include "core/target/Target.h"

namespace tessel {

/// The attribute key that marks a kernel in the lowered function (after host_device_split):
/// AttrStmt("device_kernel", index, body), one per kernel, launched in order.
inline constexpr const char* kDeviceKernelAttr = "device_kernel";

/// A GPU block's barrier: AttrStmt("sync_threads", 0, no-op). What shared memory a thread
/// wrote before it is visible to every thread of the block after it. Only GPU lowering
/// writes it (InsertBarriers); the GPU printer turns it into __syncthreads() or barrier().
inline constexpr const char* kSyncThreadsAttr = "sync_threads";
Stmt syncThreads();
bool isSyncThreads(const Stmt& s);

struct KernelLaunch {
  std::string name;                       ///< "matmul_64x64x64_kernel0".
  std::array<int64_t, 3> grid{1, 1, 1};   ///< Blocks along x, y, z.
  std::array<int64_t, 3> block{1, 1, 1};  ///< Threads per block along x, y, z.
  int64_t sharedBytes = 0;                ///< Static shared memory of one block.
  /// A bound loop whose extent is not a constant ("threadIdx.x: extent n"), if any.
  std::string nonConstantExtent;
  int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
};

/// The kernels of a lowered GPU function, in launch order (empty before host_device_split).
std::vector<const AttrStmtNode*> deviceKernels(const PrimFunc& f);

/// `f` with the body of every kernel replaced by `rewrite(body)` (the kernel passes'
/// traversal); `f` itself when no body changed.
PrimFunc rewriteKernelBodies(const PrimFunc& f, const std::function<Stmt(const Stmt&)>& rewrite);

/// The global buffers allocated around the kernels (after host_device_split): intermediate
/// results one kernel writes and a later one reads, which the module allocates on the device.
std::vector<Buffer> deviceWorkspaces(const PrimFunc& f);

/// The launch shape of one kernel: for each thread tag, the largest extent of the loops
/// bound to it (loops with a smaller extent are guarded by the code generator).
KernelLaunch kernelLaunch(const PrimFunc& f, const AttrStmtNode* kernel);

/// What one block may use on `target`: threads, and static shared memory in bytes (the
/// portable limits of CUDA and OpenCL devices; larger needs dynamic shared memory).
int64_t maxThreadsPerBlock(const Target& target);
int64_t maxSharedBytesPerBlock(const Target& target);

/// 0..2 for the x, y, z of a thread tag ("threadIdx.y" -> 1); whether it is a block index.
int threadTagDimension(const std::string& tag);
bool isBlockIndexTag(const std::string& tag);

}  // namespace tessel
