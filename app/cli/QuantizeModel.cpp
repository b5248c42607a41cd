// Quantizing a model in memory: calibration samples in, a QDQ ONNX model out.
#include "app/cli/QuantizeModel.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/cli/NpzArchive.h"
#include "runtime/Npy.h"

namespace tessel::cli {

namespace {

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// How many samples `array` holds for an input of `shape`: 1 when it has the input's shape,
// N when it stacks N of them along a first axis (the input's batch is 1), else nullopt.
std::optional<int64_t> sampleCount(const std::vector<int64_t>& got, const std::vector<int64_t>& shape) {
  if (got == shape) return 1;
  if (!shape.empty() && shape[0] == 1 && got.size() == shape.size() && std::equal(got.begin() + 1, got.end(), shape.begin() + 1))
    return got[0];
  return std::nullopt;
}

// Sample `i` of `array` (one of `count` stacked along the first axis) in the input's shape.
runtime::NDArray sampleOf(const runtime::NDArray& array, int64_t i, int64_t count, const std::vector<int64_t>& shape) {
  if (count == 1) return array;
  int64_t bytes = array.byteSize() / count;
  auto sample = runtime::NDArray::empty(shape, array.dtype());
  sample.copyFrom(static_cast<const char*>(array.data()) + i * bytes, size_t(bytes));
  return sample;
}

// A model with several inputs: .npz archives whose arrays are named after the inputs (one
// archive, or a directory of them), each array one sample or samples stacked alike.
Expected<std::vector<driver::CalibrationSample>> readMultiInputCalibration(const std::string& path,
                                                                           const graph::Graph& model, int64_t limit) {
  std::string names;
  for (const auto& input : model.inputs) names += (names.empty() ? "" : ", ") + input.node()->name;
  std::vector<std::string> archives;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, error))
      if (entry.path().extension() == ".npz") archives.push_back(entry.path().string());
    std::sort(archives.begin(), archives.end());
  } else if (std::filesystem::path(path).extension() == ".npz") {
    archives = {path};
  }
  if (archives.empty())
    return Diagnostic{"the model has " + std::to_string(model.inputs.size()) + " inputs (" + names +
                          "): its calibration data must be .npz archives with one array per input",
                      path, 0, 0, "numpy.savez(\"calibration.npz\", " + model.inputs[0].node()->name + "=..., ...)"};
  std::vector<driver::CalibrationSample> samples;
  for (const std::string& archive : archives) {
    auto arrays = readNpz(archive);
    if (!arrays) return arrays.error();
    std::map<std::string, runtime::NDArray> byName(arrays->begin(), arrays->end());
    for (const auto& [entry, array] : byName)
      if (std::none_of(model.inputs.begin(), model.inputs.end(),
                       [&, &stored = entry](const auto& v) { return v.node()->name == stored; }))
        return Diagnostic{"the archive holds '" + entry + "', which is not an input of the model", archive, 0, 0,
                          "name the arrays after the inputs: " + names};
    std::optional<int64_t> count;
    for (const auto& input : model.inputs) {
      const std::string& name = input.node()->name;
      auto it = byName.find(name);
      if (it == byName.end())
        return Diagnostic{"the archive has no array for input '" + name + "'", archive, 0, 0,
                          "name the arrays after the inputs: " + names};
      const runtime::NDArray& array = it->second;
      std::string where = archive + ": " + name;
      if (array.dtype().toString() != input.type().dtype.toString())
        return Diagnostic{"the array is " + array.dtype().toString() + " but input '" + name + "' is " +
                              input.type().dtype.toString(),
                          where, 0, 0, ""};
      auto n = sampleCount(array.shape(), input.type().shape);
      if (!n)
        return Diagnostic{"an array of shape " + shapeText(array.shape()) + " does not fit input '" + name + "' " +
                              shapeText(input.type().shape),
                          where, 0, 0, "give " + shapeText(input.type().shape) + ", or samples stacked along the first axis"};
      if (count && *count != *n)
        return Diagnostic{"the arrays hold different numbers of samples (" + std::to_string(*count) + " and " +
                              std::to_string(*n) + ")",
                          where, 0, 0, "stack the same number of samples for every input"};
      count = n;
    }
    for (int64_t i = 0; i < *count && int64_t(samples.size()) < limit; ++i) {
      driver::CalibrationSample sample;
      for (const auto& input : model.inputs)
        sample[input.node()->name] = sampleOf(byName.at(input.node()->name), i, *count, input.type().shape);
      samples.push_back(std::move(sample));
    }
    if (int64_t(samples.size()) >= limit) break;
  }
  return samples;
}

// The calibration samples for a model with one input: a .npy holding one sample, or samples
// stacked along a first axis where the model's input has batch 1; a directory of such files;
// or an .npz archive of such arrays (numpy.savez, compressed or not), in archive order. A
// model with several inputs reads readMultiInputCalibration's archives.
Expected<std::vector<driver::CalibrationSample>> readCalibration(const std::string& path, const graph::Graph& model,
                                                                 int64_t limit) {
  if (model.inputs.size() > 1) return readMultiInputCalibration(path, model, limit);
  if (model.inputs.empty()) return Diagnostic{"the model has no inputs to calibrate with", path, 0, 0, ""};
  const std::string& name = model.inputs[0].node()->name;
  const std::vector<int64_t>& shape = model.inputs[0].type().shape;
  std::vector<driver::CalibrationSample> samples;
  // Takes one array's samples; `where` names it in errors.
  auto take = [&](const runtime::NDArray& array, const std::string& where) -> Status {
    if (array.dtype() != runtime::DataType::float32())
      return Diagnostic{"the calibration array is " + array.dtype().toString() + ", not float32", where, 0, 0,
                        "save it with dtype=numpy.float32"};
    auto count = sampleCount(array.shape(), shape);
    if (!count)
      return Diagnostic{"a calibration array of shape " + shapeText(array.shape()) + " does not fit input '" + name +
                            "' " + shapeText(shape),
                        where, 0, 0, "give " + shapeText(shape) + ", or samples stacked along the first axis"};
    for (int64_t i = 0; i < *count; ++i) samples.push_back({{name, sampleOf(array, i, *count, shape)}});
    return {};
  };
  auto done = [&] { return int64_t(samples.size()) >= limit; };
  std::error_code error;
  std::string extension = std::filesystem::path(path).extension().string();
  if (extension == ".npz") {
    auto arrays = readNpz(path);
    if (!arrays) return arrays.error();
    if (arrays->empty()) return Diagnostic{"the archive holds no arrays", path, 0, 0, "numpy.savez(path, samples)"};
    for (const auto& [entry, array] : *arrays) {
      if (Status taken = take(array, path + ": " + entry); !taken) return taken.error();
      if (done()) break;
    }
  } else {
    std::vector<std::string> files;
    if (std::filesystem::is_directory(path, error)) {
      for (const auto& entry : std::filesystem::directory_iterator(path, error))
        if (entry.path().extension() == ".npy") files.push_back(entry.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) return Diagnostic{"the directory holds no .npy files", path, 0, 0, "put one sample per file"};
    } else if (extension == ".npy") {
      files = {path};
    } else {
      return Diagnostic{"calibration data must be a .npy or .npz file or a directory of .npy files", path, 0, 0,
                        "numpy.save(\"calibration.npy\", samples) with the samples stacked along the first axis"};
    }
    for (const std::string& file : files) {
      runtime::NDArray array;
      try {
        array = runtime::readNpy(file);
      } catch (const std::exception& e) {
        return Diagnostic{e.what(), "", 0, 0, ""};  // its message names the file
      }
      if (Status taken = take(array, file); !taken) return taken.error();
      if (done()) break;
    }
  }
  if (int64_t(samples.size()) > limit) samples.resize(size_t(limit));
  return samples;
}

}  // namespace

std::vector<FlagSpec> quantizeFlags() {
  return {{"calibration",
           "a .npy of inputs (samples stacked along the first axis), an .npz of such arrays, or a directory of .npy files",
           true, ""},
          {"method", "how ranges are chosen: minmax, percentile (99.99% of |x|) or entropy (KL divergence)", true,
           "minmax"},
          {"per-channel", "one weight scale per filter instead of one per layer", false, ""},
          {"skip", "keep layer NODE (a Conv, Gemm or MatMul) in float", true, "", true},
          {"samples", "use at most N calibration samples", true, "64"},
          {"dynamic",
           "quantize the dense layers (Gemm, MatMul) dynamically instead, as ONNX Runtime's quantize_dynamic does: "
           "activation ranges computed at run time, no calibration needed (convolutions stay float)",
           false, ""}};
}

Expected<QuantizedModel> quantizeModel(const std::string& path, const CommandLine& line,
                                       const driver::LoadOptions& load, std::string* usageError) {
  auto usage = [&](const std::string& message) -> Diagnostic {
    *usageError = message;
    return Diagnostic{message, "", 0, 0, ""};
  };
  QuantizedModel out;
  out.dynamic = line.has("dynamic");
  if (!out.dynamic && line.get("calibration").empty()) return usage("--calibration DATA is required");
  if (out.dynamic && line.has("method"))
    return usage("--method chooses calibrated ranges; with --dynamic the ranges are computed at run time");
  auto method = driver::parseCalibrationMethod(line.get("method"));
  if (!method) return usage("--method must be minmax, percentile or entropy");
  out.method = *method;
  int64_t limit = 0;
  if (auto error = line.getInt("samples", &limit)) return usage(*error);

  auto found = frontend::findQuantizableLayers(path);
  if (!found) return found.error();
  out.found = std::move(*found);
  auto fp32 = driver::loadModelBytes(out.found.bytes, path, load);
  if (!fp32) return fp32.error();
  out.fp32 = std::move(*fp32);
  if (!line.get("calibration").empty()) {
    auto samples = readCalibration(line.get("calibration"), out.fp32, limit);
    if (!samples) return samples.error();
    if (samples->empty())
      return Diagnostic{"the calibration data holds no samples (its arrays stack 0 of them)", line.get("calibration"),
                        0, 0, "give at least one input; a few dozen representative ones calibrate well"};
    out.samples = std::move(*samples);
  }

  std::vector<std::string> skipped = line.getAll("skip");
  for (const auto& layer : out.found.layers)
    if (std::find(skipped.begin(), skipped.end(), layer.node) == skipped.end() && (!out.dynamic || layer.op != "Conv"))
      out.layers.push_back(layer);
  for (const std::string& name : skipped)
    if (std::none_of(out.found.layers.begin(), out.found.layers.end(), [&](const auto& c) { return c.node == name; }))
      return usage("--skip " + name + ": there is no quantizable layer of that name");
  if (out.layers.empty() && out.dynamic)
    return Diagnostic{"the model has no dense layer to quantize dynamically (Gemm or MatMul nodes with constant float "
                      "weights)",
                      path, 0, 0, "quantize its convolutions with calibration data instead (--calibration, no --dynamic)"};
  if (out.dynamic) {
    auto quantized = frontend::writeDynamicModel(out.found, out.layers, line.has("per-channel"));
    if (!quantized) return quantized.error();
    out.bytes = std::move(*quantized);
    return out;
  }
  if (out.layers.empty())
    return Diagnostic{"the model has no layer to quantize (Conv, Gemm or MatMul nodes with constant float weights)", path, 0,
                      0, ""};

  // Calibration: each layer's input and quantized output, each tensor once.
  std::vector<driver::TensorRef> watched;
  std::vector<std::string> watchedNames;
  auto watch = [&](const std::string& tensor, const std::string& producer, int index) {
    if (std::find(watchedNames.begin(), watchedNames.end(), tensor) != watchedNames.end()) return;
    watched.push_back({producer, index});
    watchedNames.push_back(tensor);
  };
  for (const auto& layer : out.layers) {
    watch(layer.input, layer.inputProducer, layer.inputIndex);
    if (layer.quantizeOutput) watch(layer.output, layer.outputProducer, layer.outputIndex);
  }
  std::fprintf(stderr, "calibrating %zu tensors of %zu layers on %zu samples (%s)\n", watched.size(),
               out.layers.size(), out.samples.size(), driver::calibrationMethodName(out.method));
  auto ranges = driver::calibrate(out.fp32, watched, out.samples, out.method);
  if (!ranges) return ranges.error();
  for (size_t i = 0; i < watched.size(); ++i) {
    const driver::TensorRange& r = ranges->at(watched[i]);
    out.activations[watchedNames[i]] = {r.scale, r.zeroPoint};
    out.ranges[watchedNames[i]] = r;
  }
  // Max pooling passes quantized values through unchanged when its output has its input's
  // scale and zero point: then Tessel pools the int8 tensor itself (FakeQuantizationToInteger),
  // with no dequantize and quantize around a float pool.
  for (const auto& layer : out.layers)
    if (layer.inputProducerOp == "MaxPool" && out.activations.count(layer.inputProducerInput))
      out.activations[layer.input] = out.activations.at(layer.inputProducerInput);
  auto quantized = frontend::writeQdqModel(out.found, out.layers, out.activations, line.has("per-channel"));
  if (!quantized) return quantized.error();
  out.bytes = std::move(*quantized);
  return out;
}

}  // namespace tessel::cli
