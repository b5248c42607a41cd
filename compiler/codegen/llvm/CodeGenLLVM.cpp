// The backend's entry points: JIT compilation into this process, and IR, assembly and object output.
#include "compiler/codegen/llvm/CodeGenLLVM.h"

#include <math.h>
#include <string.h>

#include <map>
#include <unordered_map>

#include <llvm/ADT/SmallString.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "compiler/codegen/llvm/LLVMTarget.h"
#include "compiler/codegen/llvm/ModuleEmitter.h"
#include "core/ir/StructuralEqual.h"
#include "core/support/Stopwatch.h"

namespace tessel {

struct JITModule::Impl {
  Target target;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<std::string> names;
  std::map<std::string, TesselKernel> kernels;
};

JITModule::JITModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JITModule::~JITModule() = default;

TesselKernel JITModule::getKernel(const std::string& name) const {
  auto it = impl_->kernels.find(name);
  return it == impl_->kernels.end() ? nullptr : it->second;
}

std::vector<std::string> JITModule::functionNames() const { return impl_->names; }

const Target& JITModule::target() const { return impl_->target; }

namespace {

Diagnostic llvmFailure(const std::string& what, llvm::Error error) {
  return Diagnostic{what + ": " + llvm::toString(std::move(error)), "codegen", 0, 0, ""};
}

/// A module optimized (or not) for `target`, with its context, ready to print or compile.
struct CompiledModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
};

Expected<CompiledModule> compileModule(const std::vector<PrimFunc>& funcs, const Target& target, CodeUse use,
                                       bool optimized, CodegenTimes* times = nullptr) {
  Stopwatch stopwatch;
  auto machine = createTargetMachine(target, use);
  if (!machine) return machine.error();
  CompiledModule out;
  out.machine = std::move(*machine);
  out.context = std::make_unique<llvm::LLVMContext>();
  auto module = emitModule(funcs, *out.context, *out.machine, target);
  if (!module) return module.error();
  out.module = std::move(*module);
  if (times) times->emitSeconds += stopwatch.lap();
  if (optimized) optimizeModule(*out.module, *out.machine);
  if (times) times->optimizeSeconds += stopwatch.lap();
  return out;
}

struct NamedAddress {
  const char* name;
  void* address;
};

/// The runtime's C backend API and the C library functions generated code calls, resolved
/// by address: the runtime is linked into this program, so its symbols need not be
/// exported dynamically for the JIT to find them.
std::vector<NamedAddress> knownSymbols() {
  using Unary = float (*)(float);
  using UnaryDouble = double (*)(double);
  using Binary = float (*)(float, float);
  using BinaryDouble = double (*)(double, double);
#define TESSEL_UNARY(name) {#name "f", reinterpret_cast<void*>(static_cast<Unary>(&::name##f))}, \
                           {#name, reinterpret_cast<void*>(static_cast<UnaryDouble>(&::name))}
#define TESSEL_BINARY(name) {#name "f", reinterpret_cast<void*>(static_cast<Binary>(&::name##f))}, \
                            {#name, reinterpret_cast<void*>(static_cast<BinaryDouble>(&::name))}
  return {
      {"tessel_parallel_for", reinterpret_cast<void*>(&tessel_parallel_for)},
      {"tessel_workspace_alloc", reinterpret_cast<void*>(&tessel_workspace_alloc)},
      {"tessel_workspace_free", reinterpret_cast<void*>(&tessel_workspace_free)},
      TESSEL_UNARY(exp), TESSEL_UNARY(exp2), TESSEL_UNARY(log), TESSEL_UNARY(log2), TESSEL_UNARY(log10),
      TESSEL_UNARY(sqrt), TESSEL_UNARY(tanh), TESSEL_UNARY(erf), TESSEL_UNARY(sin), TESSEL_UNARY(cos),
      TESSEL_UNARY(floor), TESSEL_UNARY(ceil), TESSEL_UNARY(trunc), TESSEL_UNARY(round), TESSEL_UNARY(nearbyint),
      TESSEL_UNARY(rint), TESSEL_UNARY(fabs), TESSEL_BINARY(pow), TESSEL_BINARY(fmod),
      {"fmaf", reinterpret_cast<void*>(static_cast<float (*)(float, float, float)>(&::fmaf))},
      {"fma", reinterpret_cast<void*>(static_cast<double (*)(double, double, double)>(&::fma))},
      {"memset", reinterpret_cast<void*>(&::memset)},
      {"memcpy", reinterpret_cast<void*>(&::memcpy)},
      {"memmove", reinterpret_cast<void*>(&::memmove)},
  };
#undef TESSEL_UNARY
#undef TESSEL_BINARY
}

llvm::Error defineKnownSymbols(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap symbols;
  for (auto& [name, address] : knownSymbols()) {
#if LLVM_VERSION_MAJOR >= 17
    symbols[jit.mangleAndIntern(name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported);
#else
    symbols[jit.mangleAndIntern(name)] =
        llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(address), llvm::JITSymbolFlags::Exported);
#endif
  }
  return jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

std::vector<std::string> featureList(const std::string& features) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= features.size()) {
    size_t comma = features.find(',', start);
    if (comma == std::string::npos) comma = features.size();
    if (comma > start) out.push_back(features.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string withErrorPrefix(const char* commentMarker, const Diagnostic& diagnostic) {
  return std::string(commentMarker) + " error: " + diagnostic.toString() + "\n";
}

Expected<bool> emitMachineCode(CompiledModule& compiled, llvm::raw_pwrite_stream& stream, bool assembly) {
  llvm::legacy::PassManager passes;
#if LLVM_VERSION_MAJOR >= 18
  auto fileType = assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile;
#else
  auto fileType = assembly ? llvm::CGFT_AssemblyFile : llvm::CGFT_ObjectFile;
#endif
  if (compiled.machine->addPassesToEmitFile(passes, stream, nullptr, fileType))
    return Diagnostic{"LLVM cannot emit this kind of file for the target", "codegen", 0, 0, ""};
  passes.run(*compiled.module);
  return true;
}

}  // namespace

std::vector<size_t> firstIdenticalFunction(const std::vector<PrimFunc>& funcs) {
  std::vector<size_t> first(funcs.size());
  std::unordered_multimap<uint64_t, size_t> byHash;  // of the functions compiled, by structural hash
  std::vector<PrimFunc> unnamed;
  for (size_t i = 0; i < funcs.size(); ++i) {
    // Named alike, so only the code is compared.
    unnamed.push_back(PrimFunc("kernel", funcs[i]->params, funcs[i]->body));
    uint64_t hash = structuralHash(unnamed[i]);
    first[i] = i;
    auto [begin, end] = byHash.equal_range(hash);
    for (auto it = begin; it != end; ++it)
      if (structuralEqual(unnamed[it->second], unnamed[i])) {
        first[i] = it->second;
        break;
      }
    if (first[i] == i) byHash.emplace(hash, i);
  }
  return first;
}

std::vector<std::vector<size_t>> groupIdenticalFunctions(const std::vector<PrimFunc>& funcs) {
  std::vector<size_t> first = firstIdenticalFunction(funcs);
  std::vector<std::vector<size_t>> groups;
  std::vector<size_t> groupOf(funcs.size());
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (first[i] == i) {
      groupOf[i] = groups.size();
      groups.push_back({i});
    } else {
      groups[groupOf[first[i]]].push_back(i);
    }
  }
  return groups;
}

Expected<std::shared_ptr<JITModule>> buildJIT(const std::vector<PrimFunc>& funcs, const Target& target,
                                             CodeQuality quality) {
  const bool optimized = quality == CodeQuality::Optimized;
  auto compiled = compileModule(funcs, target, CodeUse::InProcess, optimized);
  if (!compiled) return compiled.error();

  llvm::orc::JITTargetMachineBuilder machineBuilder(compiled->machine->getTargetTriple());
  machineBuilder.setCPU(compiled->machine->getTargetCPU().str());
  machineBuilder.addFeatures(featureList(target.llvmFeatureString()));
#if LLVM_VERSION_MAJOR >= 18
  machineBuilder.setCodeGenOptLevel(optimized ? llvm::CodeGenOptLevel::Aggressive : llvm::CodeGenOptLevel::None);
#else
  machineBuilder.setCodeGenOptLevel(optimized ? llvm::CodeGenOpt::Aggressive : llvm::CodeGenOpt::None);
#endif
  machineBuilder.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(machineBuilder)).create();
  if (!jit) return llvmFailure("cannot start the LLVM JIT", jit.takeError());

  if (llvm::Error error = defineKnownSymbols(**jit)) return llvmFailure("cannot register runtime functions", std::move(error));
  // Anything else LLVM's lowering calls (compiler-runtime helpers) comes from the process.
  auto processSymbols =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!processSymbols) return llvmFailure("cannot search this process for symbols", processSymbols.takeError());
  (*jit)->getMainJITDylib().addGenerator(std::move(*processSymbols));

  compiled->module->setDataLayout((*jit)->getDataLayout());
  llvm::orc::ThreadSafeModule threadSafe(std::move(compiled->module), std::move(compiled->context));
  if (llvm::Error error = (*jit)->addIRModule(std::move(threadSafe)))
    return llvmFailure("cannot add the module to the JIT", std::move(error));

  auto impl = std::make_unique<JITModule::Impl>();
  impl->target = target;
  // Looking every kernel up now compiles the module and reports unresolved symbols here,
  // not at the first call.
  for (auto& func : funcs) {
    auto symbol = (*jit)->lookup(func->name);
    if (!symbol) return llvmFailure("cannot compile function " + func->name, symbol.takeError());
#if LLVM_VERSION_MAJOR >= 15
    impl->kernels[func->name] = symbol->toPtr<TesselKernel>();
#else
    impl->kernels[func->name] = reinterpret_cast<TesselKernel>(static_cast<uintptr_t>(symbol->getAddress()));
#endif
    impl->names.push_back(func->name);
  }
  impl->jit = std::move(*jit);
  return std::make_shared<JITModule>(std::move(impl));
}

std::string emitLLVMIR(const std::vector<PrimFunc>& funcs, const Target& target, bool optimized) {
  auto compiled = compileModule(funcs, target, CodeUse::InProcess, optimized);
  if (!compiled) return withErrorPrefix(";", compiled.error());
  std::string text;
  llvm::raw_string_ostream stream(text);
  compiled->module->print(stream, nullptr);
  stream.flush();
  return text;
}

std::string emitAssembly(const std::vector<PrimFunc>& funcs, const Target& target) {
  auto compiled = compileModule(funcs, target, CodeUse::SharedLibrary, /*optimized=*/true);
  if (!compiled) return withErrorPrefix("#", compiled.error());
  // Verbose assembly labels every block with its IR name ("# %ii.body") and marks loop
  // nesting: what a reader (and the Studio's loop linking) finds the loops by.
  compiled->machine->Options.MCOptions.AsmVerbose = true;
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream stream(text);
  auto emitted = emitMachineCode(*compiled, stream, /*assembly=*/true);
  if (!emitted) return withErrorPrefix("#", emitted.error());
  return std::string(text.str());
}

Expected<bool> emitObjectFile(const std::vector<PrimFunc>& funcs, const Target& target, const std::string& path,
                              CodegenTimes* times) {
  auto compiled = compileModule(funcs, target, CodeUse::SharedLibrary, /*optimized=*/true, times);
  if (!compiled) return compiled.error();
  Stopwatch stopwatch;
  std::error_code errorCode;
  llvm::raw_fd_ostream file(path, errorCode, llvm::sys::fs::OF_None);
  if (errorCode)
    return Diagnostic{"cannot write object file: " + errorCode.message(), path, 0, 0, "check the directory exists and is writable"};
  auto emitted = emitMachineCode(*compiled, file, /*assembly=*/false);
  if (!emitted) return emitted.error();
  file.close();
  if (times) times->machineCodeSeconds += stopwatch.seconds();
  if (file.has_error()) {
    file.clear_error();
    return Diagnostic{"writing the object file failed", path, 0, 0, "check free disk space"};
  }
  return true;
}

}  // namespace tessel
