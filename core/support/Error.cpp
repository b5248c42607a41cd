// Rendering of diagnostics.
#include "core/support/Error.h"

namespace tessel {

std::string Diagnostic::toString() const {
  std::string out;
  if (!location.empty()) {
    out += location;
    if (line > 0) {
      out += ":" + std::to_string(line);
      if (column > 0) out += ":" + std::to_string(column);
    }
    out += ": ";
  } else if (line > 0) {
    out += "line " + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
    out += ": ";
  }
  out += "error: " + message;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}

}  // namespace tessel
