// The operator registry and the OpCall helpers operator definitions share.
#include "compiler/opdefs/OpRegistry.h"

#include <mutex>
#include <sstream>

#include "core/graph/UnsupportedOperations.h"

namespace tessel::graph {

const char* opPatternName(OpPattern pattern) {
  switch (pattern) {
    case OpPattern::ElementWise: return "elementwise";
    case OpPattern::Broadcast: return "broadcast";
    case OpPattern::Injective: return "injective";
    case OpPattern::CommReduce: return "reduction";
    case OpPattern::OutElemwiseFusable: return "out-elementwise-fusable";
    case OpPattern::Opaque: return "opaque";
  }
  return "?";
}

Diagnostic OpCall::error(const std::string& message, const std::string& hint) const {
  Diagnostic d;
  d.message = op + " '" + nodeName + "': " + message;
  d.location = nodeName;
  d.hint = hint;
  return d;
}

namespace {
const char* attributeKindName(const Attribute& value) {
  switch (value.index()) {
    case 0: return "int";
    case 1: return "float";
    case 2: return "string";
    case 3: return "ints";
    case 4: return "floats";
    default: return "strings";
  }
}

template <class T>
Expected<T> typedAttribute(const OpCall& call, const std::string& key, const T& fallback, const char* wanted) {
  auto it = call.attributes.find(key);
  if (it == call.attributes.end()) return fallback;
  if (auto* value = std::get_if<T>(&it->second)) return *value;
  return call.error(std::string("attribute '") + key + "' is " + attributeKindName(it->second) + ", expected " +
                        wanted,
                    "fix the model's attribute type");
}
}  // namespace

Expected<int64_t> OpCall::intAttr(const std::string& key, int64_t fallback) const {
  return typedAttribute<int64_t>(*this, key, fallback, "int");
}
Expected<double> OpCall::floatAttr(const std::string& key, double fallback) const {
  auto it = attributes.find(key);
  // ONNX writers sometimes store a float attribute as an int; accept it.
  if (it != attributes.end())
    if (auto* value = std::get_if<int64_t>(&it->second)) return double(*value);
  return typedAttribute<double>(*this, key, fallback, "float");
}
Expected<std::string> OpCall::stringAttr(const std::string& key, const std::string& fallback) const {
  return typedAttribute<std::string>(*this, key, fallback, "string");
}
Expected<std::vector<int64_t>> OpCall::intsAttr(const std::string& key, const std::vector<int64_t>& fallback) const {
  return typedAttribute<std::vector<int64_t>>(*this, key, fallback, "ints");
}
Expected<std::vector<double>> OpCall::floatsAttr(const std::string& key, const std::vector<double>& fallback) const {
  return typedAttribute<std::vector<double>>(*this, key, fallback, "floats");
}

namespace {
template <class Out>
Expected<std::vector<Out>> constantValues(const OpCall& call, size_t i, const std::string& what, bool integralOnly) {
  if (!call.hasInput(i)) return call.error(what + " (input " + std::to_string(i) + ") is missing");
  if (!call.isConstant(i))
    return call.error(what + " (input " + std::to_string(i) + ") must be a constant",
                      "Tessel compiles static shapes: make it an initializer, or give its value when compiling");
  const runtime::NDArray& data = call.constantInputs[i];
  auto dtype = data.dtype();
  std::vector<Out> out;
  if (dtype.code != runtime::DataType::Code::Bool) {
    if (auto integers = integerElements(data)) {
      for (int64_t value : *integers) out.push_back(Out(value));
      return out;
    }
    if (!integralOnly)
      if (auto numbers = numericElements(data)) {
        for (double value : *numbers) out.push_back(Out(value));
        return out;
      }
  }
  return call.error(what + " (input " + std::to_string(i) + ") has element type " + dtype.toString() +
                    (integralOnly ? ", expected an integer type" : ", expected a numeric type"));
}
}  // namespace

std::optional<std::vector<int64_t>> integerElements(const runtime::NDArray& array) {
  using Code = runtime::DataType::Code;
  const auto dtype = array.dtype();
  if (dtype.lanes != 1) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(size_t(array.numElements()));
  auto push = [&](auto* p) {
    for (int64_t k = 0; k < array.numElements(); ++k) out.push_back(int64_t(p[k]));
  };
  const void* data = array.data();
  if (dtype.code == Code::Int && dtype.bits == 64) push(static_cast<const int64_t*>(data));
  else if (dtype.code == Code::Int && dtype.bits == 32) push(static_cast<const int32_t*>(data));
  else if (dtype.code == Code::Int && dtype.bits == 16) push(static_cast<const int16_t*>(data));
  else if (dtype.code == Code::Int && dtype.bits == 8) push(static_cast<const int8_t*>(data));
  else if ((dtype.code == Code::UInt && dtype.bits == 8) || dtype.code == Code::Bool)  // a bool is a byte
    push(static_cast<const uint8_t*>(data));
  else if (dtype.code == Code::UInt && dtype.bits == 16) push(static_cast<const uint16_t*>(data));
  else if (dtype.code == Code::UInt && dtype.bits == 32) push(static_cast<const uint32_t*>(data));
  else if (dtype.code == Code::UInt && dtype.bits == 64) push(static_cast<const uint64_t*>(data));
  else return std::nullopt;
  return out;
}

double numberAttribute(const OperationNode& op, const std::string& key, double fallback) {
  auto it = op.attributes.find(key);
  if (it == op.attributes.end()) return fallback;
  if (auto* value = std::get_if<double>(&it->second)) return *value;
  if (auto* value = std::get_if<int64_t>(&it->second)) return double(*value);
  return fallback;
}

std::optional<std::vector<double>> numericElements(const runtime::NDArray& array) {
  using Code = runtime::DataType::Code;
  const auto dtype = array.dtype();
  std::vector<double> out;
  if (auto integers = integerElements(array)) {
    out.assign(integers->begin(), integers->end());
    return out;
  }
  if (dtype.lanes != 1 || dtype.code != Code::Float || (dtype.bits != 32 && dtype.bits != 64)) return std::nullopt;
  out.reserve(size_t(array.numElements()));
  for (int64_t k = 0; k < array.numElements(); ++k)
    out.push_back(dtype.bits == 32 ? double(static_cast<const float*>(array.data())[k])
                                   : static_cast<const double*>(array.data())[k]);
  return out;
}

Expected<std::vector<int64_t>> OpCall::constantInts(size_t i, const std::string& what) const {
  return constantValues<int64_t>(*this, i, what, true);
}
Expected<std::vector<double>> OpCall::constantDoubles(size_t i, const std::string& what) const {
  return constantValues<double>(*this, i, what, false);
}

const OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  static std::once_flag once;
  std::call_once(once, [] {
    registerElementwiseOps(registry);
    registerNeuralNetOps(registry);
    registerShapeOps(registry);
    registerLayoutOps(registry);
    registerLossOps(registry);
    registerQuantizationOps(registry);
    registerSignalAndVisionOps(registry);
  });
  return registry;
}

const OpDef* OpRegistry::find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (auto& [name, def] : ops_) out.push_back(name);
  return out;
}

void OpRegistry::add(OpDef def) {
  std::string name = def.name;
  // Two families defining one operator would silently shadow each other.
  TESSEL_ICHECK(!ops_.count(name)) << "operator " << name << " is registered twice";
  ops_[name] = std::move(def);
}

OpCall makeOpCall(const OperationNode& node, const Target& target) {
  return makeOpCall(node, node.inputs, target);
}

OpCall makeOpCall(const OperationNode& node, const std::vector<Value>& inputs, const Target& target) {
  OpCall call;
  call.op = node.op;
  call.nodeName = node.name;
  call.attributes = node.attributes;
  call.outputCount = int(node.outputTypes.size());
  call.target = target;
  call.opset = node.provenance.empty() ? 0 : node.provenance.front().opset;
  for (auto& input : inputs) {
    call.inputTypes.push_back(input.defined() ? input.type() : TensorType{});
    auto* constant = input.defined() ? asConstant(input.node()) : nullptr;
    call.constantInputs.push_back(constant ? constant->data : runtime::NDArray());
  }
  return call;
}

namespace {
std::string arityText(int lo, int hi, const char* noun) {
  std::ostringstream out;
  if (hi < 0) out << "at least " << lo;
  else if (lo == hi) out << lo;
  else out << lo << " to " << hi;
  out << " " << noun;
  return out.str();
}

// A placeholder (kUnsupportedOp) comes only from an import made for viewing; it must never
// reach a pass or a kernel as if it were an operator.
Diagnostic placeholderError(const OpCall& call) {
  return call.error("stands for an operator Tessel does not implement; the model was imported to be viewed, "
                    "not compiled",
                    "`tessel ops` lists the operators Tessel supports");
}
}  // namespace

Expected<std::vector<TensorType>> inferOpTypes(const OpCall& call) {
  if (call.op == kUnsupportedOp) return placeholderError(call);
  const OpDef* def = OpRegistry::global().find(call.op);
  if (!def)
    return call.error("unsupported operator",
                      "Tessel does not implement '" + call.op + "'; `tessel ops` lists the operators it supports");
  // Trailing omitted inputs do not count against the minimum.
  int given = int(call.inputTypes.size());
  int present = given;
  while (present > 0 && !call.hasInput(size_t(present - 1))) --present;
  if (present < def->minInputs || (def->maxInputs >= 0 && given > def->maxInputs))
    return call.error("takes " + arityText(def->minInputs, def->maxInputs, "inputs") + ", got " +
                      std::to_string(given));
  for (int i = 0; i < def->minInputs; ++i)
    if (!call.hasInput(size_t(i))) return call.error("required input " + std::to_string(i) + " is missing");
  if (call.outputCount < def->minOutputs || (def->maxOutputs >= 0 && call.outputCount > def->maxOutputs))
    return call.error("has " + std::to_string(call.outputCount) + " outputs, the operator defines " +
                      arityText(def->minOutputs, def->maxOutputs, "outputs"));
  auto types = def->inferTypes(call);
  if (!types) return types;
  TESSEL_ICHECK(int(types->size()) >= call.outputCount)
      << call.op << " inferred " << types->size() << " outputs for " << call.outputCount;
  types->resize(size_t(call.outputCount));
  return types;
}

Expected<std::vector<Value>> makeTypedOperation(const std::string& name, const std::string& op,
                                                std::vector<Value> inputs, Attributes attributes,
                                                std::vector<Provenance> provenance, size_t outputCount) {
  std::vector<Value> untyped =
      makeOperation(name, op, inputs, attributes, std::vector<TensorType>(outputCount), provenance);
  auto types = inferOpTypes(makeOpCall(*asOperation(untyped[0].node())));
  if (!types) return types.error();
  return makeOperation(name, op, std::move(inputs), std::move(attributes), *types, std::move(provenance));
}

Expected<OpKernel> buildOpKernel(const OpCall& call) {
  if (call.op == kUnsupportedOp) return placeholderError(call);
  const OpDef* def = OpRegistry::global().find(call.op);
  if (!def) return call.error("unsupported operator");
  if (!def->build) return call.error("has no kernel", "this operator is only folded at compile time");
  return def->build(call);
}

}  // namespace tessel::graph
