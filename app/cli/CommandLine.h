// Flag parsing for the tessel command-line tool: --name value pairs, with unknown flags as errors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::cli {

/// What a command accepts: each flag with its help text and whether it takes a value.
struct FlagSpec {
  std::string name;  ///< Without the leading dashes.
  std::string help;
  bool takesValue = true;
  std::string defaultValue;
};

/// Parsed flags and positional arguments of one command.
class CommandLine {
public:
  /// Parses `args` against `specs`. Returns an error message for unknown flags, missing
  /// values and repeated flags; "--help" sets helpRequested().
  static std::optional<std::string> parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs,
                                          CommandLine* out);

  bool helpRequested() const { return help_; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string get(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  /// The flag as a positive (or non-negative) integer; an error message otherwise.
  std::optional<std::string> getInt(const std::string& name, int64_t* out, int64_t minimum = 1) const;

private:
  bool help_ = false;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> defaults_;
  std::vector<std::string> positional_;
};

/// The usage text of a command from its flag specs.
std::string usage(const std::string& synopsis, const std::vector<FlagSpec>& specs);

}  // namespace tessel::cli
