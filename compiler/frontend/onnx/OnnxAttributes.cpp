// ONNX node attributes (AttributeProto) to the graph IR's typed attributes.
#include "compiler/frontend/onnx/OnnxAttributes.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxTensor.h"
#include "runtime/BFloat16.h"

namespace tessel::frontend {
namespace {

using onnx::AttributeProto;

double halfBitsToDouble(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)  // subnormal
                     : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                      : std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -magnitude : magnitude;
}

template <class T, class Out>
void appendAll(const runtime::NDArray& array, std::vector<Out>& out) {
  const T* data = static_cast<const T*>(array.data());
  for (int64_t i = 0; i < array.numElements(); ++i) out.push_back(static_cast<Out>(data[i]));
}

// Old models leave `type` unset; the field that holds a value tells it then.
AttributeProto::AttributeType kindOf(const AttributeProto& attribute) {
  if (attribute.type() != AttributeProto::UNDEFINED) return attribute.type();
  if (attribute.has_f()) return AttributeProto::FLOAT;
  if (attribute.has_i()) return AttributeProto::INT;
  if (attribute.has_s()) return AttributeProto::STRING;
  if (attribute.has_t()) return AttributeProto::TENSOR;
  if (attribute.has_g()) return AttributeProto::GRAPH;
  if (attribute.floats_size()) return AttributeProto::FLOATS;
  if (attribute.strings_size()) return AttributeProto::STRINGS;
  if (attribute.graphs_size()) return AttributeProto::GRAPHS;
  if (attribute.tensors_size()) return AttributeProto::TENSORS;
  return AttributeProto::INTS;
}

Diagnostic attributeError(const AttributeProto& attribute, const std::string& problem) {
  return importError("attribute '" + attribute.name() + "' " + problem);
}

std::optional<Diagnostic> addTensorAttribute(const AttributeProto& attribute, const std::string& modelDirectory,
                                             graph::Attributes& attributes) {
  auto array = tensorToArray(attribute.t(), modelDirectory);
  if (!array) return attributeError(attribute, "holds a bad tensor: " + array.error().message);
  auto dtype = DataType::parse(array->dtype().toString());
  TESSEL_ICHECK(dtype.has_value()) << "array type " << array->dtype().toString();
  if (dtype->isFloat()) attributes[attribute.name()] = arrayToDoubles(*array);
  else attributes[attribute.name()] = arrayToInts(*array);
  attributes[attribute.name() + ".dtype"] = dtype->toString();
  attributes[attribute.name() + ".shape"] = array->shape();
  return std::nullopt;
}

}  // namespace

std::vector<double> arrayToDoubles(const runtime::NDArray& array) {
  std::vector<double> out;
  out.reserve(size_t(array.numElements()));
  auto dtype = array.dtype();
  using Code = runtime::DataType::Code;
  if (dtype.code == Code::Float && dtype.bits == 16) {
    const auto* bits = static_cast<const uint16_t*>(array.data());
    for (int64_t i = 0; i < array.numElements(); ++i) out.push_back(halfBitsToDouble(bits[i]));
  } else if (dtype.code == Code::BFloat) {
    const auto* bits = static_cast<const uint16_t*>(array.data());
    for (int64_t i = 0; i < array.numElements(); ++i) out.push_back(runtime::bfloat16ToFloat(bits[i]));
  } else if (dtype.code == Code::Float && dtype.bits == 32) {
    appendAll<float>(array, out);
  } else if (dtype.code == Code::Float && dtype.bits == 64) {
    appendAll<double>(array, out);
  } else {
    for (int64_t value : arrayToInts(array)) out.push_back(double(value));
  }
  return out;
}

std::vector<int64_t> arrayToInts(const runtime::NDArray& array) {
  std::vector<int64_t> out;
  out.reserve(size_t(array.numElements()));
  auto dtype = array.dtype();
  using Code = runtime::DataType::Code;
  bool isSigned = dtype.code == Code::Int;
  TESSEL_ICHECK(dtype.code == Code::Int || dtype.code == Code::UInt || dtype.code == Code::Bool)
      << "integer view of a " << dtype.toString() << " array";
  switch (dtype.code == Code::Bool ? 8 : dtype.bits) {
    case 8: isSigned ? appendAll<int8_t>(array, out) : appendAll<uint8_t>(array, out); break;
    case 16: isSigned ? appendAll<int16_t>(array, out) : appendAll<uint16_t>(array, out); break;
    case 32: isSigned ? appendAll<int32_t>(array, out) : appendAll<uint32_t>(array, out); break;
    default: isSigned ? appendAll<int64_t>(array, out) : appendAll<uint64_t>(array, out); break;
  }
  return out;
}

namespace {

// Adds `attribute` to `attributes` as the graph IR types it (see convertAttributes).
std::optional<Diagnostic> convertAttribute(const AttributeProto& attribute, const std::string& modelDirectory,
                                           graph::Attributes& attributes) {
  if (attribute.name().empty()) return importError("an attribute has no name");
  if (!attribute.ref_attr_name().empty())
    return attributeError(attribute, "refers to a function attribute, which only model-local functions have");
  const std::string& key = attribute.name();
  switch (kindOf(attribute)) {
    case AttributeProto::INT: attributes[key] = int64_t(attribute.i()); break;
    case AttributeProto::FLOAT: attributes[key] = double(attribute.f()); break;
    case AttributeProto::STRING: attributes[key] = attribute.s(); break;
    case AttributeProto::INTS:
      attributes[key] = std::vector<int64_t>(attribute.ints().begin(), attribute.ints().end());
      break;
    case AttributeProto::FLOATS:
      attributes[key] = std::vector<double>(attribute.floats().begin(), attribute.floats().end());
      break;
    case AttributeProto::STRINGS:
      attributes[key] = std::vector<std::string>(attribute.strings().begin(), attribute.strings().end());
      break;
    case AttributeProto::TENSOR: return addTensorAttribute(attribute, modelDirectory, attributes);
    case AttributeProto::GRAPH:
    case AttributeProto::GRAPHS:
      return attributeError(attribute, "holds a subgraph, which only If, Loop, Scan and SequenceMap take");
    case AttributeProto::SPARSE_TENSOR:
    case AttributeProto::SPARSE_TENSORS: return attributeError(attribute, "holds a sparse tensor, which Tessel does not support");
    case AttributeProto::TENSORS: return attributeError(attribute, "holds a list of tensors, which Tessel does not support");
    default: return attributeError(attribute, "has a kind Tessel does not support (" + std::to_string(attribute.type()) + ")");
  }
  return std::nullopt;
}

// What a person reads for an attribute the graph IR cannot hold: "subgraph 'body' (12 nodes)".
std::string describeAttribute(const AttributeProto& attribute) {
  switch (kindOf(attribute)) {
    case AttributeProto::GRAPH:
      return "subgraph '" + attribute.g().name() + "' (" + std::to_string(attribute.g().node_size()) + " nodes)";
    case AttributeProto::GRAPHS: return std::to_string(attribute.graphs_size()) + " subgraphs";
    case AttributeProto::TENSOR: return "tensor (unreadable)";
    case AttributeProto::TENSORS: return std::to_string(attribute.tensors_size()) + " tensors";
    case AttributeProto::SPARSE_TENSOR: return "sparse tensor";
    case AttributeProto::SPARSE_TENSORS: return std::to_string(attribute.sparse_tensors_size()) + " sparse tensors";
    case AttributeProto::TYPE_PROTO:
    case AttributeProto::TYPE_PROTOS: return "type";
    default: return attribute.ref_attr_name().empty() ? "?" : "the function's attribute '" + attribute.ref_attr_name() + "'";
  }
}

}  // namespace

Expected<graph::Attributes> convertAttributes(const onnx::NodeProto& node, const std::string& modelDirectory) {
  graph::Attributes attributes;
  for (const AttributeProto& attribute : node.attribute())
    if (auto failure = convertAttribute(attribute, modelDirectory, attributes)) return *failure;
  return attributes;
}

graph::Attributes attributesForDisplay(const onnx::NodeProto& node, const std::string& modelDirectory) {
  graph::Attributes attributes;
  for (const AttributeProto& attribute : node.attribute()) {
    if (attribute.name().empty()) continue;
    if (convertAttribute(attribute, modelDirectory, attributes)) attributes[attribute.name()] = describeAttribute(attribute);
  }
  return attributes;
}

}  // namespace tessel::frontend
