// Project settings to driver options.
#include "app/project/ProjectOptions.h"

namespace tessel::project {

driver::LoadOptions loadOptionsFor(const Project& project) {
  driver::LoadOptions load;
  load.inputShapes = project.inputShapes;
  return load;
}

driver::CompileOptions compileOptionsFor(const Project& project) {
  driver::CompileOptions options;
  options.passes.optLevel = project.passes.optLevel;
  options.passes.disabledPasses = project.passes.disabledPasses;
  options.passes.config = project.passes.config;
  options.schedule = ScheduleTarget::host();
  if (project.target.vectorLanes > 0) options.schedule.vectorLanes = project.target.vectorLanes;
  return options;
}

}  // namespace tessel::project
