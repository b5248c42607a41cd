// Fuzzes parseTraceJson: schedule traces in tuning records and project files.
#include "compiler/schedule/TraceJson.h"
#include "fuzz/FuzzCheck.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  Expected<Trace> trace = parseTraceJson(fuzz::asString(data, size));
  if (!trace) return 0;
  Expected<Trace> again = parseTraceJson(printTraceJson(*trace));
  TESSEL_FUZZ_CHECK(again.ok(), "printTraceJson's output parses");
  TESSEL_FUZZ_CHECK(*again == *trace, "printTraceJson round-trips");
  return 0;
}
