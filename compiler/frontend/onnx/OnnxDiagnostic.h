// How the ONNX frontend spells its Diagnostics: a message, the file it concerns, what to do.
#pragma once

#include <string>
#include <utility>

#include "core/support/Error.h"

namespace tessel::frontend {

/// A Diagnostic about a model or tensor file (location: the file; empty while a caller
/// that knows the file has yet to add it).
inline Diagnostic importError(std::string message, std::string location = "", std::string hint = "") {
  Diagnostic diagnostic;
  diagnostic.message = std::move(message);
  diagnostic.location = std::move(location);
  diagnostic.hint = std::move(hint);
  return diagnostic;
}

}  // namespace tessel::frontend
