// Two error channels: user mistakes become Diagnostics; compiler bugs fail an internal check.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace tessel {

/// A user-facing problem: what is wrong, where (file/line/column or IR node), and what to do.
struct Diagnostic {
  std::string message;   ///< One line saying what is wrong.
  std::string location;  ///< A file name, a stage/axis name, or an ONNX node; may be empty.
  int line = 0;          ///< 1-based line in the source text, 0 when not text.
  int column = 0;        ///< 1-based column, 0 when not text.
  std::string hint;      ///< What the user can do about it; may be empty.

  /// "file:3:7: error: message (hint)", the form a terminal and an editor both understand.
  std::string toString() const;
};

/// Thrown only for user errors that cross a layer without an Expected in between (rare).
class UserError : public std::runtime_error {
public:
  explicit UserError(Diagnostic d) : std::runtime_error(d.toString()), diagnostic(std::move(d)) {}
  Diagnostic diagnostic;
};

/// A compiler bug: an invariant that must hold whatever the user wrote.
class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

/// Either a value or the Diagnostic explaining why there is none. Check before use.
template <class T>
class Expected {
public:
  Expected(T value) : storage_(std::move(value)) {}
  Expected(Diagnostic error) : storage_(std::move(error)) {}
  explicit operator bool() const { return storage_.index() == 0; }
  bool ok() const { return storage_.index() == 0; }
  T& value() {
    if (!ok()) throw UserError(error());
    return std::get<0>(storage_);
  }
  const T& value() const {
    if (!ok()) throw UserError(error());
    return std::get<0>(storage_);
  }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Diagnostic& error() const { return std::get<1>(storage_); }

private:
  std::variant<T, Diagnostic> storage_;
};

/// Success, or the Diagnostic explaining the failure. Check before continuing.
class Status {
public:
  Status() = default;
  Status(Diagnostic error) : error_(std::move(error)), failed_(true) {}
  static Status success() { return Status(); }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Diagnostic& error() const { return error_; }

private:
  Diagnostic error_;
  bool failed_ = false;
};

namespace detail {
/// Collects a message with operator<< and throws InternalError when destroyed.
class InternalCheckFailure {
public:
  InternalCheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": internal check failed: " << condition << ": ";
  }
  template <class T>
  InternalCheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  [[noreturn]] ~InternalCheckFailure() noexcept(false) { throw InternalError(stream_.str()); }

private:
  std::ostringstream stream_;
};
}  // namespace detail

}  // namespace tessel

/// Asserts a compiler invariant; on failure throws InternalError naming file:line.
/// Usage: TESSEL_ICHECK(x > 0) << "extra context " << x;
#define TESSEL_ICHECK(condition) \
  if (condition) {               \
  } else                         \
    ::tessel::detail::InternalCheckFailure(__FILE__, __LINE__, #condition)
