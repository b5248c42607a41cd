// The one driver that applies the rule tables: bottom-up, to a fixpoint, memoized.
#pragma once

#include "core/ir/Expr.h"

namespace tessel {

class Analyzer;

/// Simplifies `e` under the bindings of `analyzer`: children first, then the rules of
/// RewriteRules.h at each node until none applies. Each subexpression is simplified once
/// per call (memoized), rewrites per node and the total work are capped, and expressions
/// nested deeper than the driver will recurse are returned as they are, so the cost stays
/// linear-ish in the size of the input however the rules interact.
Expr rewriteSimplify(const Expr& e, Analyzer& analyzer);

}  // namespace tessel
