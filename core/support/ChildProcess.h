// Running another program as a child process and following it: its output as it comes, a
// cancel that kills it at once, a time limit, and how it ended (exit code or signal). What
// keeps a crashing or hanging kernel measurement from taking its caller down (DESIGN.md,
// "Measurement is isolated"). POSIX only; no Qt.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/Error.h"

namespace tessel {

/// How to run a child process and what to tell the caller while it runs. Every callback is
/// called on the thread that called runChildProcess.
struct ChildProcessOptions {
  /// Called with each complete line the child writes to stdout / stderr (without the '\n'),
  /// as soon as it arrives; a last line without '\n' is passed when the child ends.
  std::function<void(std::string_view line)> onStdoutLine;
  std::function<void(std::string_view line)> onStderrLine;
  /// Polled every `pollMilliseconds` while the child runs; returning true kills the child
  /// (SIGKILL, with every process it started) and the result says `cancelled`.
  std::function<bool()> cancelled;
  int pollMilliseconds = 20;
  /// Wall-clock limit in seconds (0 or less: none). A child still running then is killed
  /// and the result says `timedOut`.
  double timeoutSeconds = 0;
  /// Variables set (or replaced) in the child's environment, which is otherwise the caller's.
  std::map<std::string, std::string> environment;
  /// The child's working directory; empty: the caller's.
  std::string workingDirectory;
  /// Each of stdout and stderr keeps its last this many bytes in the result (the end is where
  /// a crash's last words are); every line still reaches the callbacks. Bounds the memory a
  /// child that writes without end can take.
  size_t keepOutputBytes = size_t(64) << 20;
};

/// How a child process ended and what it wrote.
struct ChildProcessResult {
  /// The exit code when the child exited on its own (exited true), else -1.
  bool exited = false;
  int exitCode = -1;
  /// The signal that ended it (0 if none) and its name ("SIGSEGV"). A child killed for a
  /// cancel or a timeout shows SIGKILL here and sets the matching flag.
  int signal = 0;
  std::string signalName;
  bool timedOut = false;
  bool cancelled = false;
  /// What it wrote: all of it, or its last ChildProcessOptions::keepOutputBytes bytes when it
  /// wrote more; the Dropped counts say how many bytes before them were left out.
  std::string standardOutput;
  std::string standardError;
  size_t standardOutputDropped = 0;
  size_t standardErrorDropped = 0;
  double seconds = 0;  ///< Wall-clock time from start to end.

  /// Exited on its own with code 0.
  bool succeeded() const { return exited && exitCode == 0; }
  /// "exited with code 2", "was killed by SIGSEGV", "was cancelled", "timed out after 5 s".
  std::string describeEnd() const;
};

/// Runs `executable` (a path, or a name looked up in PATH) with `arguments` (argv[1...]) and
/// waits for it, reading stdout and stderr together so neither pipe can fill up and stall the
/// child. Its stdin is /dev/null; it inherits no other open file of the caller; it runs in a
/// process group of its own, so a cancel or timeout also kills what it started. It is always
/// reaped (no zombie). A program that cannot be started is a Diagnostic; anything that
/// happens after it started (a crash included) is in the result.
Expected<ChildProcessResult> runChildProcess(const std::string& executable, const std::vector<std::string>& arguments,
                                             const ChildProcessOptions& options = {});

/// Where a spawned child's stdin, stdout and stderr go: descriptors of this process, each
/// duplicated onto 0, 1 and 2 in the child. An input of -1 is /dev/null.
struct SpawnStreams {
  int input = -1;
  int output = -1;
  int error = -1;
};

/// Starts `executable` (a path, or a name looked up in PATH) with `arguments` the way
/// runChildProcess does: in a process group of its own (whose id is the child's, so killing
/// the group also kills what it started), every signal at its default and none blocked, no
/// open file of the caller inherited but `streams`. The caller waits for it (no zombie). The
/// child's pid, or a Diagnostic when it cannot be started.
Expected<pid_t> spawnProcess(const std::string& executable, const std::vector<std::string>& arguments,
                             const SpawnStreams& streams, const std::map<std::string, std::string>& environment = {},
                             const std::string& workingDirectory = "");

/// "SIGSEGV" for SIGSEGV, "signal 64" for a number without a name.
std::string signalName(int signal);

}  // namespace tessel
