// tessel quantize MODEL --calibration DATA -o OUT.onnx: post-training static quantization.
// The FP32 model runs in Tessel on the calibration inputs; the ranges of every quantized
// convolution's input and output choose uint8 scales; the weights become symmetric int8;
// the result is a QDQ ONNX model (Tessel runs its convolutions in int8 through
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
#include "compiler/driver/Calibration.h"
#include "compiler/frontend/onnx/OnnxQuantize.h"
#include "runtime/Npy.h"

namespace tessel::cli {

namespace {

// The calibration samples for a model with one input: a .npy holding one sample, or samples
// stacked along a first axis where the model's input has batch 1; or a directory of such files.
Expected<std::vector<driver::CalibrationSample>> readCalibration(const std::string& path, const graph::Graph& model,
                                                                 int64_t limit) {
  if (model.inputs.size() != 1)
    return Diagnostic{"the model has " + std::to_string(model.inputs.size()) +
                          " inputs; tessel quantize calibrates models with one input for now",
                      path, 0, 0, ""};
  const std::string& name = model.inputs[0].node()->name;
  const std::vector<int64_t>& shape = model.inputs[0].type().shape;
  std::vector<std::string> files;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, error))
      if (entry.path().extension() == ".npy") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) return Diagnostic{"the directory holds no .npy files", path, 0, 0, "put one sample per file"};
  } else if (std::filesystem::path(path).extension() == ".npy") {
    files = {path};
  } else {
    return Diagnostic{"calibration data must be a .npy file or a directory of them", path, 0, 0,
                      "numpy.save(\"calibration.npy\", samples) with the samples stacked along the first axis"};
  }
  std::vector<driver::CalibrationSample> samples;
  for (const std::string& file : files) {
    runtime::NDArray array;
    try {
      array = runtime::readNpy(file);
    } catch (const std::exception& e) {
      return Diagnostic{e.what(), file, 0, 0, ""};
    }
    if (array.dtype() != runtime::DataType::float32())
      return Diagnostic{"the calibration array is not float32", file, 0, 0, "save it with dtype=numpy.float32"};
    std::vector<int64_t> got = array.shape();
    std::string expected = "[";
    for (size_t i = 0; i < shape.size(); ++i) expected += (i ? ", " : "") + std::to_string(shape[i]);
    expected += "]";
    if (got == shape) {
      samples.push_back({{name, array}});
    } else if (!shape.empty() && shape[0] == 1 && got.size() == shape.size() &&
               std::equal(got.begin() + 1, got.end(), shape.begin() + 1)) {
      // Stacked samples: one model input per entry of the first axis.
      int64_t bytes = array.byteSize() / std::max<int64_t>(1, got[0]);
      for (int64_t i = 0; i < got[0]; ++i) {
        auto sample = runtime::NDArray::empty(shape, runtime::DataType::float32());
        sample.copyFrom(static_cast<const char*>(array.data()) + i * bytes, size_t(bytes));
        samples.push_back({{name, sample}});
      }
    } else {
      return Diagnostic{"a calibration array of shape " + [&] {
        std::string text = "[";
        for (size_t i = 0; i < got.size(); ++i) text += (i ? ", " : "") + std::to_string(got[i]);
        return text + "]";
      }() + " does not fit input '" + name + "' " + expected, file, 0, 0,
                        "give " + expected + ", or samples stacked along the first axis"};
    }
    if (int64_t(samples.size()) >= limit) break;
  }
  if (int64_t(samples.size()) > limit) samples.resize(size_t(limit));
  return samples;
}

std::vector<float> floats(const runtime::NDArray& array) {
  auto values = array.values<float>();
  return std::vector<float>(values.begin(), values.end());
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
  std::vector<FlagSpec> flags = {
      {"calibration", "a .npy of inputs (samples stacked along the first axis) or a directory of .npy files", true, ""},
      {"output", "where to write the quantized QDQ model (.onnx)", true, "", false, "o"},
      {"method", "how ranges are chosen: minmax, percentile (99.99% of |x|) or entropy (KL divergence)", true,
       "minmax"},
      {"per-channel", "one weight scale per filter instead of one per layer", false, ""},
      {"skip", "keep convolution NODE in float", true, "", true},
      {"report", "also write the per-layer report as JSON to FILE", true, ""},
      {"samples", "use at most N calibration samples", true, "64"},
      inputShapeFlag()};
  ModelCommand command;
  if (auto done = parseModelCommand(
          "quantize", "MODEL --calibration DATA -o OUT.onnx [options]",
          "Quantizes MODEL's dense convolutions to int8 (weights symmetric, activations uint8) from the\n"
          "ranges Tessel sees running the FP32 model on the calibration inputs, and writes a QDQ ONNX model\n"
          "that Tessel runs in int8 and any ONNX runtime loads. Prints, per layer, the chosen ranges and\n"
          "the SQNR of its output against FP32 (dB; higher is better), then the model output's SQNR and\n"
          "how often its top-1 / top-5 classes agree with FP32's on the calibration inputs. Layers that\n"
          "lose most are named; --skip keeps them in float. The input model is never written to.\n",
          args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  std::string output = line.get("output");
  if (line.get("calibration").empty()) return reportUsageError("quantize", "--calibration DATA is required");
  if (output.empty()) return reportUsageError("quantize", "-o OUT.onnx is required");
  std::error_code same;
  if (std::filesystem::equivalent(output, command.model, same))
    return reportUsageError("quantize", "-o names the input model; write the quantized model to another file");
  auto method = driver::parseCalibrationMethod(line.get("method"));
  if (!method) return reportUsageError("quantize", "--method must be minmax, percentile or entropy");
  int64_t limit = 0;
  if (auto error = line.getInt("samples", &limit)) return reportUsageError("quantize", *error);
  driver::LoadOptions load;
  if (auto error = readInputShapes(line, &load)) return reportUsageError("quantize", *error);

  auto found = frontend::findQuantizableConvs(command.model);
  if (!found) return reportDiagnostic(found.error());
  auto fp32 = driver::loadModelBytes(found->bytes, command.model, load);
  if (!fp32) return reportDiagnostic(fp32.error());
  auto samples = readCalibration(line.get("calibration"), *fp32, limit);
  if (!samples) return reportDiagnostic(samples.error());

  std::vector<std::string> skipped = line.getAll("skip");
  std::vector<frontend::QuantizableConv> convs;
  for (const auto& conv : found->convs)
    if (std::find(skipped.begin(), skipped.end(), conv.node) == skipped.end()) convs.push_back(conv);
  for (const std::string& name : skipped)
    if (std::none_of(found->convs.begin(), found->convs.end(), [&](const auto& c) { return c.node == name; }))
      return reportUsageError("quantize", "--skip " + name + ": there is no quantizable convolution of that name");
  if (convs.empty())
    return reportDiagnostic(Diagnostic{"the model has no convolution to quantize (dense 2-D Conv nodes with constant weights)",
                                       command.model, 0, 0, ""});

  // Calibration: each conv's input and quantized output, each tensor once.
  std::vector<driver::TensorRef> watched;
  std::vector<std::string> watchedNames;
  auto watch = [&](const std::string& tensor, const std::string& producer, int index) {
    if (std::find(watchedNames.begin(), watchedNames.end(), tensor) != watchedNames.end()) return;
    watched.push_back({producer, index});
    watchedNames.push_back(tensor);
  };
  for (const auto& conv : convs) {
    watch(conv.input, conv.inputProducer, conv.inputIndex);
    watch(conv.output, conv.outputProducer, conv.outputIndex);
  }
  std::fprintf(stderr, "calibrating %zu tensors of %zu convolutions on %zu samples (%s)\n", watched.size(),
               convs.size(), samples->size(), driver::calibrationMethodName(*method));
  auto ranges = driver::calibrate(*fp32, watched, *samples, *method);
  if (!ranges) return reportDiagnostic(ranges.error());
  std::map<std::string, frontend::ActivationQuantization> activations;
  std::map<std::string, const driver::TensorRange*> rangeOf;  // by tensor name
  for (size_t i = 0; i < watched.size(); ++i) {
    const driver::TensorRange& r = ranges->at(watched[i]);
    activations[watchedNames[i]] = {r.scale, r.zeroPoint};
    rangeOf[watchedNames[i]] = &r;
  }
  auto quantized = frontend::writeQdqModel(*found, convs, activations, line.has("per-channel"));
  if (!quantized) return reportDiagnostic(quantized.error());
  {
    std::ofstream file(output, std::ios::binary | std::ios::trunc);
    file.write(quantized->data(), std::streamsize(quantized->size()));
    if (!file) return reportDiagnostic(Diagnostic{"cannot write the quantized model", output, 0, 0, ""});
  }

  // The report: both models on the calibration inputs, compared at every quantized output.
  auto int8 = driver::loadModelBytes(*quantized, output, load);
  if (!int8) return reportDiagnostic(int8.error());
  std::vector<driver::TensorRef> fp32Outputs, int8Outputs;
  for (const auto& conv : convs) {
    fp32Outputs.push_back({conv.outputProducer, conv.outputIndex});
    int8Outputs.push_back({frontend::dequantizedProducer(conv.output), 0});
  }
  std::vector<driver::CalibrationSample> reportSamples(samples->begin(),
                                                       samples->begin() + long(std::min<size_t>(samples->size(), 16)));
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
  nlohmann::json report;
  report["model"] = command.model;
  report["output"] = output;
  report["method"] = driver::calibrationMethodName(*method);
  report["per_channel"] = line.has("per-channel");
  report["calibration_samples"] = samples->size();
  std::printf("%-40s %22s %22s %10s\n", "layer", "input range", "output range", "SQNR dB");
  std::vector<std::pair<double, std::string>> byLoss;
  for (size_t i = 0; i < convs.size(); ++i) {
    const auto& conv = convs[i];
    double sqnr = driver::sqnrDecibels(concatenated(*reference, i), concatenated(*approximated, i));
    const auto& in = activations.at(conv.input);
    const auto& out = activations.at(conv.output);
    const driver::TensorRange& inRange = *rangeOf.at(conv.input);
    const driver::TensorRange& outRange = *rangeOf.at(conv.output);
    char inText[64], outText[64];
    std::snprintf(inText, sizeof inText, "[%.3g, %.3g]", inRange.clipLow, inRange.clipHigh);
    std::snprintf(outText, sizeof outText, "[%.3g, %.3g]", outRange.clipLow, outRange.clipHigh);
    std::printf("%-40s %22s %22s %10.1f\n", conv.node.c_str(), inText, outText, sqnr);
    report["layers"].push_back({{"node", conv.node},
                                {"relu", conv.relu},
                                {"input", {{"tensor", conv.input}, {"min", inRange.min}, {"max", inRange.max},
                                           {"clip", {inRange.clipLow, inRange.clipHigh}}, {"scale", in.scale},
                                           {"zero_point", in.zeroPoint}}},
                                {"output", {{"tensor", conv.output}, {"min", outRange.min}, {"max", outRange.max},
                                            {"clip", {outRange.clipLow, outRange.clipHigh}}, {"scale", out.scale},
                                            {"zero_point", out.zeroPoint}}},
                                {"sqnr_db", std::isfinite(sqnr) ? nlohmann::json(sqnr) : nlohmann::json(nullptr)}});
    byLoss.push_back({sqnr, conv.node});
  }
  // The model's outputs come after the watched tensors in each run.
  size_t outputs = fp32->outputs.size();
  for (size_t o = 0; o < outputs; ++o) {
    size_t index = convs.size() + o;
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
      auto a = floats((*reference)[s][convs.size()]), b = floats((*approximated)[s][convs.size()]);
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
  std::printf("lowest SQNR: %s; --skip NODE keeps a layer in float\nwrote %s\n", worst.c_str(), output.c_str());
  if (!line.get("report").empty()) {
    std::ofstream file(line.get("report"));
    file << report.dump(2) << "\n";
    if (!file) return reportDiagnostic(Diagnostic{"cannot write the report", line.get("report"), 0, 0, ""});
  }
  return kExitOk;
}

}  // namespace tessel::cli
