// The main window's model profile: Build > Profile Model runs the compiled model on a worker
// and keeps each node's median time; the profile is saved beside the model and read back when
// the model opens again, and the Tuning view's Share column and the time colouring show it.
#include <QFileInfo>
#include <QStatusBar>

#include <random>

#include "app/studio/MainWindow.h"
#include "app/studio/MainWindowSupport.h"
#include "compiler/driver/ModelProfile.h"
#include "compiler/driver/RunModel.h"
#include "views/graph/GraphWorkbench.h"
#include "views/tuning/TuningDashboard.h"
#include "views/tuning/TuningTaskModel.h"

namespace tessel::studio {

namespace {

const QString kProfileChannel = QStringLiteral("profile");

struct ProfileOutcome {
  std::shared_ptr<const driver::ModelProfile> profile;
  QString error;      ///< Why there is no profile (empty when cancelled).
  QString saveError;  ///< The profile was taken but could not be saved.
};

}  // namespace

void MainWindow::profileModel() {
  auto model = session_.compiledModel();
  QString modelPath = session_.modelPath();
  if (!model || modelPath.isEmpty()) {
    QString message = tr("there is no compiled model to profile; open a model first");
    reportFailure(tr("Profile"), message);
    emit modelProfiled(false, message);
    return;
  }
  if (tuning_->runner()->isActive()) {
    // Both time code on the same cores: each would measure the other's noise.
    QString message = tr("a tuning session is running; profile the model after it ends");
    statusBar()->showMessage(message, kStatusMessageMs);
    diagnostics_.add(views::Severity::Warning, tr("Profile"), message);
    emit modelProfiled(false, message);
    return;
  }
  Target target = session_.compileOptions().target;
  QString file = QString::fromStdString(driver::profilePathForModel(modelPath.toStdString()));
  jobs_.start<ProfileOutcome>(
      kProfileChannel, tr("Profiling %1").arg(QFileInfo(modelPath).fileName()),
      [model, target, modelPath, file](views::JobContext& job) -> ProfileOutcome {
        try {
          job.reportProgress(-1, QObject::tr("Compiling the kernels to run"));
          auto executor = driver::createExecutor(*model, target);
          if (!executor) return {nullptr, QString::fromStdString(executor.error().toString()), {}};
          // The inputs `tessel bench` uses: the same seed, so the two profile the same run.
          std::mt19937 rng(42);
          for (const std::string& input : (*executor)->inputNames())
            (*executor)->setInput(input, driver::timingInput((*executor)->tensorInfo(input), rng));
          driver::ProfileOptions options;
          options.cancelled = [&job] { return job.cancelled(); };
          options.progress = [&job](int runs, int expected) {
            job.reportProgress(std::min(99, 100 * runs / std::max(expected, 1)),
                               QObject::tr("Run %1 of about %2").arg(runs).arg(expected));
          };
          auto profile = driver::profileExecutor(**executor, options);
          if (!profile) {
            if (driver::isCancellation(profile.error())) return {};
            return {nullptr, QString::fromStdString(profile.error().toString()), {}};
          }
          profile->model = QFileInfo(modelPath).fileName().toStdString();
          for (const driver::CompiledKernel& kernel : model->kernels) profile->tunedKernels += kernel.tuned ? 1 : 0;
          ProfileOutcome outcome;
          if (Status saved = driver::writeModelProfile(*profile, file.toStdString()); !saved)
            outcome.saveError = QString::fromStdString(saved.error().toString());
          outcome.profile = std::make_shared<driver::ModelProfile>(std::move(*profile));
          return outcome;
        } catch (const std::exception& error) {
          return {nullptr, describeException(error), {}};
        }
      },
      [this, modelPath, file](ProfileOutcome outcome) {
        if (!outcome.profile) {
          if (!outcome.error.isEmpty()) reportFailure(tr("Profile"), outcome.error);
          emit modelProfiled(false, outcome.error);
          return;
        }
        if (session_.modelPath() != modelPath) return;  // another model opened meanwhile
        if (!outcome.saveError.isEmpty())
          diagnostics_.add(views::Severity::Warning, tr("Profile"),
                           tr("The profile is shown but not saved: %1").arg(outcome.saveError));
        profileModelPath_ = modelPath;
        setModelProfile(outcome.profile);
        const driver::ModelProfile& profile = *outcome.profile;
        QString summary = tr("Profiled %1: median %2 ms over %3 runs on %4 threads")
                              .arg(QFileInfo(modelPath).fileName())
                              .arg(profile.latencyMs, 0, 'f', 3)
                              .arg(profile.runs)
                              .arg(profile.threads);
        diagnostics_.add(views::Severity::Note, tr("Profile"),
                         outcome.saveError.isEmpty() ? summary + tr("; saved to %1").arg(file) : summary);
        statusBar()->showMessage(summary, kStatusMessageMs);
        emit modelProfiled(true, summary);
      });
}

void MainWindow::setModelProfile(std::shared_ptr<const driver::ModelProfile> profile) {
  profile_ = std::move(profile);
  tuning_->taskModel()->setProfile(profile_);
  updateHeatMap();
  updateNodeCosts();
}

void MainWindow::updateNodeCosts() {
  auto model = session_.compiledModel();
  if (!model) {
    graph_->setNodeCosts(nullptr);
    return;
  }
  auto costs = std::make_shared<views::NodeCosts>();
  for (const driver::CompiledKernel& kernel : model->kernels)
    if (kernel.node && kernel.flops > 0) costs->flops[kernel.node->name] += kernel.flops;
  // A profile read for the model before this one says nothing about this one's operations.
  if (profile_ && profileModelPath_ == session_.modelPath()) {
    for (const driver::ProfiledNode& node : profile_->nodes) costs->milliseconds[node.node] += node.milliseconds;
    costs->totalMilliseconds = profile_->nodeSumMs();  // the share the time colouring shows too
  }
  graph_->setNodeCosts(std::move(costs));
}

void MainWindow::loadSavedProfile() {
  QString modelPath = session_.modelPath();
  if (modelPath == profileModelPath_) return;  // a recompile keeps the model's last profile
  profileModelPath_ = modelPath;
  setModelProfile(nullptr);
  QString file = QString::fromStdString(driver::profilePathForModel(modelPath.toStdString()));
  if (!QFileInfo::exists(file)) return;
  using Loaded = std::shared_ptr<Expected<driver::ModelProfile>>;
  jobs_.start<Loaded>(
      kProfileChannel, tr("Reading %1").arg(QFileInfo(file).fileName()),
      [file](views::JobContext&) {
        return std::make_shared<Expected<driver::ModelProfile>>(driver::readModelProfile(file.toStdString()));
      },
      [this, modelPath](Loaded loaded) {
        if (session_.modelPath() != modelPath) return;
        if (!*loaded) {
          // A damaged profile is only a lost measurement: say so, and profile again to replace it.
          diagnostics_.add(views::Severity::Warning, tr("Profile"),
                           QString::fromStdString(loaded->error().toString()));
          return;
        }
        setModelProfile(std::make_shared<driver::ModelProfile>(std::move(**loaded)));
      });
}

}  // namespace tessel::studio
