// Registration of signal-processing (windows, DFT, STFT, mel filters), vision (RoiAlign,
// MaxUnpool, NonMaxSuppression), text (TfIdfVectorizer) and linear-algebra (Det) operators,
// and the helpers their definitions share.
#include "compiler/opdefs/SignalVisionSupport.h"

#include "compiler/opdefs/ShapeOpSupport.h"

namespace tessel::graph {

namespace signal_vision {

Expected<OpKernel> opaqueKernel(const OpCall& call, Expected<Workload> workload, std::vector<int> inputIndices) {
  if (!workload) return call.error(workload.error().message, workload.error().hint);
  TESSEL_ICHECK(workload->inputs.size() == inputIndices.size())
      << call.op << ": " << workload->inputs.size() << " placeholders for " << inputIndices.size() << " inputs";
  OpKernel kernel;
  kernel.workload = std::move(*workload);
  kernel.inputIndices = std::move(inputIndices);
  return kernel;
}

OpDef kernelTypedOpaqueOp(std::string name, int minInputs, int maxInputs, std::vector<int> valueInputs,
                          std::function<Expected<OpKernel>(const OpCall&)> build) {
  return shape_ops::kernelTypedOp(std::move(name), OpPattern::Opaque, minInputs, maxInputs, std::move(valueInputs),
                                  std::move(build));
}

Expected<DataType> outputDataTypeAttr(const OpCall& call, const std::string& attribute, bool floatOnly) {
  auto code = call.intAttr(attribute, 1);
  if (!code) return code.error();
  std::optional<DataType> type = shape_ops::dataTypeFromOnnx(*code);
  if (!type) return call.error(attribute + " " + std::to_string(*code) + " is not an element type Tessel has");
  if (floatOnly && !type->isFloat())
    return call.error(attribute + " must name a floating-point type, got " + type->toString());
  return *type;
}

Expected<int64_t> constantScalarInt(const OpCall& call, size_t i, const std::string& what) {
  auto values = call.constantInts(i, what);
  if (!values) return values.error();
  if (values->size() != 1)
    return call.error(what + " must hold one value, got " + std::to_string(values->size()));
  return values->front();
}

}  // namespace signal_vision

void registerSignalAndVisionOps(OpRegistry& registry) {
  signal_vision::registerSpectralOps(registry);
  signal_vision::registerImageRegionOps(registry);
  signal_vision::registerTextAndAlgebraOps(registry);
  signal_vision::registerBoxOps(registry);
}

}  // namespace tessel::graph
