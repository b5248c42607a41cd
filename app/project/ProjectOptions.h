// What a project asks of the compiler: the import and compile options its settings stand for,
// shared by the project runner and the Studio (which hands them to its model session).
#pragma once

#include "app/project/Project.h"
#include "compiler/driver/Driver.h"
#include "compiler/frontend/onnx/OnnxImporter.h"

namespace tessel::project {

/// The import options: the project's input shapes.
driver::LoadOptions loadOptionsFor(const Project& project);

/// The inputs of the project's reference data (input_N.pb in reference.directory), named after
/// the model's inputs `declared` (frontend::readOnnxInputs of project.model) in order; empty
/// without reference data. Given to the compiler as known input values, they let a model
/// compile that needs an input by value (a Reshape's shape), as `tessel run` does with
/// --input. A Diagnostic names what cannot be read, or more files than the model has inputs.
Expected<std::map<std::string, runtime::NDArray>> referenceInputValues(
    const Project& project, const std::vector<frontend::OnnxInputInfo>& declared);

/// The compile options: opt level, disabled passes and pass config, and the schedule target
/// (the host's, with the project's vector lanes when set). The target's thread count is the
/// runtime's at the time of the call: set the thread pool first (runProject does).
driver::CompileOptions compileOptionsFor(const Project& project);

}  // namespace tessel::project
