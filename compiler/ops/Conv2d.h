// 2-D convolution, NCHW layout (ONNX Conv): padding per side, stride and dilation per axis,
// groups (depthwise included), an optional bias, and register-blocked default schedules.
#pragma once

#include <optional>

#include "compiler/ops/Workload.h"
#include "runtime/NDArray.h"

namespace tessel {

struct Conv2dParams {
  int64_t batch = 1, channels = 1, height = 1, width = 1;  ///< Input N, C, H, W.
  int64_t filters = 1, kernelH = 1, kernelW = 1;           ///< Output channels K and kernel R x S.
  int64_t stride = 1, pad = 0;  ///< The same stride on both axes and padding on all four sides.
  /// ONNX strides and pads, per axis and per side; an unset one takes `stride` / `pad`.
  std::optional<int64_t> strideH, strideW;
  std::optional<int64_t> padTop, padLeft, padBottom, padRight;
  int64_t dilationH = 1, dilationW = 1;  ///< Kernel taps are this far apart in the input.
  /// Channels and filters split into independent groups: filter k sees only the channels of
  /// its group, and the weight is [filters, channels / groups, R, S]. groups == channels is
  /// a depthwise convolution (MobileNet).
  int64_t groups = 1;
  bool bias = false;  ///< A third input "bias" [filters], added to every output of its filter.
  /// 0: computed directly. 2 or 4: by Winograd's F(m x m, 3 x 3) over a weight packed by
  /// packWinogradWeight (compiler/ops/WinogradConv2d.h); the graph attribute "winograd_tile".
  int64_t winogradTile = 0;

  int64_t strideAlongHeight() const { return strideH.value_or(stride); }
  int64_t strideAlongWidth() const { return strideW.value_or(stride); }
  int64_t paddingTop() const { return padTop.value_or(pad); }
  int64_t paddingLeft() const { return padLeft.value_or(pad); }
  int64_t paddingBottom() const { return padBottom.value_or(pad); }
  int64_t paddingRight() const { return padRight.value_or(pad); }
  int64_t channelsPerGroup() const { return channels / groups; }
  int64_t filtersPerGroup() const { return filters / groups; }
  /// One input channel per group: each filter reads a single channel.
  bool isDepthwise() const { return groups > 1 && groups == channels; }
  int64_t outHeight() const {
    return (height + paddingTop() + paddingBottom() - dilationH * (kernelH - 1) - 1) / strideAlongHeight() + 1;
  }
  int64_t outWidth() const {
    return (width + paddingLeft() + paddingRight() - dilationW * (kernelW - 1) - 1) / strideAlongWidth() + 1;
  }
  /// A message naming the first impossible parameter, or empty when valid.
  std::string validate() const;
};

/// out[n,k,y,x] = bias[k] + sum over c,r,s of
///   in[n, g*C/G + c, y*strideH + r*dilationH - padTop, x*strideW + s*dilationW - padLeft] * weight[k,c,r,s]
/// with g = k / (K/G) the filter's group. `params` must be valid (see validate()).
/// Inputs: data, weight, and bias when params.bias.
/// Stages (not depthwise): "data.pad" (zero padding), "weight.packed" (filters in vector-wide
/// blocks that never straddle a group), "conv.blocked" (the reduction in a [n][k/kb][y][x][kb]
/// layout; reductions c, r, s) and "conv" (the NCHW output plus bias; axes n, k, y, x).
/// Stages (depthwise): "data.pad" (with a horizontal stride sw > 1: [n, c, y, phase, x],
/// padded column x * sw + phase), "conv.acc" (the reduction over r, s per output element)
/// and "conv" (plus bias; axes n, k, y, x). Over NCHW<b>c activations the same stages are
/// blocked: "data.pad" [n, co, y, x, ci], "conv.acc" and "conv" with axes n, co, y, x, ci.
Workload conv2d(const Conv2dParams& params, DataType dtype = DataType::float32(),
                const Target& target = hostTarget());

/// How conv2d() receives its weight.
enum class Conv2dWeightLayout : uint8_t {
  /// OIHW as ONNX stores it; the kernel repacks it on every call (stage "weight.packed").
  Plain,
  /// Already in the kernel's blocked layout (see conv2dPackedWeightShape), packed once at
  /// compile time by packConv2dWeight: a constant weight then costs nothing per call. The
  /// workload has no "weight.packed" stage. Depthwise convolutions over NCHW activations read
  /// OIHW directly, so for them this is the same as Plain; over NCHW<b>c they read the weight
  /// in the activations' blocks ([C / b, 1, R, S, b]).
  Packed,
};

/// conv2d with its weight in `layout`: conv2d() itself for Plain.
Workload conv2d(const Conv2dParams& params, Conv2dWeightLayout layout, DataType dtype = DataType::float32(),
                const Target& target = hostTarget());

/// The activation layouts of a dense convolution: NCHW, or channels in blocks ("NCHW<b>c":
/// [n][c / b][y][x][b], channel c at [n][c / b][y][x][c % b]). Blocked tensors flow between
/// convolutions without being copied back to NCHW in between.
struct Conv2dActivationLayout {
  int64_t inputBlock = 0;      ///< 0: the input is NCHW; else it is NCHW<inputBlock>c.
  bool blockedOutput = false;  ///< The output is NCHW<kb>c with kb = conv2dFilterBlock.
  bool operator==(const Conv2dActivationLayout& other) const = default;
};

/// Whether conv2d can read and write `layout` for these parameters. Dense: the input block
/// dividing the channels, the filter block dividing the filters for a blocked output. A
/// depthwise convolution with one filter per channel reads and writes NCHW<b>c in the same
/// blocks (blocked input and output together, b dividing the channels). Other grouped
/// convolutions stay NCHW.
bool conv2dSupportsActivationLayout(const Conv2dParams& params, const Conv2dActivationLayout& layout,
                                    const Target& target = hostTarget());

/// conv2d with blocked activations (see Conv2dActivationLayout; it must be supported). With a
/// blocked input, "data.pad" is blocked too ([n][c / b][y][x][b]) and the channel reduction
/// is split into "co" and "ci"; with a blocked output, "conv" is [n][k / kb][y][x][kb]
/// (axes n, ko, y, x, ki): "conv.blocked" plus bias, no copy to NCHW.
Workload conv2d(const Conv2dParams& params, Conv2dWeightLayout layout, const Conv2dActivationLayout& activations,
                DataType dtype = DataType::float32(), const Target& target = hostTarget());

/// Filters per block of the packed weight (the vector lanes the kernel computes at once).
int64_t conv2dFilterBlock(const Conv2dParams& params, const Target& target = hostTarget());
/// The same for a convolution over `activations`: a blocked depthwise convolution computes in
/// its input's blocks, so its weight and output blocks are the input block.
int64_t conv2dFilterBlock(const Conv2dParams& params, const Conv2dActivationLayout& activations,
                          const Target& target = hostTarget());
/// The packed weight's shape: [ceil(K / kb), C / G, R, S, kb] with kb = conv2dFilterBlock;
/// filters past K are zero.
std::vector<int64_t> conv2dPackedWeightShape(const Conv2dParams& params,
                                             const Target& target = hostTarget());
std::vector<int64_t> conv2dPackedWeightShape(const Conv2dParams& params, const Conv2dActivationLayout& activations,
                                             const Target& target = hostTarget());
/// The packed weight's layout name for the graph IR: "OIHW<kb>o" ("OIHW32o").
std::string conv2dPackedWeightLayout(const Conv2dParams& params, const Target& target = hostTarget());
std::string conv2dPackedWeightLayout(const Conv2dParams& params, const Conv2dActivationLayout& activations,
                                     const Target& target = hostTarget());
/// Packs an OIHW weight (float32 or float64, shape [K, C / G, R, S]) into the layout conv2d
/// reads with Conv2dWeightLayout::Packed (over `activations`). Depthwise weights over NCHW
/// come back unchanged.
runtime::NDArray packConv2dWeight(const Conv2dParams& params, const runtime::NDArray& weight,
                                  const Target& target = hostTarget());
runtime::NDArray packConv2dWeight(const Conv2dParams& params, const Conv2dActivationLayout& activations,
                                  const runtime::NDArray& weight, const Target& target = hostTarget());

/// conv2d(), or a Diagnostic naming the invalid parameter.
Expected<Workload> checkedConv2d(const Conv2dParams& params, DataType dtype = DataType::float32(),
                                 const Target& target = hostTarget());

/// The default schedule. Dense and grouped: accumulators for a row segment of output pixels
/// times two vectors of filters kept in registers, filters as vector lanes, rows in parallel.
/// Depthwise: accumulators for a tile of output pixels (a segment of the width as vector
/// lanes, times several rows when rows are narrow), the kernel taps unrolled, row blocks of
/// every channel in parallel; the padded input is written once at root. Depthwise over
/// NCHW<b>c: the channel block as vector lanes, a segment of the row's pixels unrolled.
/// Works for either weight layout (it schedules "weight.packed" only when there is one).
/// Dense and grouped convolutions without padding read the input in place ("data.pad" is
/// inlined rather than copied).
/// The zero-padded NCHW input of a convolution: stage "data.pad" over the padded extents, axes
/// n, c, y, x (a plain copy when nothing is padded).
te::Tensor padConv2dInput(const Conv2dParams& p, const te::Tensor& data, DataType dtype);

/// The input of a convolution over NCHW<block>c data ([n][c / block][y][x][block]) padded
/// with `padValue` (0, or a quantized tensor's zero point): stage "data.pad" over the padded
/// extents, axes n, co, y, x, ci; the data read in place where nothing is padded.
te::Tensor padBlockedConv2dInput(const Conv2dParams& p, const te::Tensor& data, int64_t block, Expr padValue);

/// The workload name of a convolution: "conv2d_" and its shape, with only what differs from
/// the symmetric case spelled out.
std::string conv2dName(const Conv2dParams& p);

/// Output pixels per register tile of `filterVectors` accumulator vectors each: a divisor of
/// the output width that keeps the accumulators within the register file (or, when the width
/// has no good divisor, a block with a tail).
int64_t conv2dPixelBlock(int64_t outWidth, int64_t filterVectors, const Target& target);

Expected<Schedule> defaultConv2dSchedule(const Workload& workload, const Conv2dParams& params,
                                         const Target& target = hostTarget());
/// The default schedule of conv2d with blocked activations (the same tiles, read and
/// written in the blocked layouts).
Expected<Schedule> defaultConv2dSchedule(const Workload& workload, const Conv2dParams& params,
                                         const Conv2dActivationLayout& activations,
                                         const Target& target = hostTarget());

}  // namespace tessel
