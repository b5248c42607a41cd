// A collection of named functions: compiled kernels from a JIT, a shared library or a GPU.
#pragma once

#include <string>
#include <vector>

#include "runtime/PackedFunc.h"

namespace tessel::runtime {

/// The base of every module kind. A module owns the code behind the functions it hands
/// out; callers keep the module (usually in a std::shared_ptr) alive while they call them.
class Module {
public:
  virtual ~Module();

  /// What kind of module this is: "llvm-jit", "shared-library", "cuda", ...
  virtual std::string typeKey() const = 0;
  /// The function called `name`, or an empty PackedFunc when the module has none.
  virtual PackedFunc getFunction(const std::string& name) const = 0;
  /// The names getFunction resolves, in a stable order.
  virtual std::vector<std::string> functionNames() const = 0;

  /// getFunction(name), but throws Error listing the available names when it is absent.
  PackedFunc requireFunction(const std::string& name) const;
};

}  // namespace tessel::runtime
