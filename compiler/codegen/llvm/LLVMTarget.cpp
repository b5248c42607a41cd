// Host detection, target machines and the O3 optimization pipeline.
#include "compiler/codegen/llvm/LLVMTarget.h"
#include "runtime/CpuFeatures.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>

#include "compiler/codegen/llvm/HostTarget.h"
#include "runtime/ThreadPool.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#if LLVM_VERSION_MAJOR >= 14
#include <llvm/MC/TargetRegistry.h>
#else
#include <llvm/Support/TargetRegistry.h>
#endif
#if LLVM_VERSION_MAJOR >= 17
#include <llvm/TargetParser/Host.h>
#else
#include <llvm/Support/Host.h>
#endif

namespace tessel {

namespace {

// The data cache of `level` (1, 2, 3) in bytes, 0 when unknown: as Linux describes the caches
// of CPU 0 (the cache one core sees: one CCX's L3 on AMD), else as the C library reports it
// (glibc reports a whole AMD package's L3 inside some virtual machines: 256 MiB for 32).
int64_t dataCacheBytes(int level) {
  for (int index = 0; index < 8; ++index) {
    std::string directory = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream levelFile(directory + "level"), typeFile(directory + "type"), sizeFile(directory + "size");
    int cacheLevel = 0;
    std::string type, size;
    if (!(levelFile >> cacheLevel) || !(typeFile >> type) || !(sizeFile >> size)) break;
    if (cacheLevel != level || type == "Instruction" || size.empty()) continue;
    int64_t multiplier = 1;
    if (size.back() == 'K') multiplier = 1024;
    else if (size.back() == 'M') multiplier = 1024 * 1024;
    try {
      int64_t value = std::stoll(size) * multiplier;
      if (value > 0) return value;
    } catch (const std::exception&) {
    }
  }
  long bytes = -1;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  if (level == 1) bytes = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (level == 2) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (level == 3) bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return bytes > 0 ? int64_t(bytes) : 0;
}

// What does not change while the process runs; detecting features costs a CPUID sweep.
Target detectHostMachine() {
  Target target;
  target.kind = TargetKind::Cpu;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
#if LLVM_VERSION_MAJOR >= 19
  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
#else
  llvm::StringMap<bool> hostFeatures;
  llvm::sys::getHostCPUFeatures(hostFeatures);
#endif
  // A feature the runtime can check counts only when it holds: AMX also needs the operating
  // system to let this process use the tile registers (runtime/CpuFeatures.cpp).
  for (auto& entry : hostFeatures)
    if (entry.second && runtime::hostHasCpuFeature(entry.first().str())) target.features.push_back(entry.first().str());
  // StringMap order is unspecified; sorting keeps the string (and anything keyed by it) stable.
  std::sort(target.features.begin(), target.features.end());
  target.vectorBits = Target::vectorBitsForFeatures(target.features);
  if (int64_t l1 = dataCacheBytes(1)) target.l1CacheBytes = l1;
  if (int64_t l2 = dataCacheBytes(2)) target.l2CacheBytes = l2;
  target.l3CacheBytes = dataCacheBytes(3);
  return target;
}

}  // namespace

Target hostTarget() {
  static const Target machine = detectHostMachine();
  Target target = machine;
  target.cores = std::max(1, runtime::ThreadPool::global().numThreads());
  return target;
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // No partial unrolling by LLVM. Schedules say what to unroll (the unroll primitive), and
    // LLVM's partial unroller on top of them only multiplies code: on MobileNetV2, ResNet-18 and
    // a transformer encoder it took half to three quarters of the compile time (3.3 s -> 1.6 s,
    // 1.8 s -> 0.95 s, 1.4 s -> 0.37 s) for kernels no faster (latency equal within noise, up
    // to 5% better). Full unrolling of small constant loops stays on. The unroll pass reads
    // this only as a command-line option; it is set once, before any module is optimized.
    const char* arguments[] = {"tessel", "-unroll-allow-partial=0"};
    llvm::cl::ParseCommandLineOptions(2, arguments, "", nullptr, nullptr, /*LongOptionsUseDoubleDash=*/false);
  });
}

Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const Target& target, CodeUse use) {
  initializeNativeTarget();
  std::string triple = target.triple.empty() ? llvm::sys::getProcessTriple() : target.triple;
  std::string error;
  const llvm::Target* llvmTarget = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return Diagnostic{"LLVM cannot generate code for target '" + triple + "': " + error, "codegen", 0, 0,
                      "use the host target or a triple of the native target"};
  llvm::TargetOptions options;
  // Fuse a*b+c into FMA only where the IR allows it (the 'contract' flag), never globally.
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  llvm::Reloc::Model relocation = use == CodeUse::SharedLibrary ? llvm::Reloc::PIC_ : llvm::Reloc::Static;
#if LLVM_VERSION_MAJOR >= 18
  auto level = llvm::CodeGenOptLevel::Aggressive;
#else
  auto level = llvm::CodeGenOpt::Aggressive;
#endif
  std::string cpu = target.cpu.empty() ? "generic" : target.cpu;
  llvm::TargetMachine* machine =
      llvmTarget->createTargetMachine(triple, cpu, target.llvmFeatureString(), options, relocation, {}, level);
  if (!machine)
    return Diagnostic{"LLVM could not create a target machine for " + target.toString(), "codegen", 0, 0, ""};
  return std::unique_ptr<llvm::TargetMachine>(machine);
}

void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopInterleaving = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&machine, tuning);

  // The analysis managers must outlive the pass managers that use them, and be destroyed
  // in the reverse order of their cross-registration.
  llvm::LoopAnalysisManager loopAnalyses;
  llvm::FunctionAnalysisManager functionAnalyses;
  llvm::CGSCCAnalysisManager sccAnalyses;
  llvm::ModuleAnalysisManager moduleAnalyses;
  builder.registerModuleAnalyses(moduleAnalyses);
  builder.registerCGSCCAnalyses(sccAnalyses);
  builder.registerFunctionAnalyses(functionAnalyses);
  builder.registerLoopAnalyses(loopAnalyses);
  builder.crossRegisterProxies(loopAnalyses, functionAnalyses, sccAnalyses, moduleAnalyses);

  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, moduleAnalyses);
}

}  // namespace tessel
