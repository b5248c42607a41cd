// ProjectController: project documents, prompts and the autosave timer for the main window.
#include "app/studio/ProjectController.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QJsonDocument>
#include <QMessageBox>
#include <QPushButton>
#include <QWidget>

#include "app/project/Autosave.h"

namespace tessel::studio {

namespace {

constexpr int kDefaultAutosaveMs = 60 * 1000;
const QString kSource = QStringLiteral("Project");

QString text(const Diagnostic& diagnostic) { return QString::fromStdString(diagnostic.toString()); }

}  // namespace

ProjectController::ProjectController(QWidget* dialogParent, QObject* parent)
    : QObject(parent), dialogParent_(dialogParent) {
  autosaveTimer_.setInterval(kDefaultAutosaveMs);
  connect(&autosaveTimer_, &QTimer::timeout, this, &ProjectController::autosave);

  recoveryPrompt_ = [this](const QString& projectPath, const QDateTime& autosavedAt) {
    return askToRecover(tr("Recover unsaved changes?"),
                        tr("%1 has unsaved changes from a session that ended without saving (autosaved %2).")
                            .arg(QFileInfo(projectPath).fileName(), autosavedAt.toString("yyyy-MM-dd HH:mm:ss")),
                        tr("Recover them, or open the project as it was last saved?"), tr("Discard Them"));
  };
  untitledRecoveryPrompt_ = [this](const QString& modelPath, const QDateTime& autosavedAt) {
    return askToRecover(tr("Recover unsaved work?"),
                        tr("An untitled project over %1 has unsaved changes from a session that ended without "
                           "saving (autosaved %2).")
                            .arg(QFileInfo(modelPath).fileName(), autosavedAt.toString("yyyy-MM-dd HH:mm:ss")),
                        tr("Recover it (then save it as a project), or discard it?"), tr("Discard It"));
  };
  unsavedPrompt_ = [this](const QString& name) {
    auto answer = QMessageBox::warning(dialogParent_, tr("Unsaved changes"),
                                       tr("Save the changes to %1 before closing it?").arg(name),
                                       QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                                       QMessageBox::Save);
    if (answer == QMessageBox::Save) return UnsavedChoice::Save;
    if (answer == QMessageBox::Discard) return UnsavedChoice::Discard;
    return UnsavedChoice::Cancel;
  };
  saveAsPrompt_ = [this](const QString& suggested) {
    QString path = QFileDialog::getSaveFileName(dialogParent_, tr("Save project as"), suggested,
                                                tr("Tessel projects (*.tessel)"));
    if (!path.isEmpty() && !path.endsWith(project::kProjectExtension)) path += project::kProjectExtension;
    return path;
  };
}

ProjectController::RecoveryChoice ProjectController::askToRecover(const QString& title, const QString& text,
                                                                   const QString& question, const QString& discardLabel) {
  QMessageBox box(QMessageBox::Question, title, text, QMessageBox::NoButton, dialogParent_);
  box.setInformativeText(question);
  QPushButton* recover = box.addButton(tr("Recover"), QMessageBox::AcceptRole);
  QPushButton* discard = box.addButton(discardLabel, QMessageBox::DestructiveRole);
  // "Not Now" goes on without the autosave and keeps it for the next time.
  box.addButton(tr("Not Now"), QMessageBox::RejectRole);
  box.setDefaultButton(recover);
  box.exec();
  if (box.clickedButton() == recover) return RecoveryChoice::Recover;
  if (box.clickedButton() == discard) return RecoveryChoice::Discard;
  return RecoveryChoice::OpenSaved;
}

void ProjectController::setAutosaveInterval(int milliseconds) {
  if (milliseconds <= 0) {
    autosaveTimer_.stop();
    autosaveTimer_.setInterval(0);
    return;
  }
  autosaveTimer_.setInterval(milliseconds);
  if (isModified()) autosaveTimer_.start();
}

QString ProjectController::path() const {
  return document_ ? QString::fromStdString(document_->path()) : QString();
}

Expected<project::ProjectDocument> ProjectController::load(const QString& path) {
  std::string file = QFileInfo(path).absoluteFilePath().toStdString();
  if (auto autosaved = project::findRecoverableAutosave(file)) {
    QDateTime savedAt = QFileInfo(QString::fromStdString(autosaved->path)).lastModified();
    switch (recoveryPrompt_(path, savedAt)) {
      case RecoveryChoice::Recover: {
        auto recovered = project::ProjectDocument::recover(file);
        if (recovered) {
          emit diagnostic(views::Severity::Note, kSource,
                          tr("Recovered the unsaved changes of %1 (autosaved %2)")
                              .arg(path, savedAt.toString("HH:mm:ss")));
          return recovered;
        }
        // A damaged autosave must not stand between the user and the saved project.
        emit diagnostic(views::Severity::Warning, kSource,
                        tr("Could not recover the autosave; opening the saved project.\n%1").arg(text(recovered.error())));
        break;
      }
      case RecoveryChoice::Discard:
        project::discardAutosave(file);
        break;
      case RecoveryChoice::OpenSaved:
        break;
    }
  }
  return project::ProjectDocument::open(file);
}

std::optional<project::ProjectDocument> ProjectController::offerUntitledRecovery(const QString& onlyForModel) {
  auto autosaved = project::findRecoverableAutosave("");
  if (!autosaved) return std::nullopt;
  QString autosavePath = QString::fromStdString(autosaved->path);
  auto recovered = project::ProjectDocument::recover("");
  if (!recovered) {
    // Left in place: the user may still want it once the model is back where it was.
    emit diagnostic(views::Severity::Warning, kSource,
                    tr("An untitled project's autosave could not be recovered; it is kept at %1.\n%2")
                        .arg(autosavePath, text(recovered.error())));
    return std::nullopt;
  }
  QString model = QString::fromStdString(recovered->project().model);
  if (!onlyForModel.isEmpty() && QFileInfo(model) != QFileInfo(onlyForModel)) return std::nullopt;
  QDateTime savedAt = QFileInfo(autosavePath).lastModified();
  switch (untitledRecoveryPrompt_(model, savedAt)) {
    case RecoveryChoice::Recover:
      emit diagnostic(views::Severity::Note, kSource,
                      tr("Recovered the unsaved untitled project over %1 (autosaved %2)")
                          .arg(model, savedAt.toString("HH:mm:ss")));
      return std::move(*recovered);
    case RecoveryChoice::Discard:
      project::discardAutosave("");
      break;
    case RecoveryChoice::OpenSaved:
      break;
  }
  return std::nullopt;
}

void ProjectController::adopt(project::ProjectDocument document) { setDocument(std::move(document)); }

void ProjectController::startUntitled(const QString& modelPath,
                                      const std::map<std::string, std::vector<int64_t>>& inputShapes) {
  project::Project project = project::starterProject(QFileInfo(modelPath).absoluteFilePath().toStdString());
  project.inputShapes = inputShapes;
  setDocument(project::ProjectDocument(std::move(project)));
}

void ProjectController::setInputShapes(const std::map<std::string, std::vector<int64_t>>& inputShapes) {
  if (!document_) return;
  project::Project changed = document_->project();
  changed.inputShapes = inputShapes;
  if (changed.inputShapes != document_->project().inputShapes) edited(changed);
}

void ProjectController::setTuningRecords(const QString& path) {
  if (!document_) return;
  project::Project changed = document_->project();
  changed.tuningRecords = path.toStdString();
  if (changed.tuningRecords != document_->project().tuningRecords) edited(changed);
}

void ProjectController::close() { setDocument(std::nullopt); }

void ProjectController::setDocument(std::optional<project::ProjectDocument> document) {
  bool wasModified = isModified();
  QString oldPath = path();
  document_ = std::move(document);
  if (isModified() && autosaveTimer_.interval() > 0)
    autosaveTimer_.start();
  else
    autosaveTimer_.stop();
  if (wasModified != isModified()) emit modifiedChanged(isModified());
  if (oldPath != path()) emit pathChanged(path());
}

void ProjectController::edited(const project::Project& changed) {
  if (!document_) return;
  bool wasModified = document_->isModified();
  document_->setProject(changed);
  if (document_->isModified() && autosaveTimer_.interval() > 0 && !autosaveTimer_.isActive()) autosaveTimer_.start();
  if (wasModified != document_->isModified()) emit modifiedChanged(true);
}

void ProjectController::setPassOptions(const graph::PassOptions& passes) {
  if (!document_) return;
  project::Project changed = document_->project();
  changed.passes.optLevel = passes.optLevel;
  changed.passes.disabledPasses = passes.disabledPasses;
  changed.passes.config = passes.config;
  edited(changed);
}

void ProjectController::setScheduleEdit(const driver::ScheduleEdit& edit) {
  if (!document_) return;
  project::Project changed = document_->project();
  changed.setTask(edit);
  edited(changed);
}

void ProjectController::removeScheduleEdit(const QString& task) {
  if (!document_) return;
  project::Project changed = document_->project();
  if (changed.removeTask(task.toStdString())) edited(changed);
}

void ProjectController::setMeasurements(const QJsonObject& measurements) {
  if (!document_) return;
  project::Project changed = document_->project();
  changed.measurements =
      measurements.isEmpty() ? std::string() : QJsonDocument(measurements).toJson(QJsonDocument::Compact).toStdString();
  if (changed.measurements != document_->project().measurements) edited(changed);
}

QJsonObject ProjectController::measurements() const {
  if (!document_ || document_->project().measurements.empty()) return {};
  return QJsonDocument::fromJson(QByteArray::fromStdString(document_->project().measurements)).object();
}

bool ProjectController::save() {
  if (!document_) return false;
  if (document_->isUntitled()) return saveAs();
  Status saved = document_->save();
  if (!saved) {
    emit diagnostic(views::Severity::Error, kSource, text(saved.error()));
    return false;
  }
  autosaveTimer_.stop();
  emit diagnostic(views::Severity::Note, kSource, tr("Saved %1").arg(path()));
  emit modifiedChanged(false);
  return true;
}

bool ProjectController::saveAs() {
  if (!document_) return false;
  QString suggested = path();
  if (suggested.isEmpty()) {
    QFileInfo model(QString::fromStdString(document_->project().model));
    suggested = model.absolutePath() + "/" + model.completeBaseName() + project::kProjectExtension;
  }
  QString target = saveAsPrompt_(suggested);
  if (target.isEmpty()) return false;
  QString oldPath = path();
  Status saved = document_->saveAs(QFileInfo(target).absoluteFilePath().toStdString());
  if (!saved) {
    emit diagnostic(views::Severity::Error, kSource, text(saved.error()));
    return false;
  }
  autosaveTimer_.stop();
  emit diagnostic(views::Severity::Note, kSource, tr("Saved %1").arg(path()));
  emit modifiedChanged(false);
  if (oldPath != path()) emit pathChanged(path());
  return true;
}

void ProjectController::autosave() {
  if (!isModified()) {
    autosaveTimer_.stop();
    return;
  }
  Status written = document_->autosave();
  if (!written) emit diagnostic(views::Severity::Warning, kSource, tr("Autosave failed: %1").arg(text(written.error())));
}

bool ProjectController::confirmClose() {
  if (!isModified()) return true;
  QString name = isUntitled() ? tr("the untitled project") : QFileInfo(path()).fileName();
  switch (unsavedPrompt_(name)) {
    case UnsavedChoice::Save:
      return save();
    case UnsavedChoice::Discard:
      document_->discardChanges();
      autosaveTimer_.stop();
      emit modifiedChanged(false);
      return true;
    case UnsavedChoice::Cancel:
      break;
  }
  return false;
}

}  // namespace tessel::studio
