// The main window's side of tuning: the graph's heat map from the Tuning view's session, and
// opening a trial of it in the schedule editor.
#include <QFileInfo>
#include <QStatusBar>

#include "app/studio/MainWindow.h"
#include "app/studio/MainWindowSupport.h"
#include "tuner/records/RecordFile.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/tuning/TuningDashboard.h"

namespace tessel::studio {

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
  if (heatMode_ == views::HeatMode::None || !model) return;
  std::map<std::string, std::string> kernelNodes;
  for (const driver::CompiledKernel& kernel : model->kernels)
    if (kernel.node) kernelNodes[kernel.name] = kernel.node->name;
  std::vector<views::NodeHeat> heat = views::tuningHeat(tuning_->feed()->log(), kernelNodes, heatMode_);
  for (const views::NodeHeat& node : heat) view->setNodeDecoration(node.node, node.colour, node.badge, node.tooltip);
  QString legend = views::heatLegendHtml(heatMode_);
  if (heat.empty()) legend = tr("No tuning results for this model yet: start a session in the Tuning view (Ctrl+4).");
  graph_->setColouringLegend(legend);
}

void MainWindow::openTuningTrial(const QString& kernel, const QString& point, int trial) {
  // The trace is in the records file (the event stream names the point only).
  auto contents = tuner::readRecordFile(tuning_->recordsPath().toStdString());
  if (!contents) {
    reportFailure(tr("Tuning"), QString::fromStdString(contents.error().toString()));
    return;
  }
  for (auto it = contents->records.rbegin(); it != contents->records.rend(); ++it) {
    if (QString::fromStdString(it->task) != kernel || QString::fromStdString(it->point) != point) continue;
    setCurrentView(StudioView::Schedule);
    if (!schedule_->setScheduleText(kernel, QString::fromStdString(it->trace)))
      statusBar()->showMessage(tr("%1 is not a kernel of the compiled model").arg(kernel), kStatusMessageMs);
    else
      statusBar()->showMessage(tr("Trial %1 of %2 opened in the schedule editor").arg(trial).arg(kernel),
                               kStatusMessageMs);
    return;
  }
  statusBar()->showMessage(tr("Trial %1 of %2 is not in %3").arg(trial).arg(kernel, tuning_->recordsPath()),
                           kStatusMessageMs);
}

}  // namespace tessel::studio
