// Private to the LLVM backend: target machines and the O3 pipeline for a Target.
// Only forward declarations of LLVM types here; the LLVM headers stay in the .cpp files.
#pragma once

#include <memory>

#include "compiler/codegen/llvm/CodeGenLLVM.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessel {

/// Registers the native target with LLVM; safe to call from any thread, any number of times.
void initializeNativeTarget();

/// How the code will be loaded: into this process, or linked into a shared library later.
enum class CodeUse { InProcess, SharedLibrary };

/// A target machine for `target` at the highest codegen optimization level, or a Diagnostic
/// when LLVM does not know the triple.
Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const Target& target, CodeUse use);

/// Runs the new pass manager's O3 pipeline, tuned for `machine`, over `module`.
void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace tessel
