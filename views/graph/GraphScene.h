// The QGraphicsScene of a laid-out graph: one item per box, edge and fused-group frame, plus
// selection, find highlights and decorations other views put on nodes.
#pragma once

#include <QGraphicsScene>
#include <QHash>
#include <QStringList>

#include <memory>
#include <vector>

#include "views/graph/GraphItemStyle.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

class GraphNodeItem;

class GraphScene : public QGraphicsScene {
  Q_OBJECT

public:
  explicit GraphScene(QObject* parent = nullptr);
  ~GraphScene() override;

  /// Replaces the items with those of `layout` (null clears). Selection, decorations and
  /// find highlights of nodes that exist in the new layout are kept; a selected box that went
  /// into a closed group hands the selection to the group's box. Small layouts are
  /// populated at once; large ones (above kIncrementalItemCount items) over several
  /// event-loop turns of about kPopulateBudgetMs each. populated() follows either way.
  void setGraphLayout(std::shared_ptr<const GraphLayout> layout);
  /// True while a large layout's items are still being added.
  bool isPopulating() const;

  static constexpr size_t kIncrementalItemCount = 2000;
  static constexpr qint64 kPopulateBudgetMs = 16;
  std::shared_ptr<const GraphLayout> graphLayout() const { return layout_; }

  void setGraphPalette(const GraphPalette& palette);
  const GraphPalette& graphPalette() const { return style_.palette; }
  /// Layout options matching this scene's fonts (text widths, line height); lay out with
  /// these so text fits its boxes.
  GraphLayoutOptions layoutOptions() const;

  /// The item of a box; null when unknown or not yet populated.
  GraphNodeItem* nodeItem(const QString& id) const { return nodeItems_.value(id); }
  /// The scene rectangle of a box or of a fused group's frame; null when neither exists
  /// (known from the layout, also while items are being populated).
  QRectF itemRect(const QString& id) const;

  /// Selects one node (an empty id clears the selection); emits nodeSelected.
  void selectNode(const QString& id);
  QString selectedNode() const { return selected_; }

  /// See GraphNodeItem::setDecoration. Decorations survive a new layout of the same graph.
  void setNodeDecoration(const QString& id, const QColor& colour, const QString& badge, const QString& tooltip);
  void clearDecorations();
  /// The badge of a node's decoration (empty without one).
  QString nodeDecorationBadge(const QString& id) const { return decorations_.value(id).badge; }

  /// Outlines `matches` (and `current` more strongly), replacing earlier highlights.
  void setFindHighlights(const QStringList& matches, const QString& current);

  /// Called by items: ask the owner to expand or collapse a fused group.
  void requestFusedToggle(const QString& fusedNodeName, bool expand);
  /// Called by items: the user double-clicked a node.
  void activateNode(const QString& id);

signals:
  /// Every item of the layout last set is in the scene.
  void populated();
  /// The selected node changed; empty when nothing is selected.
  void nodeSelected(const QString& id);
  /// A node was double-clicked (e.g. open a fused node's schedule).
  void nodeActivated(const QString& id);
  /// The user clicked a fused group's +/- toggle or double-clicked its frame.
  void fusedGroupToggleRequested(const QString& fusedNodeName, bool expand);

private:
  struct Decoration {
    QColor colour;
    QString badge;
    QString tooltip;
  };
  void onSelectionChanged();
  void populateFor(qint64 budgetMs);
  void continueLater(int generation);
  void finishPopulation();
  void applyDecorationsAndHighlights();

  GraphItemStyle style_;
  std::shared_ptr<const GraphLayout> layout_;
  QHash<QString, GraphNodeItem*> nodeItems_;
  QHash<QString, int> clusterDepth_;
  size_t nextCluster_ = 0, nextNode_ = 0, nextEdge_ = 0;
  /// The previous layout's items of a big scene, deleted a chunk per event-loop turn before
  /// the new ones are added (ten thousand at once would stall the window by themselves).
  std::vector<QGraphicsItem*> retiring_;
  int generation_ = 0;
  QString pendingSelection_;
  QHash<QString, Decoration> decorations_;
  QStringList findMatches_;
  QString findCurrent_;
  QString selected_;
  bool rebuilding_ = false;
};

}  // namespace tessel::views
