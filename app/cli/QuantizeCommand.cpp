// tessel quantize MODEL --calibration DATA -o OUT.onnx: post-training static quantization.
// The FP32 model runs in Tessel on the calibration inputs; the ranges of every quantized
// layer's (Conv, Gemm, MatMul) input and output choose uint8 scales; the weights become
// symmetric int8; the result is a QDQ ONNX model (Tessel runs those layers in int8 through
// FakeQuantizationToInteger and the VNNI kernel; any ONNX runtime loads it). Then both
// models run on the calibration inputs and the report says, per layer, how much signal the
// quantization kept (SQNR), and how often the quantized model's top-1 and top-5 agree.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/QuantizeModel.h"

namespace tessel::cli {

namespace {

std::vector<float> floats(const runtime::NDArray& array) {
  auto values = array.values<float>();
  return std::vector<float>(values.begin(), values.end());
}

// A calibration histogram of |x| (kCalibrationHistogramBins bins over [0, max |x|]) in
// `bins` bins, as the report keeps it for plotting.
nlohmann::json histogramJson(const driver::TensorRange& range, size_t bins = 64) {
  std::vector<int64_t> counts(bins, 0);
  const std::vector<int64_t>& fine = range.histogram;
  for (size_t i = 0; i < fine.size(); ++i) counts[i * bins / std::max<size_t>(1, fine.size())] += fine[i];
  return {{"max_abs", std::max(std::fabs(range.min), std::fabs(range.max))}, {"counts", counts}};
}

// The indices of the k largest values.
std::vector<size_t> topK(const std::vector<float>& values, size_t k) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                    [&](size_t a, size_t b) { return values[a] > values[b]; });
  order.resize(k);
  return order;
}

}  // namespace

int runQuantize(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = quantizeFlags();
  flags.insert(flags.begin() + 1, {"output", "where to write the quantized QDQ model (.onnx)", true, "", false, "o"});
  flags.push_back({"report", "also write the per-layer report as JSON to FILE", true, ""});
  flags.push_back(inputShapeFlag());
  ModelCommand command;
  if (auto done = parseModelCommand(
          "quantize", "MODEL --calibration DATA -o OUT.onnx [options]",
          "Quantizes MODEL's convolutions and dense layers (Conv, Gemm, MatMul with constant weights) to\n"
          "int8 (weights symmetric, activations uint8; the logits a model returns stay float) from the\n"
          "ranges Tessel sees running the FP32 model on the calibration inputs, and writes a QDQ ONNX model\n"
          "that Tessel runs in int8 and any ONNX runtime loads. Prints, per layer, the chosen ranges and\n"
          "the SQNR of its output against FP32 (dB; higher is better), then the model output's SQNR and\n"
          "how often its top-1 / top-5 classes agree with FP32's on the calibration inputs. Layers that\n"
          "lose most are named; --skip keeps them in float. The input model is never written to.\n"
          "`tessel compile MODEL --quantize int8 --calibration DATA` quantizes the same way in memory.\n",
          args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  std::string output = line.get("output");
  if (output.empty()) return reportUsageError("quantize", "-o OUT.onnx is required");
  std::error_code same;
  if (std::filesystem::equivalent(output, command.model, same))
    return reportUsageError("quantize", "-o names the input model; write the quantized model to another file");
  driver::LoadOptions load;
  if (auto error = readInputShapes(line, &load)) return reportUsageError("quantize", *error);

  std::string usageError;
  auto result = quantizeModel(command.model, line, load, &usageError);
  if (!result) return usageError.empty() ? reportDiagnostic(result.error()) : reportUsageError("quantize", usageError);
  const std::vector<frontend::QuantizableLayer>& layers = result->layers;
  const std::map<std::string, frontend::ActivationQuantization>& activations = result->activations;
  const std::vector<driver::CalibrationSample>& samples = result->samples;
  const std::string& quantized = result->bytes;
  const graph::Graph* fp32 = &result->fp32;
  {
    std::ofstream file(output, std::ios::binary | std::ios::trunc);
    file.write(quantized.data(), std::streamsize(quantized.size()));
    if (!file) return reportDiagnostic(Diagnostic{"cannot write the quantized model", output, 0, 0, ""});
  }

  // The report: both models on the calibration inputs, compared at every quantized output
  // (dynamic quantization: at the model's outputs, when there are inputs to run).
  auto int8 = driver::loadModelBytes(quantized, output, load);
  if (!int8) return reportDiagnostic(int8.error());
  nlohmann::json report;
  report["model"] = command.model;
  report["output"] = output;
  report["method"] = result->dynamic ? "dynamic" : driver::calibrationMethodName(result->method);
  report["per_channel"] = line.has("per-channel");
  report["calibration_samples"] = samples.size();
  auto writeReport = [&]() -> int {
    if (line.get("report").empty()) return kExitOk;
    std::ofstream file(line.get("report"));
    file << report.dump(2) << "\n";
    if (!file) return reportDiagnostic(Diagnostic{"cannot write the report", line.get("report"), 0, 0, ""});
    return kExitOk;
  };
  if (result->dynamic) {
    // Its layers have no calibrated ranges: each input's are taken at run time.
    for (const auto& layer : layers) {
      std::printf("%-40s %s, dynamic\n", layer.node.c_str(), layer.op.c_str());
      report["layers"].push_back({{"node", layer.node}, {"op", layer.op}, {"dynamic", true}});
    }
    if (samples.empty()) {
      std::printf("wrote %s (give --calibration DATA to compare its outputs with FP32)\n", output.c_str());
      return writeReport();
    }
  }
  const size_t reportedLayers = result->dynamic ? 0 : layers.size();
  std::vector<driver::TensorRef> fp32Outputs, int8Outputs;
  for (const auto& layer : std::vector<frontend::QuantizableLayer>(layers.begin(), layers.begin() + long(reportedLayers))) {
    fp32Outputs.push_back({layer.outputProducer, layer.outputIndex});
    // A float output keeps its node; a quantized one is its DequantizeLinear's.
    int8Outputs.push_back(layer.quantizeOutput ? driver::TensorRef{frontend::dequantizedProducer(layer.output), 0}
                                               : driver::TensorRef{layer.outputProducer, layer.outputIndex});
  }
  std::vector<driver::CalibrationSample> reportSamples(samples.begin(),
                                                       samples.begin() + long(std::min<size_t>(samples.size(), 16)));
  auto reference = driver::evaluateTensors(*fp32, fp32Outputs, reportSamples);
  if (!reference) return reportDiagnostic(reference.error());
  auto approximated = driver::evaluateTensors(*int8, int8Outputs, reportSamples);
  if (!approximated) return reportDiagnostic(approximated.error());
  auto concatenated = [&](const std::vector<std::vector<runtime::NDArray>>& runs, size_t index) {
    std::vector<float> all;
    for (const auto& run : runs) {
      auto v = floats(run[index]);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  if (reportedLayers) std::printf("%-40s %22s %22s %10s\n", "layer", "input range", "output range", "SQNR dB");
  std::vector<std::pair<double, std::string>> byLoss;
  for (size_t i = 0; i < reportedLayers; ++i) {
    const auto& layer = layers[i];
    double sqnr = driver::sqnrDecibels(concatenated(*reference, i), concatenated(*approximated, i));
    const auto& in = activations.at(layer.input);
    const driver::TensorRange& inRange = result->ranges.at(layer.input);
    char inText[64], outText[64] = "float";
    std::snprintf(inText, sizeof inText, "[%.3g, %.3g]", inRange.clipLow, inRange.clipHigh);
    nlohmann::json outputJson = {{"tensor", layer.output}, {"quantized", layer.quantizeOutput}};
    nlohmann::json inputJson = {{"tensor", layer.input}, {"min", inRange.min}, {"max", inRange.max},
                                {"clip", {inRange.clipLow, inRange.clipHigh}}, {"scale", in.scale},
                                {"zero_point", in.zeroPoint}};
    if (!inRange.histogram.empty()) inputJson["histogram"] = histogramJson(inRange);
    if (layer.quantizeOutput) {
      const auto& out = activations.at(layer.output);
      const driver::TensorRange& outRange = result->ranges.at(layer.output);
      std::snprintf(outText, sizeof outText, "[%.3g, %.3g]", outRange.clipLow, outRange.clipHigh);
      outputJson.update({{"min", outRange.min}, {"max", outRange.max}, {"clip", {outRange.clipLow, outRange.clipHigh}},
                         {"scale", out.scale}, {"zero_point", out.zeroPoint}});
      if (!outRange.histogram.empty()) outputJson["histogram"] = histogramJson(outRange);
    }
    std::printf("%-40s %22s %22s %10.1f\n", layer.node.c_str(), inText, outText, sqnr);
    report["layers"].push_back({{"node", layer.node},
                                {"op", layer.op},
                                {"relu", layer.relu},
                                {"input", inputJson},
                                {"output", outputJson},
                                {"sqnr_db", std::isfinite(sqnr) ? nlohmann::json(sqnr) : nlohmann::json(nullptr)}});
    byLoss.push_back({sqnr, layer.node});
  }
  // The model's outputs come after the watched tensors in each run.
  size_t outputs = fp32->outputs.size();
  for (size_t o = 0; o < outputs; ++o) {
    size_t index = reportedLayers + o;
    double sqnr = driver::sqnrDecibels(concatenated(*reference, index), concatenated(*approximated, index));
    std::printf("model output %-27s SQNR %.1f dB\n", fp32->outputNames[o].c_str(), sqnr);
    report["outputs"].push_back({{"name", fp32->outputNames[o]},
                                 {"sqnr_db", std::isfinite(sqnr) ? nlohmann::json(sqnr) : nlohmann::json(nullptr)}});
  }
  // Top-1 / top-5 agreement for a classifier's first output ([1, classes]).
  const auto& firstShape = fp32->outputs[0].type().shape;
  if (firstShape.size() == 2 && firstShape[0] == 1 && firstShape[1] >= 5) {
    int top1 = 0, top5 = 0;
    for (size_t s = 0; s < reportSamples.size(); ++s) {
      auto a = floats((*reference)[s][reportedLayers]), b = floats((*approximated)[s][reportedLayers]);
      size_t expected = topK(a, 1)[0];
      auto five = topK(b, 5);
      top1 += topK(b, 1)[0] == expected;
      top5 += std::find(five.begin(), five.end(), expected) != five.end();
    }
    std::printf("top-1 agreement with FP32: %d of %zu; top-5: %d of %zu\n", top1, reportSamples.size(), top5,
                reportSamples.size());
    report["top1_agreement"] = double(top1) / double(reportSamples.size());
    report["top5_agreement"] = double(top5) / double(reportSamples.size());
  }
  std::sort(byLoss.begin(), byLoss.end());
  std::string worst;
  for (size_t i = 0; i < byLoss.size() && i < 3; ++i)
    worst += (i ? ", " : "") + byLoss[i].second + " (" + std::to_string(int(std::lround(byLoss[i].first))) + " dB)";
  if (!byLoss.empty()) std::printf("lowest SQNR: %s; --skip NODE keeps a layer in float\n", worst.c_str());
  std::printf("wrote %s\n", output.c_str());
  return writeReport();
}

}  // namespace tessel::cli
