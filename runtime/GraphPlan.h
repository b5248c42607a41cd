// The execution plan of an exported model (graph.json) as a C++ struct, its parser and writer.
//
// The file format is described in runtime/GraphFormat.md. The compiler's exporter fills a
// GraphPlan and writes it with writeGraphJson; the GraphExecutor reads it back with
// parseGraphJson. Both ends share this one definition of the format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/DataType.h"

namespace tessel::runtime {

/// One block of memory the executor allocates (64-byte aligned); tensors live inside it.
struct GraphStorage {
  int64_t id = 0;
  int64_t bytes = 0;
};

/// A named array placed at a byte offset inside a storage. Several tensors may share a
/// storage when their lifetimes do not overlap (memory planning).
struct GraphTensor {
  std::string name;
  DataType dtype = DataType::float32();
  std::vector<int64_t> shape;
  int64_t storage = 0;
  int64_t offset = 0;  ///< In bytes from the start of the storage; a multiple of 64.

  /// Elements times element bytes; -1 when a negative extent or an overflow makes it meaningless.
  int64_t byteSize() const;
};

/// A slice of params.bin copied into a tensor when the module is loaded.
struct GraphParam {
  std::string tensor;
  int64_t offset = 0;  ///< In bytes from the start of params.bin.
  int64_t bytes = 0;
};

/// One kernel call: `kernel` (a symbol in the library) gets the data pointers of `args`.
struct GraphNode {
  std::string name;
  std::string kernel;
  std::vector<std::string> args;
};

/// The machine the kernels were compiled for. Empty in files written before it was recorded;
/// the runtime then cannot check and trusts the file.
struct GraphTarget {
  std::string triple;                 ///< "x86_64-pc-linux-gnu".
  std::string cpu;                    ///< LLVM's CPU name, e.g. "sapphirerapids".
  std::vector<std::string> features;  ///< Enabled LLVM features, e.g. "avx2", "avx512f", "fma".
};

/// The whole of graph.json. Nodes run in order.
struct GraphPlan {
  static constexpr int kVersion = 1;
  static constexpr const char* kFormatName = "tessel-graph";
  /// Offsets of tensors in storages and of params in params.bin are multiples of this.
  static constexpr int64_t kAlignment = 64;

  std::string library = "kernels.so";
  GraphTarget target;
  std::vector<GraphStorage> storages;
  std::vector<GraphTensor> tensors;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<GraphParam> params;
  std::vector<GraphNode> nodes;

  /// The tensor called `name`, or null.
  const GraphTensor* findTensor(const std::string& name) const;
  /// The storage with `id`, or null.
  const GraphStorage* findStorage(int64_t id) const;
};

/// Parses graph.json text. Malformed JSON, a wrong "format", an unsupported "version", a
/// missing or mistyped field and every inconsistency validateGraphPlan finds throw Error;
/// the message starts with `sourceName` (the file) and names the offending entry.
GraphPlan parseGraphJson(const std::string& text, const std::string& sourceName);

/// Checks that the plan is self-consistent: unique storage ids and tensor names, known
/// dtypes, non-negative extents, every tensor inside its storage at an aligned offset,
/// inputs, outputs, params and node arguments naming known tensors, params sized exactly
/// as their tensors, no tensor both an input and a param, a plain file name as library.
/// Throws Error starting with `sourceName` and naming the entry.
void validateGraphPlan(const GraphPlan& plan, const std::string& sourceName);

/// The plan as graph.json text (indented, fields in the documented order).
std::string writeGraphJson(const GraphPlan& plan);

/// `value` rounded up to a multiple of GraphPlan::kAlignment.
int64_t alignGraphOffset(int64_t value);

}  // namespace tessel::runtime
