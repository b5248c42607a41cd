#include "tuner/features/WorkingSet.h"

#include "tuner/features/AccessFootprint.h"
#include "tuner/features/LoopNestAnalysis.h"

namespace tessel::features {

std::vector<ReuseDistance> reuseDistances(const PrimFunc& func) {
  std::vector<ReuseDistance> distances;
  LoopNestFacts facts = analyzeLoopNest(func);
  for (const StoreGroup& group : facts.groups) {
    GroupMemory memory = summarizeGroupMemory(group);
    for (const BufferAccessSummary& buffer : memory.buffers) {
      if (buffer.reuse == ReuseKind::None || buffer.local) continue;
      ReuseDistance distance;
      distance.buffer = buffer.name;
      distance.storedBuffer = group.storedBuffer ? group.storedBuffer->name : std::string();
      if (buffer.reuse == ReuseKind::Loop && buffer.reuseLevel >= 0)
        distance.loop = group.loops[size_t(buffer.reuseLevel)].var->name;
      distance.uses = buffer.reuseCount;
      distance.bytesBetweenUses = buffer.reuseDistanceBytes;
      distances.push_back(distance);
    }
  }
  return distances;
}

}  // namespace tessel::features
