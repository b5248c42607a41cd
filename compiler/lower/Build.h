// Building a schedule into callable native code: lowering, LLVM JIT, and a runtime module.
#pragma once

#include <memory>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/lower/Lower.h"
#include "runtime/Module.h"
#include "runtime/PackedFunc.h"

namespace tessel {

/// A lowered function compiled in process.
struct BuiltFunction {
  LoweredFunction lowered;
  std::shared_ptr<runtime::Module> module;
  /// Takes one NDArray per argument (inputs, then outputs), checked against their shapes
  /// and types before the kernel runs.
  runtime::PackedFunc function;
};

/// Lowers `schedule` and JIT-compiles it for `target`.
Expected<BuiltFunction> build(const Schedule& schedule, const std::vector<te::Tensor>& args, const std::string& name,
                              const Target& target = hostTarget());

/// A runtime module over JIT-compiled PrimFuncs.
Expected<std::shared_ptr<runtime::Module>> makeJitModule(const std::vector<PrimFunc>& funcs,
                                                         const Target& target = hostTarget(),
                                                         CodeQuality quality = CodeQuality::Optimized);

/// The runtime's name for a core data type.
runtime::DataType toRuntimeType(DataType dtype);

}  // namespace tessel
