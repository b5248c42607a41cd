// Helpers the neural-network operator definitions share, and the registration functions of
// their families (convolution, matmul, pooling, normalization, reduction, softmax, scan).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/DirectConv.h"
#include "compiler/ops/ConvTranspose.h"

namespace tessel::graph::nn {

/// A Diagnostic from the operator library (located at an op kind such as "maxpool")
/// re-located at the node, so the user sees which node of their model is wrong.
Diagnostic atNode(const OpCall& call, const Diagnostic& fromLibrary);

/// An error unless input `i` has a floating-point element type (the kernels compute in it).
std::optional<Diagnostic> requireFloat(const OpCall& call, size_t i, const char* role);
/// An error unless input `i` has a numeric element type (integer or float, not bool).
std::optional<Diagnostic> requireNumeric(const OpCall& call, size_t i, const char* role);
/// An error unless input `i` has exactly `rank` dimensions (or at least, when `atLeast`).
std::optional<Diagnostic> requireRank(const OpCall& call, size_t i, size_t rank, const char* role,
                                      bool atLeast = false);

/// `axis` in [0, rank), negative counting from the end; a Diagnostic naming `attribute`.
Expected<int64_t> resolveAxis(const OpCall& call, int64_t axis, int64_t rank, const char* attribute = "axis");

/// A type with the element type of input `i` and the given shape.
TensorType typeLike(const OpCall& call, size_t i, std::vector<int64_t> shape);

using KernelSchedule = std::function<Expected<Schedule>(const Workload&, const Target&)>;
/// An OpKernel from a built workload, the node inputs its placeholders read and its schedule.
OpKernel makeKernel(Workload workload, std::vector<int> inputIndices, KernelSchedule schedule);

/// A ConvTranspose call's attributes and input types as parameters (explicit pads, or those
/// output_shape or a SAME auto_pad imply); a Diagnostic at the node when they are invalid.
Expected<ConvTransposeParams> convTransposeParams(const OpCall& call);

// The families registerNeuralNetOps is made of, one file each (NeuralNet<Family>.cpp).
void registerConvolutionOps(OpRegistry& registry);
void registerMatmulOps(OpRegistry& registry);
void registerPoolingOps(OpRegistry& registry);
void registerNormalizationOps(OpRegistry& registry);
void registerReductionOps(OpRegistry& registry);
void registerSoftmaxOps(OpRegistry& registry);
void registerScanOps(OpRegistry& registry);
void registerQuantizedOps(OpRegistry& registry);

/// Conv's geometry attributes (strides, dilations, pads or auto_pad, group, kernel_shape)
/// over inputs 0 (X) and 1 (W), for any number of spatial axes; shared by Conv,
/// ConvInteger and QLinearConv. Zero points and bias are left for the caller.
Expected<DirectConvParams> convolutionGeometry(const OpCall& call);

}  // namespace tessel::graph::nn
