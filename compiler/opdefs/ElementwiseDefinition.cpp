// The shared type checker and kernel builder behind every elementwise operator definition.
#include "compiler/opdefs/ElementwiseDefinition.h"

#include <algorithm>
#include <cctype>

#include "compiler/ops/Elementwise.h"
#include "core/ir/IROperators.h"

namespace tessel::graph {

std::string typeClassText(TypeClass typeClass) {
  switch (typeClass) {
    case TypeClass::Float: return "a float type (float16, bfloat16, float32, float64)";
    case TypeClass::Signed: return "a signed integer or float type";
    case TypeClass::Numeric: return "an integer or float type";
    case TypeClass::Integer: return "an integer type";
    case TypeClass::Unsigned: return "an unsigned integer type (uint8, uint16, uint32, uint64)";
    case TypeClass::Bool: return "bool";
    case TypeClass::Any: return "a numeric type or bool";
  }
  return "?";
}

bool inTypeClass(DataType dtype, TypeClass typeClass) {
  switch (typeClass) {
    case TypeClass::Float: return dtype.isFloat();
    case TypeClass::Signed: return dtype.isFloat() || dtype.isInt();
    case TypeClass::Numeric: return dtype.isFloat() || dtype.isIntegral();
    case TypeClass::Integer: return dtype.isIntegral();
    case TypeClass::Unsigned: return dtype.isUInt();
    case TypeClass::Bool: return dtype.isBool();
    case TypeClass::Any: return dtype.isFloat() || dtype.isIntegral() || dtype.isBool();
  }
  return false;
}

Status requireTypeClass(const OpCall& call, size_t i, TypeClass typeClass) {
  if (!call.hasInput(i)) return Status::success();
  DataType dtype = call.inputTypes[i].dtype;
  if (inTypeClass(dtype, typeClass)) return Status::success();
  return call.error("input " + std::to_string(i) + " has element type " + dtype.toString() + "; " + call.op +
                        " takes " + typeClassText(typeClass),
                    "insert a Cast before the node");
}

Status requireSameType(const OpCall& call, const std::vector<size_t>& inputs) {
  std::vector<size_t> checked = inputs;
  if (checked.empty())
    for (size_t i = 0; i < call.inputTypes.size(); ++i) checked.push_back(i);
  std::optional<size_t> first;
  for (size_t i : checked) {
    if (!call.hasInput(i)) continue;
    if (!first) {
      first = i;
      continue;
    }
    DataType a = call.inputTypes[*first].dtype, b = call.inputTypes[i].dtype;
    if (a != b)
      return call.error("inputs " + std::to_string(*first) + " and " + std::to_string(i) +
                            " have different element types (" + a.toString() + " and " + b.toString() + ")",
                        "ONNX does not promote types: insert a Cast so they match");
  }
  return Status::success();
}

std::optional<Expr> scalarConstant(const OpCall& call, size_t i) {
  if (!call.hasInput(i) || !call.isConstant(i)) return std::nullopt;
  const runtime::NDArray& data = call.constantInputs[i];
  if (data.numElements() != 1) return std::nullopt;
  DataType dtype = call.inputTypes[i].dtype;
  const void* p = data.data();
  using Code = runtime::DataType::Code;
  auto type = data.dtype();
  auto integer = [&](int64_t v) { return std::optional<Expr>(IntImmNode::make(dtype, v)); };
  if (type.code == Code::Bool) return integer(*static_cast<const uint8_t*>(p) != 0);
  if (type.code == Code::Int) {
    switch (type.bits) {
      case 8: return integer(*static_cast<const int8_t*>(p));
      case 16: return integer(*static_cast<const int16_t*>(p));
      case 32: return integer(*static_cast<const int32_t*>(p));
      case 64: return integer(*static_cast<const int64_t*>(p));
    }
  }
  if (type.code == Code::UInt) {
    switch (type.bits) {
      case 8: return integer(*static_cast<const uint8_t*>(p));
      case 16: return integer(*static_cast<const uint16_t*>(p));
      case 32: return integer(*static_cast<const uint32_t*>(p));
      case 64: return integer(int64_t(*static_cast<const uint64_t*>(p)));
    }
  }
  if (type.code == Code::Float && type.bits == 32)
    return FloatImmNode::make(dtype, double(*static_cast<const float*>(p)));
  if (type.code == Code::Float && type.bits == 64) return FloatImmNode::make(dtype, *static_cast<const double*>(p));
  return std::nullopt;
}

Expr constantLike(const Expr& like, double value) { return makeConst(like.dtype(), value); }

std::optional<DataType> dataTypeFromOnnx(int64_t elementType) {
  switch (elementType) {
    case 1: return DataType::float32();
    case 2: return DataType::uint8();
    case 3: return DataType::int8();
    case 4: return DataType::uint16();
    case 5: return DataType::int16();
    case 6: return DataType::int32();
    case 7: return DataType::int64();
    case 9: return DataType::boolean();
    case 10: return DataType::float16();
    case 11: return DataType::float64();
    case 12: return DataType::uint32();
    case 13: return DataType::uint64();
    case 16: return DataType::bfloat16();
    default: return std::nullopt;  // strings, complex numbers and 8-bit floats
  }
}

namespace {

bool listed(const std::vector<int>& list, size_t i) {
  return std::find(list.begin(), list.end(), int(i)) != list.end();
}

/// The inputs whose shapes make the output's shape.
std::vector<size_t> shapedInputs(const ElementwiseDefinition& def, const OpCall& call) {
  std::vector<size_t> out;
  for (size_t i = 0; i < call.inputTypes.size(); ++i)
    if (call.hasInput(i) && !listed(def.scalarInputs, i) && !listed(def.unreadInputs, i)) out.push_back(i);
  return out;
}

/// The output type of every output: element types from the definition, the broadcast shape,
/// and the layout the full-sized inputs share.
Expected<std::vector<TensorType>> outputTensorTypes(const ElementwiseDefinition& def, const OpCall& call) {
  auto dtypes = def.outputTypes(call);
  if (!dtypes) return dtypes.error();
  std::vector<std::vector<int64_t>> shapes;
  std::vector<size_t> shaped = shapedInputs(def, call);
  for (size_t i : shaped) shapes.push_back(call.inputTypes[i].shape);
  auto shape = broadcastShapes(shapes);
  if (!shape) return call.error(shape.error().message, shape.error().hint);
  std::string layout;
  for (size_t i : shaped) {
    const TensorType& type = call.inputTypes[i];
    if (type.layout.empty()) continue;
    if (!layout.empty() && layout != type.layout)
      return call.error("inputs have different layouts (" + layout + " and " + type.layout + ")",
                        "convert them to one layout first");
    layout = type.layout;
  }
  std::vector<TensorType> out;
  for (DataType dtype : *dtypes) out.push_back(TensorType{dtype, *shape, layout});
  return out;
}

/// float16 and bfloat16 compute in float32 (one rounding at the end, as ONNX's reference).
Expr widened(const Expr& x) {
  DataType t = x.dtype();
  return t.isFloat() && t.bits() == 16 ? cast(DataType::float32(t.lanes()), x) : x;
}

std::string lowercase(std::string text) {
  for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

Expected<OpKernel> buildElementwiseKernel(const ElementwiseDefinition& def, const OpCall& call) {
  auto types = outputTensorTypes(def, call);
  if (!types) return types.error();
  auto formulas = def.formulas(call);
  if (!formulas) return formulas.error();
  TESSEL_ICHECK(formulas->size() >= size_t(call.outputCount))
      << call.op << " made " << formulas->size() << " formulas for " << call.outputCount << " outputs";

  // Runtime inputs become placeholders; single-element constants become immediates.
  std::vector<ElementwiseOperand> operands;
  std::vector<int> inputIndices;
  std::vector<std::optional<Expr>> immediates(call.inputTypes.size());
  for (size_t i = 0; i < call.inputTypes.size(); ++i) {
    if (!call.hasInput(i) || listed(def.unreadInputs, i)) continue;
    if ((immediates[i] = scalarConstant(call, i))) continue;
    operands.push_back({call.inputTypes[i].shape, call.inputTypes[i].dtype, "in" + std::to_string(i)});
    inputIndices.push_back(int(i));
  }
  auto elementsAt = [&](const std::vector<Expr>& operandElements) {
    Elements elements(call.inputTypes.size());
    size_t next = 0;
    for (size_t i = 0; i < call.inputTypes.size(); ++i) {
      if (immediates[i]) elements[i] = widened(*immediates[i]);
      else if (next < inputIndices.size() && inputIndices[next] == int(i))
        elements[i] = widened(operandElements[next++]);
    }
    return elements;
  };
  std::vector<ElementwiseResult> results;
  std::string name = lowercase(call.op);
  for (int k = 0; k < call.outputCount; ++k) {
    DataType dtype = (*types)[size_t(k)].dtype;
    ElementFormula formula = (*formulas)[size_t(k)];
    results.push_back({k == 0 ? "out" : "out" + std::to_string(k), dtype,
                       [=](const std::vector<Expr>& operandElements) {
                         return cast(dtype, formula(elementsAt(operandElements)));
                       }});
  }
  const std::vector<int64_t>& shape = types->front().shape;
  for (auto& operand : operands) name += "_" + shapeName(operand.shape);
  name += "_" + types->front().dtype.toString();
  auto workload = broadcastElementwise(name, operands, results, shape);
  if (!workload) return call.error(workload.error().message, workload.error().hint);
  OpKernel kernel;
  kernel.workload = std::move(*workload);
  kernel.inputIndices = std::move(inputIndices);
  kernel.schedule = [](const Workload& w, const Target& target) {
    return defaultElementwiseSchedule(w, target);
  };
  return kernel;
}

}  // namespace

OpDef makeElementwiseOpDef(ElementwiseDefinition definition) {
  OpDef def;
  def.name = definition.name;
  def.pattern = definition.pattern;
  def.minInputs = definition.minInputs;
  def.maxInputs = definition.maxInputs;
  def.minOutputs = definition.minOutputs;
  def.maxOutputs = definition.maxOutputs;
  def.valueInputs = definition.valueInputs;
  auto shared = std::make_shared<const ElementwiseDefinition>(std::move(definition));
  def.inferTypes = [shared](const OpCall& call) { return outputTensorTypes(*shared, call); };
  def.build = [shared](const OpCall& call) { return buildElementwiseKernel(*shared, call); };
  return def;
}

}  // namespace tessel::graph
