// Record files: reading one (skipping and reporting what cannot be read), appending to one so
// that a session killed at any moment loses nothing already appended, and rewriting one atomically.
#pragma once

#include <string>
#include <vector>

#include "core/support/Error.h"
#include "tuner/records/TuningRecord.h"

namespace tessel::tuner {

/// A line of a record file that gave no record.
struct RecordProblem {
  enum class Kind {
    Corrupt,       ///< not a valid record (the message names the field)
    Incomplete,    ///< the last line, cut short by a session stopped mid-write
    NewerVersion,  ///< the first of the records written by a newer tessel (reported once per file)
  };
  Kind kind = Kind::Corrupt;
  int lineNumber = 0;  ///< 1-based
  std::string message;

  /// One sentence for a person: "line 12: field 'time': missing", "line 57 is incomplete: ...".
  std::string describe() const;
};

/// What a record file holds.
struct RecordFileContents {
  std::vector<TuningRecord> records;    ///< the valid records, in file order
  std::vector<RecordProblem> problems;  ///< the lines skipped, in file order
  int newerVersionRecords = 0;          ///< records skipped because a newer tessel wrote them
};

/// Reads a record file. Corrupt lines, a torn last line and records of a newer version are
/// skipped and listed in `problems`, never fatal; blank lines are ignored. An empty file has
/// no records. A file that cannot be opened is a Diagnostic naming it.
Expected<RecordFileContents> readRecordFile(const std::string& path);

/// Appends records to a file, one line each. Each append is one write(2) followed by
/// fdatasync, so once append() returns success the record survives a crash of the session.
/// While open it holds a shared lock on the file, so the file is not rewritten under it (see
/// RecordRewriteLock).
class RecordWriter {
public:
  /// Opens `path` for appending, creating it. When the file's last line is torn (no final
  /// '\n'), the first append starts with '\n' so that its record does not join the torn line.
  /// Waits for a rewrite of the file in progress, then appends to the rewritten file.
  static Expected<RecordWriter> open(const std::string& path);

  RecordWriter(RecordWriter&& other) noexcept;
  RecordWriter& operator=(RecordWriter&& other) noexcept;
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;
  ~RecordWriter();

  /// Writes `record` as one line and syncs it to disk. A record the reader would refuse is
  /// not written. A failing write (full disk, I/O error) returns a Diagnostic naming the file
  /// and the system's reason, and leaves the file as it was before this call.
  [[nodiscard]] Status append(const TuningRecord& record);

  const std::string& path() const { return path_; }

private:
  RecordWriter(int descriptor, std::string path, bool lastLineTorn);
  Status writeLine(const std::string& text);

  int descriptor_ = -1;
  std::string path_;
  bool lastLineTorn_ = false;
};

/// An exclusive lock on a record file while it is rewritten (merge, prune), held from reading
/// it to replacing it. Refused while a RecordWriter has the file open: that writer's later
/// appends would go to the replaced file and be lost.
class RecordRewriteLock {
public:
  /// Locks `path`; a file that does not exist needs no lock.
  static Expected<RecordRewriteLock> acquire(const std::string& path);

  RecordRewriteLock(RecordRewriteLock&& other) noexcept;
  RecordRewriteLock& operator=(RecordRewriteLock&& other) noexcept;
  RecordRewriteLock(const RecordRewriteLock&) = delete;
  RecordRewriteLock& operator=(const RecordRewriteLock&) = delete;
  ~RecordRewriteLock();

private:
  explicit RecordRewriteLock(int descriptor) : descriptor_(descriptor) {}
  int descriptor_ = -1;
};

/// Replaces `path` with `records` without ever leaving a partial file: writes a temporary file
/// in the same directory, syncs it, renames it over `path` and syncs the directory. On failure
/// `path` is unchanged and the temporary file is removed.
[[nodiscard]] Status writeRecordFileAtomically(const std::string& path, const std::vector<TuningRecord>& records);

}  // namespace tessel::tuner
