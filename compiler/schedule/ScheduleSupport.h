// What Schedule.cpp and StageRewrites.cpp share to apply primitives: message helpers and the
// copying of axes for a stage built from another's body. Private to compiler/schedule.
#pragma once

#include <string>
#include <vector>

#include "compiler/schedule/Schedule.h"
#include "core/ir/IRMutator.h"

namespace tessel {

/// "a, b, c": names listed for a diagnostic.
std::string joinNames(const std::vector<std::string>& names);

/// A copy of `axis` (same name, domain and type) over a new variable, for an operation built
/// from another's body; `rename` learns to substitute the new variable for the old.
IterVar freshCopy(const IterVar& axis, VarMap& rename);

/// A stage for `op` as created: its loops are the operation's axes, computed at the root.
Stage makeStage(const te::Operation& op, bool isOutput);

}  // namespace tessel
