// Running a child process with posix_spawn, following its two output pipes with poll.
#include "core/support/ChildProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <sstream>

extern char** environ;

namespace tessel {

namespace {

using Clock = std::chrono::steady_clock;

std::string errorText(int error) { return std::strerror(error); }

// One output pipe of the child, read without blocking: keeps the last `keepBytes` of it and
// hands complete lines to the caller's callback as they arrive.
class OutputPipe {
public:
  OutputPipe(int fd, size_t keepBytes, const std::function<void(std::string_view)>* onLine)
      : fd_(fd), keepBytes_(keepBytes), onLine_(onLine) {}
  ~OutputPipe() { close(); }
  OutputPipe(const OutputPipe&) = delete;
  OutputPipe& operator=(const OutputPipe&) = delete;

  bool open() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // Reads until the pipe is empty for now (or `limit` bytes were read); closes it at end of
  // file.
  void readAvailable(size_t limit = SIZE_MAX) {
    char buffer[1 << 16];
    size_t read = 0;
    while (fd_ >= 0 && read < limit) {
      ssize_t count = ::read(fd_, buffer, sizeof buffer);
      if (count > 0) {
        read += size_t(count);
        append(std::string_view(buffer, size_t(count)));
      } else if (count == 0) {
        close();
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return;
      } else {
        close();  // a broken pipe reads as its end
      }
    }
  }

  // The child is gone: a last line without a newline still counts. Hands over what was kept
  // and how much was left out before it.
  void finish(std::string* kept, size_t* dropped) {
    close();
    if (!partialLine_.empty() && *onLine_) (*onLine_)(partialLine_);
    partialLine_.clear();
    trimTo(keepBytes_);
    *kept = std::move(kept_);
    *dropped = dropped_;
  }

private:
  // Longer "lines" reach the callback in pieces rather than being held without bound.
  static constexpr size_t kLongestLine = size_t(1) << 20;

  void append(std::string_view chunk) {
    if (*onLine_) passLines(chunk);
    kept_.append(chunk);
    // Trimmed only once twice the limit is held, so dropping the front stays cheap.
    if (kept_.size() > 2 * keepBytes_) trimTo(keepBytes_);
  }

  void passLines(std::string_view chunk) {
    size_t newline;
    while ((newline = chunk.find('\n')) != std::string_view::npos) {
      if (partialLine_.empty()) {
        (*onLine_)(chunk.substr(0, newline));
      } else {
        partialLine_.append(chunk.substr(0, newline));
        (*onLine_)(partialLine_);
        partialLine_.clear();
      }
      chunk.remove_prefix(newline + 1);
    }
    partialLine_.append(chunk);
    if (partialLine_.size() > kLongestLine) {
      (*onLine_)(partialLine_);
      partialLine_.clear();
    }
  }

  void trimTo(size_t bytes) {
    if (kept_.size() <= bytes) return;
    size_t cut = kept_.size() - bytes;
    kept_.erase(0, cut);
    dropped_ += cut;
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int fd_;
  size_t keepBytes_;
  const std::function<void(std::string_view)>* onLine_;
  std::string kept_;
  size_t dropped_ = 0;
  std::string partialLine_;
};

// Kills and reaps the child if runChildProcess leaves early (a callback threw), so no
// process outlives the call and no zombie is left.
class ChildGuard {
public:
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ~ChildGuard() {
    if (reaped_) return;
    killGroup();
    waitBlocking();
  }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;

  // The child runs in a process group of its own (its id is the child's): a shell script's
  // `sleep` dies with it instead of keeping the pipes open.
  void killGroup() const {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // in case it left its group
  }
  bool tryReap() {
    for (;;) {
      pid_t done = ::waitpid(pid_, &status_, WNOHANG);
      if (done == pid_) return reaped_ = true;
      if (done < 0 && errno == EINTR) continue;
      if (done < 0) return reaped_ = true;  // ECHILD: someone else reaped it (SIGCHLD ignored)
      return false;
    }
  }
  void waitBlocking() {
    while (!reaped_) {
      pid_t done = ::waitpid(pid_, &status_, 0);
      if (done == pid_ || (done < 0 && errno != EINTR)) reaped_ = true;
    }
  }
  bool reaped() const { return reaped_; }
  int status() const { return status_; }

private:
  pid_t pid_;
  int status_ = 0;
  bool reaped_ = false;
};

// The caller's environment with `changes` applied, as "NAME=value" strings.
std::vector<std::string> environmentWith(const std::map<std::string, std::string>& changes) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    std::string name = text.substr(0, text.find('='));
    if (!changes.count(name)) entries.push_back(std::move(text));
  }
  for (auto& [name, value] : changes) entries.push_back(name + "=" + value);
  return entries;
}

Diagnostic cannotStartDiagnostic(const std::string& executable, const std::string& why) {
  return Diagnostic{"cannot start " + executable + ": " + why, executable, 0, 0,
                    "check that the program exists and is executable"};
}

std::vector<char*> pointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

std::string signalName(int signal) {
  if (const char* abbreviation = sigabbrev_np(signal)) return std::string("SIG") + abbreviation;
  return "signal " + std::to_string(signal);
}

std::string ChildProcessResult::describeEnd() const {
  if (cancelled) return "was cancelled";
  if (timedOut) {
    std::ostringstream text;
    text << "timed out after " << std::round(seconds * 10) / 10 << " s";
    return text.str();
  }
  if (signal != 0) return "was killed by " + signalName;
  return "exited with code " + std::to_string(exitCode);
}

Expected<pid_t> spawnProcess(const std::string& executable, const std::vector<std::string>& arguments,
                             const SpawnStreams& streams, const std::map<std::string, std::string>& environmentChanges,
                             const std::string& workingDirectory) {
  if (executable.empty()) return cannotStartDiagnostic(executable, "no program named");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (streams.input >= 0)
    posix_spawn_file_actions_adddup2(&actions, streams.input, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, streams.output, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, streams.error, STDERR_FILENO);
  // Files the caller opened without close-on-exec (a library's, another thread's) stay here.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  if (!workingDirectory.empty()) posix_spawn_file_actions_addchdir_np(&actions, workingDirectory.c_str());

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group (to kill it with its children); no blocked signals; default
  // handling of every signal, since a signal the caller ignores (SIGPIPE) stays ignored
  // across exec otherwise.
  sigset_t noSignals, allSignals;
  sigemptyset(&noSignals);
  sigfillset(&allSignals);
  sigdelset(&allSignals, SIGKILL);
  sigdelset(&allSignals, SIGSTOP);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigmask(&attributes, &noSignals);
  posix_spawnattr_setsigdefault(&attributes, &allSignals);

  std::vector<std::string> argv = {executable};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<char*> argvPointers = pointersTo(argv);
  std::vector<std::string> environment;
  std::vector<char*> environmentPointers;
  char** envp = environ;
  if (!environmentChanges.empty()) {
    environment = environmentWith(environmentChanges);
    environmentPointers = pointersTo(environment);
    envp = environmentPointers.data();
  }

  pid_t pid = -1;
  // A name without a slash is looked up in PATH, as a shell would.
  bool searchPath = executable.find('/') == std::string::npos;
  int spawnError = searchPath
                       ? posix_spawnp(&pid, executable.c_str(), &actions, &attributes, argvPointers.data(), envp)
                       : posix_spawn(&pid, executable.c_str(), &actions, &attributes, argvPointers.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawnError != 0) return cannotStartDiagnostic(executable, errorText(spawnError));
  return pid;
}

Expected<ChildProcessResult> runChildProcess(const std::string& executable, const std::vector<std::string>& arguments,
                                             const ChildProcessOptions& options) {
  Clock::time_point start = Clock::now();
  auto cannotStart = [&](const std::string& why) { return cannotStartDiagnostic(executable, why); };
  if (executable.empty()) return cannotStart("no program named");

  // Close-on-exec, so a child another thread starts meanwhile does not inherit them (it would
  // hold the write ends open and this side would never see the end of the output).
  int outPipe[2], errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0) return cannotStart("no pipe: " + errorText(errno));
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    int error = errno;
    ::close(outPipe[0]);
    ::close(outPipe[1]);
    return cannotStart("no pipe: " + errorText(error));
  }

  SpawnStreams streams;
  streams.output = outPipe[1];
  streams.error = errPipe[1];
  auto spawned = spawnProcess(executable, arguments, streams, options.environment, options.workingDirectory);
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  if (!spawned) {
    ::close(outPipe[0]);
    ::close(errPipe[0]);
    return spawned.error();
  }
  pid_t pid = *spawned;

  ChildProcessResult result;
  ChildGuard child(pid);
  OutputPipe out(outPipe[0], options.keepOutputBytes, &options.onStdoutLine);
  OutputPipe err(errPipe[0], options.keepOutputBytes, &options.onStderrLine);
  ::fcntl(out.fd(), F_SETFL, ::fcntl(out.fd(), F_GETFL) | O_NONBLOCK);
  ::fcntl(err.fd(), F_SETFL, ::fcntl(err.fd(), F_GETFL) | O_NONBLOCK);

  bool hasDeadline = options.timeoutSeconds > 0;
  Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.timeoutSeconds));
  int pollMilliseconds = std::max(1, options.pollMilliseconds);

  while (!child.reaped()) {
    int waitMilliseconds = pollMilliseconds;
    if (hasDeadline) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      waitMilliseconds = int(std::clamp<long long>(left, 0, pollMilliseconds));
    }
    // Both pipes are watched at once, so a child filling one while this side waits on the
    // other cannot deadlock; an exit closes them and wakes the poll at once.
    pollfd watched[2];
    OutputPipe* pipes[2];
    nfds_t count = 0;
    for (OutputPipe* pipe : {&out, &err})
      if (pipe->open()) {
        watched[count] = {pipe->fd(), POLLIN, 0};
        pipes[count++] = pipe;
      }
    int ready = ::poll(count ? watched : nullptr, count, waitMilliseconds);
    if (ready < 0 && errno != EINTR) ::usleep(1000);  // cannot happen with valid fds; never spin
    // A bounded read, so a child that never stops writing still gets its cancel and timeout.
    for (nfds_t i = 0; ready > 0 && i < count; ++i)
      if (watched[i].revents != 0) pipes[i]->readAvailable(size_t(1) << 20);

    if (child.tryReap()) break;
    if (options.cancelled && options.cancelled()) {
      result.cancelled = true;
    } else if (hasDeadline && Clock::now() >= deadline) {
      result.timedOut = true;
    } else {
      continue;
    }
    child.killGroup();
    child.waitBlocking();
  }

  // The child is gone, so everything it wrote is in the pipes now (at most a pipe's capacity,
  // far below the limit). A grandchild still holding them open is not waited for, nor read
  // from for ever should it keep writing.
  constexpr size_t kFinalReadLimit = size_t(64) << 20;
  out.readAvailable(kFinalReadLimit);
  err.readAvailable(kFinalReadLimit);
  out.finish(&result.standardOutput, &result.standardOutputDropped);
  err.finish(&result.standardError, &result.standardErrorDropped);

  int status = child.status();
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.signalName = signalName(result.signal);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace tessel
