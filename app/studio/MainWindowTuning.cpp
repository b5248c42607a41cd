// The main window's side of tuning: applying a records file to the open model, the graph's heat
// map from the Tuning view's session (or the model's last profile), and opening a trial of it
// in the schedule editor.
#include <QFileInfo>
#include <QStatusBar>

#include "app/studio/MainWindow.h"
#include "app/studio/MainWindowSupport.h"
#include "tuner/records/RecordFile.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/schedule/MeasureHistory.h"
#include "views/timeline/TimelineWorkbench.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/tuning/TuningDashboard.h"

namespace tessel::studio {

void MainWindow::applyTuningRecords(const QString& path) {
  QString model = session_.modelPath();
  if (model.isEmpty()) {
    reportFailure(tr("Tuning Records"), tr("%1: open a model first, then apply tuning records to it").arg(path));
    return;
  }
  QString absolute = QFileInfo(path).absoluteFilePath();
  // Records match the target string the model is compiled for; reading them is a worker's job.
  records_->load(absolute, session_.compileOptions().target,
                 [this, absolute, model](std::shared_ptr<const driver::TunedSchedules> schedules) {
                   if (!schedules || session_.modelPath() != model) return;
                   projects_->setTuningRecords(absolute);
                   driver::CompileOptions options = session_.compileOptions();
                   options.tunedSchedules = std::move(schedules);
                   diagnostics_.add(views::Severity::Note, tr("Compile"),
                                    tr("Recompiling with the tuning records %1").arg(absolute));
                   session_.recompile(options);
                 });
}

void MainWindow::stopApplyingTuningRecords() {
  projects_->setTuningRecords({});
  if (!session_.compileOptions().tunedSchedules) return;
  driver::CompileOptions options = session_.compileOptions();
  options.tunedSchedules = nullptr;
  diagnostics_.add(views::Severity::Note, tr("Compile"), tr("Recompiling with the default schedules"));
  session_.recompile(options);
}

void MainWindow::setHeatMode(views::HeatMode mode) {
  heatMode_ = mode;
  QString name = views::heatModeName(mode);
  name[0] = name[0].toUpper();
  if (QAction* action = studioAction("actionColourBy" + name)) action->setChecked(true);
  updateHeatMap();
}

void MainWindow::updateHeatMap() {
  auto model = session_.compiledModel();
  views::GraphView* view = graph_->view();
  view->clearDecorations();
  graph_->setColouringLegend({});
  heatModules_ = nullptr;
  if (heatMode_ == views::HeatMode::None || !model) {
    timeline_->setNodeColouring({}, {});
    return;
  }
  std::vector<views::NodeHeat> heat;
  if (heatMode_ == views::HeatMode::Time) {
    if (profile_) heat = views::profileHeat(*profile_);
  } else {
    std::map<std::string, std::string> kernelNodes;
    for (const driver::CompiledKernel& kernel : model->kernels)
      if (kernel.node) kernelNodes[kernel.name] = kernel.node->name;
    heat = views::tuningHeat(tuning_->feed()->log(), kernelNodes, heatMode_);
  }
  std::vector<views::NodeDecoration> decorations;
  for (const views::NodeHeat& node : heat) {
    view->setNodeDecoration(node.node, node.colour, node.badge, node.tooltip);
    decorations.push_back({node.node, graph::NodeChange::Unchanged, node.colour, node.badge, node.tooltip});
  }
  // A closed module's box sums its operations' heat (the Timeline's steps are drawn by their
  // own modules and keep the operations' colours).
  auto layout = graph_->currentLayout();
  heatModules_ = layout ? layout->modules.get() : nullptr;
  if (layout && layout->modules && layout->graph)
    for (const views::NodeHeat& group : views::moduleHeat(heat, *layout->modules, *layout->graph, heatMode_))
      view->setNodeDecoration(group.node, group.colour, group.badge, group.tooltip);
  QString legend = views::heatLegendHtml(heatMode_);
  if (heat.empty())
    legend = heatMode_ == views::HeatMode::Time
                 ? tr("No profile of this model yet: Build > Profile Model (F6) measures where its time goes.")
                 : tr("No tuning results for this model yet: start a session in the Tuning view (Ctrl+4).");
  graph_->setColouringLegend(legend);
  // The Timeline shows the same colouring on its steps (the kernels' nodes exist from fusion on).
  timeline_->setNodeColouring(std::move(decorations), legend);
}

void MainWindow::openTuningTrial(const QString& kernel, const QString& point, int trial) {
  // The trace is in the records file (the event stream names the point only). A long session's
  // file is megabytes: it is searched off the GUI thread, the newest record of the point first.
  struct Found {
    std::optional<std::string> trace;
    QString error;
  };
  QString records = tuning_->recordsPath();
  jobs_.start<Found>(
      QStringLiteral("open-trial"), tr("Finding trial %1 of %2").arg(trial).arg(kernel),
      [records, kernel = kernel.toStdString(), point = point.toStdString()](views::JobContext&) {
        auto contents = tuner::readRecordFile(records.toStdString());
        if (!contents) return Found{std::nullopt, QString::fromStdString(contents.error().toString())};
        for (auto it = contents->records.rbegin(); it != contents->records.rend(); ++it)
          if (it->task == kernel && it->point == point) return Found{it->trace, {}};
        return Found{};
      },
      [this, kernel, trial, records](Found found) {
        if (!found.error.isEmpty()) {
          reportFailure(tr("Tuning"), found.error);
          return;
        }
        if (!found.trace) {
          statusBar()->showMessage(tr("Trial %1 of %2 is not in %3").arg(trial).arg(kernel, records), kStatusMessageMs);
          return;
        }
        setCurrentView(StudioView::Schedule);
        QString text = QString::fromStdString(*found.trace);
        if (!schedule_->setScheduleText(kernel, text)) {
          statusBar()->showMessage(tr("%1 is not a kernel of the compiled model").arg(kernel), kStatusMessageMs);
          return;
        }
        // What the trial changed, primitive by primitive, against the default schedule: line
        // against line in the diff tab, and in a sentence in the status bar.
        schedule_->showDiffAgainstDefault();
        const driver::ScheduleTask* task = schedule_->findTask(kernel);
        QString defaultText = task ? QString::fromStdString(task->defaultTraceText()) : QString();
        statusBar()->showMessage(tr("Trial %1 of %2 opened in the schedule editor; against the default: %3")
                                     .arg(trial)
                                     .arg(kernel, views::describeScheduleChange(&defaultText, text)),
                                 kStatusMessageMs);
      });
}

}  // namespace tessel::studio
