// Loading, validating and running an exported model directory.
#include "runtime/GraphExecutor.h"

#include "runtime/CpuFeatures.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/Error.h"

namespace tessel::runtime {

namespace {

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string readWholeFile(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad()) throw Error(path.string() + ": read error");
  return contents.str();
}

}  // namespace

std::unique_ptr<GraphExecutor> GraphExecutor::load(const std::string& directory) {
  namespace fs = std::filesystem;
  std::unique_ptr<GraphExecutor> executor(new GraphExecutor());
  executor->directory_ = directory;
  fs::path root(directory);
  std::error_code ignored;
  if (!fs::is_directory(root, ignored)) throw Error(directory + ": not a directory (expected an exported module)");

  fs::path graphPath = root / "graph.json";
  executor->plan_ = parseGraphJson(readWholeFile(graphPath), graphPath.string());
  const GraphPlan& plan = executor->plan_;

  // Check every param against params.bin before allocating anything.
  fs::path paramsPath = root / "params.bin";
  std::string params;
  if (!plan.params.empty()) {
    params = readWholeFile(paramsPath);
    for (size_t i = 0; i < plan.params.size(); ++i) {
      const GraphParam& param = plan.params[i];
      if (param.offset > int64_t(params.size()) || param.bytes > int64_t(params.size()) - param.offset)
        throw Error(graphPath.string() + ": params[" + std::to_string(i) + "] for tensor '" + param.tensor +
                    "': bytes [" + std::to_string(param.offset) + ", " + std::to_string(param.offset + param.bytes) +
                    ") lie outside " + paramsPath.string() + " (" + std::to_string(params.size()) + " bytes)");
    }
  }

  // Loading kernels built for instructions this CPU lacks would die on SIGILL at the first run.
  std::vector<std::string> missing = missingCpuFeatures(plan.target.features);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& feature : missing) list += (list.empty() ? "" : ", ") + feature;
    throw Error(graphPath.string() + ": target: the kernels were compiled for a CPU with " + list + " (" +
                (plan.target.cpu.empty() ? std::string("unknown model") : plan.target.cpu) +
                "), which this machine lacks; compile the model again for this machine (tessel compile MODEL -o DIR)");
  }

  fs::path libraryPath = root / plan.library;
  if (!fs::exists(libraryPath, ignored))
    throw Error(graphPath.string() + ": library: " + libraryPath.string() + " does not exist");
  // dlopen searches the library path for names without a slash; an absolute path avoids that.
  executor->library_ = std::make_unique<SharedLibrary>(fs::absolute(libraryPath).string());

  std::string libraryName = libraryPath.string();
  SharedLibrary* library = executor->library_.get();
  executor->allocateAndBind(
      [&](const std::string& symbol) { return reinterpret_cast<TesselKernel>(library->findSymbol(symbol)); },
      graphPath.string(), " in " + libraryName);
  for (const GraphParam& param : plan.params)
    std::memcpy(executor->tensorData(*plan.findTensor(param.tensor)), params.data() + param.offset,
                static_cast<size_t>(param.bytes));
  return executor;
}

void GraphExecutor::allocateAndBind(const KernelResolver& resolve, const std::string& sourceName,
                                    const std::string& kernelsWhere) {
  const GraphPlan& plan = plan_;
  for (size_t i = 0; i < plan.storages.size(); ++i) {
    try {
      storages_.push_back(NDArray::empty({std::max<int64_t>(plan.storages[i].bytes, 1)}, DataType::uint8()));
    } catch (const std::exception& error) {
      throw Error(sourceName + ": storages[" + std::to_string(i) + "]: cannot allocate " +
                  std::to_string(plan.storages[i].bytes) + " bytes: " + error.what());
    }
  }
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const GraphNode& node = plan.nodes[i];
    BoundNode bound;
    bound.kernel = resolve(node.kernel);
    if (!bound.kernel)
      throw Error(sourceName + ": nodes[" + std::to_string(i) + "] '" + node.name + "': kernel '" + node.kernel +
                  "' is not defined" + kernelsWhere);
    std::vector<std::pair<size_t, int64_t>> places;
    for (const std::string& arg : node.args) {
      const GraphTensor& tensor = *plan.findTensor(arg);
      bound.args.push_back(tensorData(tensor));
      places.emplace_back(storageIndex(tensor), tensor.offset);
    }
    nodes_.push_back(std::move(bound));
    argPlaces_.push_back(std::move(places));
  }
  borrowed_.assign(storages_.size(), false);
  tensorsInStorage_.assign(storages_.size(), 0);
  for (const GraphTensor& tensor : plan.tensors) ++tensorsInStorage_[storageIndex(tensor)];
}

std::unique_ptr<GraphExecutor> GraphExecutor::create(GraphPlan plan, const KernelResolver& resolve,
                                                     const std::map<std::string, NDArray>& params,
                                                     std::shared_ptr<const void> keepAlive,
                                                     const std::string& sourceName) {
  validateGraphPlan(plan, sourceName);
  std::unique_ptr<GraphExecutor> executor(new GraphExecutor());
  executor->directory_ = sourceName;
  executor->plan_ = std::move(plan);
  executor->keepAlive_ = std::move(keepAlive);
  executor->allocateAndBind(resolve, sourceName, "");
  for (const GraphParam& param : executor->plan_.params) {
    auto it = params.find(param.tensor);
    if (it == params.end()) throw Error(sourceName + ": no data for param '" + param.tensor + "'");
    const GraphTensor& tensor = *executor->plan_.findTensor(param.tensor);
    if (it->second.byteSize() != tensor.byteSize())
      throw Error(sourceName + ": param '" + param.tensor + "' holds " + std::to_string(it->second.byteSize()) +
                  " bytes, its tensor " + std::to_string(tensor.byteSize()));
    it->second.copyTo(executor->tensorData(tensor), size_t(tensor.byteSize()));
  }
  return executor;
}

size_t GraphExecutor::storageIndex(const GraphTensor& tensor) const {
  for (size_t i = 0; i < plan_.storages.size(); ++i)
    if (plan_.storages[i].id == tensor.storage) return i;
  throw Error("tensor '" + tensor.name + "' has no storage");  // validateGraphPlan rules this out
}

void* GraphExecutor::tensorData(const GraphTensor& tensor) const {
  return static_cast<char*>(storages_[storageIndex(tensor)].data()) + tensor.offset;
}

const GraphTensor& GraphExecutor::tensorInfo(const std::string& name) const {
  if (const GraphTensor* tensor = plan_.findTensor(name)) return *tensor;
  throw Error(directory_ + ": the module has no tensor '" + name + "'");
}

const GraphTensor& GraphExecutor::requireInput(const std::string& name) const {
  for (const std::string& input : plan_.inputs)
    if (input == name) return *plan_.findTensor(name);
  std::string available;
  for (const std::string& input : plan_.inputs) available += (available.empty() ? "" : ", ") + input;
  throw Error(directory_ + ": the module has no input '" + name + "' (its inputs: " +
              (available.empty() ? "none" : available) + ")");
}

std::optional<size_t> GraphExecutor::exclusiveStorage(const GraphTensor& tensor) const {
  size_t index = storageIndex(tensor);
  if (tensor.offset != 0 || tensorsInStorage_[index] != 1) return std::nullopt;
  return index;
}

void GraphExecutor::replaceStorage(size_t index, NDArray array, bool borrowed) {
  if (borrowed_[index] && storages_[index].soleHandle()) spare_ = storages_[index];
  storages_[index] = std::move(array);
  borrowed_[index] = borrowed;
  char* base = static_cast<char*>(storages_[index].data());
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (size_t a = 0; a < argPlaces_[n].size(); ++a)
      if (argPlaces_[n][a].first == index) nodes_[n].args[a] = base + argPlaces_[n][a].second;
}

bool GraphExecutor::bindInput(const std::string& name, const NDArray& value) {
  const GraphTensor& tensor = requireInput(name);
  if (!value.defined() || value.shape() != tensor.shape || value.dtype() != tensor.dtype ||
      value.device() != Device::cpu() || tensor.byteSize() == 0)
    return false;
  // Kernels take their buffers as 64-byte aligned.
  if (reinterpret_cast<uintptr_t>(value.data()) % GraphPlan::kAlignment != 0) return false;
  std::optional<size_t> index = exclusiveStorage(tensor);
  if (!index) return false;
  replaceStorage(*index, value.view({tensor.byteSize()}, DataType::uint8()), /*borrowed=*/true);
  return true;
}

NDArray GraphExecutor::takeOutput(const std::string& name) {
  const GraphTensor& tensor = tensorInfo(name);
  for (const std::string& input : plan_.inputs)
    if (input == name) return NDArray();
  // A param is written once, at load: handing its storage over would leave the next run
  // without it.
  for (const GraphParam& param : plan_.params)
    if (param.tensor == name) return NDArray();
  std::optional<size_t> index = exclusiveStorage(tensor);
  if (!index || borrowed_[*index] || tensor.byteSize() == 0) return NDArray();
  NDArray result = storages_[*index].view(tensor.shape, tensor.dtype);
  // The storage holds this tensor alone, at offset 0: its bytes are all a kernel touches.
  int64_t bytes = tensor.byteSize();
  NDArray next = spare_.defined() && spare_.soleHandle() && spare_.byteSize() >= bytes
                     ? spare_.view({bytes}, DataType::uint8())
                     : NDArray::empty({bytes}, DataType::uint8());
  spare_ = NDArray();
  replaceStorage(*index, std::move(next), /*borrowed=*/false);
  return result;
}

// A storage that holds a caller's array (bindInput) gets one of its own before anything is
// written into it.
void GraphExecutor::ownInputStorage(const GraphTensor& tensor) {
  size_t index = storageIndex(tensor);
  if (borrowed_[index])
    replaceStorage(index, NDArray::empty({std::max<int64_t>(plan_.storages[index].bytes, 1)}, DataType::uint8()),
                   /*borrowed=*/false);
}

void GraphExecutor::setInput(const std::string& name, const NDArray& value) {
  const GraphTensor& tensor = requireInput(name);
  if (!value.defined()) throw Error("input '" + name + "': the array is undefined");
  if (value.shape() != tensor.shape || value.dtype() != tensor.dtype)
    throw Error("input '" + name + "' expects " + tensor.dtype.toString() + shapeText(tensor.shape) + ", got " +
                value.dtype().toString() + shapeText(value.shape()));
  ownInputStorage(tensor);
  value.copyTo(tensorData(tensor), static_cast<size_t>(tensor.byteSize()));
}

void GraphExecutor::setInput(const std::string& name, const void* data, size_t bytes) {
  const GraphTensor& tensor = requireInput(name);
  if (bytes != size_t(tensor.byteSize()))
    throw Error("input '" + name + "' (" + tensor.dtype.toString() + shapeText(tensor.shape) + ") holds " +
                std::to_string(tensor.byteSize()) + " bytes, got " + std::to_string(bytes));
  if (data == nullptr && bytes != 0) throw Error("input '" + name + "': null data");
  ownInputStorage(tensor);
  if (bytes) std::memcpy(tensorData(tensor), data, bytes);
}

void GraphExecutor::run() {
  using Clock = std::chrono::steady_clock;
  std::vector<NodeTiming> timings;
  timings.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const GraphNode& node = plan_.nodes[i];
    auto start = Clock::now();
    int32_t status = nodes_[i].kernel(nodes_[i].args.data());
    auto end = Clock::now();
    if (status != 0)
      throw Error("node '" + node.name + "': kernel '" + node.kernel + "' failed with status " + std::to_string(status));
    timings.push_back({node.name, node.kernel, std::chrono::duration<double, std::milli>(end - start).count()});
  }
  timings_ = std::move(timings);
}

NDArray GraphExecutor::getOutput(const std::string& name) const {
  const GraphTensor& tensor = tensorInfo(name);
  NDArray result = NDArray::empty(tensor.shape, tensor.dtype);
  result.copyFrom(tensorData(tensor), static_cast<size_t>(tensor.byteSize()));
  return result;
}

void GraphExecutor::getOutput(const std::string& name, void* data, size_t bytes) const {
  const GraphTensor& tensor = tensorInfo(name);
  if (bytes != size_t(tensor.byteSize()))
    throw Error("output '" + name + "' (" + tensor.dtype.toString() + shapeText(tensor.shape) + ") holds " +
                std::to_string(tensor.byteSize()) + " bytes, got a buffer of " + std::to_string(bytes));
  if (data == nullptr && bytes != 0) throw Error("output '" + name + "': null data");
  if (bytes) std::memcpy(data, tensorData(tensor), bytes);
}

}  // namespace tessel::runtime
