// Autosave of the open project, so a crashed or killed Studio session can be recovered.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "app/project/Project.h"
#include "core/support/Error.h"

namespace tessel::project {

/// Where the autosave of the project at `projectPath` lives: "PROJECT.tessel.autosave" beside
/// it, or for an untitled project (empty path) "untitled.tessel.autosave" in the per-user
/// state directory ($XDG_STATE_HOME/tessel, else ~/.local/state/tessel).
std::string autosavePath(const std::string& projectPath);

/// Writes `project` to autosavePath(projectPath) atomically (the state directory is created
/// when needed). It is written the way saveProject writes, with paths relative to the project's
/// directory (absolute for an untitled project), so loadProject reads it back unchanged.
Status saveAutosave(const Project& project, const std::string& projectPath);

/// An autosave worth offering to recover.
struct RecoverableAutosave {
  std::string path;  ///< Load it with loadProject(path).
  std::filesystem::file_time_type savedAt;
};

/// The autosave of `projectPath` when one exists that is not older than the project file (or
/// the project file is gone) and differs from it: the session that wrote it ended without
/// saving. The Studio offers to recover it when opening the project.
std::optional<RecoverableAutosave> findRecoverableAutosave(const std::string& projectPath);

/// Removes the autosave of `projectPath` (after saving, or when the user declines to recover).
/// Success when there is none.
Status discardAutosave(const std::string& projectPath);

}  // namespace tessel::project
