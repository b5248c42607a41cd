// Project settings to driver options.
#include "app/project/ProjectOptions.h"

#include "compiler/driver/RunModel.h"

namespace tessel::project {

driver::LoadOptions loadOptionsFor(const Project& project) {
  driver::LoadOptions load;
  load.inputShapes = project.inputShapes;
  return load;
}

Expected<std::map<std::string, runtime::NDArray>> referenceInputValues(
    const Project& project, const std::vector<frontend::OnnxInputInfo>& declared) {
  std::map<std::string, runtime::NDArray> values;
  const std::string& directory = project.reference.directory;
  if (directory.empty()) return values;
  auto inputs = driver::readNumberedTensors(directory, "input_");
  if (!inputs) return inputs.error();
  if (inputs->size() > declared.size())
    return Diagnostic{"the reference data has " + std::to_string(inputs->size()) + " inputs, the model " +
                          std::to_string(declared.size()),
                      directory, 0, 0, ""};
  for (size_t i = 0; i < inputs->size(); ++i) values[declared[i].name] = (*inputs)[i];
  return values;
}

driver::CompileOptions compileOptionsFor(const Project& project) {
  driver::CompileOptions options;
  options.passes.optLevel = project.passes.optLevel;
  options.passes.disabledPasses = project.passes.disabledPasses;
  options.passes.config = project.passes.config;
  options.target = hostTarget();
  if (project.target.vectorLanes > 0) options.target.vectorBits = 32 * project.target.vectorLanes;
  return options;
}

}  // namespace tessel::project
