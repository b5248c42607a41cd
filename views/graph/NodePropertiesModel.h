// A tree model of one graph node's properties: op, name, attributes, inputs and outputs with
// types and layouts, provenance (ONNX node, op, opset) and, for a fused op, what it absorbed.
#pragma once

#include <QAbstractItemModel>

#include <memory>
#include <vector>

#include "core/graph/Graph.h"

namespace tessel::views {

/// Two columns, "Property" and "Value". Top-level rows: Operator, Name, Category, then
/// groups (Attributes, Inputs, Outputs, Provenance, Fused operations) whose children hold
/// the entries. An input or output row has children for its element type, shape, layout and
/// producer. Rows that stand for a constant (a weight input, or the node itself) answer
/// constantAt() and ConstantNameRole.
class NodePropertiesModel : public QAbstractItemModel {
  Q_OBJECT

public:
  enum Roles { ConstantNameRole = Qt::UserRole + 1 };

  explicit NodePropertiesModel(QObject* parent = nullptr);
  ~NodePropertiesModel() override;

  /// Shows `node` (null clears). `owner` keeps the node alive while it is shown.
  void setNode(std::shared_ptr<const graph::Graph> owner, const graph::GraphNode* node);
  const graph::GraphNode* node() const { return node_; }

  /// The constant a row stands for, or null.
  const graph::ConstantNode* constantAt(const QModelIndex& index) const;
  /// The node's constant inputs (weights) in input order; the node itself if it is a constant.
  std::vector<const graph::ConstantNode*> constants() const;
  /// The first row whose Property column reads `key` under `parent`, or invalid.
  QModelIndex findRow(const QString& key, const QModelIndex& parent = {}) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  struct Row;  ///< One row of the tree; defined in the .cpp.

private:
  Row* rowOf(const QModelIndex& index) const;
  void build();

  std::shared_ptr<const graph::Graph> owner_;
  const graph::GraphNode* node_ = nullptr;
  std::unique_ptr<Row> root_;
};

}  // namespace tessel::views
