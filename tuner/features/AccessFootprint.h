// Memory behaviour of a store group: per-buffer bytes, footprints, strides and reuse, and
// the footprint of the innermost loop levels. Internal to tuner/features.
#pragma once

#include <string>
#include <vector>

#include "tuner/features/LoopNestAnalysis.h"

namespace tessel::features {

/// Ansor's reuse types: the access repeats across the iterations of an enclosing loop it
/// does not depend on, or several accesses in one execution touch the same elements.
enum class ReuseKind { None, Loop, Serial };

/// What one buffer costs one store group.
struct BufferAccessSummary {
  const BufferNode* buffer = nullptr;
  std::string name;
  bool read = false, written = false, local = false;
  int elementBytes = 4;
  double bytes = 0;                 ///< Bytes moved over all executions (loads + stores).
  double uniqueBytes = 0;           ///< Distinct bytes over the whole nest.
  double uniqueLines = 0;           ///< Distinct 64-byte cache lines over the whole nest.
  double innermostUniqueBytes = 0;  ///< Distinct bytes of one run of the innermost loop.
  double innermostStride = 0;       ///< Elements between neighbouring lanes / innermost iterations.
  double touchingStride = 0;        ///< Elements per step of the innermost level that moves the address.
  ReuseKind reuse = ReuseKind::None;
  double reuseDistanceIterations = 0;  ///< Iterations between two uses of an element.
  double reuseDistanceBytes = 0;       ///< Bytes the group touches in between.
  int reuseLevel = -1;                 ///< The loop level carrying Loop reuse (StoreGroup::loops).
  double reuseCount = 0;               ///< Uses of each element in that reuse.
};

struct GroupMemory {
  std::vector<BufferAccessSummary> buffers;  ///< In order of first access.
  /// Distinct bytes of all buffers over the innermost k loops, k = 0 .. kLevels-1
  /// (k = 0: one execution of the group's statements, vector lanes and unrolled copies).
  static constexpr int kLevels = 4;
  double levelBytes[kLevels] = {};
};

/// The cache line size the line counts assume.
inline constexpr double kCacheLineBytes = 64;

GroupMemory summarizeGroupMemory(const StoreGroup& group);

}  // namespace tessel::features
