// Host detection, target machines and the O3 optimization pipeline.
#include "compiler/codegen/llvm/LLVMTarget.h"

#include <algorithm>
#include <mutex>
#include <sstream>

#include <llvm/ADT/StringMap.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
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

std::vector<std::string> splitFeatures(const std::string& features) {
  std::vector<std::string> out;
  std::stringstream stream(features);
  std::string item;
  while (std::getline(stream, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool hasFeature(const std::string& features, const std::string& name) {
  for (auto& feature : splitFeatures(features))
    if (feature == "+" + name) return true;
  return false;
}

std::string joinWithCommas(const std::vector<std::string>& items) {
  std::string out;
  for (auto& item : items) {
    if (!out.empty()) out.push_back(',');
    out.append(item);
  }
  return out;
}

int widestVectorBits(const std::string& features) {
  if (hasFeature(features, "avx512f")) return 512;
  if (hasFeature(features, "avx")) return 256;
  return 128;
}

}  // namespace

TargetInfo TargetInfo::host() {
  TargetInfo info;
  info.triple = llvm::sys::getProcessTriple();
  info.cpu = llvm::sys::getHostCPUName().str();
#if LLVM_VERSION_MAJOR >= 19
  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
#else
  llvm::StringMap<bool> hostFeatures;
  llvm::sys::getHostCPUFeatures(hostFeatures);
#endif
  std::vector<std::string> features;
  for (auto& entry : hostFeatures) {
    std::string feature(1, entry.second ? '+' : '-');
    feature.append(entry.first().str());
    features.push_back(std::move(feature));
  }
  // StringMap order is unspecified; sorting keeps the string (and anything keyed by it) stable.
  std::sort(features.begin(), features.end());
  info.features = joinWithCommas(features);
  info.vectorBits = widestVectorBits(info.features);
  return info;
}

std::string TargetInfo::toString() const {
  std::vector<std::string> enabled;
  for (auto& feature : splitFeatures(features))
    if (feature[0] == '+') enabled.push_back(feature);
  std::sort(enabled.begin(), enabled.end());
  std::string out = "llvm -mtriple=" + triple + " -mcpu=" + cpu + " -vector-bits=" + std::to_string(vectorBits);
  if (!enabled.empty()) out += " -mattr=" + joinWithCommas(enabled);
  return out;
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const TargetInfo& target, CodeUse use) {
  initializeNativeTarget();
  std::string triple = target.triple.empty() ? llvm::sys::getProcessTriple() : target.triple;
  std::string error;
  const llvm::Target* llvmTarget = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return Diagnostic{"LLVM cannot generate code for target '" + triple + "': " + error, "codegen", 0, 0,
                      "use TargetInfo::host() or a triple of the native target"};
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
      llvmTarget->createTargetMachine(triple, cpu, target.features, options, relocation, {}, level);
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
