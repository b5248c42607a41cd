// Atomic file replacement with POSIX calls (std::ofstream can neither fsync nor report why).
#include "app/project/AtomicFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessel::project {

namespace {

namespace fs = std::filesystem;

Diagnostic systemError(const std::string& what, const std::string& path, int error) {
  return Diagnostic{what + ": " + std::strerror(error), path, 0, 0, ""};
}

// Writes all of `contents` to `fd`, retrying short writes and interrupted calls.
bool writeAll(int fd, const std::string& contents) {
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += written;
    left -= size_t(written);
  }
  return true;
}

// Makes the rename itself durable: without this a crash can forget the new directory entry.
void syncDirectory(const fs::path& directory) {
  int fd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Status writeFileAtomically(const std::string& requestedPath, const std::string& contents,
                           const AtomicWriteHooks& hooks) {
  // A project kept as a symbolic link (in a dotfiles repository, say) stays a link: the rename
  // replaces the file it points to, not the link.
  std::string path = requestedPath;
  std::error_code linkError;
  if (fs::is_symlink(path, linkError)) {
    fs::path target = fs::read_symlink(path, linkError);
    if (!linkError) path = (target.is_relative() ? fs::path(path).parent_path() / target : target).string();
  }
  const std::string temporary = path + ".tmp";
  // The old file's permissions carry over (a project shared read-only by a group stays so).
  mode_t mode = 0644;
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) mode = existing.st_mode & 07777;

  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return systemError("cannot create the temporary file " + temporary, path, errno);
  auto abandon = [&](Diagnostic d) -> Status {
    ::unlink(temporary.c_str());
    return d;
  };
  if (!writeAll(fd, contents) || ::fsync(fd) != 0) {
    int error = errno;
    ::close(fd);
    return abandon(systemError("cannot write " + temporary, path, error));
  }
  ::fchmod(fd, mode);  // O_CREAT's mode is filtered by the umask; the old file's is not
  if (::close(fd) != 0) return abandon(systemError("cannot write " + temporary, path, errno));
  if (hooks.beforeRename) {
    Status hooked = hooks.beforeRename(temporary);
    if (!hooked) return abandon(hooked.error());
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    return abandon(systemError("cannot replace the file with " + temporary, path, errno));
  syncDirectory(fs::path(path).parent_path());
  return Status::success();
}

Expected<std::string> readTextFile(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return Diagnostic{"is a directory, not a file", path, 0, 0, ""};
  if (!fs::exists(path, error)) return Diagnostic{"no such file", path, 0, 0, ""};
  std::ifstream in(path, std::ios::binary);
  if (!in) return systemError("cannot open the file", path, errno);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return systemError("cannot read the file", path, errno);
  return text.str();
}

}  // namespace tessel::project
