// Registration of the neural-network operators, family by family (NeuralNet<Family>.cpp).
#include "compiler/opdefs/NeuralNetSupport.h"

namespace tessel::graph {

void registerNeuralNetOps(OpRegistry& registry) {
  nn::registerConvolutionOps(registry);
  nn::registerMatmulOps(registry);
  nn::registerPoolingOps(registry);
  nn::registerNormalizationOps(registry);
  nn::registerReductionOps(registry);
  nn::registerSoftmaxOps(registry);
  nn::registerScanOps(registry);
  nn::registerQuantizedOps(registry);
}

}  // namespace tessel::graph
