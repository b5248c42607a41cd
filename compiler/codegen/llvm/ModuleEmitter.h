// Private to the LLVM backend: translation of lowered PrimFuncs into one LLVM module.
// Only forward declarations of LLVM types here; the LLVM headers stay in the .cpp files.
#pragma once

#include <memory>
#include <vector>

#include "compiler/codegen/llvm/CodeGenLLVM.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessel {

/// One verified, unoptimized module holding an exported `int32_t name(void** args)` per
/// PrimFunc (plus internal helpers: the bodies of parallel loops), for `machine`. A construct
/// the backend cannot compile is a Diagnostic naming the function; IR that breaks the input
/// contract (unflattened indices, BufferRealize, Reduce) fails an internal check.
Expected<std::unique_ptr<llvm::Module>> emitModule(const std::vector<PrimFunc>& funcs, llvm::LLVMContext& context,
                                                   llvm::TargetMachine& machine, const Target& target);

}  // namespace tessel
