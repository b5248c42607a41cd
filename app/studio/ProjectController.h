// The Studio's side of project files: the open .tessel document, its unsaved-changes state,
// Save / Save As, the autosave timer, recovering an autosave on open, and asking before
// unsaved changes are lost. The rules themselves live in app/project (ProjectDocument).
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QTimer>

#include <functional>
#include <optional>

#include "app/project/ProjectDocument.h"
#include "compiler/graph/PassManager.h"
#include "views/common/DiagnosticsModel.h"

class QWidget;

namespace tessel::studio {

/// Owns the project being edited. A plain model opened in the Studio becomes an untitled
/// project over it, so Save offers to keep its options and schedules as a .tessel file.
/// Questions to the user go through replaceable prompts (message boxes by default), so tests
/// and screenshot mode answer them without a dialog.
class ProjectController : public QObject {
  Q_OBJECT

public:
  enum class RecoveryChoice { Recover, Discard, OpenSaved };
  enum class UnsavedChoice { Save, Discard, Cancel };
  using RecoveryPrompt = std::function<RecoveryChoice(const QString& projectPath, const QDateTime& autosavedAt)>;
  /// The same question for an untitled project's autosave, which has no file to name: it
  /// names the model the project was over.
  using UntitledRecoveryPrompt = std::function<RecoveryChoice(const QString& modelPath, const QDateTime& autosavedAt)>;
  using UnsavedPrompt = std::function<UnsavedChoice(const QString& projectName)>;
  /// Returns the path to save under, or empty to cancel.
  using SaveAsPrompt = std::function<QString(const QString& suggestedPath)>;

  /// `dialogParent` parents the default prompts' dialogs.
  explicit ProjectController(QWidget* dialogParent, QObject* parent = nullptr);

  void setRecoveryPrompt(RecoveryPrompt prompt) { recoveryPrompt_ = std::move(prompt); }
  void setUntitledRecoveryPrompt(UntitledRecoveryPrompt prompt) { untitledRecoveryPrompt_ = std::move(prompt); }
  void setUnsavedPrompt(UnsavedPrompt prompt) { unsavedPrompt_ = std::move(prompt); }
  void setSaveAsPrompt(SaveAsPrompt prompt) { saveAsPrompt_ = std::move(prompt); }
  /// How often unsaved changes are autosaved (default 60 s; 0 turns autosave off).
  void setAutosaveInterval(int milliseconds);

  /// Reads the project at `path`, offering to recover a newer autosave first. The project is
  /// not open yet: the window opens its model and then calls adopt(). A Diagnostic (naming
  /// the file, JSON path, line and column) when it cannot be read.
  Expected<project::ProjectDocument> load(const QString& path);
  /// An untitled project's work left in its autosave by a session that ended without saving
  /// (the per-user autosave, see project::autosavePath("")): asks through the untitled
  /// recovery prompt and returns the recovered document (untitled, modified, over the same
  /// model) to open, as load() does. With `onlyForModel` set, asks only when the autosave is
  /// over that model (the same model opened again). Discard removes the autosave; Not Now
  /// keeps it for the next start. An autosave that cannot be read (its model is gone) is
  /// reported and kept. nullopt unless the user chose to recover.
  std::optional<project::ProjectDocument> offerUntitledRecovery(const QString& onlyForModel = {});
  /// Makes `document` the open project.
  void adopt(project::ProjectDocument document);
  /// Opens an untitled project over `modelPath` (a model opened directly), with the input
  /// shapes it was opened with (the ones its file leaves open).
  void startUntitled(const QString& modelPath, const std::map<std::string, std::vector<int64_t>>& inputShapes = {});
  void close();

  bool hasProject() const { return document_.has_value(); }
  bool isUntitled() const { return !document_ || document_->isUntitled(); }
  bool isModified() const { return document_ && document_->isModified(); }
  /// The project file, empty while untitled or without a project.
  QString path() const;
  const project::Project* project() const { return document_ ? &document_->project() : nullptr; }

  /// Edits (each marks the project modified when it changes something).
  void setPassOptions(const graph::PassOptions& passes);
  void setScheduleEdit(const driver::ScheduleEdit& edit);
  void removeScheduleEdit(const QString& task);
  void setInputShapes(const std::map<std::string, std::vector<int64_t>>& inputShapes);
  /// The tuning records file the model is compiled with (absolute; empty: none).
  void setTuningRecords(const QString& path);
  /// The measured variants of every task (views::MeasureHistory::toJson); empty: none.
  void setMeasurements(const QJsonObject& measurements);
  /// The project's measured variants, as setMeasurements took them (empty without any).
  QJsonObject measurements() const;

  /// Save: to the project's file, or through the Save As prompt while untitled. False when
  /// cancelled or the write failed (the failure is reported through diagnostic()).
  bool save();
  bool saveAs();
  /// Writes the autosave now when there are unsaved changes (what the timer does).
  void autosave();
  /// Before the project is closed or replaced: asks what to do with unsaved changes. True
  /// when it is fine to go on (saved, discarded, or nothing to lose).
  bool confirmClose();

signals:
  void modifiedChanged(bool modified);
  /// The project's file changed (Save As, open, close).
  void pathChanged(const QString& path);
  void diagnostic(tessel::views::Severity severity, const QString& source, const QString& message);

private:
  void setDocument(std::optional<project::ProjectDocument> document);
  /// The default recovery question: Recover, `discardLabel`, or Not Now.
  RecoveryChoice askToRecover(const QString& title, const QString& text, const QString& question,
                              const QString& discardLabel);
  void edited(const project::Project& changed);

  QWidget* dialogParent_;
  std::optional<project::ProjectDocument> document_;
  QTimer autosaveTimer_;
  RecoveryPrompt recoveryPrompt_;
  UntitledRecoveryPrompt untitledRecoveryPrompt_;
  UnsavedPrompt unsavedPrompt_;
  SaveAsPrompt saveAsPrompt_;
};

}  // namespace tessel::studio
