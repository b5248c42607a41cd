// How the ONNX frontend spells its Diagnostics: a message, the file it concerns, what to do.
#pragma once

#include <cstdio>
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

/// `name` in single quotes for a message, with control characters written as \xNN, so that a
/// malformed model's names cannot break the message's line.
inline std::string quotedName(const std::string& name) {
  std::string quoted = "'";
  for (unsigned char c : name) {
    if (c >= 0x20 && c != 0x7f) {
      quoted += char(c);
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
    quoted += escaped;
  }
  return quoted + "'";
}

}  // namespace tessel::frontend
