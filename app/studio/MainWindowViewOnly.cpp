// MainWindow: a model Tessel cannot compile opens for viewing. The Graph view shows its
// structure with the unsupported nodes marked and listed; the views that need a compiled model
// say why they are empty instead.
#include <QFileInfo>
#include <QLabel>
#include <QStackedWidget>
#include <QStatusBar>

#include "app/studio/MainWindow.h"
#include "app/studio/MainWindowSupport.h"
#include "views/graph/GraphWorkbench.h"

namespace tessel::studio {

bool MainWindow::isViewOnly() const { return hasModel() && session_.isViewOnly(); }

void MainWindow::modelOpenedForViewing(const QString& message) {
  adoptOpenedModel();
  // No kernels will come for a project's saved schedules to go into.
  applyProjectSchedules_ = false;
  QString name = QFileInfo(currentFile_).fileName();
  // A warning, not an error: the model is open, and the graph view explains what is missing.
  diagnostics_.add(views::Severity::Warning, tr("Open"),
                   tr("Opened %1 for viewing only: it cannot be compiled until Tessel supports its operators.\n%2")
                       .arg(currentFile_, message));
  statusBar()->showMessage(tr("%1 cannot be compiled: it uses operators Tessel does not implement").arg(name),
                           kStatusMessageMs);
  notCompiledPage_->setText(
      tr("<h3>%1 cannot be compiled</h3><p>It uses operators Tessel does not implement. The pass timeline, the "
         "schedules and tuning need a compiled model; the Graph view (Ctrl+1) shows the model's structure with "
         "those nodes marked and listed.</p><p style='color:gray'>%2</p>")
          .arg(name.toHtmlEscaped(), message.toHtmlEscaped()));
  showModelInViews();
  showPage(currentView_);
  updateTitle();
  updateActions();
  emit fileOpened(currentFile_);
}

}  // namespace tessel::studio
