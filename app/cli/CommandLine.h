// Flag parsing for the tessel command-line tool: --name value pairs (some repeatable, some
// with a one-letter alias such as -o), with unknown flags as errors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel::cli {

/// What a command accepts: each flag with its help text and whether it takes a value.
struct FlagSpec {
  FlagSpec(std::string name, std::string help, bool takesValue = true, std::string defaultValue = "",
           bool repeatable = false, std::string shortName = "")
      : name(std::move(name)), help(std::move(help)), takesValue(takesValue), defaultValue(std::move(defaultValue)),
        repeatable(repeatable), shortName(std::move(shortName)) {}

  std::string name;  ///< Without the leading dashes.
  std::string help;
  bool takesValue = true;
  std::string defaultValue;
  /// May be given several times (--input-shape a:1,2 --input-shape b:3); see getAll().
  bool repeatable = false;
  /// A one-letter alias written with one dash ("o" for -o), or empty.
  std::string shortName;
};

/// Parsed flags and positional arguments of one command.
class CommandLine {
public:
  /// Parses `args` against `specs`. Returns an error message for unknown flags, missing
  /// values and repeated flags (unless repeatable); "--help" sets helpRequested().
  static std::optional<std::string> parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs,
                                          CommandLine* out);

  bool helpRequested() const { return help_; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  /// The flag's value (the last one given for a repeatable flag), else its default.
  std::string get(const std::string& name) const;
  /// Every value of a flag in the order given (empty when absent).
  std::vector<std::string> getAll(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  /// The flag as a positive (or non-negative) integer; an error message otherwise.
  std::optional<std::string> getInt(const std::string& name, int64_t* out, int64_t minimum = 1) const;

private:
  bool help_ = false;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> allValues_;
  std::map<std::string, std::string> defaults_;
  std::vector<std::string> positional_;
};

/// The usage text of a command from its flag specs.
std::string usage(const std::string& synopsis, const std::vector<FlagSpec>& specs);

}  // namespace tessel::cli
