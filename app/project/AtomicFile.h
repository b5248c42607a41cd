// Writing a file so that a crash, a full disk or a failed write never leaves it half written:
// the project file and its autosave are written this way.
#pragma once

#include <functional>
#include <string>

#include "core/support/Error.h"

namespace tessel::project {

/// Points where a test can make an atomic write fail, to check what is left behind.
struct AtomicWriteHooks {
  /// Called after the temporary file is written and synced, before it replaces the target;
  /// a failed Status aborts the write as a real failure would.
  std::function<Status(const std::string& temporaryPath)> beforeRename;
};

/// Replaces the file at `path` with `contents`, atomically: writes PATH.tmp in the same
/// directory, flushes and fsyncs it, renames it over PATH and fsyncs the directory. A reader
/// (or a crash) sees either the old file whole or the new one whole. The new file keeps the
/// old one's permissions; when PATH is a symbolic link, the file it points to is replaced and the
/// link stays. On failure the temporary file is removed, PATH is untouched, and a
/// Diagnostic located at PATH says what failed (with the system's reason).
Status writeFileAtomically(const std::string& path, const std::string& contents,
                           const AtomicWriteHooks& hooks = {});

/// The whole content of a file, or a Diagnostic located at it (missing, unreadable, a directory).
Expected<std::string> readTextFile(const std::string& path);

}  // namespace tessel::project
