// A long-lived child process spoken to in lines: requests written to its stdin, replies read
// from its stdout with a time limit, its death noticed and described. What keeps a tuner's
// persistent measuring process isolated (DESIGN.md, "Measurement is isolated"); the run-to-
// completion variant is ChildProcess.h. POSIX only; no Qt.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/support/ChildProcess.h"
#include "core/support/Error.h"

namespace tessel {

struct InteractiveChildOptions {
  /// Variables set (or replaced) in the child's environment, which is otherwise the caller's.
  std::map<std::string, std::string> environment;
  /// The child's working directory; empty: the caller's.
  std::string workingDirectory;
  /// The last this many bytes of stderr are kept for messages (a crash's last words).
  size_t keepStderrBytes = 16 * 1024;
};

/// What waiting for a line found.
struct ChildLine {
  enum class Outcome {
    Line,       ///< `text` holds the next line of stdout (without its '\n').
    Ended,      ///< The child is gone (see InteractiveChildProcess::end()); no more lines.
    TimedOut,   ///< No line within the limit; the child is still running.
    Cancelled,  ///< The cancel callback returned true; the child is still running.
  };
  Outcome outcome = Outcome::Ended;
  std::string text;
};

/// One child process, started in a process group of its own, with its stdin, stdout and
/// stderr connected to this side. The destructor kills the whole group and reaps the child,
/// so no process outlives the object and no zombie is left.
///
/// stderr is drained (its tail kept) whenever this side waits for a line or writes one; a
/// child writing more than a pipe's worth (64 KiB) of stderr while nobody waits on it blocks
/// until the next call, which is harmless for a child that only writes while it works on a
/// request.
///
/// Not thread-safe: one thread uses an object at a time. Writing to a child that died never
/// raises SIGPIPE in this process (stdin is a socket written with MSG_NOSIGNAL).
class InteractiveChildProcess {
public:
  /// Starts `executable` (a path, or a name looked up in PATH) with `arguments`. A program
  /// that cannot be started is a Diagnostic; what happens after it started is seen through
  /// readLine and end().
  static Expected<std::unique_ptr<InteractiveChildProcess>> start(const std::string& executable,
                                                                  const std::vector<std::string>& arguments,
                                                                  const InteractiveChildOptions& options = {});
  ~InteractiveChildProcess();
  InteractiveChildProcess(const InteractiveChildProcess&) = delete;
  InteractiveChildProcess& operator=(const InteractiveChildProcess&) = delete;

  pid_t processId() const { return pid_; }
  /// Still running: false once it has ended (it is then reaped, and end() says how).
  bool running() { return !tryReap(); }

  /// Writes `line` and a '\n' to the child's stdin, waiting at most `timeoutSeconds` for room
  /// in the pipe. False when the child no longer reads (it died, or it closed its stdin) or
  /// the write timed out.
  bool writeLine(const std::string& line, double timeoutSeconds = 5);

  /// Waits up to `timeoutSeconds` (0 or less: for ever) for the next line of stdout, polling
  /// `cancelled` (may be empty) every `pollMilliseconds`. Lines already received come first,
  /// even when the child has ended since.
  ChildLine readLine(double timeoutSeconds, const std::function<bool()>& cancelled = {}, int pollMilliseconds = 20);

  /// Kills the child's whole process group (SIGKILL) and reaps it; end() then says
  /// `cancelled` or `timedOut` as `why` asks. Nothing happens when it has already ended.
  enum class KillReason { Other, Cancelled, TimedOut };
  void kill(KillReason why = KillReason::Other);

  /// Closes the child's stdin (a polite "no more requests") and waits up to `graceSeconds`
  /// for it to exit, then kills it. The child is reaped either way.
  void finish(double graceSeconds);

  /// How the child ended (exit code or signal; `standardError` holds the kept stderr tail);
  /// meaningful once running() is false.
  const ChildProcessResult& end() const { return end_; }
  /// The kept tail of stderr so far.
  const std::string& standardErrorTail() const { return stderrTail_; }

private:
  InteractiveChildProcess() = default;
  void drainStderr();
  void readStdout();
  bool tryReap();
  void waitBlocking();
  void recordEnd(int status);
  bool takeLine(std::string* line);
  void closeAll();

  pid_t pid_ = -1;
  int stdinFd_ = -1;
  int stdoutFd_ = -1;
  int stderrFd_ = -1;
  bool reaped_ = false;
  size_t keepStderrBytes_ = 0;
  std::string stdoutBuffer_;
  std::string stderrTail_;
  ChildProcessResult end_;
  double startedAt_ = 0;
};

}  // namespace tessel
