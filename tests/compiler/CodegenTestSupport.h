// Helpers shared by the LLVM codegen tests: aligned host memory, building and calling kernels,
// and short builders for flat loads, stores and loops.
#pragma once

#include <QtTest>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/ir/IR.h"

namespace tessel::testing {

/// Host memory aligned as NDArrays are, filled with a marker so untouched elements show.
template <class T>
class AlignedArray {
public:
  explicit AlignedArray(size_t count, T fill = T(-7))
      : count_(count), data_(static_cast<T*>(std::aligned_alloc(64, (count * sizeof(T) + 63) / 64 * 64))) {
    std::fill(data_, data_ + count, fill);
  }
  ~AlignedArray() { std::free(data_); }
  AlignedArray(const AlignedArray&) = delete;
  AlignedArray& operator=(const AlignedArray&) = delete;
  T& operator[](size_t i) { return data_[i]; }
  T* data() { return data_; }
  size_t size() const { return count_; }

private:
  size_t count_;
  T* data_;
};

/// JIT-compiles one function; null (with the diagnostic logged) on failure.
inline std::shared_ptr<JITModule> compile(const PrimFunc& func) {
  auto built = buildJIT({func});
  if (!built) {
    qWarning("%s", built.error().toString().c_str());
    return nullptr;
  }
  return *built;
}

/// Calls kernel `name` with the given buffer pointers; -100 when it does not exist.
inline int32_t run(const JITModule& module, const std::string& name, std::vector<void*> args) {
  TesselKernel kernel = module.getKernel(name);
  return kernel ? kernel(args.data()) : -100;
}

inline Expr load(const Buffer& buffer, Expr index) { return BufferLoadNode::make(buffer, {std::move(index)}); }
inline Stmt store(const Buffer& buffer, Expr value, Expr index) {
  return BufferStoreNode::make(buffer, std::move(value), {std::move(index)});
}
inline Stmt loop(const Var& var, Expr min, Expr extent, Stmt body, ForKind kind = ForKind::Serial) {
  return ForNode::make(var, std::move(min), std::move(extent), kind, std::move(body));
}

}  // namespace tessel::testing
