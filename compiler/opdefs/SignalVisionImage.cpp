// RoiAlign and MaxUnpool: operators reading image regions picked at run time.
#include "compiler/opdefs/SignalVisionSupport.h"

namespace tessel::graph::signal_vision {

void registerImageRegionOps(OpRegistry&) {}

}  // namespace tessel::graph::signal_vision
