// Running a model whose control flow is decided while it runs: its control-flow nodes
// interpreted, the plain operations between them compiled.
//
// Tessel expands control flow while compiling wherever the values deciding it are known
// (frontend/onnx/OnnxControlFlow.h). A model where they are not (an If on the sign of a sum of
// the data, a while loop whose body computes its condition, a loop too long to unroll) runs as
// a frontend::ControlFlowProgram: this class walks its steps, carries out If, Loop, Scan,
// SequenceMap, the sequence and optional operators and StringNormalizer itself (values may be
// tensors, sequences, absent optionals or tensors of strings), and runs each segment of plain
// operations as a compiled model. A segment is compiled the first time it meets a combination
// of input types (and values, for the inputs its compile binds by value, such as a shape), and
// that compile is kept for every later iteration or run that meets the same.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/driver/Driver.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/frontend/onnx/OnnxProgram.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace tessel::driver {

/// What running an interpreted model did, summed over every run so far.
struct InterpretedStatistics {
  int segmentCompiles = 0;     ///< Segments compiled (each distinct combination of input types once).
  int64_t segmentRuns = 0;     ///< Compiled segments run.
  int64_t controlSteps = 0;    ///< Control-flow and sequence nodes carried out.
  double compileSeconds = 0;   ///< Importing, compiling and loading segments.
};

/// An interpreted model's inputs, by name: a tensor in `tensors`; a sequence as its tensors
/// under frontend::sequenceElementName and its length in `sequenceLengths` (the way `tessel run`
/// hands them over); a tensor of strings in `strings`; an empty optional value in `absent`.
struct InterpretedInputs {
  std::map<std::string, runtime::NDArray> tensors;
  std::map<std::string, size_t> sequenceLengths;
  std::map<std::string, frontend::StringTensor> strings;
  std::set<std::string> absent;
};

class InterpretedModel {
public:
  /// Reads `path` as a program (frontend::readControlFlowProgram); its segments are compiled
  /// with `compile` when they first run.
  static Expected<std::unique_ptr<InterpretedModel>> create(const std::string& path,
                                                            const CompileOptions& compile = {});

  /// The model's graph inputs in order (a sequence input by its own name).
  const std::vector<std::string>& inputNames() const { return program_.main.inputs; }
  const frontend::ControlFlowProgram& program() const { return program_; }

  /// Runs the model on `inputs`. A Diagnostic names the node or segment that failed, and why.
  Status run(const InterpretedInputs& inputs);
  /// The same for inputs that are all tensors of numbers.
  Status run(const std::map<std::string, runtime::NDArray>& tensors) { return run(InterpretedInputs{tensors, {}, {}, {}}); }

  /// After a run: the outputs in order, a sequence output as one output per tensor
  /// (frontend::sequenceElementName), and their values. An output of strings has an undefined
  /// array in outputs() and its strings at the same position in stringOutputs().
  const std::vector<std::string>& outputNames() const { return outputNames_; }
  const std::vector<runtime::NDArray>& outputs() const { return outputs_; }
  const std::vector<std::optional<frontend::StringTensor>>& stringOutputs() const { return stringOutputs_; }

  const InterpretedStatistics& statistics() const { return statistics_; }

  ~InterpretedModel();
  InterpretedModel(const InterpretedModel&) = delete;
  InterpretedModel& operator=(const InterpretedModel&) = delete;

private:
  InterpretedModel(frontend::ControlFlowProgram program, CompileOptions compile);
  class Interpreter;
  struct SegmentCache;

  frontend::ControlFlowProgram program_;
  CompileOptions compile_;
  std::unique_ptr<SegmentCache> cache_;
  std::vector<std::string> outputNames_;
  std::vector<runtime::NDArray> outputs_;
  std::vector<std::optional<frontend::StringTensor>> stringOutputs_;
  InterpretedStatistics statistics_;
};

}  // namespace tessel::driver
