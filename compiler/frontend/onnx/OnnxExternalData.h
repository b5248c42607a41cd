// The files an ONNX model keeps its tensors in besides itself (external data), for whoever
// moves or copies a model: they must travel with it.
#pragma once

#include <string>
#include <vector>

#include "core/support/Error.h"

namespace tessel::frontend {

/// The external data files the model at `path` names, as the relative locations written in it
/// (each once, in order of first use; initializers of the main graph and of every subgraph).
/// Empty when the model keeps all its data inline. A Diagnostic when the model cannot be read.
Expected<std::vector<std::string>> externalDataFiles(const std::string& path);

}  // namespace tessel::frontend
