// Argument checking between packed calls and generated kernels.
#include "runtime/KernelFunction.h"

#include <memory>
#include <utility>

namespace tessel::runtime {

namespace {

std::string describeParameter(const KernelParameter& parameter) {
  std::string text = parameter.dtype.toString() + "[";
  for (size_t i = 0; i < parameter.shape.size(); ++i) text += (i ? ", " : "") + std::to_string(parameter.shape[i]);
  return text + "]";
}

}  // namespace

PackedFunc wrapKernel(std::string name, TesselKernel kernel, std::vector<KernelParameter> parameters) {
  if (kernel == nullptr) throw Error("wrapKernel: no code given for kernel '" + name + "'");
  std::string kernelName = name;
  return PackedFunc(std::move(name), [kernel, kernelName, parameters = std::move(parameters)](PackedArgs args) -> Value {
    args.expectCount(parameters.size());
    std::vector<void*> pointers(parameters.size());
    for (size_t index = 0; index < parameters.size(); ++index) {
      const KernelParameter& parameter = parameters[index];
      NDArray array = args.get<NDArray>(index);
      if (!array.defined() || array.shape() != parameter.shape || array.dtype() != parameter.dtype ||
          array.device().type != DeviceType::CPU) {
        throw Error(kernelName + ": argument " + std::to_string(index + 1) + " (" + parameter.name + ") is " + array.describe() +
                    ", expected " + describeParameter(parameter) + " on cpu");
      }
      pointers[index] = array.data();
    }
    if (int32_t status = kernel(pointers.data()))
      throw Error(kernelName + ": kernel failed with status " + std::to_string(status));
    return Value();
  });
}

}  // namespace tessel::runtime
