// exportModule: plan checks against the kernels, object emission per kernel, linking with cc, and the
// staged write that replaces a directory's module only once the new one is complete.
#include "compiler/export/ExportModule.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "compiler/lower/Build.h"
#include "core/support/ChildProcess.h"
#include "core/support/Stopwatch.h"
#include "runtime/Error.h"

namespace tessel {

namespace {

namespace fs = std::filesystem;

Diagnostic problem(std::string message, std::string location, std::string hint = "") {
  return Diagnostic{std::move(message), std::move(location), 0, 0, std::move(hint)};
}

const char* const kCancelled = "the export was cancelled";

/// Writes `contents` to `path` (a new file in the staging directory).
Status writeFile(const fs::path& path, const std::string& contents) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  if (!stream) return problem("cannot create file: " + std::string(std::strerror(errno)), path.string());
  stream.write(contents.data(), std::streamsize(contents.size()));
  if (!stream.flush()) return problem("write failed (is the disk full?)", path.string());
  return Status::success();
}

/// An executable file: `name` itself when it has a slash, else its first match on PATH.
std::string findExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    fs::path candidate = fs::path(folder.empty() ? "." : folder) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

Expected<std::string> findCompiler(const ExportOptions& options) {
  std::vector<std::string> candidates;
  if (!options.compiler.empty()) {
    candidates.push_back(options.compiler);
  } else {
    if (const char* cc = std::getenv("CC"); cc && *cc) candidates.push_back(cc);
    candidates.insert(candidates.end(), {"cc", "gcc", "clang"});
  }
  for (const std::string& candidate : candidates)
    if (std::string found = findExecutable(candidate); !found.empty()) return found;
  std::string tried;
  for (const std::string& candidate : candidates) tried += (tried.empty() ? "" : ", ") + candidate;
  return problem("no C compiler found to link kernels.so (tried " + tried + ")", "exportModule",
                 "install a C compiler (Debian: apt install gcc) or set CC");
}

/// Checks the plan's nodes against the kernels' buffer parameters, as far as the kernel
/// signature (pointers only) cannot: a mismatch here would be memory corruption at run time.
Status checkNodesAgainstKernels(const runtime::GraphPlan& plan, const std::vector<PrimFunc>& kernels) {
  std::map<std::string, PrimFunc> byName;
  for (const PrimFunc& kernel : kernels)
    if (!byName.emplace(kernel->name, kernel).second)
      return problem("two kernels are named '" + kernel->name + "'", "exportModule", "give every PrimFunc a unique name");
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const runtime::GraphNode& node = plan.nodes[i];
    std::string where = "graph.json: nodes[" + std::to_string(i) + "] '" + node.name + "'";
    auto found = byName.find(node.kernel);
    if (found == byName.end()) return problem("kernel '" + node.kernel + "' is not among the exported kernels", where);
    const std::vector<Buffer>& parameters = found->second->params;
    if (node.args.size() != parameters.size())
      return problem("kernel '" + node.kernel + "' takes " + std::to_string(parameters.size()) + " buffers, the node passes " +
                         std::to_string(node.args.size()),
                     where);
    for (size_t a = 0; a < parameters.size(); ++a) {
      const runtime::GraphTensor& tensor = *plan.findTensor(node.args[a]);
      int64_t elements = 1;
      for (const Expr& extent : parameters[a].shape()) {
        const int64_t* value = asConstInt(extent);
        if (!value)
          return problem("parameter " + parameters[a].name() + " of kernel '" + node.kernel + "' has a symbolic shape",
                         where, "only kernels with constant shapes can be exported");
        elements *= *value;
      }
      runtime::DataType expected = toRuntimeType(parameters[a].dtype());
      int64_t tensorElements = tensor.byteSize() / std::max<int64_t>(tensor.dtype.bytes(), 1);
      if (tensor.dtype != expected || tensorElements != elements)
        return problem("argument " + std::to_string(a) + " '" + tensor.name + "' is " + tensor.dtype.toString() + " with " +
                           std::to_string(tensorElements) + " elements, kernel '" + node.kernel + "' parameter " +
                           parameters[a].name() + " needs " + expected.toString() + " with " + std::to_string(elements),
                       where);
    }
  }
  return Status::success();
}

/// Lays the params out in params.bin (64-byte aligned slices) and records them in the plan.
Expected<std::string> packParams(runtime::GraphPlan& plan, const std::map<std::string, runtime::NDArray>& params) {
  plan.params.clear();
  // Sized once up front: grown param by param, the string reallocated and copied the
  // weights over and over (a quarter of fcn_resnet50's export time).
  int64_t total = 0;
  for (const auto& entry : params)
    total = runtime::alignGraphOffset(total) + (entry.second.defined() ? entry.second.byteSize() : 0);
  std::string contents;
  contents.reserve(size_t(total));
  for (const auto& [name, array] : params) {
    const runtime::GraphTensor* tensor = plan.findTensor(name);
    if (!tensor) return problem("param '" + name + "' is not a tensor of the plan", "exportModule");
    if (!array.defined() || array.shape() != tensor->shape || array.dtype() != tensor->dtype)
      return problem("param '" + name + "' is " + (array.defined() ? array.describe() : std::string("undefined")) +
                         ", its tensor is " + tensor->dtype.toString() + " of " + std::to_string(tensor->shape.size()) +
                         " dimensions with other extents",
                     "exportModule");
    int64_t offset = runtime::alignGraphOffset(int64_t(contents.size()));
    contents.resize(size_t(offset), '\0');
    contents.resize(size_t(offset + array.byteSize()));
    array.copyTo(contents.data() + offset, size_t(array.byteSize()));
    plan.params.push_back({name, offset, array.byteSize()});
  }
  return contents;
}

/// The target as graph.json records it: the enabled features only, without LLVM's "+".
runtime::GraphTarget graphTarget(const Target& target) {
  // The runtime (which knows nothing of core's Target) checks the features it records.
  return runtime::GraphTarget{target.triple, target.cpu, target.features};
}

/// Progress reports that never go backwards and never overlap, from any thread.
class ExportProgress {
public:
  explicit ExportProgress(const ExportOptions& options) : options_(options) {}
  bool cancelled() const { return options_.cancelled && options_.cancelled(); }
  void operator()(int percent, const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    percent_ = std::clamp(percent, percent_, 100);
    if (options_.progress) options_.progress(percent_, what);
  }

private:
  const ExportOptions& options_;
  std::mutex mutex_;
  int percent_ = 0;
};

// Where the steps after code generation start on the progress bar: compiling the kernels
// takes up to kLinkPercent, the rest is linking and writing the two other files.
constexpr int kLinkPercent = 85;
constexpr int kParamsPercent = 93;
constexpr int kGraphPercent = 97;

/// Compiles the kernels into object files in `staging` and returns their paths. The kernels
/// are independent (only they are external symbols), so runs of consecutive kernels compile
/// as separate LLVM modules on as many threads as there are cores. Identical kernels (but for
/// their names) stay in one run, where code generation compiles them once. A run is small (at
/// most 16 distinct kernels, and at least 8 runs per thread when there are enough kernels):
/// each finished run is where the export reports its kernels and notices a cancel, while
/// LLVM's fixed cost per module stays small (one module per kernel costs 10-20% more CPU on a
/// model of 600 small kernels).
Expected<std::vector<fs::path>> compileKernels(const std::vector<PrimFunc>& kernels, const fs::path& staging,
                                               const Target& target, ExportProgress& progress, ExportTimes* times) {
  size_t threadCount = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::vector<size_t>> groups = groupIdenticalFunctions(kernels);
  // Timed kernel by kernel, each distinct kernel is a run of its own; its time is its group's.
  size_t runLength = times ? 1 : std::clamp<size_t>(groups.size() / (8 * threadCount), 1, 16);
  if (times) {
    times->kernels.assign(kernels.size(), CodegenTimes{});
    times->distinctKernels = groups.size();
  }
  std::vector<std::vector<size_t>> runs;  // kernel indices
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g % runLength == 0) runs.emplace_back();
    runs.back().insert(runs.back().end(), groups[g].begin(), groups[g].end());
  }
  size_t runCount = runs.size();
  std::vector<fs::path> objects;
  for (size_t r = 0; r < runCount; ++r) objects.push_back(staging / ("kernels_" + std::to_string(r) + ".o"));
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  size_t finished = 0;
  std::optional<Diagnostic> failure;
  auto work = [&] {
    while (!stop) {
      size_t r = next++;
      if (r >= runCount) return;
      if (progress.cancelled()) {
        stop = true;
        return;
      }
      std::vector<PrimFunc> run;
      for (size_t index : runs[r]) run.push_back(kernels[index]);
      // An exception must not leave a worker thread (that would end the process, the Studio
      // with it): it becomes this export's failure.
      Expected<bool> emitted = [&]() -> Expected<bool> {
        try {
          return emitObjectFile(run, target, objects[r].string(), times ? &times->kernels[runs[r].front()] : nullptr);
        } catch (const std::exception& error) {
          return Diagnostic{std::string("internal compiler error while generating code (please report): ") + error.what(),
                            run.front()->name, 0, 0, ""};
        }
      }();
      std::lock_guard<std::mutex> lock(mutex);
      if (!emitted) {
        if (!failure) failure = emitted.error();
        stop = true;
        return;
      }
      for (const PrimFunc& kernel : run) {
        ++finished;
        progress(int(finished * kLinkPercent / kernels.size()),
                 "Compiling kernel " + std::to_string(finished) + " of " + std::to_string(kernels.size()) + ": " +
                     kernel->name);
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(threadCount, runCount); ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  if (failure) return *failure;
  if (progress.cancelled()) return problem(kCancelled, staging.parent_path().string());
  return objects;
}

/// Moves the module's files from `staging` into `root`, replacing the ones there. Each move is
/// a rename within one file system, so every file is either the old or the new one; the
/// previous files wait in `staging`/previous until all new ones are in place, and go back if a
/// move fails, so the directory holds either the old module or the new one. What remains
/// unprotected: a process killed in the middle of these few renames (or a rollback that
/// itself fails) can leave a mix of old and new files, and a reader opening the module during
/// them can see one; graph.json moves last, so a reader that starts from it sees the old
/// module until the very end.
Status moveIntoPlace(const fs::path& staging, const fs::path& root, const std::vector<std::string>& files) {
  fs::path previous = staging / "previous";
  std::error_code error;
  fs::create_directory(previous, error);
  if (error) return problem("cannot create the staging directory: " + error.message(), previous.string());
  std::vector<std::string> savedOld, placedNew;
  auto rollBack = [&] {
    std::error_code ignored;
    for (const std::string& file : placedNew) fs::remove(root / file, ignored);
    for (const std::string& file : savedOld) fs::rename(previous / file, root / file, ignored);
  };
  for (const std::string& file : files) {
    if (fs::exists(root / file, error)) {
      fs::rename(root / file, previous / file, error);
      if (error) {
        rollBack();
        return problem("cannot move the previous " + file + " aside: " + error.message(), (root / file).string());
      }
      savedOld.push_back(file);
    }
    fs::rename(staging / file, root / file, error);
    if (error) {
      rollBack();
      return problem("cannot move " + file + " into place: " + error.message(), (root / file).string());
    }
    placedNew.push_back(file);
  }
  return Status::success();
}

const std::string kStagingPrefix = ".export-";

/// A hidden directory inside `root` for one export, unique to this process and call:
/// ".export-<pid>-<n>".
fs::path stagingDirectory(const fs::path& root) {
  static std::atomic<int> counter{0};
  return root / (kStagingPrefix + std::to_string(getpid()) + "-" + std::to_string(counter++));
}

/// Removes what exports killed mid-way (a crash, a kill -9) left in `root`: staging
/// directories of processes that no longer run. Those of live processes may be exports in
/// progress and stay.
void removeAbandonedStaging(const fs::path& root) {
  std::error_code error;
  for (fs::directory_iterator entry(root, error), end; !error && entry != end; entry.increment(error)) {
    std::string name = entry->path().filename().string();
    std::error_code ignored;
    if (name.rfind(kStagingPrefix, 0) != 0 || !entry->is_directory(ignored)) continue;
    pid_t owner = pid_t(std::atol(name.c_str() + kStagingPrefix.size()));
    if (owner <= 0 || owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH) continue;
    fs::remove_all(entry->path(), ignored);
  }
}

}  // namespace

Status exportModule(const std::string& directory, const std::vector<PrimFunc>& kernels, runtime::GraphPlan plan,
                    const std::map<std::string, runtime::NDArray>& params, const ExportOptions& options) {
  ExportProgress progress(options);
  // Everything that can be checked without touching the disk comes first.
  auto packed = packParams(plan, params);
  if (!packed) return packed.error();
  try {
    runtime::validateGraphPlan(plan, "graph.json");
  } catch (const runtime::Error& error) {
    return problem(error.what(), "exportModule", "fix the plan given to exportModule");
  }
  if (Status checked = checkNodesAgainstKernels(plan, kernels); !checked) return checked;
  plan.target = graphTarget(options.target);
  auto compiler = findCompiler(options);
  if (!compiler) return compiler.error();
  if (progress.cancelled()) return problem(kCancelled, directory);

  fs::path root(directory);
  std::error_code error;
  fs::create_directories(root, error);
  if (error || !fs::is_directory(root, error))
    return problem("cannot create the export directory: " + (error ? error.message() : "not a directory"), directory);
  if (access(root.c_str(), W_OK) != 0)
    return problem("the export directory is not writable: " + std::string(std::strerror(errno)), directory);

  // Everything is written into a staging directory first and moved into place only when all
  // of it succeeded, so a cancelled or failed export leaves the previous module untouched.
  // The staging directory lives inside `root` (not beside it) because renames work only within
  // one file system, and `root` may be a mount point or sit in a directory we cannot write.
  removeAbandonedStaging(root);
  fs::path staging = stagingDirectory(root);
  fs::create_directory(staging, error);
  if (error) return problem("cannot create the staging directory: " + error.message(), staging.string());
  auto removeStaging = [&] {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
  };
  auto fail = [&](Diagnostic diagnostic) -> Status {
    removeStaging();
    return diagnostic;
  };

  Stopwatch stopwatch;
  auto objects = compileKernels(kernels, staging, options.target, progress, options.times);
  if (!objects) return fail(objects.error());
  if (options.times) options.times->codegenWallSeconds = stopwatch.lap();

  progress(kLinkPercent, "Linking " + plan.library);
  fs::path library = root / plan.library;
  // The kernels call libm for exp, tanh, ...; the runtime's entry points stay undefined.
  std::vector<std::string> arguments{"-shared", "-o", (staging / plan.library).string()};
  for (const fs::path& object : *objects) arguments.push_back(object.string());
  arguments.push_back("-lm");
  // A child process of our own, so that a cancel kills the compiler driver and the linker it
  // started at once instead of waiting for the link to end.
  ChildProcessOptions linking;
  linking.cancelled = options.cancelled;
  linking.pollMilliseconds = 10;
  auto linked = runChildProcess(*compiler, arguments, linking);
  if (!linked)
    return fail(problem(*compiler + " could not link " + plan.library + " (it did not run): " + linked.error().message,
                        library.string()));
  if (linked->cancelled) return fail(problem(kCancelled, directory));
  if (!linked->succeeded()) {
    std::string output = linked->standardError + linked->standardOutput;
    return fail(problem(*compiler + " could not link " + plan.library + " (it " + linked->describeEnd() + ")" +
                            (output.empty() ? "" : ": " + output),
                        library.string()));
  }

  if (options.times) options.times->linkSeconds = stopwatch.lap();
  if (progress.cancelled()) return fail(problem(kCancelled, directory));
  progress(kParamsPercent, "Writing params.bin");
  if (Status written = writeFile(staging / "params.bin", *packed); !written) return fail(written.error());
  if (progress.cancelled()) return fail(problem(kCancelled, directory));
  progress(kGraphPercent, "Writing graph.json");
  if (Status written = writeFile(staging / "graph.json", runtime::writeGraphJson(plan)); !written)
    return fail(written.error());
  // The last chance to cancel: once files start moving, the export completes (or rolls back).
  if (progress.cancelled()) return fail(problem(kCancelled, directory));

  Status moved = moveIntoPlace(staging, root, {plan.library, "params.bin", "graph.json"});
  removeStaging();
  if (!moved) return moved;
  if (options.times) options.times->writeSeconds = stopwatch.lap();
  progress(100, "Exported " + std::to_string(kernels.size()) + " kernels to " + directory);
  return Status::success();
}

}  // namespace tessel
