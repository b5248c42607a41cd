// Helpers of the shape and data-movement operator definitions.
#include "compiler/opdefs/ShapeOpSupport.h"

#include "compiler/ops/Transform.h"

namespace tessel::graph::shape_ops {

Expected<OpKernel> transformKernel(const OpCall& call, Expected<Workload> workload, std::vector<int> inputIndices) {
  if (!workload) return call.error(workload.error().message, workload.error().hint);
  TESSEL_ICHECK(workload->inputs.size() == inputIndices.size())
      << call.op << ": " << workload->inputs.size() << " placeholders for " << inputIndices.size() << " inputs";
  OpKernel kernel;
  kernel.workload = std::move(*workload);
  kernel.inputIndices = std::move(inputIndices);
  kernel.schedule = [](const Workload& w, const Target& target) { return defaultTransformSchedule(w, target); };
  return kernel;
}

OpDef kernelTypedOp(std::string name, OpPattern pattern, int minInputs, int maxInputs, std::vector<int> valueInputs,
                    std::function<Expected<OpKernel>(const OpCall&)> build, int minOutputs, int maxOutputs) {
  OpDef def;
  def.name = std::move(name);
  def.pattern = pattern;
  def.minInputs = minInputs;
  def.maxInputs = maxInputs;
  def.minOutputs = minOutputs;
  def.maxOutputs = maxOutputs;
  def.valueInputs = std::move(valueInputs);
  def.build = build;
  def.inferTypes = [build](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto kernel = build(call);
    if (!kernel) return kernel.error();
    std::vector<TensorType> types;
    for (const te::Tensor& output : kernel->workload.outputs) {
      TensorType type;
      type.dtype = output.dtype();
      for (const Expr& extent : output.shape()) {
        const int64_t* value = asConstInt(extent);
        TESSEL_ICHECK(value) << call.op << " built an output with a symbolic extent";
        type.shape.push_back(*value);
      }
      types.push_back(std::move(type));
    }
    return types;
  };
  return def;
}

Expected<std::vector<int64_t>> axesFromAttributeOrInput(const OpCall& call, const std::string& attribute,
                                                        size_t input) {
  if (call.hasAttr(attribute)) return call.intsAttr(attribute, {});
  if (call.hasInput(input)) return call.constantInts(input, attribute);
  return std::vector<int64_t>{};
}

Expected<std::vector<double>> constantElements(const OpCall& call, size_t i, const std::string& what) {
  if (call.hasInput(i) && call.isConstant(i) && call.constantInputs[i].dtype() == runtime::DataType::boolean()) {
    const runtime::NDArray& data = call.constantInputs[i];
    const auto* bytes = static_cast<const uint8_t*>(data.data());
    return std::vector<double>(bytes, bytes + data.numElements());
  }
  return call.constantDoubles(i, what);
}

Expected<int64_t> normalizedAxis(const OpCall& call, int64_t axis, size_t rank, const std::string& what) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    return call.error(what + " " + std::to_string(axis) + " is outside [" + std::to_string(-r) + ", " +
                          std::to_string(r) + ") for a rank-" + std::to_string(rank) + " input",
                      "fix the model's " + what);
  return axis < 0 ? axis + r : axis;
}

}  // namespace tessel::graph::shape_ops
