// Runs an exported model (kernels.so + graph.json + params.bin) with the runtime alone.
//
// The directory layout and graph.json are described in runtime/GraphFormat.md.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/GraphPlan.h"
#include "runtime/NDArray.h"
#include "runtime/SharedLibrary.h"
#include "runtime/c_backend_api.h"

namespace tessel::runtime {

/// How long one node took in the most recent run().
struct NodeTiming {
  std::string node;
  std::string kernel;
  double milliseconds = 0;
};

/// A loaded model: its storages allocated, params copied in, every kernel resolved.
/// setInput, run, then read outputs; repeat as often as needed. Tensors that share a
/// storage alias each other, so outputs are copied out rather than handed out as views,
/// and inputs must be set again before each run when the plan reuses their memory. Not
/// safe to use from several threads at once.
class GraphExecutor {
public:
  /// Loads `directory`. Every problem (a missing file, malformed or inconsistent
  /// graph.json, params outside params.bin, a library that will not load, a kernel it does
  /// not define) throws Error naming the file and the entry, before any kernel runs.
  static std::unique_ptr<GraphExecutor> load(const std::string& directory);

  /// Finds a kernel by symbol name; returns null when there is none.
  using KernelResolver = std::function<TesselKernel(const std::string& symbol)>;
  /// An executor over kernels already in this process (the compiler's JIT): `plan` is
  /// validated as load() does, `params` (one array per param tensor, by name, shape and
  /// type matching) are copied in, and `keepAlive` (the JIT module) is held for as long as
  /// the executor lives. Errors name `sourceName`.
  static std::unique_ptr<GraphExecutor> create(GraphPlan plan, const KernelResolver& resolve,
                                               const std::map<std::string, NDArray>& params,
                                               std::shared_ptr<const void> keepAlive,
                                               const std::string& sourceName = "<jit>");

  const GraphPlan& plan() const { return plan_; }
  const std::vector<std::string>& inputNames() const { return plan_.inputs; }
  const std::vector<std::string>& outputNames() const { return plan_.outputs; }
  /// The tensor description of `name` (an input, output, param or intermediate); Error when unknown.
  const GraphTensor& tensorInfo(const std::string& name) const;

  /// Copies `value` into input `name`; Error unless it is an input and shape and dtype match.
  void setInput(const std::string& name, const NDArray& value);
  /// Copies exactly the input's byte size from host memory; Error when `bytes` differs.
  void setInput(const std::string& name, const void* data, size_t bytes);
  /// Lets input `name` read `value` itself instead of a copy, for the runs until the input
  /// is bound or set again; the executor keeps a reference to it. Kernels only read an
  /// input, so this is safe exactly when no other tensor of the plan shares the input's
  /// storage: false (nothing bound, setInput is the way) when one does, or when `value` is
  /// not a 64-byte aligned host array of the input's shape and type. For callers that run an
  /// executor many times on large values (the interpreter's loop bodies).
  bool bindInput(const std::string& name, const NDArray& value);

  /// Runs the nodes in order. A kernel that reports failure throws Error naming the node.
  void run();

  /// A new array holding a copy of output `name` (any tensor of the plan may be read).
  NDArray getOutput(const std::string& name) const;
  /// Copies output `name` to host memory; Error when `bytes` differs from its byte size.
  void getOutput(const std::string& name, void* data, size_t bytes) const;
  /// Hands output `name` over without a copy: the array the last run wrote it into, while
  /// the executor takes a new one for the next run. Undefined (getOutput copies then) when
  /// another tensor of the plan shares the output's storage, or when it is an input or a
  /// param (a constant output).
  NDArray takeOutput(const std::string& name);

  /// Per-node times of the most recent run(), in node order; empty before the first.
  const std::vector<NodeTiming>& nodeTimings() const { return timings_; }

  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;

private:
  GraphExecutor() = default;
  struct BoundNode {
    TesselKernel kernel = nullptr;
    std::vector<void*> args;
  };

  /// Allocates the storages and resolves every node's kernel; errors name `sourceName`
  /// and end a missing kernel's message with `kernelsWhere` (" in kernels.so").
  void allocateAndBind(const KernelResolver& resolve, const std::string& sourceName, const std::string& kernelsWhere);
  /// The index in storages_ of the storage `tensor` lives in.
  size_t storageIndex(const GraphTensor& tensor) const;
  void* tensorData(const GraphTensor& tensor) const;
  const GraphTensor& requireInput(const std::string& name) const;
  /// The index of the storage that only `tensor` uses, at offset 0; nullopt when it shares one.
  std::optional<size_t> exclusiveStorage(const GraphTensor& tensor) const;
  /// Puts `array` in place of storage `index` and points the kernels' arguments at it.
  void replaceStorage(size_t index, NDArray array, bool borrowed);
  void ownInputStorage(const GraphTensor& tensor);

  std::string directory_;
  GraphPlan plan_;
  std::unique_ptr<SharedLibrary> library_;
  std::shared_ptr<const void> keepAlive_;
  std::vector<NDArray> storages_;  ///< Parallel to plan_.storages.
  /// Parallel to storages_: true while the storage is a caller's array (bindInput), which
  /// setInput must not write into.
  std::vector<bool> borrowed_;
  std::vector<BoundNode> nodes_;   ///< Parallel to plan_.nodes.
  /// Parallel to nodes_, then to each node's args: the storage index and byte offset of the
  /// argument, so a replaced storage can be pointed at again.
  std::vector<std::vector<std::pair<size_t, int64_t>>> argPlaces_;
  /// Parallel to storages_: how many tensors of the plan live in each.
  std::vector<int> tensorsInStorage_;
  /// A caller's array that this executor held last (a bound input nobody else refers to any
  /// more): takeOutput's next storage, so a loop carrying its state through bindInput and
  /// takeOutput reuses memory the kernels have touched instead of faulting in fresh pages.
  NDArray spare_;
  std::vector<NodeTiming> timings_;
};

}  // namespace tessel::runtime
