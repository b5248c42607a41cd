// How far apart a lowered kernel's uses of one element are: for each buffer of each store,
// the distinct data the kernel touches between two uses of one of its elements (its reuse
// distance, as Ansor's features define it). The largest is the working set a cache must hold
// for every reuse to hit: a lesson's working_set check grades it, and the cost model's reuse
// features come from the same analysis (AccessFootprint).
#pragma once

#include <string>
#include <vector>

#include "core/ir/Stmt.h"

namespace tessel::features {

struct ReuseDistance {
  std::string buffer;        ///< The buffer whose elements are reused ("B").
  std::string storedBuffer;  ///< The store whose statement uses it ("C").
  /// The loop whose iterations reuse each element ("i"): the innermost loop of more than one
  /// iteration that the buffer's indices do not depend on. Empty when the reuse is within one
  /// execution of the statement (C = C + ...).
  std::string loop;
  double uses = 0;              ///< Uses of each element in that reuse.
  double bytesBetweenUses = 0;  ///< Distinct bytes of all buffers touched between two uses.
};

/// Every reused buffer of every store of `func` (a lowered kernel), in program order; a
/// buffer none of whose elements is used twice has no entry.
std::vector<ReuseDistance> reuseDistances(const PrimFunc& func);

}  // namespace tessel::features
