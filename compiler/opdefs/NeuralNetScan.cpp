// Scans and selections along an axis: CumSum and TopK.
#include "compiler/opdefs/NeuralNetSupport.h"

namespace tessel::graph::nn {

void registerScanOps(OpRegistry&) {}

}  // namespace tessel::graph::nn
