// Scratch memory for generated kernels, reused across calls instead of returned to the system.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace tessel::runtime {

/// Hands out 64-byte aligned blocks and keeps freed ones for the next request of the same
/// size. A kernel that allocates a large buffer on every call would otherwise get fresh
/// pages from the system each time and pay a page fault per 4 KiB touched (glibc reuses
/// freed blocks only below its mmap threshold, at most 32 MiB).
class WorkspacePool {
public:
  /// Blocks kept for reuse are capped at this many bytes in total; beyond it, frees go
  /// back to the system.
  explicit WorkspacePool(size_t cacheLimitBytes = size_t(512) << 20);
  ~WorkspacePool();
  WorkspacePool(const WorkspacePool&) = delete;
  WorkspacePool& operator=(const WorkspacePool&) = delete;

  /// At least `bytes` bytes, 64-byte aligned; null when the system has no memory.
  void* allocate(size_t bytes);
  /// Returns a block from allocate(); null is ignored.
  void free(void* pointer);
  /// Bytes currently kept for reuse.
  size_t cachedBytes() const;

  static WorkspacePool& global();

private:
  std::map<size_t, std::vector<void*>> freeBlocks_;  // by block size
  size_t cachedBytes_ = 0;
  size_t cacheLimitBytes_;
  mutable std::mutex mutex_;
};

}  // namespace tessel::runtime
