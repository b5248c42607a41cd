// The open project's save, autosave and recovery rules.
#include "app/project/ProjectDocument.h"

#include "app/project/Autosave.h"

namespace tessel::project {

ProjectDocument::ProjectDocument(Project project) : project_(std::move(project)) {}

Expected<ProjectDocument> ProjectDocument::open(const std::string& path) {
  auto loaded = loadProject(path);
  if (!loaded) return loaded.error();
  ProjectDocument document(std::move(*loaded));
  document.path_ = path;
  return document;
}

Expected<ProjectDocument> ProjectDocument::recover(const std::string& path) {
  auto loaded = loadProject(autosavePath(path));
  if (!loaded) return loaded.error();
  ProjectDocument document(std::move(*loaded));
  document.path_ = path;
  document.modified_ = true;
  return document;
}

void ProjectDocument::setProject(Project project) {
  if (project == project_) return;
  project_ = std::move(project);
  modified_ = true;
}

Status ProjectDocument::save() {
  if (isUntitled())
    return Diagnostic{"the project has no file yet", "", 0, 0, "save it under a name (Save As)"};
  Status saved = saveProject(project_, path_);
  if (saved) modified_ = false;
  return saved;
}

Status ProjectDocument::saveAs(const std::string& path) {
  Status saved = saveProject(project_, path);
  if (!saved) return saved;
  if (path != path_) discardAutosave(path_);
  path_ = path;
  modified_ = false;
  return Status::success();
}

Status ProjectDocument::autosave() const {
  if (!modified_) return Status::success();
  return saveAutosave(project_, path_);
}

Status ProjectDocument::discardChanges() {
  modified_ = false;
  return discardAutosave(path_);
}

}  // namespace tessel::project
