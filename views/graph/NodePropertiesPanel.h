// The properties panel of the graph view: a tree of the selected node's properties and, for
// its weights (constant inputs), their statistics and a histogram.
#pragma once

#include <QWidget>

#include <memory>
#include <optional>

#include "core/graph/Graph.h"
#include "views/graph/TensorStatistics.h"

class QCustomPlot;
class QLabel;
class QTreeView;

namespace tessel::views {

class NodePropertiesModel;

/// Put it in a dock; GraphWorkbench::propertiesPanel() is one that follows the selection.
/// Selecting a constant row in the tree (a weight input) shows that constant's statistics;
/// otherwise the node's first weight is shown.
class NodePropertiesPanel : public QWidget {
  Q_OBJECT

public:
  explicit NodePropertiesPanel(QWidget* parent = nullptr);

  /// Shows `node` (null: an empty panel that says to select a node).
  void setNode(std::shared_ptr<const graph::Graph> owner, const graph::GraphNode* node);

  /// Shows the statistics and histogram of `constant` (null hides them).
  void showStatistics(const graph::ConstantNode* constant);
  /// The constant whose statistics are shown; empty when none.
  QString statisticsTensor() const;
  const std::optional<TensorStatistics>& statistics() const { return statistics_; }

  NodePropertiesModel* model() const { return model_; }
  QTreeView* treeView() const { return tree_; }
  QCustomPlot* histogramPlot() const { return plot_; }

protected:
  void changeEvent(QEvent* event) override;

private:
  void applyPlotColours();

  std::shared_ptr<const graph::Graph> owner_;
  NodePropertiesModel* model_;
  QLabel* heading_;
  QTreeView* tree_;
  QWidget* statisticsBox_;
  QLabel* statisticsTitle_;
  QLabel* statisticsText_;
  QCustomPlot* plot_;
  const graph::ConstantNode* shownConstant_ = nullptr;
  std::optional<TensorStatistics> statistics_;
};

}  // namespace tessel::views
