// Fuzzes parseTraceText: schedule text as people write it (Studio's editor, project files).
#include "compiler/schedule/TraceText.h"
#include "fuzz/FuzzCheck.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  Expected<Trace> trace = parseTraceText(fuzz::asString(data, size));
  if (!trace) return 0;
  // The header's promise: the canonical text parses back to the same trace.
  std::string text = printTraceText(*trace);
  Expected<Trace> again = parseTraceText(text);
  TESSEL_FUZZ_CHECK(again.ok(), "printTraceText's output parses");
  TESSEL_FUZZ_CHECK(*again == *trace, "printTraceText round-trips");
  return 0;
}
