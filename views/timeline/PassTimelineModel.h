// The pass timeline as an item model: what the import did first (an old opset converted), the
// imported graph, then the graph after every pass of a compile, with each pass's time, node
// count and what it changed.
#pragma once

#include <QAbstractListModel>
#include <QString>

#include <memory>
#include <vector>

#include "compiler/driver/Driver.h"
#include "core/graph/Graph.h"

namespace tessel::views {

/// One step of the timeline: the imported graph, then the graph after each pass, in order. A
/// model the import converted first (graph::Graph::importSteps) starts with that step.
struct TimelineStep {
  QString name;               ///< "Imported", the pass name ("FuseOps") or "ConvertOpset 6→7".
  double milliseconds = -1;   ///< The pass's time; -1 for the imported graph.
  int operationCount = 0;
  /// What the step changed against the previous one (GraphDiff::summary): "-4 nodes, 3
  /// fused", "no change", "skipped"; "imported" for step 0.
  QString changeSummary;
  bool skipped = false;  ///< Disabled or below the opt level: the graph is the previous one.
  std::shared_ptr<const graph::Graph> graph;  ///< Shares ownership with the compiled model.
  /// For a step the import took before the graph existed: what it did (its graph is the
  /// imported one, there being no graph of the file before it). Empty for the others.
  QString importStepDescription{};
};

/// The steps of a compile: diffs every step against the previous one, so it takes time on big
/// graphs; call it on a worker (JobRunner). Empty when `imported` or `compiled` is null.
std::vector<TimelineStep> makeTimelineSteps(std::shared_ptr<const graph::Graph> imported,
                                            std::shared_ptr<const driver::CompiledModel> compiled);

/// A list model over TimelineSteps. Display is one line ("FuseOps  0.103 ms  8 nodes  -5 nodes,
/// 3 fused"); the roles give each part.
class PassTimelineModel : public QAbstractListModel {
  Q_OBJECT

public:
  enum Role {
    PassNameRole = Qt::UserRole + 1,  ///< QString.
    MillisecondsRole,                 ///< double; invalid for the imported step.
    NodeCountRole,                    ///< int: operations in the step's graph.
    ChangeSummaryRole,                ///< QString: TimelineStep::changeSummary.
    SkippedRole,                      ///< bool.
    TimeFractionRole,                 ///< double 0-1: the pass's share of the slowest pass's time.
  };

  explicit PassTimelineModel(QObject* parent = nullptr);

  /// Replaces the steps (a model reset).
  void setSteps(std::vector<TimelineStep> steps);
  /// setSteps(makeTimelineSteps(...)) on this thread: for small graphs and tests.
  void setCompiledModel(std::shared_ptr<const graph::Graph> imported,
                        std::shared_ptr<const driver::CompiledModel> compiled);
  void clear();

  /// The step at `row`, or null outside 0..rowCount()-1.
  const TimelineStep* step(int row) const;
  /// The graph at `row`, or null.
  std::shared_ptr<const graph::Graph> graphAt(int row) const;
  const std::vector<TimelineStep>& steps() const { return steps_; }

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

private:
  std::vector<TimelineStep> steps_;
  double slowestMilliseconds_ = 0;
};

/// "0.103 ms", "12.7 ms", "1.23 s": a pass time with three significant digits.
QString formatMilliseconds(double milliseconds);

}  // namespace tessel::views
