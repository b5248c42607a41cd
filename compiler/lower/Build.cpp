// JIT module adapter and the build entry point.
#include "compiler/lower/Build.h"

#include <map>

#include "runtime/KernelFunction.h"

namespace tessel {

runtime::DataType toRuntimeType(DataType dtype) {
  using Code = runtime::DataType::Code;
  Code code = Code::Float;
  switch (dtype.code()) {
    case DataType::Code::Int: code = Code::Int; break;
    case DataType::Code::UInt: code = Code::UInt; break;
    case DataType::Code::Float: code = Code::Float; break;
    case DataType::Code::BFloat: code = Code::BFloat; break;
    case DataType::Code::Bool: code = Code::Bool; break;
    case DataType::Code::Handle: TESSEL_ICHECK(false) << "handle has no runtime array type"; break;
  }
  runtime::DataType out;
  out.code = code;
  out.bits = uint8_t(dtype.bits());
  out.lanes = uint16_t(dtype.lanes());
  return out;
}

namespace {
class JitRuntimeModule : public runtime::Module {
public:
  JitRuntimeModule(std::shared_ptr<JITModule> jit, const std::vector<PrimFunc>& funcs) : jit_(std::move(jit)) {
    for (auto& f : funcs) {
      std::vector<runtime::KernelParameter> parameters;
      for (auto& param : f->params) {
        runtime::KernelParameter p;
        p.name = param.name();
        for (auto& extent : param.shape()) {
          const int64_t* value = asConstInt(extent);
          TESSEL_ICHECK(value) << "parameter " << param.name() << " of " << f->name << " has a symbolic shape";
          p.shape.push_back(*value);
        }
        p.dtype = toRuntimeType(param.dtype());
        parameters.push_back(std::move(p));
      }
      TesselKernel kernel = jit_->getKernel(f->name);
      TESSEL_ICHECK(kernel) << "JIT lost function " << f->name;
      names_.push_back(f->name);
      functions_.emplace(f->name, runtime::wrapKernel(f->name, kernel, std::move(parameters)));
    }
  }
  std::string typeKey() const override { return "llvm-jit"; }
  runtime::PackedFunc getFunction(const std::string& name) const override {
    auto it = functions_.find(name);
    return it == functions_.end() ? runtime::PackedFunc() : it->second;
  }
  std::vector<std::string> functionNames() const override { return names_; }

private:
  std::shared_ptr<JITModule> jit_;
  std::vector<std::string> names_;
  std::map<std::string, runtime::PackedFunc> functions_;
};
}  // namespace

Expected<std::shared_ptr<runtime::Module>> makeJitModule(const std::vector<PrimFunc>& funcs, const Target& target,
                                                         CodeQuality quality) {
  // The packed functions check every array against a constant shape; a symbolic one is a
  // user's tensor, not a compiler bug.
  for (auto& f : funcs)
    for (auto& param : f->params)
      for (auto& extent : param.shape())
        if (!asConstInt(extent))
          return Diagnostic{"argument " + param.name() + " has a symbolic shape; only constant shapes can be compiled",
                            "function " + f->name, 0, 0, "give every extent of " + param.name() + " a constant value"};
  auto jit = buildJIT(funcs, target, quality);
  if (!jit) return jit.error();
  return std::shared_ptr<runtime::Module>(std::make_shared<JitRuntimeModule>(*jit, funcs));
}

Expected<BuiltFunction> build(const Schedule& schedule, const std::vector<te::Tensor>& args, const std::string& name,
                              const Target& target) {
  auto lowered = lower(schedule, args, name);
  if (!lowered) return lowered.error();
  auto module = makeJitModule({lowered->func}, target);
  if (!module) return module.error();
  BuiltFunction built;
  built.lowered = std::move(*lowered);
  built.module = *module;
  built.function = built.module->getFunction(name);
  return built;
}

}  // namespace tessel
