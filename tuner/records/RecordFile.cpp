// Reading, appending to and atomically rewriting record files (POSIX I/O, for write-then-sync).
#include "tuner/records/RecordFile.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tessel::tuner {

namespace {

namespace fs = std::filesystem;
using FileStatus = struct stat;

std::string systemError(int error) { return std::strerror(error); }

// What a person can do when a write fails, and `reassurance`: what the failure left intact.
std::string writeFailureHint(int error, const std::string& reassurance) {
  if (error == ENOSPC || error == EDQUOT) return "free some disk space; " + reassurance;
  return reassurance;
}

const char* kAppendLeftIntact = "the records already in the file are intact";

// Writes all of `text` (looping over short writes and signals); errno on failure, 0 on success.
int writeAll(int descriptor, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(descriptor, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    written += size_t(n);
  }
  return 0;
}

// Syncs a file's data. Descriptors that cannot be synced (/dev/null, a pipe) have nothing to lose.
int syncData(int descriptor) {
  if (::fdatasync(descriptor) == 0 || errno == EINVAL || errno == EROFS) return 0;
  return errno;
}

// Makes a new or renamed directory entry durable, not only the file's data.
void syncDirectory(const fs::path& directory) {
  int descriptor = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (descriptor < 0) return;
  ::fsync(descriptor);
  ::close(descriptor);
}

// Opens `path` for appending (creating it) with a shared lock, so that a rewrite cannot replace
// the file under the writer. A rewrite in progress is waited for; when it replaced the file, the
// new file is opened. A file system without locks is written unlocked. -1 and errno on failure.
int openLockedForAppend(const std::string& path, bool* created) {
  for (;;) {
    // Read access too, to look at the last byte of an existing file.
    int flags = O_RDWR | O_APPEND | O_CLOEXEC;
    int descriptor = ::open(path.c_str(), flags | O_CREAT | O_EXCL, 0644);
    *created = descriptor >= 0;
    if (!*created && errno == EEXIST) descriptor = ::open(path.c_str(), flags);
    if (descriptor < 0) return -1;
    while (::flock(descriptor, LOCK_SH) != 0 && errno == EINTR) {
    }
    FileStatus opened{}, current{};
    if (::fstat(descriptor, &opened) != 0 || ::stat(path.c_str(), &current) != 0 ||
        (opened.st_dev == current.st_dev && opened.st_ino == current.st_ino))
      return descriptor;
    ::close(descriptor);
  }
}

void addLine(std::string_view line, int lineNumber, bool lastWithoutNewline, RecordFileContents* contents) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  int newerVersion = 0;
  auto record = parseRecordLine(line, &newerVersion);
  if (record) {
    contents->records.push_back(std::move(*record));
  } else if (newerVersion > 0) {
    if (contents->newerVersionRecords++ == 0)
      contents->problems.push_back({RecordProblem::Kind::NewerVersion, lineNumber, record.error().message});
  } else if (lastWithoutNewline) {
    contents->problems.push_back(
        {RecordProblem::Kind::Incomplete, lineNumber, "the session writing it was stopped mid-write; it is ignored"});
  } else {
    contents->problems.push_back({RecordProblem::Kind::Corrupt, lineNumber, record.error().message});
  }
}

}  // namespace

std::string RecordProblem::describe() const {
  std::string where = "line " + std::to_string(lineNumber);
  if (kind == Kind::Incomplete) return where + " is incomplete: " + message;
  return where + ": " + message;
}

Expected<RecordFileContents> readRecordFile(const std::string& path) {
  std::error_code ignored;
  if (!fs::exists(path, ignored)) return Diagnostic{"no such record file", path, 0, 0, "check the path"};
  if (fs::is_directory(path, ignored))
    return Diagnostic{"is a directory, not a record file", path, 0, 0, "give a .jsonl file of tuning records"};
  std::ifstream file(path, std::ios::binary);
  if (!file) return Diagnostic{"cannot read the record file: " + systemError(errno), path, 0, 0, ""};
  std::stringstream buffer;
  buffer << file.rdbuf();
  if (file.bad()) return Diagnostic{"cannot read the record file: " + systemError(errno), path, 0, 0, ""};
  std::string text = buffer.str();

  RecordFileContents contents;
  std::string_view rest = text;
  for (int lineNumber = 1; !rest.empty(); ++lineNumber) {
    size_t end = rest.find('\n');
    bool lastWithoutNewline = end == std::string_view::npos;
    addLine(rest.substr(0, end), lineNumber, lastWithoutNewline, &contents);
    rest = lastWithoutNewline ? std::string_view() : rest.substr(end + 1);
  }
  if (contents.newerVersionRecords > 1)
    for (RecordProblem& problem : contents.problems)
      if (problem.kind == RecordProblem::Kind::NewerVersion)
        problem.message += " (" + std::to_string(contents.newerVersionRecords) + " such records skipped)";
  return contents;
}

RecordWriter::RecordWriter(int descriptor, std::string path, bool lastLineTorn)
    : descriptor_(descriptor), path_(std::move(path)), lastLineTorn_(lastLineTorn) {}

RecordWriter::RecordWriter(RecordWriter&& other) noexcept
    : descriptor_(std::exchange(other.descriptor_, -1)),
      path_(std::move(other.path_)),
      lastLineTorn_(other.lastLineTorn_) {}

RecordWriter& RecordWriter::operator=(RecordWriter&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, -1);
    path_ = std::move(other.path_);
    lastLineTorn_ = other.lastLineTorn_;
  }
  return *this;
}

RecordWriter::~RecordWriter() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

Expected<RecordWriter> RecordWriter::open(const std::string& path) {
  bool created = false;
  int descriptor = openLockedForAppend(path, &created);
  if (descriptor < 0)
    return Diagnostic{"cannot open the record file for appending: " + systemError(errno), path, 0, 0, ""};
  if (created) syncDirectory(fs::path(path).parent_path());

  bool torn = false;
  FileStatus status{};
  if (::fstat(descriptor, &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0) {
    char last = 0;
    if (::pread(descriptor, &last, 1, status.st_size - 1) != 1) {
      int error = errno;
      ::close(descriptor);
      return Diagnostic{"cannot read the end of the record file: " + systemError(error), path, 0, 0, ""};
    }
    torn = last != '\n';
  }
  return RecordWriter(descriptor, path, torn);
}

Status RecordWriter::append(const TuningRecord& record) {
  TESSEL_ICHECK(descriptor_ >= 0) << "append on a moved-from RecordWriter";
  std::string line = toJsonLine(record);
  // A record the reader refuses would only resurface as a "corrupt line" in a later session.
  if (auto check = parseRecordLine(line); !check)
    return Diagnostic{"not appending an invalid tuning record: " + check.error().message, path_, 0, 0,
                      "this is a bug in the code that made the record"};
  Status written = writeLine((lastLineTorn_ ? "\n" : "") + line + "\n");
  if (written) lastLineTorn_ = false;
  return written;
}

Status RecordWriter::writeLine(const std::string& text) {
  off_t sizeBefore = ::lseek(descriptor_, 0, SEEK_END);
  if (int error = writeAll(descriptor_, text)) {
    // A short write left part of the line: cut it off so the file ends where it did.
    if (sizeBefore >= 0) (void)::ftruncate(descriptor_, sizeBefore);
    return Diagnostic{"cannot append a tuning record: " + systemError(error), path_, 0, 0,
                      writeFailureHint(error, kAppendLeftIntact)};
  }
  if (int error = syncData(descriptor_))
    return Diagnostic{"cannot sync the record file to disk: " + systemError(error), path_, 0, 0,
                      writeFailureHint(error, kAppendLeftIntact)};
  return Status::success();
}

Expected<RecordRewriteLock> RecordRewriteLock::acquire(const std::string& path) {
  int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return RecordRewriteLock(-1);  // nothing to lock (or to read: the reader says so)
  int result = 0;
  while ((result = ::flock(descriptor, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (result != 0 && errno == EWOULDBLOCK) {
    ::close(descriptor);
    return Diagnostic{"a tuning session is appending to this record file", path, 0, 0,
                      "rewrite it when the session has ended"};
  }
  return RecordRewriteLock(descriptor);
}

RecordRewriteLock::RecordRewriteLock(RecordRewriteLock&& other) noexcept
    : descriptor_(std::exchange(other.descriptor_, -1)) {}

RecordRewriteLock& RecordRewriteLock::operator=(RecordRewriteLock&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, -1);
  }
  return *this;
}

RecordRewriteLock::~RecordRewriteLock() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

Status writeRecordFileAtomically(const std::string& path, const std::vector<TuningRecord>& records) {
  std::error_code ignored;
  // Through a symbolic link, replace the file it points to, not the link.
  fs::path destination = fs::is_symlink(path, ignored) ? fs::canonical(path, ignored) : fs::path(path);
  if (destination.empty()) destination = path;
  fs::path directory = destination.parent_path();
  fs::path hidden = destination.filename();
  hidden.replace_filename("." + hidden.native()).concat(".tmp-XXXXXX");
  std::string temporary = (directory / hidden).string();
  int descriptor = ::mkstemp(temporary.data());
  if (descriptor < 0)
    return Diagnostic{"cannot create a temporary file next to it: " + systemError(errno), path, 0, 0,
                      "the directory must be writable"};
  FileStatus original{};
  ::fchmod(descriptor, ::stat(destination.c_str(), &original) == 0 ? original.st_mode & 07777 : 0644);

  std::string text;
  for (const TuningRecord& record : records) text += toJsonLine(record) + "\n";
  int error = writeAll(descriptor, text);
  if (!error && ::fsync(descriptor) != 0) error = errno;
  if (::close(descriptor) != 0 && !error) error = errno;
  if (!error && ::rename(temporary.c_str(), destination.c_str()) != 0) error = errno;
  if (error) {
    ::unlink(temporary.c_str());
    return Diagnostic{"cannot write the record file: " + systemError(error), path, 0, 0,
                      writeFailureHint(error, "the file is unchanged")};
  }
  syncDirectory(directory);
  return Status::success();
}

}  // namespace tessel::tuner
