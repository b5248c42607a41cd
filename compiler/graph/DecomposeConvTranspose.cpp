// Transposed convolutions as one Conv per stride phase (DecomposeConvTranspose.h).
#include "compiler/graph/DecomposeConvTranspose.h"

#include <cstring>
#include <optional>

#include "compiler/graph/TypedOperationBuilder.h"
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {
namespace {

int64_t product(const std::vector<int64_t>& values) {
  int64_t n = 1;
  for (int64_t v : values) n *= v;
  return n;
}

// The phases' common geometry along each spatial axis.
struct PhaseGeometry {
  std::vector<int64_t> strides, kernel, input;
  std::vector<int64_t> uncropped;     ///< U: the output before the pads are cropped.
  /// Q: each phase's output extent, ceil(U / stride); positions past U are computed and cropped.
  std::vector<int64_t> phasesLength;
};

// Whether `p` decomposes (see the header), and its geometry.
std::optional<PhaseGeometry> geometryOf(const ConvTransposeParams& p) {
  PhaseGeometry g;
  for (size_t d = 0; d + 2 < p.inputShape.size(); ++d) {
    const int64_t s = p.strides[d], k = p.weightShape[d + 2], i = p.inputShape[d + 2];
    const int64_t uncropped = s * (i - 1) + k + p.outputPadding[d];
    if (p.dilations[d] != 1 || k < s || p.padsBegin[d] < 0 || p.padsEnd[d] < 0) return std::nullopt;
    g.strides.push_back(s);
    g.kernel.push_back(k);
    g.input.push_back(i);
    g.uncropped.push_back(uncropped);
    g.phasesLength.push_back((uncropped + s - 1) / s);
  }
  return g;
}

class Decomposer : public TypedOperationBuilder {
public:
  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    if (error_ || op.op != "ConvTranspose" || inputs.size() < 2) return std::nullopt;
    auto* weight = asConstant(inputs[1].node());
    if (!weight) return std::nullopt;
    OpCall call = makeOpCall(op, inputs);
    auto params = nn::convTransposeParams(call);
    if (!params) return std::nullopt;  // InferTypes accepted it; a kernel build would say the same
    auto geometry = geometryOf(*params);
    if (!geometry) return std::nullopt;
    const size_t rank = geometry->strides.size();
    // Every phase, its index counting the last axis fastest.
    std::vector<Value> phases;
    const int64_t phaseCount = product(geometry->strides);
    for (int64_t index = 0; index < phaseCount; ++index) {
      std::vector<int64_t> phase(rank);
      for (int64_t rest = index, d = int64_t(rank) - 1; d >= 0; --d) {
        phase[size_t(d)] = rest % geometry->strides[size_t(d)];
        rest /= geometry->strides[size_t(d)];
      }
      auto conv = phaseConv(op, inputs, *params, *geometry, *weight, phase);
      if (!conv) return std::nullopt;
      phases.push_back(*conv);
    }
    std::optional<Value> result = interleave(op, phases, *geometry);
    if (!result) return std::nullopt;
    result = crop(op, *result, *params, *geometry);
    if (!result) return std::nullopt;
    if (!(result->type() == op.outputTypes[0])) {
      error_ = Diagnostic{"decomposing ConvTranspose '" + op.name + "' gave " + result->type().toString() +
                              " instead of " + op.outputTypes[0].toString(),
                          op.name, 0, 0, ""};
      return std::nullopt;
    }
    return std::vector<Value>{*result};
  }

private:
  // Phase `phase`'s Conv: the taps k = phase + stride * t, reversed, as a [M, C / groups, T..]
  // weight (ConvTranspose's is [C, M / groups, K..]).
  std::optional<Value> phaseConv(const OperationNode& op, const std::vector<Value>& inputs, const ConvTransposeParams& p,
                                 const PhaseGeometry& g, const ConstantNode& weight, const std::vector<int64_t>& phase) {
    const size_t rank = phase.size();
    const int64_t groups = p.groups, channelsPerGroup = p.weightShape[0] / groups, filtersPerGroup = p.weightShape[1];
    std::vector<int64_t> taps(rank);
    for (size_t d = 0; d < rank; ++d) taps[d] = (g.kernel[d] - phase[d] + g.strides[d] - 1) / g.strides[d];
    std::vector<int64_t> shape = {filtersPerGroup * groups, channelsPerGroup};
    shape.insert(shape.end(), taps.begin(), taps.end());
    const auto& source = weight.data;
    auto data = runtime::NDArray::empty(shape, source.dtype());
    const size_t bytes = size_t(source.dtype().bytes());
    const auto* from = static_cast<const unsigned char*>(source.data());
    auto* to = static_cast<unsigned char*>(data.data());
    const int64_t tapCount = product(taps), kernelCount = product(g.kernel);
    for (int64_t m = 0; m < filtersPerGroup * groups; ++m)
      for (int64_t c = 0; c < channelsPerGroup; ++c)
        for (int64_t t = 0; t < tapCount; ++t) {
          // Tap t of the phase (row-major over `taps`) is kernel position phase + s * (T - 1 - j).
          int64_t kernelIndex = 0;
          for (int64_t rest = t, d = int64_t(rank) - 1, stride = 1; d >= 0; --d) {
            const int64_t j = rest % taps[size_t(d)];
            rest /= taps[size_t(d)];
            kernelIndex += (phase[size_t(d)] + g.strides[size_t(d)] * (taps[size_t(d)] - 1 - j)) * stride;
            stride *= g.kernel[size_t(d)];
          }
          const int64_t group = m / filtersPerGroup;
          const int64_t fromIndex = ((group * channelsPerGroup + c) * filtersPerGroup + m % filtersPerGroup) * kernelCount +
                                    kernelIndex;
          const int64_t toIndex = (m * channelsPerGroup + c) * tapCount + t;
          std::memcpy(to + size_t(toIndex) * bytes, from + size_t(fromIndex) * bytes, bytes);
        }
    std::string suffix;
    for (int64_t v : phase) suffix += std::to_string(v);
    const std::string name = op.name + "/phase" + suffix;
    Value w = makeConstant(name + ".weight", data);
    std::vector<int64_t> pads(2 * rank);
    for (size_t d = 0; d < rank; ++d) {
      pads[d] = taps[d] - 1;
      pads[rank + d] = g.phasesLength[d] - g.input[d];
    }
    std::vector<Value> convInputs = {inputs[0], w};
    if (p.bias) convInputs.push_back(inputs[2]);
    return typed(name, "Conv", convInputs, {{"pads", pads}, {"group", groups}}, op.provenance);
  }

  // out[n, m, s*q + p ..] = phase_p[n, m, q ..]: each phase gains a unit axis after each
  // spatial axis; concatenating along those (the last axis first) and merging each (q, p)
  // pair gives the uncropped output.
  std::optional<Value> interleave(const OperationNode& op, std::vector<Value> level, const PhaseGeometry& g) {
    const size_t rank = g.strides.size();
    if (level.size() == 1 && rank > 0 && product(g.strides) == 1) return level[0];
    std::vector<int64_t> unitAxes;
    for (size_t d = 0; d < rank; ++d) unitAxes.push_back(int64_t(3 + 2 * d));
    for (auto& phase : level) {
      auto expanded = typed(op.name + "/expand", "Unsqueeze", {phase, int64s(op.name + "/unit_axes", unitAxes)}, {},
                            op.provenance);
      if (!expanded) return std::nullopt;
      phase = *expanded;
    }
    for (int64_t d = int64_t(rank) - 1; d >= 0; --d) {
      const size_t stride = size_t(g.strides[size_t(d)]);
      std::vector<Value> next;
      for (size_t first = 0; first < level.size(); first += stride) {
        std::vector<Value> group(level.begin() + ptrdiff_t(first), level.begin() + ptrdiff_t(first + stride));
        if (group.size() == 1) {
          next.push_back(group[0]);
          continue;
        }
        auto joined = typed(op.name + "/interleave" + std::to_string(d), "Concat", group, {{"axis", int64_t(3 + 2 * d)}},
                            op.provenance);
        if (!joined) return std::nullopt;
        next.push_back(*joined);
      }
      level = std::move(next);
    }
    std::vector<int64_t> shape = {level[0].type().shape[0], level[0].type().shape[1]};
    for (size_t d = 0; d < rank; ++d) shape.push_back(g.phasesLength[d] * g.strides[d]);
    return typed(op.name + "/merge", "Reshape", {level[0], int64s(op.name + "/shape", shape)}, {}, op.provenance);
  }

  std::optional<Value> crop(const OperationNode& op, const Value& full, const ConvTransposeParams& p,
                            const PhaseGeometry& g) {
    bool cropped = false;
    std::vector<int64_t> starts, ends, axes;
    for (size_t d = 0; d < g.strides.size(); ++d) {
      const int64_t end = g.uncropped[d] - p.padsEnd[d];
      cropped = cropped || p.padsBegin[d] > 0 || end < g.phasesLength[d] * g.strides[d];
      starts.push_back(p.padsBegin[d]);
      ends.push_back(end);
      axes.push_back(int64_t(d + 2));
    }
    if (!cropped) return full;
    return typed(op.name + "/crop", "Slice",
                 {full, int64s(op.name + "/starts", starts), int64s(op.name + "/ends", ends),
                  int64s(op.name + "/axes", axes)},
                 {}, op.provenance);
  }

};

}  // namespace

Expected<Graph> decomposeConvTranspose(const Graph& graph) {
  Decomposer decomposer;
  return rewriteGraphWith(graph, decomposer);
}

}  // namespace tessel::graph
