// exportModule: plan checks against the kernels, object emission, linking with cc, atomic file writes.
#include "compiler/export/ExportModule.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "compiler/lower/Build.h"
#include "runtime/Error.h"

extern char** environ;

namespace tessel {

namespace {

namespace fs = std::filesystem;

Diagnostic problem(std::string message, std::string location, std::string hint = "") {
  return Diagnostic{std::move(message), std::move(location), 0, 0, std::move(hint)};
}

/// A temporary name next to `target`, unique to this process, so concurrent exports do not clash.
fs::path temporaryBeside(const fs::path& target) {
  std::string name = ".";
  name.append(target.filename().string()).append(".tmp-").append(std::to_string(getpid()));
  return target.parent_path() / name;
}

/// Writes `contents` to a temporary file and renames it over `target`.
Status writeAtomically(const fs::path& target, const std::string& contents) {
  fs::path temporary = temporaryBeside(target);
  {
    std::ofstream stream(temporary, std::ios::binary | std::ios::trunc);
    if (!stream) return problem("cannot create file: " + std::string(std::strerror(errno)), temporary.string());
    stream.write(contents.data(), std::streamsize(contents.size()));
    if (!stream.flush()) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return problem("write failed", temporary.string());
    }
  }
  std::error_code error;
  fs::rename(temporary, target, error);
  if (error) {
    fs::remove(temporary, error);
    return problem("cannot replace file: " + error.message(), target.string());
  }
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

/// Runs `arguments` with stdout and stderr going to `logPath`; returns the exit status or -1.
int runProcess(const std::vector<std::string>& arguments, const fs::path& logPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t child = 0;
  int spawned = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string readText(const fs::path& path) {
  std::ifstream stream(path);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
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
  std::string contents;
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
runtime::GraphTarget graphTarget(const TargetInfo& target) {
  runtime::GraphTarget recorded{target.triple, target.cpu, {}};
  std::stringstream features(target.features);
  for (std::string feature; std::getline(features, feature, ',');)
    if (feature.size() > 1 && feature[0] == '+') recorded.features.push_back(feature.substr(1));
  std::sort(recorded.features.begin(), recorded.features.end());
  return recorded;
}

}  // namespace

Status exportModule(const std::string& directory, const std::vector<PrimFunc>& kernels, runtime::GraphPlan plan,
                    const std::map<std::string, runtime::NDArray>& params, const ExportOptions& options) {
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

  fs::path root(directory);
  std::error_code error;
  fs::create_directories(root, error);
  if (error || !fs::is_directory(root, error))
    return problem("cannot create the export directory: " + (error ? error.message() : "not a directory"), directory);
  if (access(root.c_str(), W_OK) != 0)
    return problem("the export directory is not writable: " + std::string(std::strerror(errno)), directory);

  fs::path library = root / plan.library;
  // LLVM compiles one module on one core; independent kernels go into one object file per
  // core, compiled in parallel (only the kernels are external symbols, so they link).
  size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min(jobs, std::max<size_t>(1, kernels.size() / 2));
  std::vector<std::vector<PrimFunc>> parts(jobs);
  for (size_t i = 0; i < kernels.size(); ++i) parts[i % jobs].push_back(kernels[i]);
  std::vector<fs::path> objects;
  for (size_t j = 0; j < jobs; ++j) objects.push_back(temporaryBeside(root / ("kernels." + std::to_string(j) + ".o")));
  fs::path linked = temporaryBeside(library);
  fs::path log = temporaryBeside(root / "link.log");
  auto cleanUp = [&] {
    std::error_code ignored;
    for (const fs::path& path : objects) fs::remove(path, ignored);
    for (const fs::path& path : {linked, log}) fs::remove(path, ignored);
  };
  std::vector<std::optional<Expected<bool>>> emitted(jobs);
  {
    std::vector<std::thread> threads;
    for (size_t j = 1; j < jobs; ++j)
      threads.emplace_back([&, j] { emitted[j].emplace(emitObjectFile(parts[j], options.target, objects[j].string())); });
    emitted[0].emplace(emitObjectFile(parts[0], options.target, objects[0].string()));
    for (auto& thread : threads) thread.join();
  }
  for (auto& result : emitted)
    if (!*result) {
      cleanUp();
      return result->error();
    }
  // The kernels call libm for exp, tanh, ...; the runtime's entry points stay undefined.
  std::vector<std::string> command{*compiler, "-shared", "-o", linked.string()};
  for (const fs::path& object : objects) command.push_back(object.string());
  command.push_back("-lm");
  int status = runProcess(command, log);
  if (status != 0) {
    std::string output = readText(log);
    cleanUp();
    return problem(*compiler + " could not link " + library.filename().string() +
                       (status < 0 ? " (it did not run)" : " (exit status " + std::to_string(status) + ")") +
                       (output.empty() ? "" : ": " + output),
                   library.string());
  }
  fs::rename(linked, library, error);
  cleanUp();
  if (error) return problem("cannot replace file: " + error.message(), library.string());

  if (Status written = writeAtomically(root / "params.bin", *packed); !written) return written;
  return writeAtomically(root / "graph.json", runtime::writeGraphJson(plan));
}

}  // namespace tessel
