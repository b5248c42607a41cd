// Fuzzes parseRecordLine: one line of a tuning records file (JSON lines written by the tuner,
// shared between machines and merged by `tessel records`).
#include "fuzz/FuzzInput.h"
#include "tuner/records/TuningRecord.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  int newerVersion = 0;
  Expected<tuner::TuningRecord> record = tuner::parseRecordLine(fuzz::asString(data, size), &newerVersion);
  (void)record.ok();
  return 0;
}
