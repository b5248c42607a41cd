// Flag parsing for the tessel command-line tool.
#include "app/cli/CommandLine.h"

#include <charconv>

namespace tessel::cli {

std::optional<std::string> CommandLine::parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs,
                                              CommandLine* out) {
  for (auto& spec : specs)
    if (!spec.defaultValue.empty()) out->defaults_[spec.name] = spec.defaultValue;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out->help_ = true;
      continue;
    }
    const FlagSpec* shortFlag = nullptr;
    if (arg.size() == 2 && arg[0] == '-' && arg[1] != '-')
      for (auto& s : specs)
        if (s.shortName == arg.substr(1)) shortFlag = &s;
    if (!shortFlag && (arg.rfind("--", 0) != 0 || arg.size() == 2)) {
      out->positional_.push_back(arg);
      continue;
    }
    std::string name = shortFlag ? shortFlag->name : arg.substr(2), value;
    bool inlineValue = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inlineValue = true;
    }
    const FlagSpec* spec = nullptr;
    for (auto& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) return "unknown flag --" + name + " (see --help)";
    if (out->values_.count(name) && !spec->repeatable) return "--" + name + " is given twice";
    if (spec->takesValue && !inlineValue) {
      if (i + 1 >= args.size()) return "--" + name + " needs a value";
      value = args[++i];
    } else if (!spec->takesValue && inlineValue) {
      return "--" + name + " takes no value";
    }
    out->values_[name] = spec->takesValue ? value : "1";
    out->allValues_[name].push_back(out->values_[name]);
  }
  return std::nullopt;
}

std::string CommandLine::get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  if (auto it = defaults_.find(name); it != defaults_.end()) return it->second;
  return "";
}

std::vector<std::string> CommandLine::getAll(const std::string& name) const {
  if (auto it = allValues_.find(name); it != allValues_.end()) return it->second;
  return {};
}

std::optional<std::string> CommandLine::getInt(const std::string& name, int64_t* out, int64_t minimum) const {
  std::string text = get(name);
  if (text.empty()) return "--" + name + " is required";
  int64_t value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size())
    return "--" + name + " must be an integer, got '" + text + "'";
  if (value < minimum) return "--" + name + " must be at least " + std::to_string(minimum) + ", got " + text;
  *out = value;
  return std::nullopt;
}

std::string usage(const std::string& synopsis, const std::vector<FlagSpec>& specs) {
  std::string out = "usage: " + synopsis + "\n";
  if (!specs.empty()) out += "\noptions:\n";
  for (auto& spec : specs) {
    std::string left = "  " + (spec.shortName.empty() ? "" : "-" + spec.shortName + ", ") + "--" + spec.name +
                       (spec.takesValue ? " VALUE" : "");
    if (left.size() < 24) left.resize(24, ' ');
    else left += "  ";
    out += left + spec.help;
    if (!spec.defaultValue.empty()) out += " (default " + spec.defaultValue + ")";
    if (spec.repeatable) out += " (repeatable)";
    out += "\n";
  }
  out += "  --help                show this help\n";
  return out;
}

}  // namespace tessel::cli
