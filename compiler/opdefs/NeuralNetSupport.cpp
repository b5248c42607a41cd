// Shared checks and kernel construction for the neural-network operator definitions.
#include "compiler/opdefs/NeuralNetSupport.h"

namespace tessel::graph::nn {

Diagnostic atNode(const OpCall& call, const Diagnostic& fromLibrary) {
  return call.error(fromLibrary.message, fromLibrary.hint);
}

std::optional<Diagnostic> requireFloat(const OpCall& call, size_t i, const char* role) {
  DataType dtype = call.inputTypes[i].dtype;
  if (dtype.isFloat() && dtype.bits() >= 32) return std::nullopt;
  return call.error(std::string(role) + " has element type " + dtype.toString() + "; this operator computes in " +
                        "float32 or float64",
                    "cast the input to float32 first");
}

std::optional<Diagnostic> requireNumeric(const OpCall& call, size_t i, const char* role) {
  DataType dtype = call.inputTypes[i].dtype;
  if ((dtype.isFloat() && dtype.bits() >= 32) || dtype.isIntegral()) return std::nullopt;
  return call.error(std::string(role) + " has element type " + dtype.toString() + ", expected a number type");
}

std::optional<Diagnostic> requireRank(const OpCall& call, size_t i, size_t rank, const char* role, bool atLeast) {
  size_t got = call.inputTypes[i].shape.size();
  if (got == rank || (atLeast && got > rank)) return std::nullopt;
  return call.error(std::string(role) + " has rank " + std::to_string(got) + ", expected " +
                    (atLeast ? "at least " : "") + std::to_string(rank));
}

Expected<int64_t> resolveAxis(const OpCall& call, int64_t axis, int64_t rank, const char* attribute) {
  if (axis < -rank || axis >= rank)
    return call.error(std::string(attribute) + " " + std::to_string(axis) + " is out of range for rank " +
                          std::to_string(rank),
                      "use a value in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]");
  return axis < 0 ? axis + rank : axis;
}

TensorType typeLike(const OpCall& call, size_t i, std::vector<int64_t> shape) {
  TensorType type;
  type.dtype = call.inputTypes[i].dtype;
  type.shape = std::move(shape);
  return type;
}

OpKernel makeKernel(Workload workload, std::vector<int> inputIndices, KernelSchedule schedule) {
  TESSEL_ICHECK(workload.inputs.size() == inputIndices.size())
      << workload.name << ": " << workload.inputs.size() << " placeholders for " << inputIndices.size()
      << " node inputs";
  OpKernel kernel;
  kernel.workload = std::move(workload);
  kernel.inputIndices = std::move(inputIndices);
  kernel.schedule = std::move(schedule);
  return kernel;
}

}  // namespace tessel::graph::nn
