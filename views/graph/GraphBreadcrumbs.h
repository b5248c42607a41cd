// The bar above the graph that says where the view is in the model's hierarchy: "Graph ›
// features › denseblock3 › denselayer12 › conv/Conv", from the open module groups and expanded
// fused operations around the selected box (with nothing selected, the box nearest the middle of
// the view). Each part is a button that takes the view there.
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

#include "views/graph/GraphLayout.h"

class QHBoxLayout;

namespace tessel::views {

struct Breadcrumb {
  QString id;     ///< A box's or frame's id; empty for the whole graph.
  QString title;  ///< What the button says.
  bool operator==(const Breadcrumb&) const = default;
};

/// The path to box or frame `id` of `layout`: the whole graph, each frame around it outermost
/// first, and itself. Just the graph for an unknown or empty id.
std::vector<Breadcrumb> breadcrumbPath(const GraphLayout& layout, const QString& id);

/// Usage (GraphWorkbench): setPath(breadcrumbPath(layout, id)) whenever the selection or the
/// view moves; crumbClicked(id) says where to go (empty: the whole graph).
class GraphBreadcrumbs : public QWidget {
  Q_OBJECT

public:
  explicit GraphBreadcrumbs(QWidget* parent = nullptr);

  void setPath(std::vector<Breadcrumb> path);
  const std::vector<Breadcrumb>& path() const { return path_; }
  /// The titles joined as shown: "Graph › features › denseblock3".
  QString text() const;

signals:
  void crumbClicked(const QString& id);

private:
  QHBoxLayout* row_;
  std::vector<Breadcrumb> path_;
};

}  // namespace tessel::views
