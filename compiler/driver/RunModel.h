// Running a model (an ONNX file or an exported module) on given inputs and comparing its
// outputs with expected ones: the one path `tessel run`, `tessel bench` and the ONNX
// conformance suite share, so a test that passes in the suite passes on the command line.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/driver/Driver.h"
#include "compiler/driver/InterpretedModel.h"
#include "core/support/Error.h"
#include "runtime/GraphExecutor.h"
#include "runtime/NDArray.h"

namespace tessel::driver {

/// How close an output must be to its expected value: |got - expected| <= atol + rtol *
/// |expected| for floating-point elements (NaN matches NaN, an infinity only itself);
/// integers and booleans must be equal. The defaults are the ONNX backend test runner's
/// (onnx/backend/test/loader: rtol 1e-3, atol 1e-7).
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// A model ready to run: an ONNX file imported, compiled and JIT-loaded, or an exported
/// module directory loaded with the runtime alone, or an ONNX file whose control flow is
/// decided while it runs, interpreted.
struct PreparedModel {
  /// Null for an interpreted model.
  std::unique_ptr<runtime::GraphExecutor> executor;
  /// Set instead of `executor` when the model's control flow is decided by values known only
  /// while it runs: its control flow is interpreted and the operations between compiled
  /// (InterpretedModel.h).
  std::shared_ptr<InterpretedModel> interpreted;
  /// The inputs prepareWithInputs gave an interpreted model, which takes them at each run.
  InterpretedInputs interpretedInputs;
  /// The graph inputs in the model's order, including those bound as constants while
  /// compiling (they take no value at run time). For a module: the executor's inputs.
  std::vector<std::string> declaredInputs;
  /// Set for an ONNX model: what the compiler made of it (kernels, memory, pass times).
  std::shared_ptr<const CompiledModel> compiled;
  double loadSeconds = 0;     ///< Import and type inference, or loading the module.
  double compileSeconds = 0;  ///< Passes, lowering, JIT (0 for a module).
};

/// Runs a model prepared with its inputs once (the executor, or the interpreter on
/// interpretedInputs). The interpreter's failures are a Diagnostic naming the node; a compiled
/// kernel's failure throws runtime::Error naming it, as GraphExecutor::run does.
Status runPrepared(PreparedModel& prepared);
/// After runPrepared: the outputs' names (a sequence output's tensors one by one) and values.
std::vector<std::string> preparedOutputNames(const PreparedModel& prepared);
std::vector<runtime::NDArray> preparedOutputs(const PreparedModel& prepared);

/// Whether `path` names an exported module (a directory) rather than a model file.
bool isModuleDirectory(const std::string& path);

/// Imports, compiles and loads an ONNX model, or loads a module directory. `load` carries
/// --input-shape and the input values known before compiling (bound where the compiler
/// needs them by value); both are ignored for a module. A model whose control flow cannot be
/// decided while compiling (frontend::needsInterpreter) is prepared to run
/// interpreted. Diagnostics name the file.
Expected<PreparedModel> prepareModel(const std::string& path, const LoadOptions& load = {},
                                     const CompileOptions& compile = {});

/// The comparison of one output with its expected value.
struct OutputComparison {
  std::string name;
  bool matches = false;
  /// Set when the arrays cannot be compared element by element (shape or type differs).
  std::string mismatchReason;
  int64_t mismatchedElements = 0;
  /// The element furthest outside its tolerance (or, when all match, closest to its edge);
  /// empty indices when there are no elements.
  std::vector<int64_t> worstIndex;
  double got = 0, expected = 0, allowed = 0;

  /// "output 'y' matches" or "output 'y': 3 of 60 elements differ; worst at [0, 2, 1]: got
  /// 0.51, expected 0.5 (tolerance 0.0005)".
  std::string describe() const;
};

/// Compares `got` with `expected` under `tolerance`. A uint16 `expected` for a bfloat16
/// output is read as bfloat16 (the ONNX test data stores bfloat16 that way, NumPy having none).
OutputComparison compareOutput(const std::string& name, const runtime::NDArray& got, const runtime::NDArray& expected,
                               const Tolerance& tolerance);

/// The comparison of an output of strings with its expected strings (equal element by
/// element); a null side is an output or expectation of numbers where the other is strings.
OutputComparison compareStrings(const std::string& name, const frontend::StringTensor* got,
                                const frontend::StringTensor* expected);

/// An input's value: a tensor, or the tensors of a sequence input in order (each becomes an
/// input of its own, frontend::sequenceElementName).
struct InputValue {
  InputValue() = default;
  InputValue(runtime::NDArray value) : tensor(std::move(value)) {}  // NOLINT: a tensor is the common case
  static InputValue ofSequence(std::vector<runtime::NDArray> elements) {
    InputValue value;
    value.sequence = std::move(elements);
    return value;
  }
  static InputValue ofStrings(frontend::StringTensor strings) {
    InputValue value;
    value.strings = std::move(strings);
    return value;
  }
  static InputValue absentOptional() {
    InputValue value;
    value.absent = true;
    return value;
  }
  runtime::NDArray tensor;
  std::optional<std::vector<runtime::NDArray>> sequence;
  /// A tensor of strings (only a model run interpreted takes one: StringNormalizer).
  std::optional<frontend::StringTensor> strings;
  /// An empty optional value (only a model run interpreted represents one).
  bool absent = false;
};

/// What to run: a model, its inputs, and optionally the outputs to expect.
struct RunRequest {
  std::string model;  ///< An .onnx file or an exported module directory.
  /// Inputs by position, in the model's graph-input order (the ONNX test suite's
  /// input_0.pb, input_1.pb, ...).
  std::vector<InputValue> positionalInputs;
  /// Inputs by name (--input NAME=FILE); they may be combined with positional ones.
  std::map<std::string, runtime::NDArray> namedInputs;
  /// Expected outputs in the model's output order (a sequence output's tensors one by one);
  /// empty: nothing is compared.
  std::vector<runtime::NDArray> expectedOutputs;
  /// Where an expected output is a tensor of strings: its strings at its position (and an
  /// undefined array in expectedOutputs); empty when none is.
  std::vector<std::optional<frontend::StringTensor>> expectedStrings;
  Tolerance tolerance;
  /// --input-shape; an input given a value and no shape takes its value's shape.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  CompileOptions compile;
};

struct RunResult {
  std::vector<std::string> outputNames;
  std::vector<runtime::NDArray> outputs;
  /// Where an output is a tensor of strings: its strings at its position (and an undefined
  /// array in outputs); empty when none is.
  std::vector<std::optional<frontend::StringTensor>> stringOutputs;
  /// One per output when expected outputs were given, else empty.
  std::vector<OutputComparison> comparisons;
  double loadSeconds = 0, compileSeconds = 0, runSeconds = 0;
  /// Set for an ONNX model: what the compiler made of it (which kernels were tuned, notes).
  std::shared_ptr<const CompiledModel> compiled;
  /// Set for a model run with its control flow interpreted: what the interpreter did (its
  /// segments' compile time is in compileSeconds, not runSeconds).
  std::optional<InterpretedStatistics> interpreted;

  bool allMatch() const;
};

/// Prepares the model (input values are known before compiling, so an ONNX model binds
/// those it needs by value), sets the inputs, runs once and compares. A uint16 value for an
/// input declared bfloat16 is read as bfloat16, as compareOutput does. A Diagnostic for
/// every user-side problem: unreadable model, unsupported operator, a missing, extra or
/// ill-shaped input, a different number of expected outputs than the model has.
Expected<RunResult> runModel(const RunRequest& request);

/// The first half of runModel: prepares the model for the request's inputs and sets them, so
/// the executor is ready to run (`tessel bench` times it). An input with no value is an error,
/// unless `fillMissing` is given: it then makes the value from the input's declared tensor.
/// Expected outputs and the tolerance are ignored.
Expected<PreparedModel> prepareWithInputs(
    const RunRequest& request,
    const std::function<runtime::NDArray(const runtime::GraphTensor&)>& fillMissing = nullptr);

/// An input for timing a model when no value is given: floats uniform in [-1, 1] from `rng`
/// (seed it the same way and runs compare), integers and booleans zero (a random index could
/// fall outside what a Gather reads).
runtime::NDArray timingInput(const runtime::GraphTensor& tensor, std::mt19937& rng);

/// Reads an array from a .npy file or an ONNX TensorProto (.pb) file, by extension.
Expected<runtime::NDArray> readTensorFile(const std::string& path);

/// Reads PREFIX0.pb, PREFIX1.pb, ... from `directory` until one is missing (the ONNX test
/// suite's input_N.pb and output_N.pb): tensors, sequences of tensors (SequenceProto) and
/// optional values holding either.
Expected<std::vector<InputValue>> readNumberedInputs(const std::string& directory, const std::string& prefix);
/// The same with each sequence's tensors in its place, one by one (a model's outputs: a sequence
/// output is one output per tensor). A file of strings is an error unless `strings` is given:
/// it then gets the strings at their position, with an undefined array in the result.
Expected<std::vector<runtime::NDArray>> readNumberedTensors(
    const std::string& directory, const std::string& prefix,
    std::vector<std::optional<frontend::StringTensor>>* strings = nullptr);

/// An output name made safe as a file name (path separators and the like replaced by '_').
std::string fileNameForTensor(const std::string& name);

/// The ONNX test data stores bfloat16 tensors as uint16 (NumPy has no bfloat16): `value`'s
/// bits read as bfloat16 when the model declares it so (`declaredBFloat16`) and it is uint16.
runtime::NDArray asDeclaredBFloat16(const runtime::NDArray& value, bool declaredBFloat16);

}  // namespace tessel::driver
