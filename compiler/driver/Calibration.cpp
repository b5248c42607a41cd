// Calibration: extra graph outputs for the tensors watched, their ranges over the samples, and
// the clip each method chooses.
#include "compiler/driver/Calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/GraphExecutor.h"

namespace tessel::driver {

namespace {

// `graph` with `tensors` added as outputs named "calibration:<i>" after its own outputs.
Expected<graph::Graph> watching(const graph::Graph& graph, const std::vector<TensorRef>& tensors) {
  std::map<TensorRef, graph::Value> values;
  auto remember = [&](const graph::Value& v) {
    if (v.defined()) values.emplace(TensorRef{v.node()->name, v.index()}, v);
  };
  for (const auto& v : graph.inputs) remember(v);
  for (const auto& v : graph.outputs) remember(v);
  for (const graph::OperationNode* op : graph.operations())
    for (const auto& v : op->inputs) remember(v);
  graph::Graph out = graph;
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto it = values.find(tensors[i]);
    if (it == values.end())
      return Diagnostic{"the model has no tensor made by '" + tensors[i].node + "' (output " +
                            std::to_string(tensors[i].index) + ") that anything reads",
                        tensors[i].node, 0, 0, ""};
    if (it->second.type().dtype != DataType::float32())
      return Diagnostic{"tensor '" + tensors[i].node + "' is " + it->second.type().toString() +
                            "; only float32 tensors are calibrated",
                        tensors[i].node, 0, 0, "skip this layer"};
    out.outputs.push_back(it->second);
    out.outputNames.push_back("calibration:" + std::to_string(i));
  }
  return out;
}

// `graph` compiled once with the watched tensors as extra outputs.
struct WatchedModel {
  const graph::Graph& graph;
  size_t watchedCount = 0;
  std::unique_ptr<runtime::GraphExecutor> executor;
};

Expected<WatchedModel> compileWatching(const graph::Graph& graph, const std::vector<TensorRef>& tensors,
                                       const CompileOptions& options) {
  auto watched = watching(graph, tensors);
  if (!watched) return watched.error();
  auto compiled = compileGraph(*watched, options);
  if (!compiled) return compiled.error();
  auto executor = createExecutor(*compiled, options.target);
  if (!executor) return executor.error();
  return WatchedModel{graph, tensors.size(), std::move(*executor)};
}

// Runs every sample through `model` and hands each one's values of the watched tensors (then
// the graph's own outputs) to `visit`.
Status forEachSample(WatchedModel& model, const std::vector<CalibrationSample>& samples,
                     const std::function<void(size_t, const std::vector<runtime::NDArray>&)>& visit) {
  const graph::Graph& graph = model.graph;
  auto& executor = model.executor;
  for (size_t s = 0; s < samples.size(); ++s) {
    for (const graph::Value& input : graph.inputs) {
      const std::string& name = input.node()->name;
      auto it = samples[s].find(name);
      std::string where = "calibration sample " + std::to_string(s + 1);
      if (it == samples[s].end())
        return Diagnostic{where + " has no value for input '" + name + "'", name, 0, 0,
                          "give every model input a value in each sample"};
      const graph::TensorType& type = input.type();
      if (it->second.shape() != type.shape || it->second.dtype() != runtime::DataType::float32())
        return Diagnostic{where + " gives input '" + name + "' a value that is not " + type.toString(), name, 0, 0,
                          "calibration inputs must have the model's input shape and type"};
      executor->setInput(name, it->second);
    }
    try {
      executor->run();
    } catch (const std::exception& error) {
      return Diagnostic{std::string("running calibration sample ") + std::to_string(s + 1) + ": " + error.what(), "",
                        0, 0, ""};
    }
    std::vector<runtime::NDArray> values;
    for (size_t i = 0; i < model.watchedCount; ++i) values.push_back(executor->getOutput("calibration:" + std::to_string(i)));
    for (const std::string& name : graph.outputNames) values.push_back(executor->getOutput(name));
    visit(s, values);
  }
  return Status::success();
}

// The |x| below which `share` of the histogram's counts lie.
double percentileOfMagnitude(const std::vector<int64_t>& histogram, double width, double share) {
  int64_t total = 0;
  for (int64_t count : histogram) total += count;
  int64_t seen = 0;
  for (size_t bin = 0; bin < histogram.size(); ++bin) {
    seen += histogram[bin];
    if (double(seen) >= share * double(total)) return double(bin + 1) * width;
  }
  return double(histogram.size()) * width;
}

// TensorRT's entropy calibration: the clip of |x| whose quantization to `levels` levels keeps
// the distribution closest (Kullback-Leibler) to the unclipped one.
double entropyClip(const std::vector<int64_t>& histogram, double width, int levels) {
  const int bins = int(histogram.size());
  double best = std::numeric_limits<double>::infinity();
  int bestEnd = bins;
  for (int end = levels; end <= bins; ++end) {
    std::vector<double> p(histogram.begin(), histogram.begin() + end);
    for (int bin = end; bin < bins; ++bin) p[size_t(end - 1)] += double(histogram[size_t(bin)]);
    // q: the first `end` bins merged into `levels` groups, each group's count spread evenly
    // over the bins of it that were not empty.
    std::vector<double> q(size_t(end), 0.0);
    for (int level = 0; level < levels; ++level) {
      int first = level * end / levels, last = (level + 1) * end / levels;
      double sum = 0;
      int filled = 0;
      for (int bin = first; bin < last; ++bin) {
        sum += double(histogram[size_t(bin)]);
        filled += histogram[size_t(bin)] != 0;
      }
      for (int bin = first; bin < last; ++bin)
        if (histogram[size_t(bin)] != 0) q[size_t(bin)] = sum / filled;
    }
    double pTotal = 0, qTotal = 0;
    for (int bin = 0; bin < end; ++bin) {
      pTotal += p[size_t(bin)];
      qTotal += q[size_t(bin)];
    }
    if (pTotal == 0 || qTotal == 0) continue;
    double divergence = 0;
    bool finite = true;
    for (int bin = 0; bin < end && finite; ++bin) {
      if (p[size_t(bin)] == 0) continue;
      if (q[size_t(bin)] == 0) {
        finite = false;  // the outliers folded into the last bin with nothing to stand for them
        break;
      }
      double pi = p[size_t(bin)] / pTotal, qi = q[size_t(bin)] / qTotal;
      divergence += pi * std::log(pi / qi);
    }
    if (finite && divergence < best) {
      best = divergence;
      bestEnd = end;
    }
  }
  return (double(bestEnd) + 0.5) * width;
}

}  // namespace

const char* calibrationMethodName(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::MinMax: return "minmax";
    case CalibrationMethod::Percentile: return "percentile";
    case CalibrationMethod::Entropy: return "entropy";
  }
  return "?";
}

std::optional<CalibrationMethod> parseCalibrationMethod(const std::string& name) {
  for (auto method : {CalibrationMethod::MinMax, CalibrationMethod::Percentile, CalibrationMethod::Entropy})
    if (name == calibrationMethodName(method)) return method;
  return std::nullopt;
}

Expected<std::map<TensorRef, TensorRange>> calibrate(const graph::Graph& graph, const std::vector<TensorRef>& tensors,
                                                     const std::vector<CalibrationSample>& samples,
                                                     CalibrationMethod method, const CompileOptions& options) {
  if (samples.empty()) return Diagnostic{"there are no calibration samples", "", 0, 0, "give at least one input"};
  std::vector<TensorRange> ranges(tensors.size());
  for (auto& range : ranges) {
    range.min = std::numeric_limits<double>::infinity();
    range.max = -std::numeric_limits<double>::infinity();
  }
  // One compile serves the range pass and the histogram pass.
  auto model = compileWatching(graph, tensors, options);
  if (!model) return model.error();
  Status scanned = forEachSample(*model, samples,
                                 [&](size_t, const std::vector<runtime::NDArray>& values) {
                                   for (size_t i = 0; i < tensors.size(); ++i)
                                     for (float v : values[i].values<float>()) {
                                       ranges[i].min = std::min(ranges[i].min, double(v));
                                       ranges[i].max = std::max(ranges[i].max, double(v));
                                     }
                                 });
  if (!scanned) return scanned.error();
  std::vector<double> widths(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    double magnitude = std::max(std::fabs(ranges[i].min), std::fabs(ranges[i].max));
    if (!(magnitude > 0) || !std::isfinite(magnitude))
      return Diagnostic{"tensor '" + tensors[i].node + "' was " + (magnitude > 0 ? "not finite" : "0") +
                            " on every calibration sample, so it has no range to quantize to",
                        tensors[i].node, 0, 0, "calibrate with real inputs, or skip this layer (--skip)"};
    widths[i] = magnitude / kCalibrationHistogramBins;
    ranges[i].histogram.assign(kCalibrationHistogramBins, 0);
  }
  // Counted for every method: percentile and entropy choose their clip from it, and the
  // report (and the Studio's Quantization panel) plots it.
  {
    Status counted = forEachSample(*model, samples,
                                   [&](size_t, const std::vector<runtime::NDArray>& values) {
                                     for (size_t i = 0; i < tensors.size(); ++i)
                                       for (float v : values[i].values<float>()) {
                                         auto bin = int64_t(std::fabs(double(v)) / widths[i]);
                                         ++ranges[i].histogram[size_t(std::min<int64_t>(bin, kCalibrationHistogramBins - 1))];
                                       }
                                   });
    if (!counted) return counted.error();
  }
  std::map<TensorRef, TensorRange> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TensorRange& r = ranges[i];
    double clip = std::numeric_limits<double>::infinity();
    if (method == CalibrationMethod::Percentile) clip = percentileOfMagnitude(r.histogram, widths[i], 0.9999);
    if (method == CalibrationMethod::Entropy) clip = entropyClip(r.histogram, widths[i], r.min >= 0 ? 256 : 128);
    r.clipLow = std::min(0.0, std::max(r.min, -clip));
    r.clipHigh = std::max(0.0, std::min(r.max, clip));
    r.scale = (r.clipHigh - r.clipLow) / 255.0;
    r.zeroPoint = int(std::clamp(std::nearbyint(-r.clipLow / r.scale), 0.0, 255.0));
    out[tensors[i]] = std::move(r);
  }
  return out;
}

Expected<std::vector<std::vector<runtime::NDArray>>> evaluateTensors(const graph::Graph& graph,
                                                                     const std::vector<TensorRef>& tensors,
                                                                     const std::vector<CalibrationSample>& samples,
                                                                     const CompileOptions& options) {
  std::vector<std::vector<runtime::NDArray>> all(samples.size());
  auto model = compileWatching(graph, tensors, options);
  if (!model) return model.error();
  Status ran = forEachSample(*model, samples,
                             [&](size_t s, const std::vector<runtime::NDArray>& values) { all[s] = values; });
  if (!ran) return ran.error();
  return all;
}

double sqnrDecibels(const std::vector<float>& reference, const std::vector<float>& approximation) {
  double signal = 0, noise = 0;
  for (size_t i = 0; i < reference.size() && i < approximation.size(); ++i) {
    signal += double(reference[i]) * double(reference[i]);
    double error = double(reference[i]) - double(approximation[i]);
    noise += error * error;
  }
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

}  // namespace tessel::driver
