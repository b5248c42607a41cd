// The project open in an editor: its file, whether it has unsaved changes, and the rules for
// saving, autosaving and recovering that the Studio's File menu follows (no Qt here).
#pragma once

#include <string>

#include "app/project/Project.h"
#include "core/support/Error.h"

namespace tessel::project {

/// A project and the file it belongs to. Typical use in the Studio:
///   open:     findRecoverableAutosave(path) ? ask, then recover(path) : open(path)
///   edit:     setProject(changed)            (isModified() now true: mark the title)
///   timer:    autosave()                     (writes only when there are unsaved changes)
///   save:     isUntitled() ? ask for a name and saveAs(name) : save()
///   close:    isModified() ? ask: save() / discardChanges() / cancel
class ProjectDocument {
public:
  /// An untitled document: never saved, so Save needs a name (saveAs).
  explicit ProjectDocument(Project project = {});

  /// Opens the project at `path` (see loadProject for what is checked).
  static Expected<ProjectDocument> open(const std::string& path);
  /// Opens the autosave of `path` instead of the file (empty: the untitled autosave). The
  /// document belongs to `path` and starts modified, so save() writes the recovered work there.
  static Expected<ProjectDocument> recover(const std::string& path);

  /// The project file; empty while untitled.
  const std::string& path() const { return path_; }
  bool isUntitled() const { return path_.empty(); }
  const Project& project() const { return project_; }
  /// Whether the project differs from what was last opened or saved.
  bool isModified() const { return modified_; }

  /// Replaces the project (an edit); the document becomes modified when it changed.
  void setProject(Project project);

  /// Saves to path(). A Diagnostic when the document is untitled or the write fails (it stays
  /// modified and the file untouched; a file this build cannot read is never overwritten).
  Status save();
  /// Saves to `path`, which becomes the document's file. The autosave of the previous file
  /// (or the untitled autosave) is removed: its content now lives in `path`.
  Status saveAs(const std::string& path);
  /// Writes the autosave (beside the file, or per user while untitled) when there are unsaved
  /// changes; does nothing otherwise.
  Status autosave() const;
  /// Forgets the unsaved changes on closing: removes the autosave.
  Status discardChanges();

private:
  std::string path_;
  Project project_;
  bool modified_ = false;
};

}  // namespace tessel::project
