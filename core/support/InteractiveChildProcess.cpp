// A long-lived child spoken to in lines: stdin is a socket (so writing to a dead child fails
// instead of raising SIGPIPE here), stdout and stderr are pipes followed with poll.
#include "core/support/InteractiveChildProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

namespace tessel {

namespace {

using Clock = std::chrono::steady_clock;

double now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// A "line" longer than this is handed over as it is rather than buffered without bound.
constexpr size_t kLongestLine = size_t(16) << 20;

void setNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what `fd` holds now (at most `limit` bytes) into `sink`; closes it at end of file.
template <class Sink>
void readAvailable(int& fd, Sink&& sink, size_t limit = size_t(1) << 20) {
  char buffer[1 << 16];
  size_t total = 0;
  while (fd >= 0 && total < limit) {
    ssize_t count = ::read(fd, buffer, sizeof buffer);
    if (count > 0) {
      total += size_t(count);
      sink(std::string_view(buffer, size_t(count)));
    } else if (count < 0 && errno == EINTR) {
      continue;
    } else if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      closeFd(fd);  // end of file, or a broken pipe, which reads as its end
    }
  }
}

}  // namespace

Expected<std::unique_ptr<InteractiveChildProcess>> InteractiveChildProcess::start(
    const std::string& executable, const std::vector<std::string>& arguments, const InteractiveChildOptions& options) {
  // Close-on-exec everywhere, so a child another thread starts meanwhile inherits none of
  // them (it would keep this child's output open after it died).
  int input[2], output[2], error[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, input) != 0)
    return Diagnostic{"cannot start " + executable + ": no socket: " + std::strerror(errno), executable, 0, 0, ""};
  if (::pipe2(output, O_CLOEXEC) != 0 || ::pipe2(error, O_CLOEXEC) != 0) {
    int why = errno;
    for (int fd : {input[0], input[1], output[0], output[1]}) ::close(fd);
    return Diagnostic{"cannot start " + executable + ": no pipe: " + std::strerror(why), executable, 0, 0, ""};
  }
  SpawnStreams streams{input[1], output[1], error[1]};
  auto pid = spawnProcess(executable, arguments, streams, options.environment, options.workingDirectory);
  for (int fd : {input[1], output[1], error[1]}) ::close(fd);
  if (!pid) {
    for (int fd : {input[0], output[0], error[0]}) ::close(fd);
    return pid.error();
  }
  std::unique_ptr<InteractiveChildProcess> child(new InteractiveChildProcess());
  child->pid_ = *pid;
  child->stdinFd_ = input[0];
  child->stdoutFd_ = output[0];
  child->stderrFd_ = error[0];
  child->keepStderrBytes_ = options.keepStderrBytes;
  child->startedAt_ = now();
  for (int fd : {input[0], output[0], error[0]}) setNonBlocking(fd);
  return child;
}

InteractiveChildProcess::~InteractiveChildProcess() {
  kill();
  closeAll();
}

bool InteractiveChildProcess::writeLine(const std::string& line, double timeoutSeconds) {
  std::string text = line + "\n";
  double deadline = now() + timeoutSeconds;
  size_t written = 0;
  while (written < text.size()) {
    if (stdinFd_ < 0 || reaped_) return false;
    ssize_t count = ::send(stdinFd_, text.data() + written, text.size() - written, MSG_NOSIGNAL);
    if (count > 0) {
      written += size_t(count);
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    if (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;  // EPIPE: it no longer reads
    // Full: wait for room, reading its stderr meanwhile so it cannot block on that instead.
    double left = deadline - now();
    if (left <= 0) return false;
    pollfd watched[2] = {{stdinFd_, POLLOUT, 0}, {stderrFd_, POLLIN, 0}};
    ::poll(watched, stderrFd_ >= 0 ? 2 : 1, int(std::clamp(left * 1000, 1.0, 20.0)));
    drainStderr();
    if (tryReap()) return false;
  }
  drainStderr();
  return true;
}

ChildLine InteractiveChildProcess::readLine(double timeoutSeconds, const std::function<bool()>& cancelled,
                                            int pollMilliseconds) {
  double deadline = timeoutSeconds > 0 ? now() + timeoutSeconds : 0;
  pollMilliseconds = std::max(1, pollMilliseconds);
  for (;;) {
    ChildLine result;
    if (takeLine(&result.text)) {
      result.outcome = ChildLine::Outcome::Line;
      return result;
    }
    if (reaped_) {
      result.outcome = ChildLine::Outcome::Ended;
      return result;
    }
    int waitMilliseconds = pollMilliseconds;
    if (deadline > 0) waitMilliseconds = int(std::clamp((deadline - now()) * 1000, 0.0, double(pollMilliseconds)));
    // Both pipes at once, so a child filling stderr while this side waits for stdout cannot
    // deadlock; its exit closes them and wakes the poll at once. With both closed (a child
    // that closed its output but runs on) the poll is a plain sleep.
    pollfd watched[2];
    nfds_t count = 0;
    for (int fd : {stdoutFd_, stderrFd_})
      if (fd >= 0) watched[count++] = {fd, POLLIN, 0};
    ::poll(count ? watched : nullptr, count, waitMilliseconds);
    readStdout();
    drainStderr();
    if (!stdoutBuffer_.empty() && stdoutBuffer_.find('\n') != std::string::npos) continue;
    if (tryReap()) {
      // Gone: what it wrote before dying is in the pipes now.
      readStdout();
      drainStderr();
      continue;
    }
    if (cancelled && cancelled()) {
      result.outcome = ChildLine::Outcome::Cancelled;
      return result;
    }
    if (deadline > 0 && now() >= deadline) {
      result.outcome = ChildLine::Outcome::TimedOut;
      return result;
    }
  }
}

void InteractiveChildProcess::kill(KillReason why) {
  if (reaped_) return;
  // The group as well: a shell script's `sleep` must not keep the pipes open.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);  // in case it left its group
  waitBlocking();
  end_.cancelled = why == KillReason::Cancelled;
  end_.timedOut = why == KillReason::TimedOut;
}

void InteractiveChildProcess::finish(double graceSeconds) {
  if (reaped_) return;
  // Closing stdin is the end-of-requests a serving child waits for.
  closeFd(stdinFd_);
  double deadline = now() + graceSeconds;
  while (!tryReap() && now() < deadline) {
    pollfd watched[2];
    nfds_t count = 0;
    for (int fd : {stdoutFd_, stderrFd_})
      if (fd >= 0) watched[count++] = {fd, POLLIN, 0};
    ::poll(count ? watched : nullptr, count, 10);
    readStdout();
    drainStderr();
  }
  kill();
}

void InteractiveChildProcess::drainStderr() {
  readAvailable(stderrFd_, [&](std::string_view chunk) {
    stderrTail_.append(chunk);
    // Trimmed only once twice the limit is held, so dropping the front stays cheap.
    if (stderrTail_.size() > 2 * keepStderrBytes_) stderrTail_.erase(0, stderrTail_.size() - keepStderrBytes_);
  });
}

void InteractiveChildProcess::readStdout() {
  readAvailable(stdoutFd_, [&](std::string_view chunk) { stdoutBuffer_.append(chunk); });
}

bool InteractiveChildProcess::takeLine(std::string* line) {
  size_t newline = stdoutBuffer_.find('\n');
  if (newline == std::string::npos) {
    if (stdoutBuffer_.size() < kLongestLine) return false;
    newline = stdoutBuffer_.size();
  }
  *line = stdoutBuffer_.substr(0, newline);
  stdoutBuffer_.erase(0, std::min(stdoutBuffer_.size(), newline + 1));
  return true;
}

bool InteractiveChildProcess::tryReap() {
  if (reaped_) return true;
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) break;  // ECHILD: reaped elsewhere (SIGCHLD ignored); how it ended is unknown
    return false;
  }
  recordEnd(status);
  return true;
}

void InteractiveChildProcess::waitBlocking() {
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid_, &status, 0);
    if (done == pid_ || (done < 0 && errno != EINTR)) break;
  }
  recordEnd(status);
}

void InteractiveChildProcess::recordEnd(int status) {
  reaped_ = true;
  // A grandchild may still hold the pipes open: take what is there, never wait for more.
  readStdout();
  drainStderr();
  closeFd(stdinFd_);
  if (WIFEXITED(status)) {
    end_.exited = true;
    end_.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    end_.signal = WTERMSIG(status);
    end_.signalName = signalName(end_.signal);
  }
  end_.seconds = now() - startedAt_;
  end_.standardError = stderrTail_.size() > keepStderrBytes_ ? stderrTail_.substr(stderrTail_.size() - keepStderrBytes_)
                                                            : stderrTail_;
}

void InteractiveChildProcess::closeAll() {
  closeFd(stdinFd_);
  closeFd(stdoutFd_);
  closeFd(stderrFd_);
}

}  // namespace tessel
