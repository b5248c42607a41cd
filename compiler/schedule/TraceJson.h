// The JSON form of a schedule trace, for the records database and project files.
#pragma once

#include <string>

#include "compiler/schedule/Primitive.h"
#include "core/support/Error.h"

namespace tessel {

/// {"version": 1, "primitives": [{"kind": "split", "stage": "C", "axes": ["i"], ...}, ...]}
std::string printTraceJson(const Trace& trace);
/// Parses printTraceJson's output; malformed input gives a Diagnostic naming the entry.
Expected<Trace> parseTraceJson(const std::string& text);

}  // namespace tessel
