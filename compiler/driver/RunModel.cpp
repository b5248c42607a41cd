// Running a model on given inputs and comparing its outputs: shared by `tessel run` and the
// ONNX conformance suite.
#include "compiler/driver/RunModel.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>

#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/frontend/onnx/OnnxProgram.h"
#include "compiler/lower/Build.h"
#include "runtime/BFloat16.h"
#include "runtime/Npy.h"

namespace tessel::driver {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string joinNames(const std::vector<std::string>& names) {
  std::string text;
  for (auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

// A Diagnostic at `where` (a file or directory), with what to do about it when known.
Diagnostic failure(std::string message, std::string where, std::string hint = "") {
  return Diagnostic{std::move(message), std::move(where), 0, 0, std::move(hint)};
}

std::string formatNumber(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

std::string formatShape(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

float halfToFloat(uint16_t half) {
  uint32_t sign = uint32_t(half >> 15) << 31;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // A subnormal half is a normal float: shift the mantissa up until its leading one is implicit.
    int shift = 0;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Element `i` of a host array as a double (for comparing floats and for printing any type).
double elementAsDouble(const runtime::NDArray& array, int64_t i) {
  using Code = runtime::DataType::Code;
  const auto* base = static_cast<const unsigned char*>(array.data());
  runtime::DataType type = array.dtype();
  const unsigned char* element = base + i * type.bytes();
  auto load = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, element, sizeof value);
    return value;
  };
  switch (type.code) {
    case Code::Float:
      if (type.bits == 16) return halfToFloat(load(uint16_t{}));
      if (type.bits == 32) return load(float{});
      return load(double{});
    case Code::BFloat: return runtime::bfloat16ToFloat(load(uint16_t{}));
    case Code::Bool: return *element != 0 ? 1.0 : 0.0;
    case Code::Int:
      switch (type.bits) {
        case 8: return load(int8_t{});
        case 16: return double(load(int16_t{}));
        case 32: return double(load(int32_t{}));
        default: return double(load(int64_t{}));
      }
    case Code::UInt:
      switch (type.bits) {
        case 8: return load(uint8_t{});
        case 16: return double(load(uint16_t{}));
        case 32: return double(load(uint32_t{}));
        default: return double(load(uint64_t{}));
      }
  }
  return 0;
}

bool isFloatingPoint(runtime::DataType type) {
  return type.code == runtime::DataType::Code::Float || type.code == runtime::DataType::Code::BFloat;
}

// Integers and booleans compare exactly, by their stored bytes (a bool is one byte, 0 or 1).
bool exactElementEqual(const runtime::NDArray& got, const runtime::NDArray& expected, int64_t i) {
  int64_t bytes = got.dtype().bytes();
  const auto* a = static_cast<const unsigned char*>(got.data()) + i * bytes;
  const auto* b = static_cast<const unsigned char*>(expected.data()) + i * bytes;
  if (got.dtype().code == runtime::DataType::Code::Bool) return (*a != 0) == (*b != 0);
  return std::memcmp(a, b, size_t(bytes)) == 0;
}

std::vector<int64_t> unflattenIndex(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t axis = shape.size(); axis-- > 0;) {
    if (shape[axis] == 0) break;
    index[axis] = flat % shape[axis];
    flat /= shape[axis];
  }
  return index;
}

// runtime::Error and a stray UserError become a Diagnostic located at `where`.
template <class Function>
auto catchErrors(const std::string& where, Function&& function) -> decltype(function()) {
  try {
    return function();
  } catch (const runtime::Error& error) {
    return failure(error.what(), where);
  } catch (const UserError& error) {
    return error.diagnostic;
  }
}

}  // namespace

runtime::NDArray asDeclaredBFloat16(const runtime::NDArray& value, bool declaredBFloat16) {
  constexpr runtime::DataType kUInt16{runtime::DataType::Code::UInt, 16, 1};
  if (!declaredBFloat16 || value.dtype() != kUInt16) return value;
  return value.view(value.shape(), runtime::DataType::bfloat16());
}

Status runPrepared(PreparedModel& prepared) {
  if (prepared.interpreted)
    return prepared.interpreted->run(prepared.interpretedInputs);
  prepared.executor->run();  // a kernel's failure throws runtime::Error naming its node
  return Status::success();
}

std::vector<std::string> preparedOutputNames(const PreparedModel& prepared) {
  return prepared.interpreted ? prepared.interpreted->outputNames() : prepared.executor->outputNames();
}

std::vector<runtime::NDArray> preparedOutputs(const PreparedModel& prepared) {
  if (prepared.interpreted) return prepared.interpreted->outputs();
  std::vector<runtime::NDArray> outputs;
  for (const std::string& name : prepared.executor->outputNames()) outputs.push_back(prepared.executor->getOutput(name));
  return outputs;
}

bool isModuleDirectory(const std::string& path) {
  std::error_code ignored;
  return fs::is_directory(path, ignored);
}

Expected<PreparedModel> prepareModel(const std::string& path, const LoadOptions& load, const CompileOptions& compile) {
  return catchErrors(path, [&]() -> Expected<PreparedModel> {
    PreparedModel prepared;
    auto start = Clock::now();
    std::error_code ignored;
    if (isModuleDirectory(path)) {
      prepared.executor = runtime::GraphExecutor::load(path);
      prepared.declaredInputs = prepared.executor->inputNames();
      prepared.loadSeconds = secondsSince(start);
      return prepared;
    }
    if (!fs::exists(path, ignored))
      return failure("no such file or directory", path, "give an .onnx model file or an exported module directory");
    auto inputs = frontend::readOnnxInputs(path);
    if (!inputs) return inputs.error();
    for (auto& input : *inputs) prepared.declaredInputs.push_back(input.name);
    auto graph = loadModel(path, load);
    if (!graph && frontend::needsInterpreter(graph.error())) {
      // Control flow decided by values known only while the model runs: interpreted, with the
      // operations between compiled when they first run.
      auto interpreted = InterpretedModel::create(path, compile);
      if (!interpreted) return interpreted.error();
      prepared.interpreted = std::move(*interpreted);
      prepared.interpretedInputs.sequenceLengths = load.sequenceLengths;
      prepared.loadSeconds = secondsSince(start);
      return prepared;
    }
    if (!graph) return graph.error();
    prepared.loadSeconds = secondsSince(start);
    start = Clock::now();
    auto compiled = compileGraph(*graph, compile);
    if (!compiled) return compiled.error();
    auto shared = std::make_shared<const CompiledModel>(std::move(*compiled));
    auto executor = createExecutor(*shared, compile.target);
    if (!executor) return executor.error();
    prepared.executor = std::move(*executor);
    prepared.compiled = std::move(shared);
    prepared.compileSeconds = secondsSince(start);
    return prepared;
  });
}

std::string OutputComparison::describe() const {
  std::string text = "output '" + name + "'";
  if (!mismatchReason.empty()) return text + ": " + mismatchReason;
  if (matches) return text + " matches";
  return text + ": " + std::to_string(mismatchedElements) + " elements differ; worst at " + formatShape(worstIndex) +
         ": got " + formatNumber(got) + ", expected " + formatNumber(expected) + " (tolerance " + formatNumber(allowed) +
         ")";
}

OutputComparison compareOutput(const std::string& name, const runtime::NDArray& got,
                               const runtime::NDArray& expectedAsStored, const Tolerance& tolerance) {
  runtime::NDArray expected = asDeclaredBFloat16(expectedAsStored, got.dtype() == runtime::DataType::bfloat16());
  OutputComparison result;
  result.name = name;
  if (got.dtype() != expected.dtype()) {
    result.mismatchReason = "type " + got.dtype().toString() + ", expected " + expected.dtype().toString();
    return result;
  }
  if (got.shape() != expected.shape()) {
    result.mismatchReason = "shape " + formatShape(got.shape()) + ", expected " + formatShape(expected.shape());
    return result;
  }
  bool floating = isFloatingPoint(got.dtype());
  double worstRatio = -1;
  int64_t worst = -1;
  for (int64_t i = 0, count = got.numElements(); i < count; ++i) {
    double ratio;
    if (floating) {
      double a = elementAsDouble(got, i), e = elementAsDouble(expected, i);
      double allowed = tolerance.atol + tolerance.rtol * std::fabs(e);
      if (a == e || (std::isnan(a) && std::isnan(e))) ratio = 0;
      else if (!std::isfinite(a) || !std::isfinite(e)) ratio = std::numeric_limits<double>::infinity();
      else ratio = allowed > 0 ? std::fabs(a - e) / allowed : std::numeric_limits<double>::infinity();
    } else {
      ratio = exactElementEqual(got, expected, i) ? 0 : std::numeric_limits<double>::infinity();
    }
    if (ratio > 1) ++result.mismatchedElements;
    if (ratio > worstRatio) {
      worstRatio = ratio;
      worst = i;
    }
  }
  result.matches = result.mismatchedElements == 0;
  if (worst >= 0) {
    result.worstIndex = unflattenIndex(worst, got.shape());
    result.got = elementAsDouble(got, worst);
    result.expected = elementAsDouble(expected, worst);
    result.allowed = floating ? tolerance.atol + tolerance.rtol * std::fabs(result.expected) : 0;
  }
  return result;
}

OutputComparison compareStrings(const std::string& name, const frontend::StringTensor* got,
                                const frontend::StringTensor* expected) {
  OutputComparison result;
  result.name = name;
  if (!got || !expected) {
    result.mismatchReason = got ? "strings, expected numbers" : "numbers, expected strings";
    return result;
  }
  if (got->shape != expected->shape) {
    result.mismatchReason = "shape " + formatShape(got->shape) + ", expected " + formatShape(expected->shape);
    return result;
  }
  std::string first;
  for (size_t i = 0; i < got->elements.size(); ++i)
    if (got->elements[i] != expected->elements[i] && result.mismatchedElements++ == 0) {
      result.worstIndex = unflattenIndex(int64_t(i), got->shape);
      first = "first at " + formatShape(result.worstIndex) + ": \"" + got->elements[i] + "\", expected \"" +
              expected->elements[i] + "\"";
    }
  result.matches = result.mismatchedElements == 0;
  if (!result.matches)
    result.mismatchReason = std::to_string(result.mismatchedElements) + " of " + std::to_string(got->elements.size()) +
                            " strings differ; " + first;
  return result;
}

bool RunResult::allMatch() const {
  return std::all_of(comparisons.begin(), comparisons.end(), [](auto& c) { return c.matches; });
}

Expected<PreparedModel> prepareWithInputs(const RunRequest& request,
                                          const std::function<runtime::NDArray(const runtime::GraphTensor&)>& fillMissing) {
  return catchErrors(request.model, [&]() -> Expected<PreparedModel> {
    // The input names come first: positional values are matched to them, and an ONNX model
    // is compiled with every value known (the compiler binds those it needs by value).
    std::vector<std::string> inputNames;
    std::vector<bool> declaredBFloat16;  // parallel to inputNames
    std::vector<bool> declaredSequence;  // parallel to inputNames
    std::set<std::string> declaredStatic;  // inputs whose declared shape has no dynamic dimension
    std::optional<PreparedModel> prepared;
    bool module = isModuleDirectory(request.model);
    if (module) {
      auto loaded = prepareModel(request.model);
      if (!loaded) return loaded.error();
      prepared = std::move(*loaded);
      inputNames = prepared->declaredInputs;
      for (auto& name : inputNames)
        declaredBFloat16.push_back(prepared->executor->tensorInfo(name).dtype == runtime::DataType::bfloat16());
      declaredSequence.assign(inputNames.size(), false);
    } else {
      std::error_code ignored;
      if (!fs::exists(request.model, ignored))
        return failure("no such file or directory", request.model,
                          "give an .onnx model file or an exported module directory");
      auto declared = frontend::readOnnxInputs(request.model);
      if (!declared) return declared.error();
      for (auto& input : *declared) {
        inputNames.push_back(input.name);
        declaredBFloat16.push_back(input.dtype == DataType::bfloat16());
        declaredSequence.push_back(input.sequence);
        if (input.rankKnown && std::all_of(input.shape.begin(), input.shape.end(), [](int64_t d) { return d >= 0; }))
          declaredStatic.insert(input.name);
      }
    }

    std::map<std::string, runtime::NDArray> values;
    if (request.positionalInputs.size() > inputNames.size())
      return failure("the model has " + std::to_string(inputNames.size()) + " inputs (" + joinNames(inputNames) +
                            ") but " + std::to_string(request.positionalInputs.size()) + " were given",
                        request.model);
    std::map<std::string, size_t> sequenceLengths;
    std::map<std::string, frontend::StringTensor> stringValues;
    std::set<std::string> absentValues;
    for (size_t i = 0; i < request.positionalInputs.size(); ++i) {
      const InputValue& given = request.positionalInputs[i];
      const std::string& name = inputNames[i];
      if (given.strings) {
        stringValues[name] = *given.strings;
        continue;
      }
      if (given.absent) {
        absentValues.insert(name);
        continue;
      }
      if (declaredSequence[i]) {
        if (!given.sequence)
          return failure("input '" + name + "' is a sequence of tensors but a tensor was given", request.model,
                         "give an ONNX SequenceProto file for it");
        sequenceLengths[name] = given.sequence->size();
        for (size_t k = 0; k < given.sequence->size(); ++k)
          values[frontend::sequenceElementName(name, k)] = asDeclaredBFloat16((*given.sequence)[k], declaredBFloat16[i]);
        continue;
      }
      // An optional tensor present reads as a sequence of one tensor (OnnxValue).
      if (given.sequence && given.sequence->size() != 1)
        return failure("input '" + name + "' is a tensor but a sequence of " + std::to_string(given.sequence->size()) +
                           " tensors was given" + (module ? " (a module takes a sequence's tensors one by one, by name)" : ""),
                       request.model);
      values[name] = asDeclaredBFloat16(given.sequence ? given.sequence->front() : given.tensor, declaredBFloat16[i]);
    }
    for (auto& [name, value] : request.namedInputs) {
      auto position = std::find(inputNames.begin(), inputNames.end(), name);
      if (position == inputNames.end())
        return failure("the model has no input named '" + name + "'", request.model,
                       "its inputs: " + joinNames(inputNames));
      if (values.count(name))
        return failure("input '" + name + "' is given twice (by name and by position)", request.model);
      values[name] = asDeclaredBFloat16(value, declaredBFloat16[size_t(position - inputNames.begin())]);
    }

    if (!module) {
      LoadOptions load;
      load.inputShapes = request.inputShapes;
      load.inputValues = values;
      load.sequenceLengths = sequenceLengths;
      // A value's shape completes a dynamic declared shape; where the model declares every
      // dimension, a value of another shape is reported when it is set, as a wrong input.
      for (auto& [name, value] : values)
        if (!declaredStatic.count(name) && !load.inputShapes.count(name)) load.inputShapes.emplace(name, value.shape());
      if (!absentValues.empty()) {
        // A compiled model takes its optional values as present: an absent one is interpreted.
        auto interpreted = InterpretedModel::create(request.model, request.compile);
        if (!interpreted) return interpreted.error();
        prepared.emplace();
        prepared->interpreted = std::move(*interpreted);
        prepared->interpretedInputs.sequenceLengths = sequenceLengths;
      } else {
        auto compiled = prepareModel(request.model, load, request.compile);
        if (!compiled) return compiled.error();
        prepared = std::move(*compiled);
      }
    }
    if (prepared->interpreted) {
      // The interpreter takes its inputs at each run; those not given are made from their
      // declared types, as for a compiled model.
      prepared->interpretedInputs.tensors = values;
      prepared->interpretedInputs.strings = stringValues;
      prepared->interpretedInputs.absent = absentValues;
      if (fillMissing) {
        auto declared = frontend::readOnnxInputs(request.model);
        if (!declared) return declared.error();
        for (const auto& input : *declared) {
          if (input.sequence || input.strings || values.count(input.name) || absentValues.count(input.name)) continue;
          runtime::GraphTensor tensor;
          tensor.name = input.name;
          tensor.dtype = toRuntimeType(input.dtype);
          tensor.shape = input.shape;
          auto given = request.inputShapes.find(input.name);
          if (given != request.inputShapes.end()) tensor.shape = given->second;
          if (!input.rankKnown || std::any_of(tensor.shape.begin(), tensor.shape.end(), [](int64_t d) { return d < 0; }))
            return failure("input '" + input.name + "' has dynamic dimensions and no value", request.model,
                           "give its shape with --input-shape " + input.name + ":D0,D1,... or its value with --input");
          prepared->interpretedInputs.tensors.emplace(input.name, fillMissing(tensor));
        }
      }
      return std::move(*prepared);
    }
    if (!absentValues.empty())
      return failure("input '" + *absentValues.begin() + "' is an empty optional value, which a module cannot take",
                     request.model);
    if (!stringValues.empty())
      return failure("input '" + stringValues.begin()->first + "' was given strings, but the model takes numbers there",
                     request.model);
    runtime::GraphExecutor& executor = *prepared->executor;

    for (auto& name : executor.inputNames()) {
      auto value = values.find(name);
      if (value == values.end() && fillMissing)
        value = values.emplace(name, fillMissing(executor.tensorInfo(name))).first;
      if (value == values.end())
        return failure("input '" + name + "' has no value", request.model,
                          "give it with --input " + name + "=FILE (.npy or .pb)");
      try {
        executor.setInput(name, value->second);
      } catch (const runtime::Error& error) {
        return failure("input '" + name + "': " + error.what(), request.model);
      }
    }
    return std::move(*prepared);
  });
}

Expected<RunResult> runModel(const RunRequest& request) {
  return catchErrors(request.model, [&]() -> Expected<RunResult> {
    auto prepared = prepareWithInputs(request);
    if (!prepared) return prepared.error();
    RunResult result;
    result.loadSeconds = prepared->loadSeconds;
    result.compileSeconds = prepared->compileSeconds;
    result.compiled = prepared->compiled;
    auto start = Clock::now();
    if (Status status = runPrepared(*prepared); !status) return status.error();
    result.runSeconds = secondsSince(start);
    if (prepared->interpreted) {
      // The interpreter compiles segments as it first meets them: that time is compiling.
      result.interpreted = prepared->interpreted->statistics();
      result.compileSeconds += result.interpreted->compileSeconds;
      result.runSeconds = std::max(0.0, result.runSeconds - result.interpreted->compileSeconds);
    }
    result.outputNames = preparedOutputNames(*prepared);
    result.outputs = preparedOutputs(*prepared);
    if (prepared->interpreted) {
      const auto& strings = prepared->interpreted->stringOutputs();
      if (std::any_of(strings.begin(), strings.end(), [](const auto& s) { return s.has_value(); }))
        result.stringOutputs = strings;
    }

    if (!request.expectedOutputs.empty()) {
      if (request.expectedOutputs.size() != result.outputs.size())
        return failure("the model has " + std::to_string(result.outputs.size()) + " outputs (" +
                              joinNames(result.outputNames) + ") but " +
                              std::to_string(request.expectedOutputs.size()) + " expected outputs were given",
                          request.model);
      for (size_t i = 0; i < result.outputs.size(); ++i) {
        const frontend::StringTensor* expectedStrings =
            i < request.expectedStrings.size() && request.expectedStrings[i] ? &*request.expectedStrings[i] : nullptr;
        const frontend::StringTensor* gotStrings =
            i < result.stringOutputs.size() && result.stringOutputs[i] ? &*result.stringOutputs[i] : nullptr;
        if (expectedStrings || gotStrings)
          result.comparisons.push_back(compareStrings(result.outputNames[i], gotStrings, expectedStrings));
        else
          result.comparisons.push_back(
              compareOutput(result.outputNames[i], result.outputs[i], request.expectedOutputs[i], request.tolerance));
      }
    }
    return result;
  });
}

runtime::NDArray timingInput(const runtime::GraphTensor& tensor, std::mt19937& rng) {
  auto array = runtime::NDArray::empty(tensor.shape, tensor.dtype);
  std::vector<unsigned char> zeros(size_t(array.byteSize()), 0);
  array.copyFrom(zeros.data(), zeros.size());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  if (tensor.dtype == runtime::DataType::float32())
    for (float& v : array.values<float>()) v = uniform(rng);
  else if (tensor.dtype == runtime::DataType::float64())
    for (double& v : array.values<double>()) v = uniform(rng);
  return array;
}

Expected<runtime::NDArray> readTensorFile(const std::string& path) {
  std::error_code ignored;
  if (!fs::is_regular_file(path, ignored)) return failure("no such file", path);
  std::string extension = fs::path(path).extension().string();
  if (extension == ".pb") return frontend::readTensorProtoFile(path);
  if (extension == ".npy")
    return catchErrors(path, [&]() -> Expected<runtime::NDArray> { return runtime::readNpy(path); });
  return failure("unknown tensor file type '" + extension + "'", path,
                    "give a NumPy .npy file or an ONNX TensorProto .pb file");
}

Expected<std::vector<InputValue>> readNumberedInputs(const std::string& directory, const std::string& prefix) {
  std::error_code ignored;
  if (!fs::is_directory(directory, ignored)) return failure("no such directory", directory);
  std::vector<InputValue> values;
  for (int i = 0;; ++i) {
    std::string path = (fs::path(directory) / (prefix + std::to_string(i) + ".pb")).string();
    if (!fs::exists(path, ignored)) break;
    auto value = frontend::readOnnxValueFile(path);
    if (!value) return value.error();
    values.push_back(value->absent     ? InputValue::absentOptional()
                     : value->strings  ? InputValue::ofStrings(std::move(*value->strings))
                     : value->sequence ? InputValue::ofSequence(std::move(*value->sequence))
                                       : InputValue(value->tensor));
  }
  return values;
}

Expected<std::vector<runtime::NDArray>> readNumberedTensors(const std::string& directory, const std::string& prefix,
                                                            std::vector<std::optional<frontend::StringTensor>>* strings) {
  auto values = readNumberedInputs(directory, prefix);
  if (!values) return values.error();
  std::vector<runtime::NDArray> arrays;
  if (strings) strings->clear();
  for (auto& value : *values) {
    if (value.strings && !strings)
      return failure(prefix + std::to_string(arrays.size()) + ".pb holds strings, where numbers are expected", directory);
    size_t before = arrays.size();
    if (value.strings) arrays.emplace_back();
    else if (!value.sequence) arrays.push_back(std::move(value.tensor));
    else for (auto& element : *value.sequence) arrays.push_back(std::move(element));
    if (strings) {
      strings->resize(arrays.size());
      if (value.strings) (*strings)[before] = std::move(value.strings);
    }
  }
  return arrays;
}

std::string fileNameForTensor(const std::string& name) {
  std::string file;
  for (char c : name) file += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  if (file.empty() || file[0] == '.') file = "_" + file;
  return file;
}

}  // namespace tessel::driver
