// Registration of signal-processing, vision and integer-arithmetic operators (being written).
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

void registerSignalAndVisionOps(OpRegistry&) {}

}  // namespace tessel::graph
