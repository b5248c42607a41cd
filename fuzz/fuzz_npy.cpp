// Fuzzes parseNpy: a .npy file's bytes (tessel-deploy-run's inputs, .npz entries).
#include "fuzz/FuzzInput.h"
#include "runtime/Error.h"
#include "runtime/Npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  try {
    runtime::NDArray array = runtime::parseNpy(fuzz::asString(data, size), "fuzz.npy");
    // Touch every byte the array claims to hold: a size the parser got wrong shows here.
    const auto* bytes = static_cast<const uint8_t*>(array.data());
    volatile uint8_t sum = 0;
    for (int64_t i = 0; i < array.byteSize(); ++i) sum = sum + bytes[i];
  } catch (const runtime::Error&) {
    // A clear error is the expected outcome for a malformed file.
  }
  return 0;
}
