// Which variables a statement reads from its surroundings: what an outlined parallel body captures.
#pragma once

#include <vector>

#include "core/ir/Stmt.h"

namespace tessel {

/// The variables `body` uses without defining them, in order of first use: scalar
/// variables and the data handles of the buffers it loads from and stores to. `bound`
/// lists variables the caller defines itself (a parallel loop's own variable), which are
/// left out. Variables bound inside `body` (loops, lets, allocations) are left out too.
std::vector<Var> freeVariables(const Stmt& body, const std::vector<Var>& bound = {});

}  // namespace tessel
