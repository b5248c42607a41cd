// Autosave files: beside the project, or per user for untitled projects.
#include "app/project/Autosave.h"

#include <cstdlib>

#include "app/project/AtomicFile.h"

namespace tessel::project {

namespace {

namespace fs = std::filesystem;

constexpr const char* kAutosaveSuffix = ".autosave";

fs::path userStateDirectory() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) return fs::path(state) / "tessel";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".local" / "state" / "tessel";
  return fs::temp_directory_path() / "tessel";
}

}  // namespace

std::string autosavePath(const std::string& projectPath) {
  if (projectPath.empty()) return (userStateDirectory() / (std::string("untitled") + kProjectExtension + kAutosaveSuffix)).string();
  return projectPath + kAutosaveSuffix;
}

Status saveAutosave(const Project& project, const std::string& projectPath) {
  std::string path = autosavePath(projectPath);
  if (projectPath.empty()) {
    std::error_code error;
    fs::create_directories(fs::path(path).parent_path(), error);
    if (error)
      return Diagnostic{"cannot create the autosave directory: " + error.message(), fs::path(path).parent_path().string(),
                        0, 0, ""};
  }
  // Relative to the project's directory, which is the autosave's own: it loads like the project.
  return writeFileAtomically(path, formatProject(project, projectPath));
}

std::optional<RecoverableAutosave> findRecoverableAutosave(const std::string& projectPath) {
  std::string path = autosavePath(projectPath);
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  RecoverableAutosave autosave{path, fs::last_write_time(path, error)};
  if (error) return std::nullopt;
  if (projectPath.empty() || !fs::exists(projectPath, error)) return autosave;
  // Saving removes the autosave, so one older than the file is left over from before a save
  // that could not remove it; one with the file's content has nothing to recover.
  auto projectTime = fs::last_write_time(projectPath, error);
  if (!error && autosave.savedAt < projectTime) return std::nullopt;
  auto project = readTextFile(projectPath);
  auto saved = readTextFile(path);
  if (project && saved && *project == *saved) return std::nullopt;
  return autosave;
}

Status discardAutosave(const std::string& projectPath) {
  std::string path = autosavePath(projectPath);
  std::error_code error;
  fs::remove(path, error);
  if (error) return Diagnostic{"cannot remove the autosave: " + error.message(), path, 0, 0, ""};
  return Status::success();
}

}  // namespace tessel::project
