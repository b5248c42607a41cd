// Fuzzes TuningEventLog::addLine: a tuning session's event stream (FILE.events, the output of
// `tessel tune --events`), read line by line as Studio's tuning dashboard does.
#include <string_view>

#include "fuzz/FuzzInput.h"
#include "tuner/session/TuningEventLog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  std::string_view stream(reinterpret_cast<const char*>(data), size);
  tuner::TuningEventLog log;
  int lineNumber = 0;
  while (!stream.empty()) {
    size_t end = stream.find('\n');
    std::string_view line = stream.substr(0, end);
    log.addLine(line, ++lineNumber);
    stream.remove_prefix(end == std::string_view::npos ? stream.size() : end + 1);
  }
  // What the dashboard asks of the log after each line.
  (void)log.defaultLatencyMs();
  (void)log.estimatedLatencyMs();
  return 0;
}
