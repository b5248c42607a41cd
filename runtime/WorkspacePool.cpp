// A size-keyed cache of aligned blocks behind tessel_workspace_alloc.
#include "runtime/WorkspacePool.h"

#include <cstdlib>

namespace tessel::runtime {

namespace {
constexpr size_t kAlignment = 64;
// Each block starts with a header holding its size; the caller's pointer follows it, so
// free() needs no lookup. The header takes one alignment unit to keep the data aligned.
constexpr size_t kHeader = kAlignment;

// Sizes are rounded so that nearby requests share blocks: to 64 bytes below 4 KiB, to
// whole pages above.
size_t blockSize(size_t bytes) {
  size_t unit = bytes < 4096 ? kAlignment : 4096;
  size_t rounded = (bytes + unit - 1) / unit * unit;
  return (rounded == 0 ? kAlignment : rounded) + kHeader;
}
}  // namespace

WorkspacePool::WorkspacePool(size_t cacheLimitBytes) : cacheLimitBytes_(cacheLimitBytes) {}

WorkspacePool::~WorkspacePool() {
  for (auto& [size, blocks] : freeBlocks_)
    for (void* block : blocks) std::free(block);
}

void* WorkspacePool::allocate(size_t bytes) {
  size_t size = blockSize(bytes);
  void* block = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = freeBlocks_.find(size);
    if (it != freeBlocks_.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      cachedBytes_ -= size;
    }
  }
  if (!block) block = std::aligned_alloc(kAlignment, size);
  if (!block) return nullptr;
  *static_cast<size_t*>(block) = size;
  return static_cast<char*>(block) + kHeader;
}

void WorkspacePool::free(void* pointer) {
  if (!pointer) return;
  void* block = static_cast<char*>(pointer) - kHeader;
  size_t size = *static_cast<size_t*>(block);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cachedBytes_ + size <= cacheLimitBytes_) {
      freeBlocks_[size].push_back(block);
      cachedBytes_ += size;
      return;
    }
  }
  std::free(block);
}

size_t WorkspacePool::cachedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cachedBytes_;
}

WorkspacePool& WorkspacePool::global() {
  // Never destroyed: kernels may still free workspace from static destructors elsewhere.
  static WorkspacePool* pool = new WorkspacePool();
  return *pool;
}

}  // namespace tessel::runtime
