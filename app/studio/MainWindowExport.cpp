// MainWindow's exports and runs: the compiled model as a deployable module, the project for
// CI (File > Export for CI) and Run Project, each on a worker with its outcome in the log.
#include <QFileInfo>
#include <QStatusBar>

#include "app/project/CiExport.h"
#include "app/project/InstallLocation.h"
#include "app/project/ProjectRunner.h"
#include "app/studio/MainWindow.h"
#include "app/studio/MainWindowSupport.h"
#include "views/common/DiagnosticsPanel.h"

namespace tessel::studio {

namespace {

const QString kExportChannel = QStringLiteral("export");

/// What Run Project found, for the log.
struct ProjectRunOutcome {
  enum Kind { Passed, CheckFailed, Error } kind = Error;
  QString text;  ///< The report's lines, or the diagnostic.
};

}  // namespace

void MainWindow::exportModule(const QString& directory) {
  auto model = session_.compiledModel();
  if (!model) {
    QString message = tr("%1: there is no compiled model to export; open a model first").arg(directory);
    reportFailure(tr("Export"), message);
    emit moduleExported(directory, false, message);
    return;
  }
  Target target = session_.compileOptions().target;
  jobs_.start<QString>(
      kExportChannel, tr("Exporting to %1").arg(directory),
      [model, directory, target](views::JobContext& job) -> QString {
        ExportOptions options;
        options.target = target;
        // The exporter asks between kernels and steps, and kills the linker when told to stop;
        // a stopped export leaves a module already in `directory` as it was.
        options.cancelled = [&job] { return job.cancelled(); };
        options.progress = [&job](int percent, const std::string& what) {
          job.reportProgress(percent, QString::fromStdString(what));
        };
        try {
          Status status = driver::exportModel(*model, directory.toStdString(), options);
          if (!status && !driver::isCancellation(status.error())) return QString::fromStdString(status.error().toString());
        } catch (const std::exception& error) {
          return describeException(error);
        }
        return {};
      },
      [this, directory](QString error) {
        if (!error.isEmpty()) {
          reportFailure(tr("Export"), error);
        } else {
          diagnostics_.add(views::Severity::Note, tr("Export"), tr("Exported the deployable module to %1").arg(directory));
          statusBar()->showMessage(tr("Exported to %1").arg(directory), kStatusMessageMs);
        }
        emit moduleExported(directory, error.isEmpty(), error);
      });
}

void MainWindow::exportForCi(const QString& directory) {
  const project::Project* open = projects_->project();
  if (!open) {
    QString message = tr("%1: there is no project to export; open a model or project first").arg(directory);
    reportFailure(tr("Export for CI"), message);
    emit exportedForCi(directory, false, message);
    return;
  }
  // The project as it is now, unsaved edits included: CI checks what the user sees.
  project::Project project = *open;
  std::string name = projects_->path().isEmpty() ? std::string() : QFileInfo(projects_->path()).completeBaseName().toStdString();
  // Tessel's own packages go along when this Tessel has them (a build tree after
  // scripts/package.sh, or TESSEL_PACKAGES_DIR): the folder is then ready to commit as it is.
  std::vector<std::string> packages = project::tesselPackageFiles();
  struct Outcome {
    QString error;
    int packages = 0;
  };
  jobs_.start<Outcome>(
      kExportChannel, tr("Exporting for CI to %1").arg(directory),
      [project, directory, name, packages](views::JobContext&) -> Outcome {
        auto exported = project::exportProjectForCi(project, directory.toStdString(), name, packages);
        if (!exported) return {QString::fromStdString(exported.error().toString())};
        return {{}, int(exported->packages.size())};
      },
      [this, directory](Outcome outcome) {
        const QString& error = outcome.error;
        if (!error.isEmpty()) {
          reportFailure(tr("Export for CI"), error);
        } else {
          QString packagesNote = outcome.packages > 0
                                     ? tr("with this Tessel's %1 .deb packages in tessel-packages/").arg(outcome.packages)
                                     : tr("after putting Tessel's .deb packages in tessel-packages/ "
                                          "(scripts/package.sh builds them)");
          diagnostics_.add(views::Severity::Note, tr("Export for CI"),
                           tr("Exported the project for CI to %1: commit the folder %2; its GitLab CI and GitHub "
                              "Actions jobs run `sh %3`")
                               .arg(directory, packagesNote, QString::fromUtf8(project::kCiRunScript)));
          statusBar()->showMessage(tr("Exported for CI to %1").arg(directory), kStatusMessageMs);
        }
        emit exportedForCi(directory, error.isEmpty(), error);
      });
}

void MainWindow::runProject() {
  const project::Project* open = projects_->project();
  if (!open) {
    reportFailure(tr("Run"), tr("there is no project to run; open a model or project first"));
    return;
  }
  // What CI's `tessel project run` does, with the unsaved edits included.
  project::Project project = *open;
  QString name = QFileInfo(currentFile_).fileName();
  jobs_.start<ProjectRunOutcome>(
      QStringLiteral("run-project"), tr("Running %1").arg(name),
      [project](views::JobContext& job) -> ProjectRunOutcome {
        project::ProjectRunOptions options;
        options.progress = [&job](const std::string& stage) { job.reportProgress(-1, QString::fromStdString(stage)); };
        options.cancelled = [&job] { return job.cancelled(); };
        try {
          auto report = project::runProject(project, options);
          if (!report) return {ProjectRunOutcome::Error, QString::fromStdString(report.error().toString())};
          QStringList lines;
          bool passed = report->outputsMatch() && report->expectationsMet();
          for (const driver::OutputComparison& comparison : report->comparisons)
            lines << QString::fromStdString(comparison.describe());
          if (report->benchmarked)
            lines << QObject::tr("median latency %1 ms over %2 runs (fastest %3 ms), %4 threads, %5 tasks with saved schedules")
                         .arg(report->latencyMs, 0, 'g', 4)
                         .arg(report->runs)
                         .arg(report->minMs, 0, 'g', 4)
                         .arg(report->threads)
                         .arg(report->tasksEdited);
          for (const project::ExpectationResult& expectation : report->expectations)
            lines << QString::fromStdString(expectation.describe());
          if (report->tuningRecords)
            for (const std::string& line : tuner::describeAppliedRecords(*report->tuningRecords))
              lines << QString::fromStdString(line);
          if (!report->exportedTo.empty())
            lines << QObject::tr("exported to %1").arg(QString::fromStdString(report->exportedTo));
          return {passed ? ProjectRunOutcome::Passed : ProjectRunOutcome::CheckFailed, lines.join('\n')};
        } catch (const std::exception& error) {
          return {ProjectRunOutcome::Error, describeException(error)};
        }
      },
      [this, name](ProjectRunOutcome outcome) {
        if (outcome.kind == ProjectRunOutcome::Error) {
          reportFailure(tr("Run"), outcome.text);
        } else {
          bool passed = outcome.kind == ProjectRunOutcome::Passed;
          diagnostics_.add(passed ? views::Severity::Note : views::Severity::Error, tr("Run"),
                           (passed ? tr("%1: every check passed") : tr("%1: a check failed")).arg(name) + '\n' +
                               outcome.text);
          statusBar()->showMessage(passed ? tr("%1: every check passed").arg(name) : tr("%1: a check failed").arg(name),
                                   kStatusMessageMs);
        }
      });
}

}  // namespace tessel::studio
