// The CPU backend: lowered PrimFuncs to LLVM IR, then to machine code in process (JIT) or on disk.
//
// This header includes no LLVM header on purpose (LLVM and Qt must never meet in one
// translation unit), so every LLVM object stays behind an opaque implementation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/Stmt.h"
#include "compiler/codegen/llvm/HostTarget.h"
#include "core/support/Error.h"
#include "runtime/c_backend_api.h"

namespace tessel {

/// How hard the JIT works on the code it makes.
enum class CodeQuality { Optimized, QuickToCompile };

/// Compiled PrimFuncs living in this process. Kernels stay callable as long as the module
/// is alive; keep the shared_ptr while any returned TesselKernel may still run.
class JITModule {
public:
  ~JITModule();
  JITModule(const JITModule&) = delete;
  JITModule& operator=(const JITModule&) = delete;

  /// The compiled function exported under `name` (a PrimFunc's name), or nullptr if absent.
  TesselKernel getKernel(const std::string& name) const;
  /// The names of the compiled PrimFuncs, in the order they were given to buildJIT.
  std::vector<std::string> functionNames() const;
  /// The target the code was generated for.
  const Target& target() const;

  /// The LLVM objects behind the module; only the backend can make one.
  struct Impl;
  explicit JITModule(std::unique_ptr<Impl> impl);

private:
  std::unique_ptr<Impl> impl_;
};

/// Compiles lowered PrimFuncs (flat buffer indices; see the input contract below) with the
/// O3 pipeline and loads them into this process. Each function becomes a TesselKernel
/// `int32_t name(void** args)` with args[i] the data pointer of params[i], returning 0.
/// Anything the backend cannot compile (a GPU thread binding, an intrinsic on a type it
/// does not take, an undefined variable) is a Diagnostic naming the function and construct.
///
/// Input contract: every param is a Buffer whose data is 64-byte aligned and aliases no
/// other param; every BufferLoad/BufferStore has one flat element index; memory is
/// identified by buffer->data. Parallel loops run on the runtime thread pool
/// (tessel_parallel_for); a parallel loop inside another parallel loop runs serially.
/// Vectorized and Unrolled loops that reach codegen run as serial loops (with a hint to
/// LLVM). Allocations of up to 64 KiB with a constant size live on the stack, larger or
/// symbolic ones in runtime workspace memory. round() rounds half to even
/// (std::nearbyint); bfloat16 is stored as 16 bits and computed in float32.
/// exp, log, tanh, erf and sigmoid of float32 (and of float16/bfloat16, computed in
/// float32) are inline vector polynomials, within 2e-6 of the C library (relative for exp
/// and log, absolute for the others) and with its special values; so are sin and cos of
/// float32 vectors whose lanes are all within +-8192 (other vectors call the C library per
/// lane). float64, pow, and scalar sin and cos call the C library.
///
/// QuickToCompile skips LLVM's optimizer and compiles with its fastest instruction selection:
/// several times quicker to build, several times slower to run; for code that runs once on
/// little data (constant folding's shape computations).
Expected<std::shared_ptr<JITModule>> buildJIT(const std::vector<PrimFunc>& funcs,
                                             const Target& target = hostTarget(),
                                             CodeQuality quality = CodeQuality::Optimized);

/// The LLVM IR of the module, before or after the O3 pipeline. On failure the text is a
/// single comment line "; error: <diagnostic>".
std::string emitLLVMIR(const std::vector<PrimFunc>& funcs, const Target& target, bool optimized = true);

/// The optimized module as target assembly (position-independent, as for export). On failure
/// the text is a single comment line "# error: <diagnostic>".
std::string emitAssembly(const std::vector<PrimFunc>& funcs, const Target& target);

/// The instructions a tensorized dot_u8i8 of `lanes` int32 lanes becomes on `target`:
/// "vnni" (vpdpbusd), "avx512bw" or "avx2" (vpmaddubsw + vpmaddwd), or "generic".
std::string integerDotForm(const Target& target, int lanes);
/// The instructions a tensorized dot_bf16 of `lanes` float32 lanes becomes on `target`:
/// "avx512bf16" (vdpbf16ps) or "generic" (float32 multiplies and adds).
std::string bfloat16DotForm(const Target& target, int lanes);

/// For each function, the index of the first function in `funcs` whose code is the same but
/// for its name (structurally equal, parameters included), or its own index. Code
/// generation compiles such a function once and exports the others as aliases of it; a model
/// of repeated layers (ViT's twelve encoder blocks) has mostly such kernels. Whoever splits
/// functions into several modules keeps each group in one module (see groupIdenticalFunctions).
std::vector<size_t> firstIdenticalFunction(const std::vector<PrimFunc>& funcs);

/// The indices of `funcs` in groups of identical functions (firstIdenticalFunction), each
/// group in order and the groups in the order of their first member.
std::vector<std::vector<size_t>> groupIdenticalFunctions(const std::vector<PrimFunc>& funcs);

/// Where one module's code generation spent its time (`tessel compile --time-report`).
struct CodegenTimes {
  double emitSeconds = 0;         ///< PrimFunc -> LLVM IR.
  double optimizeSeconds = 0;     ///< LLVM's O3 pipeline.
  double machineCodeSeconds = 0;  ///< Instruction selection, scheduling, register allocation, the object file.
  double total() const { return emitSeconds + optimizeSeconds + machineCodeSeconds; }
};

/// Writes the optimized module as a position-independent object file (ELF on Linux) that
/// exports each PrimFunc under its name and calls the runtime's C backend API for parallel
/// loops and workspace memory. Returns true, or a Diagnostic when compiling or writing fails.
/// `times`, when given, receives where the time went.
Expected<bool> emitObjectFile(const std::vector<PrimFunc>& funcs, const Target& target, const std::string& path,
                              CodegenTimes* times = nullptr);

}  // namespace tessel
