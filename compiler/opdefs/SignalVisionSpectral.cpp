// Spectral operators of opset 17: the Hann, Hamming and Blackman windows, DFT, STFT and
// MelWeightMatrix. Transforms are direct sums over the signal (O(n^2) per axis), accumulated
// in float64: the conformance data compares near-zero bins with an absolute tolerance of 1e-7,
// which float32 sums of hundreds of terms miss.
#include <cmath>
#include <numbers>

#include "compiler/opdefs/SignalVisionSupport.h"
#include "compiler/ops/Generate.h"
#include "core/ir/IROperators.h"

namespace tessel::graph::signal_vision {

namespace {

using Shape = std::vector<int64_t>;

Expr f64(double value) { return FloatImmNode::make(DataType::float64(), value); }
Expr cosine(Expr x) { return call(Intrinsic::Cos, {std::move(x)}); }
Expr sine(Expr x) { return call(Intrinsic::Sin, {std::move(x)}); }

// ---- Windows -------------------------------------------------------------------------------

/// A generalized cosine window: w[n] = sum_k a_k cos(2 pi k n / D), where D is the size for a
/// periodic window and size - 1 for a symmetric one. Input 0 is the size (needed by value).
Expected<OpKernel> buildCosineWindow(const OpCall& call, const std::vector<double>& coefficients) {
  auto size = constantScalarInt(call, 0, "size");
  if (!size) return size.error();
  if (*size <= 0) return call.error("size is " + std::to_string(*size), "a window needs at least one element");
  auto periodic = call.intAttr("periodic", 1);
  if (!periodic) return periodic.error();
  auto dtype = outputDataTypeAttr(call, "output_datatype", false);
  if (!dtype) return dtype.error();
  // A symmetric window of one element would divide by zero; its only element is w[0].
  int64_t denominator = std::max<int64_t>(*periodic ? *size : *size - 1, 1);
  Workload w;
  w.name = call.op + "_" + std::to_string(*size);
  DataType outType = *dtype;
  w.outputs = {te::compute(
      toExprs({*size}),
      [&](const std::vector<Var>& axes) {
        Expr phase = cast(DataType::float64(), Expr(axes[0])) * f64(2 * std::numbers::pi / double(denominator));
        Expr value = f64(coefficients[0]);
        for (size_t k = 1; k < coefficients.size(); ++k)
          value = value + f64(coefficients[k]) * cosine(phase * f64(double(k)));
        return cast(outType, value);
      },
      "out", {"n"}, "window")};
  return opaqueKernel(call, std::move(w), {});
}

// ---- DFT and STFT --------------------------------------------------------------------------

/// The two parts of one Fourier coefficient sum_m x[m] e^(-+2 pi i k m / length), built from
/// a reader of the signal's real and imaginary parts at reduction position m.
struct FourierTerms {
  int64_t length = 0;   ///< The transform length (the period of the twiddle factors).
  bool inverse = false;
  bool complexInput = false;
};

/// The contribution of sample m to bin k, real part when `imaginaryPart` is false. The angle
/// is reduced (k m mod length) in integers first so that it stays exact for long signals.
Expr fourierTerm(const FourierTerms& t, const Expr& k, const Expr& m, const Expr& re, const Expr& im,
                 bool imaginaryPart) {
  Expr turns = cast(DataType::float64(), floormod(k * m, indexConst(t.length)));
  Expr angle = turns * f64(2 * std::numbers::pi / double(t.length));
  Expr c = cosine(angle), s = sine(angle);
  // Forward: (re + i im)(cos - i sin); inverse: (re + i im)(cos + i sin).
  Expr sign = f64(t.inverse ? -1.0 : 1.0);
  if (!imaginaryPart) return t.complexInput ? re * c + sign * im * s : re * c;
  return t.complexInput ? im * c - sign * re * s : -sign * re * s;
}

/// [shape..., 2] from the two reductions `real` and `imag` over `shape`, cast to `dtype`.
te::Tensor interleaveComplex(const te::Tensor& real, const te::Tensor& imag, const Shape& shape, DataType dtype) {
  Shape outShape = shape;
  outShape.push_back(2);
  return te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& axes) {
        std::vector<Expr> position = asExprs(axes);
        Expr part = position.back();
        position.pop_back();
        return cast(dtype, select(eq(part, indexConst(0)), real(position), imag(position)));
      },
      "out", axisNames(outShape.size()), "dft");
}

/// DFT (opset 17): input [batch, n1, ..., 1 or 2], the transform along attribute `axis`,
/// optional dft_length (input 1, by value) padding or truncating the signal, `inverse`
/// (scaled by 1/length), `onesided` (only the first length/2 + 1 bins).
Expected<OpKernel> buildDft(const OpCall& call) {
  const TensorType& input = call.inputTypes[0];
  int64_t rank = int64_t(input.shape.size());
  if (!input.dtype.isFloat()) return call.error("input 0 must be floating point, got " + input.dtype.toString());
  if (rank < 2 || (input.shape.back() != 1 && input.shape.back() != 2))
    return call.error("input 0 must be [batch, signal..., 1 or 2], got " + input.toString());
  auto axisAttr = call.intAttr("axis", 1);
  if (!axisAttr) return axisAttr.error();
  // Opset 17 accepts [-rank, -2] and [0, rank - 2]: any axis but the real/imaginary one.
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 0 || axis > rank - 2)
    return call.error("axis " + std::to_string(*axisAttr) + " is not a signal axis of " + input.toString());
  auto inverse = call.intAttr("inverse", 0);
  if (!inverse) return inverse.error();
  auto onesided = call.intAttr("onesided", 0);
  if (!onesided) return onesided.error();
  int64_t signalLength = input.shape[size_t(axis)];
  int64_t length = signalLength;
  if (call.hasInput(1)) {
    auto given = constantScalarInt(call, 1, "dft_length");
    if (!given) return given.error();
    if (*given <= 0) return call.error("dft_length is " + std::to_string(*given), "give a positive length");
    length = *given;
  }
  FourierTerms terms{length, *inverse != 0, input.shape.back() == 2};
  Shape binShape(input.shape.begin(), input.shape.end() - 1);
  binShape[size_t(axis)] = *onesided ? length / 2 + 1 : length;

  Workload w;
  w.name = "dft_" + shapeName(input.shape) + "_axis" + std::to_string(axis);
  te::Tensor x = te::placeholder(toExprs(input.shape), input.dtype, "input");
  w.inputs = {x};
  // Samples past the signal's end are zeros (padding); past the length, truncated.
  int64_t samples = std::min(signalLength, length);
  double scale = terms.inverse ? 1.0 / double(length) : 1.0;
  auto part = [&](bool imaginary, const std::string& name) {
    IterVar m = te::reduceAxis(indexConst(samples), "m");
    return te::compute(
        toExprs(binShape),
        [&](const std::vector<Var>& axes) {
          std::vector<Expr> at = asExprs(axes);
          Expr k = at[size_t(axis)];
          at[size_t(axis)] = m->var;
          auto read = [&](int64_t component) {
            std::vector<Expr> index = at;
            index.push_back(indexConst(component));
            return cast(DataType::float64(), x(index));
          };
          Expr re = read(0), im = terms.complexInput ? read(1) : f64(0);
          return te::sum(fourierTerm(terms, k, m->var, re, im, imaginary) * f64(scale), {m});
        },
        name, axisNames(binShape.size()), "dft");
  };
  te::Tensor real = part(false, "dft.real"), imag = part(true, "dft.imag");
  w.outputs = {interleaveComplex(real, imag, binShape, input.dtype)};
  w.flops = 8.0 * double(elementCount(binShape)) * double(samples);
  return opaqueKernel(call, std::move(w), {0});
}

/// STFT (opset 17): signal [batch, length, 1 or 2], frame_step (input 1, by value), optional
/// window (input 2) and frame_length (input 3, by value); output [batch, frames, bins, 2].
Expected<OpKernel> buildStft(const OpCall& call) {
  const TensorType& signal = call.inputTypes[0];
  if (!signal.dtype.isFloat()) return call.error("the signal must be floating point, got " + signal.dtype.toString());
  if (signal.shape.size() != 3 || (signal.shape[2] != 1 && signal.shape[2] != 2))
    return call.error("the signal must be [batch, length, 1 or 2], got " + signal.toString());
  auto step = constantScalarInt(call, 1, "frame_step");
  if (!step) return step.error();
  if (*step <= 0) return call.error("frame_step is " + std::to_string(*step), "give a positive step");
  bool windowed = call.hasInput(2);
  int64_t frameLength = 0;
  if (windowed) {
    const TensorType& window = call.inputTypes[2];
    if (window.shape.size() != 1) return call.error("the window must be 1-D, got " + window.toString());
    frameLength = window.shape[0];
  }
  if (call.hasInput(3)) {
    auto given = constantScalarInt(call, 3, "frame_length");
    if (!given) return given.error();
    if (windowed && *given != frameLength)
      return call.error("frame_length " + std::to_string(*given) + " differs from the window's length " +
                        std::to_string(frameLength));
    frameLength = *given;
  }
  if (frameLength <= 0) return call.error("the frame length is unknown or empty", "give a window or frame_length");
  int64_t signalLength = signal.shape[1];
  if (frameLength > signalLength)
    return call.error("the frame length " + std::to_string(frameLength) + " exceeds the signal's " +
                      std::to_string(signalLength));
  auto onesided = call.intAttr("onesided", 1);
  if (!onesided) return onesided.error();
  int64_t frames = (signalLength - frameLength) / *step + 1;
  int64_t bins = *onesided ? frameLength / 2 + 1 : frameLength;
  Shape binShape{signal.shape[0], frames, bins};
  FourierTerms terms{frameLength, false, signal.shape[2] == 2};

  Workload w;
  w.name = "stft_" + shapeName(signal.shape) + "_" + std::to_string(frameLength) + "_" + std::to_string(*step);
  te::Tensor x = te::placeholder(toExprs(signal.shape), signal.dtype, "signal");
  w.inputs = {x};
  std::vector<int> inputIndices{0};
  te::Tensor window;
  if (windowed) {
    window = te::placeholder(toExprs({frameLength}), call.inputTypes[2].dtype, "window");
    w.inputs.push_back(window);
    inputIndices.push_back(2);
  }
  int64_t frameStep = *step;
  auto part = [&](bool imaginary, const std::string& name) {
    IterVar m = te::reduceAxis(indexConst(frameLength), "m");
    return te::compute(
        toExprs(binShape),
        [&](const std::vector<Var>& axes) {
          Expr sample = Expr(axes[1]) * indexConst(frameStep) + m->var;
          Expr weight = windowed ? cast(DataType::float64(), window({Expr(m->var)})) : f64(1);
          auto read = [&](int64_t component) {
            return cast(DataType::float64(), x({Expr(axes[0]), sample, indexConst(component)})) * weight;
          };
          Expr re = read(0), im = terms.complexInput ? read(1) : f64(0);
          return te::sum(fourierTerm(terms, axes[2], m->var, re, im, imaginary), {m});
        },
        name, {"batch", "frame", "bin"}, "dft");
  };
  te::Tensor real = part(false, "stft.real"), imag = part(true, "stft.imag");
  w.outputs = {interleaveComplex(real, imag, binShape, signal.dtype)};
  w.flops = 8.0 * double(elementCount(binShape)) * double(frameLength);
  return opaqueKernel(call, std::move(w), std::move(inputIndices));
}

// ---- MelWeightMatrix -----------------------------------------------------------------------

/// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular filters whose
/// edges are mel-spaced frequencies rounded down to spectrogram bins, as ONNX's reference
/// computes them (the mel range is split into num_mel_bins + 2 steps). Every input is needed
/// by value, so the edges are a constant table and the kernel reads nothing.
Expected<OpKernel> buildMelWeightMatrix(const OpCall& call) {
  auto melBins = constantScalarInt(call, 0, "num_mel_bins");
  if (!melBins) return melBins.error();
  auto dftLength = constantScalarInt(call, 1, "dft_length");
  if (!dftLength) return dftLength.error();
  auto sampleRate = constantScalarInt(call, 2, "sample_rate");
  if (!sampleRate) return sampleRate.error();
  auto lower = call.constantDoubles(3, "lower_edge_hertz");
  if (!lower) return lower.error();
  auto upper = call.constantDoubles(4, "upper_edge_hertz");
  if (!upper) return upper.error();
  if (lower->size() != 1 || upper->size() != 1) return call.error("the edge frequencies must be scalars");
  if (*melBins <= 0 || *dftLength <= 0 || *sampleRate <= 0)
    return call.error("num_mel_bins, dft_length and sample_rate must be positive");
  auto dtype = outputDataTypeAttr(call, "output_datatype", false);
  if (!dtype) return dtype.error();

  auto toMel = [](double hertz) { return 2595.0 * std::log10(1.0 + hertz / 700.0); };
  double lowMel = toMel(lower->front()), highMel = toMel(upper->front());
  double melStep = (highMel - lowMel) / double(*melBins + 2);
  int64_t spectrogramBins = *dftLength / 2 + 1;
  std::vector<double> edges;  // spectrogram bin of each filter edge, num_mel_bins + 2 of them
  for (int64_t i = 0; i < *melBins + 2; ++i) {
    double hertz = 700.0 * (std::pow(10.0, (double(i) * melStep + lowMel) / 2595.0) - 1.0);
    double bin = std::floor(double(*dftLength + 1) * hertz / double(*sampleRate));
    // The last edge only bounds the last filter's falling slope (exclusive), so it may lie one
    // past the last bin.
    double limit = double(i == *melBins + 1 ? spectrogramBins + 1 : spectrogramBins);
    if (bin < 0 || bin >= limit)
      return call.error("mel filter edge " + std::to_string(i) + " falls on spectrogram bin " +
                        std::to_string(int64_t(bin)) + ", outside [0, " + std::to_string(spectrogramBins) + ")",
                        "keep upper_edge_hertz at or below sample_rate / 2");
    edges.push_back(bin);
  }

  Workload w;
  w.name = "mel_weight_matrix_" + std::to_string(spectrogramBins) + "x" + std::to_string(*melBins);
  DataType outType = *dtype;
  w.outputs = {te::compute(
      toExprs({spectrogramBins, *melBins}),
      [&](const std::vector<Var>& axes) {
        DataType f = DataType::float64();
        Expr j = cast(f, Expr(axes[0]));
        Expr mel = axes[1];
        Expr left = constantTableLookup(edges, mel, f);
        Expr center = constantTableLookup(edges, mel + indexConst(1), f);
        Expr right = constantTableLookup(edges, mel + indexConst(2), f);
        // The falling edge [center, right) is written after the rising one [left, center],
        // so it wins at the center; a zero-width rising edge leaves a 1 at the center.
        Expr falling = (right - j) / max(right - center, f64(1));
        Expr rising = (j - left) / max(center - left, f64(1));
        Expr value = select(right > center && j >= center && j < right, falling,
                            select(center > left && j >= left && j <= center, rising,
                                   select(eq(center, left) && eq(j, center), f64(1), f64(0))));
        return cast(outType, value);
      },
      "out", {"bin", "mel"}, "window")};
  return opaqueKernel(call, std::move(w), {});
}

}  // namespace

void registerSpectralOps(OpRegistry& registry) {
  registry.add(kernelTypedOpaqueOp("HannWindow", 1, 1, {0},
                                   [](const OpCall& call) { return buildCosineWindow(call, {0.5, -0.5}); }));
  registry.add(kernelTypedOpaqueOp("HammingWindow", 1, 1, {0}, [](const OpCall& call) {
    return buildCosineWindow(call, {25.0 / 46.0, -21.0 / 46.0});
  }));
  registry.add(kernelTypedOpaqueOp("BlackmanWindow", 1, 1, {0},
                                   [](const OpCall& call) { return buildCosineWindow(call, {0.42, -0.5, 0.08}); }));
  registry.add(kernelTypedOpaqueOp("DFT", 1, 2, {1}, buildDft));
  registry.add(kernelTypedOpaqueOp("STFT", 2, 4, {1, 3}, buildStft));
  registry.add(kernelTypedOpaqueOp("MelWeightMatrix", 5, 5, {0, 1, 2, 3, 4}, buildMelWeightMatrix));
}

}  // namespace tessel::graph::signal_vision
