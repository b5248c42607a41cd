// Two steps of the pass timeline side by side: graph A (earlier) and B (later) with the diff
// overlay, a legend, and navigation and selection mirrored between them through the diff.
#pragma once

#include <QString>
#include <QWidget>

#include <memory>
#include <set>
#include <vector>

#include "compiler/graph/GraphDiff.h"
#include "views/common/JobRunner.h"
#include "views/timeline/DiffDecorations.h"

class QCheckBox;
class QLabel;

namespace tessel::views {

class GraphView;
struct GraphLayout;
struct GraphViewport;

/// Compares two graphs. Diffing and both layouts run as one background job (latest request
/// wins); comparisonReady() follows. Then:
///  - nodes are outlined by what happened to them (added green, removed red, fused purple with
///    a tooltip listing what it absorbed, relaid blue, modified orange) under a legend with
///    counts;
///  - with synchronization on (the default), zooming or panning one side moves the other to
///    the matching place, and selecting a node selects its counterpart (a fused node's first
///    absorbed node, an absorbed node's fused node).
class GraphCompareView : public QWidget {
  Q_OBJECT

public:
  explicit GraphCompareView(QWidget* parent = nullptr);
  ~GraphCompareView() override;

  /// Compares `before` (A, left, titled `beforeTitle`) with `after` (B). Null clears.
  void setGraphs(std::shared_ptr<const graph::Graph> before, std::shared_ptr<const graph::Graph> after,
                 const QString& beforeTitle = QStringLiteral("A"), const QString& afterTitle = QStringLiteral("B"));
  void clear();

  /// The diff shown; null until comparisonReady().
  std::shared_ptr<const graph::GraphDiff> diff() const { return diff_; }
  /// The decorations on one side (what the overlay shows), in diff order.
  const std::vector<NodeDecoration>& decorations(DiffSide side) const;
  GraphView* view(DiffSide side) const { return side == DiffSide::Before ? beforeView_ : afterView_; }

  void setSynchronized(bool on);
  bool isSynchronized() const { return synchronized_; }

  /// The ids (node names) on the other side that stand for node `id` of `side`: its match, the
  /// fused node that absorbed it, or what a fused node absorbed. Empty when it has none there.
  QStringList counterparts(DiffSide side, const QString& id) const;

  /// Selects `id` on `side` (and, synchronized, its counterpart on the other side).
  void selectNode(DiffSide side, const QString& id);

  JobRunner& jobs() { return jobs_; }

signals:
  /// The diff and both layouts are shown.
  void comparisonReady();
  /// Layout or diff failed; the compiler's message.
  void comparisonFailed(const QString& message);
  /// The user selected a node on one side (for a properties panel).
  void nodeSelected(tessel::views::DiffSide side, const QString& id);
  /// A node was double-clicked (e.g. open a fused node's schedule).
  void nodeActivated(tessel::views::DiffSide side, const QString& id);

protected:
  void changeEvent(QEvent* event) override;

private:
  struct Result;
  void applyTheme();
  void startComparison();
  void showResult(Result result);
  void mirrorViewport(DiffSide from);
  void mirrorSelection(DiffSide from, const QString& id);
  void updateLegend();
  const graph::GraphNode* sourceOf(DiffSide side, const QString& id) const;
  QString boxIdOf(DiffSide side, const graph::GraphNode* node) const;

  JobRunner jobs_;
  GraphView* beforeView_;
  GraphView* afterView_;
  QLabel* beforeTitle_;
  QLabel* afterTitle_;
  QWidget* legend_;
  std::vector<QLabel*> legendCounts_;
  QCheckBox* syncBox_;
  QLabel* status_;

  std::shared_ptr<const graph::Graph> before_, after_;
  QString beforeName_, afterName_;
  std::set<QString> expanded_[2];
  std::shared_ptr<const graph::GraphDiff> diff_;
  std::vector<NodeDecoration> decorations_[2];
  bool synchronized_ = true;
  bool mirroring_ = false;
  bool fitOnResult_ = true;  ///< New graphs are fitted; a re-layout (group expanded) keeps the view.
};

}  // namespace tessel::views
