// The graph view's notice for a model it can show but Tessel cannot compile: what is missing,
// what that means, and the list of nodes whose operators Tessel lacks.
#pragma once

#include <QWidget>

#include <memory>

class QLabel;
class QTreeView;

namespace tessel::views {

struct GraphLayout;
class UnsupportedNodesModel;

/// Hidden while the layout has no unsupported nodes. Activating (clicking) a row asks for its
/// node to be selected in the graph (nodeChosen).
class UnsupportedNodesPanel : public QWidget {
  Q_OBJECT

public:
  explicit UnsupportedNodesPanel(QWidget* parent = nullptr);

  /// Lists the unsupported nodes of `layout` and shows the panel when there are any.
  void setGraphLayout(const std::shared_ptr<const GraphLayout>& layout);
  /// Marks the row of the node selected in the graph (none when it is not listed).
  void setCurrentNode(const QString& id);

  UnsupportedNodesModel* model() const { return model_; }
  QTreeView* list() const { return list_; }
  /// The notice's text, as shown (plain text).
  QString message() const;

signals:
  /// A row was clicked: the layout id of its node.
  void nodeChosen(const QString& id);

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  UnsupportedNodesModel* model_;
  QLabel* message_;
  QTreeView* list_;
};

}  // namespace tessel::views
