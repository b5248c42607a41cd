// Views of a workload with unit axes removed from some inputs and its output: a kernel
// written for N x C x 1 x W (conv2d) serves tensors of shape N x C x W (1-D convolution),
// by indexing, without copying the inputs.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

/// `workload` with its placeholders `inputs` (indices into workload.inputs) replaced by
/// placeholders without their axis `axis` (which must have extent 1): every read of the old
/// placeholder reads the new one with that index dropped. The output (workload.outputs[0],
/// whose axis `axis` must have extent 1 too) is followed by a stage `viewName` without that
/// axis, the new output. Stage names stay, so the original schedule's primitives still apply.
Workload dropUnitAxis(const Workload& workload, const std::vector<size_t>& inputs, size_t axis,
                      const std::string& viewName);

}  // namespace tessel
