// Fuzzes parseModelProfile: a model's saved per-kernel profile (JSON), read back by Studio and
// `tessel profile`.
#include "compiler/driver/ModelProfile.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  Expected<driver::ModelProfile> profile = driver::parseModelProfile(fuzz::asString(data, size), "fuzz.profile.json");
  if (!profile) return 0;
  (void)driver::parseModelProfile(driver::modelProfileJson(*profile), "fuzz.profile.json (rewritten)");
  return 0;
}
