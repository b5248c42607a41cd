// The pass timeline model: steps from a compiled model's snapshots, diffed step against step.
#include "views/timeline/PassTimelineModel.h"

#include <algorithm>

#include "compiler/graph/GraphDiff.h"

namespace tessel::views {

std::vector<TimelineStep> makeTimelineSteps(std::shared_ptr<const graph::Graph> imported,
                                            std::shared_ptr<const driver::CompiledModel> compiled) {
  std::vector<TimelineStep> steps;
  if (!imported || !compiled) return steps;
  for (const graph::ImportStep& importStep : imported->importSteps) {
    TimelineStep step;
    step.name = QString::fromStdString(importStep.name);
    step.milliseconds = importStep.milliseconds;
    step.operationCount = int(imported->operationCount());
    step.changeSummary = QStringLiteral("before import");
    step.importStepDescription = QString::fromStdString(importStep.description);
    step.graph = imported;
    steps.push_back(std::move(step));
  }
  TimelineStep first;
  first.name = QStringLiteral("Imported");
  first.operationCount = int(imported->operationCount());
  first.changeSummary = QStringLiteral("imported");
  first.graph = imported;
  steps.push_back(std::move(first));
  for (const graph::PassSnapshot& snapshot : compiled->snapshots) {
    TimelineStep step;
    step.name = QString::fromStdString(snapshot.passName);
    step.milliseconds = snapshot.milliseconds;
    step.skipped = snapshot.skipped;
    // Aliasing: the step's graph keeps the whole compiled model alive.
    step.graph = std::shared_ptr<const graph::Graph>(compiled, &snapshot.graph);
    step.operationCount = int(step.graph->operationCount());
    if (step.skipped) {
      step.changeSummary = QStringLiteral("skipped");
    } else {
      auto diff = graph::diffGraphs(*steps.back().graph, *step.graph);
      step.changeSummary = QString::fromStdString(diff.summary());
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

QString formatMilliseconds(double milliseconds) {
  if (milliseconds < 0) return QString();
  if (milliseconds >= 1000) return QString::number(milliseconds / 1000, 'g', 3) + QStringLiteral(" s");
  if (milliseconds >= 100) return QString::number(milliseconds, 'f', 0) + QStringLiteral(" ms");
  if (milliseconds >= 10) return QString::number(milliseconds, 'f', 1) + QStringLiteral(" ms");
  if (milliseconds >= 1) return QString::number(milliseconds, 'f', 2) + QStringLiteral(" ms");
  return QString::number(milliseconds, 'f', 3) + QStringLiteral(" ms");
}

PassTimelineModel::PassTimelineModel(QObject* parent) : QAbstractListModel(parent) {}

void PassTimelineModel::setSteps(std::vector<TimelineStep> steps) {
  beginResetModel();
  steps_ = std::move(steps);
  slowestMilliseconds_ = 0;
  for (auto& step : steps_) slowestMilliseconds_ = std::max(slowestMilliseconds_, step.milliseconds);
  endResetModel();
}

void PassTimelineModel::setCompiledModel(std::shared_ptr<const graph::Graph> imported,
                                         std::shared_ptr<const driver::CompiledModel> compiled) {
  setSteps(makeTimelineSteps(std::move(imported), std::move(compiled)));
}

void PassTimelineModel::clear() { setSteps({}); }

const TimelineStep* PassTimelineModel::step(int row) const {
  return row >= 0 && size_t(row) < steps_.size() ? &steps_[size_t(row)] : nullptr;
}

std::shared_ptr<const graph::Graph> PassTimelineModel::graphAt(int row) const {
  const TimelineStep* s = step(row);
  return s ? s->graph : nullptr;
}

int PassTimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(steps_.size());
}

QVariant PassTimelineModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const TimelineStep& s = steps_[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole: {
      QStringList parts{s.name};
      if (s.milliseconds >= 0) parts << formatMilliseconds(s.milliseconds);
      parts << QStringLiteral("%1 nodes").arg(s.operationCount) << s.changeSummary;
      return parts.join(QStringLiteral("  "));
    }
    case Qt::ToolTipRole: {
      QString tip = QStringLiteral("<b>%1</b>").arg(s.name.toHtmlEscaped());
      bool imported = s.milliseconds < 0, importStep = !s.importStepDescription.isEmpty();
      if (imported) tip += QStringLiteral("<br>The graph as imported, types inferred.");
      else if (importStep) tip += QStringLiteral("<br>%1<br>Took %2.").arg(s.importStepDescription.toHtmlEscaped(),
                                                                          formatMilliseconds(s.milliseconds));
      else if (s.skipped) tip += QStringLiteral("<br>Skipped (disabled, or below the opt level): the graph is unchanged.");
      else tip += QStringLiteral("<br>Ran in %1.").arg(formatMilliseconds(s.milliseconds));
      tip += QStringLiteral("<br>%1 operations").arg(s.operationCount);
      if (!imported && !importStep && !s.skipped)
        tip += QStringLiteral("<br>Against the previous step: %1").arg(s.changeSummary.toHtmlEscaped());
      return tip;
    }
    case Qt::AccessibleTextRole:
      return data(index, Qt::DisplayRole);
    case PassNameRole: return s.name;
    case MillisecondsRole: return s.milliseconds >= 0 ? QVariant(s.milliseconds) : QVariant();
    case NodeCountRole: return s.operationCount;
    case ChangeSummaryRole: return s.changeSummary;
    case SkippedRole: return s.skipped;
    case TimeFractionRole:
      return slowestMilliseconds_ > 0 && s.milliseconds > 0 ? s.milliseconds / slowestMilliseconds_ : 0.0;
    default: return {};
  }
}

QHash<int, QByteArray> PassTimelineModel::roleNames() const {
  auto roles = QAbstractListModel::roleNames();
  roles[PassNameRole] = "passName";
  roles[MillisecondsRole] = "milliseconds";
  roles[NodeCountRole] = "nodeCount";
  roles[ChangeSummaryRole] = "changeSummary";
  roles[SkippedRole] = "skipped";
  roles[TimeFractionRole] = "timeFraction";
  return roles;
}

}  // namespace tessel::views
