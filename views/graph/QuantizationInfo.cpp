// Quantization roles and parameters of graph operations, for the graph view and its panel.
#include "views/graph/QuantizationInfo.h"

#include <algorithm>

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::views {

namespace {

// A constant's values as text: one value, or how many and their range.
QString constantText(const graph::Value& value) {
  const graph::ConstantNode* constant = value.defined() ? graph::asConstant(value.node()) : nullptr;
  if (!constant) return value.defined() ? QStringLiteral("computed at run time (%1)").arg(QString::fromStdString(value.name()))
                                        : QStringLiteral("(omitted)");
  auto numbers = graph::numericElements(constant->data);
  if (!numbers || numbers->empty()) return QString::fromStdString(constant->outputTypes[0].toString());
  if (numbers->size() == 1) return QString::number((*numbers)[0], 'g', 6);
  auto [low, high] = std::minmax_element(numbers->begin(), numbers->end());
  return QStringLiteral("%1 values, %2 … %3").arg(numbers->size()).arg(*low, 0, 'g', 5).arg(*high, 0, 'g', 5);
}

QString attributeText(const graph::OperationNode& op, const std::string& key) {
  auto it = op.attributes.find(key);
  return it == op.attributes.end() ? QString() : QString::fromStdString(graph::attributeToString(it->second));
}

}  // namespace

bool isQuantizedType(const graph::TensorType& type) {
  return type.dtype == DataType::uint8() || type.dtype == DataType::int8();
}

QuantizationRole quantizationRole(const graph::OperationNode& op) {
  bool readsInteger = false, readsFloat = false;
  for (const graph::Value& input : op.inputs) {
    if (!input.defined() || graph::asConstant(input.node())) continue;
    readsInteger = readsInteger || isQuantizedType(input.type());
    readsFloat = readsFloat || input.type().dtype.isFloat();
  }
  bool writesInteger = !op.outputTypes.empty() && isQuantizedType(op.outputTypes[0]);
  if (readsInteger) return writesInteger ? QuantizationRole::Integer : QuantizationRole::Dequantize;
  if (readsFloat && writesInteger) return QuantizationRole::Quantize;
  return QuantizationRole::None;
}

QString quantizationTag(QuantizationRole role) {
  switch (role) {
    case QuantizationRole::Quantize: return QStringLiteral("→ int8");
    case QuantizationRole::Integer: return QStringLiteral("int8");
    case QuantizationRole::Dequantize: return QStringLiteral("int8 →");
    case QuantizationRole::None: break;
  }
  return {};
}

std::vector<std::pair<QString, QString>> quantizationProperties(const graph::OperationNode& op) {
  std::vector<std::pair<QString, QString>> rows;
  auto input = [&](size_t i) { return i < op.inputs.size() ? op.inputs[i] : graph::Value(); };
  auto add = [&](const char* key, const QString& value) {
    if (!value.isEmpty()) rows.emplace_back(QString::fromUtf8(key), value);
  };
  if (op.op == "QuantizeLinear" || op.op == "DequantizeLinear") {
    add("scale", constantText(input(1)));
    add("zero point", input(2).defined() ? constantText(input(2)) : QStringLiteral("0"));
    const graph::Value& scale = input(1);
    if (scale.defined() && scale.type().elementCount() > 1)
      add("axis", attributeText(op, "axis").isEmpty() ? QStringLiteral("1") : attributeText(op, "axis"));
    const graph::TensorType& quantized = op.op == "QuantizeLinear" ? op.outputTypes[0] : input(0).type();
    add("integer type", QString::fromStdString(quantized.dtype.toString()));
  } else if (op.op == "QLinearConv" || op.op == "QLinearMatMul") {
    const char* names[] = {"x scale", "x zero point", "", "w scale", "w zero point", "y scale", "y zero point"};
    for (size_t i : {1, 2, 4, 5, 6, 7}) add(names[i - 1], constantText(input(i)));
    if (attributeText(op, "fused_relu") == "1") add("fused Relu", QStringLiteral("yes"));
  } else if (op.op == "QLinearConvPrepacked" || op.op == "QLinearDepthwiseConvPrepacked" || op.op == "QDensePrepacked") {
    bool dynamic = op.op == "QDensePrepacked" && op.inputs.size() == 7;
    add("data type", QString::fromStdString(input(0).type().dtype.toString()));
    if (dynamic) {
      add("x scale", constantText(input(3)));
      add("x zero point", constantText(input(4)));
      add("w scale", constantText(input(5)));
    } else {
      add("x zero point", attributeText(op, "x_zero_point"));
      add("scale (x·w/y, folded)", constantText(input(3)));
    }
    add("output type", attributeText(op, "y_type").remove('"'));
    if (attributeText(op, "y_type") != "\"float32\"") add("y zero point", attributeText(op, "y_zero_point"));
    if (attributeText(op, "fused_relu") == "1") add("fused Relu", QStringLiteral("yes"));
  } else if (op.op == "DynamicQuantizeLinear") {
    add("scale", QStringLiteral("computed at run time: (max(0, max x) − min(0, min x)) / 255"));
    add("zero point", QStringLiteral("computed at run time"));
  }
  return rows;
}

}  // namespace tessel::views
