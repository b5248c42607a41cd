// Builds the property tree of a node once per setNode; the model then only reads it.
#include "views/graph/NodePropertiesModel.h"

#include <QFont>

#include "core/graph/UnsupportedOperations.h"
#include "views/graph/NodeCategory.h"
#include "views/graph/QuantizationInfo.h"

namespace tessel::views {

struct NodePropertiesModel::Row {
  QString key;
  QString value;
  const graph::ConstantNode* constant = nullptr;
  bool group = false;  // A heading (drawn bold).
  Row* parent = nullptr;
  int indexInParent = 0;
  std::vector<std::unique_ptr<Row>> children;

  Row* add(QString childKey, QString childValue = {}) {
    auto row = std::make_unique<Row>();
    row->key = std::move(childKey);
    row->value = std::move(childValue);
    row->parent = this;
    row->indexInParent = int(children.size());
    children.push_back(std::move(row));
    return children.back().get();
  }
};

namespace {

QString text(const std::string& s) { return QString::fromStdString(s); }

// The operator as a reader knows it: a placeholder shows the ONNX operator it stands for.
QString operatorText(const graph::OperationNode& op) {
  return graph::isUnsupported(op) ? text(graph::unsupportedOperator(op).opType) : text(op.op);
}

QString producerText(const graph::GraphNode* node) {
  if (!node) return QStringLiteral("(omitted)");
  switch (node->graphKind) {
    case graph::GraphNodeKind::Input: return QStringLiteral("graph input");
    case graph::GraphNodeKind::Constant: return QStringLiteral("constant");
    case graph::GraphNodeKind::Operation: {
      const auto* op = graph::asOperation(node);
      return operatorText(*op) + QStringLiteral(" ") + text(op->name);
    }
  }
  return {};
}

void addType(NodePropertiesModel::Row* row, const graph::TensorType& type) {
  if (!type.known()) {
    row->add(QStringLiteral("type"), QStringLiteral("unknown (types not inferred)"));
    return;
  }
  row->add(QStringLiteral("dtype"), text(type.dtype.toString()));
  QStringList extents;
  for (int64_t extent : type.shape) extents << QString::number(extent);
  row->add(QStringLiteral("shape"), QStringLiteral("[") + extents.join(QStringLiteral(", ")) + QStringLiteral("]"));
  row->add(QStringLiteral("layout"), type.layout.empty() ? QStringLiteral("row-major") : text(type.layout));
  row->add(QStringLiteral("elements"), QString::number(type.elementCount()));
}

void addAttributes(NodePropertiesModel::Row* parent, const graph::Attributes& attributes) {
  for (const auto& [key, value] : attributes) parent->add(text(key), text(graph::attributeToString(value)));
}

}  // namespace

NodePropertiesModel::NodePropertiesModel(QObject* parent) : QAbstractItemModel(parent), root_(std::make_unique<Row>()) {}
NodePropertiesModel::~NodePropertiesModel() = default;

void NodePropertiesModel::setNode(std::shared_ptr<const graph::Graph> owner, const graph::GraphNode* node) {
  beginResetModel();
  owner_ = std::move(owner);
  node_ = node;
  build();
  endResetModel();
}

void NodePropertiesModel::build() {
  root_ = std::make_unique<Row>();
  if (!node_) return;
  Row* root = root_.get();
  if (const auto* op = graph::asOperation(node_)) {
    root->add(QStringLiteral("Operator"), operatorText(*op));
    root->add(QStringLiteral("Name"), text(op->name));
    root->add(QStringLiteral("Category"), categoryDisplayName(op->isFused() ? NodeCategory::Fused : categorizeOperator(op->op)));
    // A quantized operation's scales and zero points, up front: what a reader of an int8
    // model looks for first.
    if (auto quantization = quantizationProperties(*op); !quantization.empty()) {
      Row* group = root->add(QStringLiteral("Quantization"), quantizationTag(quantizationRole(*op)));
      group->group = true;
      for (const auto& [key, value] : quantization) group->add(key, value);
    }
    if (graph::isUnsupported(*op)) {
      std::string domain = graph::unsupportedOperator(*op).domain;
      root->add(QStringLiteral("Domain"), domain.empty() ? QStringLiteral("ai.onnx (default)") : text(domain));
      root->add(QStringLiteral("Support"), tr("Tessel does not implement this operator: the model cannot be compiled"));
    }
    if (!op->attributes.empty()) {
      Row* group = root->add(QStringLiteral("Attributes"), QString::number(op->attributes.size()));
      group->group = true;
      addAttributes(group, op->attributes);
    }
    Row* inputs = root->add(QStringLiteral("Inputs"), QString::number(op->inputs.size()));
    inputs->group = true;
    for (size_t i = 0; i < op->inputs.size(); ++i) {
      const graph::Value& value = op->inputs[i];
      if (!value.defined()) {
        inputs->add(QStringLiteral("input %1").arg(i), QStringLiteral("(omitted)"));
        continue;
      }
      Row* row = inputs->add(QStringLiteral("input %1").arg(i), text(value.name()) + QStringLiteral("  ") +
                                                                     text(value.type().toString()));
      row->constant = graph::asConstant(value.node());
      addType(row, value.type());
      row->add(QStringLiteral("producer"), producerText(value.node()));
    }
    Row* outputs = root->add(QStringLiteral("Outputs"), QString::number(op->outputTypes.size()));
    outputs->group = true;
    for (size_t j = 0; j < op->outputTypes.size(); ++j) {
      QString name = text(op->name) + (j ? QStringLiteral(":%1").arg(j) : QString());
      Row* row = outputs->add(QStringLiteral("output %1").arg(j), name + QStringLiteral("  ") + text(op->outputTypes[j].toString()));
      addType(row, op->outputTypes[j]);
    }
    if (!op->provenance.empty()) {
      Row* group = root->add(QStringLiteral("Provenance"), QStringLiteral("%1 ONNX node(s)").arg(op->provenance.size()));
      group->group = true;
      for (const auto& origin : op->provenance) {
        Row* row = group->add(text(origin.nodeName), text(origin.opType));
        row->add(QStringLiteral("ONNX op"), text(origin.opType));
        row->add(QStringLiteral("opset"), origin.opset ? QString::number(origin.opset) : QStringLiteral("unknown"));
      }
    }
    if (op->isFused()) {
      auto absorbed = op->body->operations();
      Row* group = root->add(QStringLiteral("Fused operations"), QString::number(absorbed.size()));
      group->group = true;
      for (const auto* inner : absorbed) {
        Row* row = group->add(text(inner->op), text(inner->name));
        addAttributes(row, inner->attributes);
        if (!inner->outputTypes.empty()) row->add(QStringLiteral("output"), text(inner->outputTypes[0].toString()));
      }
    }
  } else if (const auto* input = graph::asInput(node_)) {
    root->add(QStringLiteral("Operator"), QStringLiteral("Input"));
    root->add(QStringLiteral("Name"), text(input->name));
    root->add(QStringLiteral("Category"), categoryDisplayName(NodeCategory::InputOutput));
    Row* type = root->add(QStringLiteral("Type"), text(input->outputTypes[0].toString()));
    type->group = true;
    addType(type, input->outputTypes[0]);
  } else if (const auto* constant = graph::asConstant(node_)) {
    root->add(QStringLiteral("Operator"), QStringLiteral("Constant"));
    Row* name = root->add(QStringLiteral("Name"), text(constant->name));
    name->constant = constant;
    root->add(QStringLiteral("Category"), categoryDisplayName(NodeCategory::Constant));
    Row* type = root->add(QStringLiteral("Type"), text(constant->outputTypes[0].toString()));
    type->group = true;
    type->constant = constant;
    addType(type, constant->outputTypes[0]);
  }
}

const graph::ConstantNode* NodePropertiesModel::constantAt(const QModelIndex& index) const {
  for (Row* row = rowOf(index); row && row != root_.get(); row = row->parent)
    if (row->constant) return row->constant;
  return nullptr;
}

std::vector<const graph::ConstantNode*> NodePropertiesModel::constants() const {
  std::vector<const graph::ConstantNode*> result;
  if (const auto* constant = graph::asConstant(node_)) result.push_back(constant);
  if (const auto* op = graph::asOperation(node_))
    for (const auto& value : op->inputs)
      if (const auto* constant = graph::asConstant(value.node())) result.push_back(constant);
  return result;
}

QModelIndex NodePropertiesModel::findRow(const QString& key, const QModelIndex& parent) const {
  for (int r = 0; r < rowCount(parent); ++r) {
    QModelIndex candidate = index(r, 0, parent);
    if (candidate.data().toString() == key) return candidate;
  }
  return {};
}

NodePropertiesModel::Row* NodePropertiesModel::rowOf(const QModelIndex& index) const {
  return index.isValid() ? static_cast<Row*>(index.internalPointer()) : root_.get();
}

QModelIndex NodePropertiesModel::index(int row, int column, const QModelIndex& parent) const {
  if (column < 0 || column >= 2 || (parent.isValid() && parent.column() != 0)) return {};
  Row* owner = rowOf(parent);
  if (row < 0 || row >= int(owner->children.size())) return {};
  return createIndex(row, column, owner->children[size_t(row)].get());
}

QModelIndex NodePropertiesModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  Row* row = rowOf(child);
  Row* owner = row->parent;
  if (!owner || owner == root_.get()) return {};
  return createIndex(owner->indexInParent, 0, owner);
}

int NodePropertiesModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() && parent.column() != 0) return 0;
  return int(rowOf(parent)->children.size());
}

int NodePropertiesModel::columnCount(const QModelIndex&) const { return 2; }

QVariant NodePropertiesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const Row* row = rowOf(index);
  switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole: return index.column() == 0 ? row->key : row->value;
    case Qt::FontRole:
      if (row->group && index.column() == 0) {
        QFont font;
        font.setBold(true);
        return font;
      }
      return {};
    case ConstantNameRole: return row->constant ? text(row->constant->name) : QVariant();
    default: return {};
  }
}

QVariant NodePropertiesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == 0 ? tr("Property") : tr("Value");
}

}  // namespace tessel::views
