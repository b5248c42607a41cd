// graph.json parsing, validation and writing with nlohmann/json (header-only, no link dependency).
#include "runtime/GraphPlan.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/Error.h"

namespace tessel::runtime {

namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void fail(const std::string& sourceName, const std::string& where, const std::string& message) {
  throw Error(sourceName + ": " + (where.empty() ? "" : where + ": ") + message);
}

/// Reads fields of one JSON object, reporting a missing or mistyped field with its path
/// ("tensors[2].shape") so that a hand-edited file can be fixed without guessing.
class FieldReader {
public:
  FieldReader(const Json& object, std::string path, const std::string& sourceName)
      : object_(object), path_(std::move(path)), sourceName_(sourceName) {
    if (!object_.is_object()) fail(sourceName_, path_, "expected an object, found " + describe(object_));
  }

  const Json& field(const std::string& key) const {
    auto it = object_.find(key);
    if (it == object_.end()) fail(sourceName_, path_, "missing field \"" + key + "\"");
    return *it;
  }
  bool has(const std::string& key) const { return object_.contains(key); }

  std::string string(const std::string& key) const {
    const Json& value = field(key);
    if (!value.is_string()) fail(sourceName_, at(key), "expected a string, found " + describe(value));
    return value.get<std::string>();
  }
  int64_t integer(const std::string& key) const { return toInteger(field(key), at(key)); }
  const Json& array(const std::string& key) const {
    const Json& value = field(key);
    if (!value.is_array()) fail(sourceName_, at(key), "expected an array, found " + describe(value));
    return value;
  }
  std::vector<std::string> strings(const std::string& key) const {
    std::vector<std::string> result;
    const Json& values = array(key);
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_string())
        fail(sourceName_, at(key) + "[" + std::to_string(i) + "]", "expected a string, found " + describe(values[i]));
      result.push_back(values[i].get<std::string>());
    }
    return result;
  }
  std::vector<int64_t> integers(const std::string& key) const {
    std::vector<int64_t> result;
    const Json& values = array(key);
    for (size_t i = 0; i < values.size(); ++i) result.push_back(toInteger(values[i], at(key) + "[" + std::to_string(i) + "]"));
    return result;
  }

  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

private:
  int64_t toInteger(const Json& value, const std::string& where) const {
    if (value.is_number_integer()) {
      if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(sourceName_, where, "integer too large");
      return value.get<int64_t>();
    }
    fail(sourceName_, where, "expected an integer, found " + describe(value));
  }
  static std::string describe(const Json& value) {
    std::string text = value.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(value.type_name()) + " " + text;
  }

  const Json& object_;
  std::string path_;
  const std::string& sourceName_;
};

std::string indexed(const std::string& list, size_t index) { return list + "[" + std::to_string(index) + "]"; }

}  // namespace

int64_t GraphTensor::byteSize() const {
  int64_t total = dtype.bytes();
  for (int64_t extent : shape) {
    if (extent < 0) return -1;
    if (extent != 0 && total > std::numeric_limits<int64_t>::max() / extent) return -1;
    total *= extent;
  }
  return total;
}

const GraphTensor* GraphPlan::findTensor(const std::string& name) const {
  for (const GraphTensor& tensor : tensors)
    if (tensor.name == name) return &tensor;
  return nullptr;
}

const GraphStorage* GraphPlan::findStorage(int64_t id) const {
  for (const GraphStorage& storage : storages)
    if (storage.id == id) return &storage;
  return nullptr;
}

int64_t alignGraphOffset(int64_t value) {
  return (value + GraphPlan::kAlignment - 1) / GraphPlan::kAlignment * GraphPlan::kAlignment;
}

GraphPlan parseGraphJson(const std::string& text, const std::string& sourceName) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    // nlohmann's message already says "syntax error while parsing ... at line L, column C";
    // a number out of double's range is an out_of_range error rather than a parse_error.
    fail(sourceName, "", std::string("malformed JSON: ") + error.what());
  }
  FieldReader top(root, "", sourceName);
  std::string format = top.string("format");
  if (format != GraphPlan::kFormatName)
    fail(sourceName, "format", "expected \"" + std::string(GraphPlan::kFormatName) + "\", found \"" + format + "\"");
  int64_t version = top.integer("version");
  if (version != GraphPlan::kVersion)
    fail(sourceName, "version", "unsupported version " + std::to_string(version) + " (this runtime reads version " +
                                    std::to_string(GraphPlan::kVersion) + ")");

  GraphPlan plan;
  plan.library = top.string("library");
  if (top.has("target")) {
    FieldReader target(top.field("target"), "target", sourceName);
    plan.target.triple = target.string("triple");
    plan.target.cpu = target.string("cpu");
    plan.target.features = target.strings("features");
  }
  const Json& storages = top.array("storages");
  for (size_t i = 0; i < storages.size(); ++i) {
    FieldReader entry(storages[i], indexed("storages", i), sourceName);
    plan.storages.push_back({entry.integer("id"), entry.integer("bytes")});
  }
  const Json& tensors = top.array("tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    FieldReader entry(tensors[i], indexed("tensors", i), sourceName);
    GraphTensor tensor;
    tensor.name = entry.string("name");
    std::string dtype = entry.string("dtype");
    auto parsed = DataType::parse(dtype);
    if (!parsed) fail(sourceName, entry.at("dtype"), "unknown dtype \"" + dtype + "\" in tensor '" + tensor.name + "'");
    tensor.dtype = *parsed;
    tensor.shape = entry.integers("shape");
    tensor.storage = entry.integer("storage");
    tensor.offset = entry.integer("offset");
    plan.tensors.push_back(std::move(tensor));
  }
  plan.inputs = top.strings("inputs");
  plan.outputs = top.strings("outputs");
  const Json& params = top.array("params");
  for (size_t i = 0; i < params.size(); ++i) {
    FieldReader entry(params[i], indexed("params", i), sourceName);
    plan.params.push_back({entry.string("tensor"), entry.integer("offset"), entry.integer("bytes")});
  }
  const Json& nodes = top.array("nodes");
  for (size_t i = 0; i < nodes.size(); ++i) {
    FieldReader entry(nodes[i], indexed("nodes", i), sourceName);
    plan.nodes.push_back({entry.string("name"), entry.string("kernel"), entry.strings("args")});
  }
  validateGraphPlan(plan, sourceName);
  return plan;
}

void validateGraphPlan(const GraphPlan& plan, const std::string& sourceName) {
  if (plan.library.empty() || plan.library.find('/') != std::string::npos || plan.library == "." ||
      plan.library == "..")
    fail(sourceName, "library", "\"" + plan.library + "\" must be a plain file name inside the module directory");

  std::set<int64_t> storageIds;
  for (size_t i = 0; i < plan.storages.size(); ++i) {
    const GraphStorage& storage = plan.storages[i];
    std::string where = indexed("storages", i);
    if (storage.id < 0) fail(sourceName, where, "negative storage id " + std::to_string(storage.id));
    if (storage.bytes < 0) fail(sourceName, where, "negative size " + std::to_string(storage.bytes) + " bytes");
    if (!storageIds.insert(storage.id).second)
      fail(sourceName, where, "storage id " + std::to_string(storage.id) + " appears twice");
  }

  std::set<std::string> tensorNames;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const GraphTensor& tensor = plan.tensors[i];
    std::string where = indexed("tensors", i) + " '" + tensor.name + "'";
    if (tensor.name.empty()) fail(sourceName, indexed("tensors", i), "empty tensor name");
    if (!tensorNames.insert(tensor.name).second) fail(sourceName, where, "tensor name appears twice");
    for (int64_t extent : tensor.shape)
      if (extent < 0) fail(sourceName, where, "negative extent " + std::to_string(extent) + " in shape");
    int64_t bytes = tensor.byteSize();
    if (bytes < 0) fail(sourceName, where, "shape is too large (its size overflows 64 bits)");
    const GraphStorage* storage = plan.findStorage(tensor.storage);
    if (!storage) fail(sourceName, where, "unknown storage " + std::to_string(tensor.storage));
    if (tensor.offset < 0 || tensor.offset % GraphPlan::kAlignment != 0)
      fail(sourceName, where,
           "offset " + std::to_string(tensor.offset) + " is not a non-negative multiple of " +
               std::to_string(GraphPlan::kAlignment) + " bytes");
    if (tensor.offset > storage->bytes || bytes > storage->bytes - tensor.offset)
      fail(sourceName, where,
           std::to_string(bytes) + " bytes at offset " + std::to_string(tensor.offset) + " exceed storage " +
               std::to_string(storage->id) + " of " + std::to_string(storage->bytes) + " bytes");
  }

  auto requireTensor = [&](const std::string& name, const std::string& where) {
    if (!plan.findTensor(name)) fail(sourceName, where, "unknown tensor '" + name + "'");
  };
  auto checkNameList = [&](const std::vector<std::string>& names, const std::string& list) {
    std::set<std::string> seen;
    for (size_t i = 0; i < names.size(); ++i) {
      requireTensor(names[i], indexed(list, i));
      if (!seen.insert(names[i]).second) fail(sourceName, indexed(list, i), "tensor '" + names[i] + "' listed twice");
    }
  };
  checkNameList(plan.inputs, "inputs");
  checkNameList(plan.outputs, "outputs");

  std::set<std::string> paramTensors;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const GraphParam& param = plan.params[i];
    std::string where = indexed("params", i);
    requireTensor(param.tensor, where);
    if (!paramTensors.insert(param.tensor).second)
      fail(sourceName, where, "tensor '" + param.tensor + "' is loaded twice");
    for (const std::string& input : plan.inputs)
      if (input == param.tensor) fail(sourceName, where, "tensor '" + param.tensor + "' is both an input and a param");
    if (param.offset < 0 || param.bytes < 0)
      fail(sourceName, where, "negative offset or size for tensor '" + param.tensor + "'");
    int64_t expected = plan.findTensor(param.tensor)->byteSize();
    if (param.bytes != expected)
      fail(sourceName, where,
           std::to_string(param.bytes) + " bytes for tensor '" + param.tensor + "' which holds " +
               std::to_string(expected) + " bytes");
  }

  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const GraphNode& node = plan.nodes[i];
    std::string where = indexed("nodes", i) + " '" + node.name + "'";
    if (node.kernel.empty()) fail(sourceName, where, "empty kernel name");
    for (size_t a = 0; a < node.args.size(); ++a) requireTensor(node.args[a], where + " args[" + std::to_string(a) + "]");
  }
}

std::string writeGraphJson(const GraphPlan& plan) {
  // Names are meant to be UTF-8; a stray byte becomes U+FFFD rather than an exception.
  auto compact = [](const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); };
  // One line per entry: a diff of two exported plans then shows which tensor or node changed.
  auto list = [&](const std::vector<Json>& entries) {
    if (entries.empty()) return std::string("[]");
    std::string text = "[\n";
    for (size_t i = 0; i < entries.size(); ++i) text += "    " + compact(entries[i]) + (i + 1 < entries.size() ? ",\n" : "\n");
    return text + "  ]";
  };
  std::vector<Json> storages, tensors, params, nodes;
  for (const GraphStorage& storage : plan.storages) storages.push_back({{"id", storage.id}, {"bytes", storage.bytes}});
  for (const GraphTensor& tensor : plan.tensors)
    tensors.push_back({{"name", tensor.name},
                       {"dtype", tensor.dtype.toString()},
                       {"shape", tensor.shape},
                       {"storage", tensor.storage},
                       {"offset", tensor.offset}});
  for (const GraphParam& param : plan.params)
    params.push_back({{"tensor", param.tensor}, {"offset", param.offset}, {"bytes", param.bytes}});
  for (const GraphNode& node : plan.nodes)
    nodes.push_back({{"name", node.name}, {"kernel", node.kernel}, {"args", node.args}});
  std::string text = "{\n";
  text += "  \"format\": " + compact(Json(GraphPlan::kFormatName)) + ",\n";
  text += "  \"version\": " + std::to_string(GraphPlan::kVersion) + ",\n";
  text += "  \"library\": " + compact(Json(plan.library)) + ",\n";
  if (!plan.target.triple.empty() || !plan.target.features.empty())
    text += "  \"target\": " +
            compact(Json{{"triple", plan.target.triple}, {"cpu", plan.target.cpu}, {"features", plan.target.features}}) +
            ",\n";
  text += "  \"storages\": " + list(storages) + ",\n";
  text += "  \"tensors\": " + list(tensors) + ",\n";
  text += "  \"inputs\": " + compact(Json(plan.inputs)) + ",\n";
  text += "  \"outputs\": " + compact(Json(plan.outputs)) + ",\n";
  text += "  \"params\": " + list(params) + ",\n";
  text += "  \"nodes\": " + list(nodes) + "\n";
  return text + "}\n";
}

}  // namespace tessel::runtime
