// Runs an exported Tessel model through the C API alone: load, set one float32 input, run, print one output.
#include <cstdio>
#include <vector>

#include "runtime/tessel_runtime.h"

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, tessel_last_error());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODULE_DIR INPUT_NAME OUTPUT_NAME\n", argv[0]);
    return 2;
  }
  const char* directory = argv[1];
  const char* inputName = argv[2];
  const char* outputName = argv[3];

  TesselModule* module = nullptr;
  if (tessel_module_load(directory, &module) != TESSEL_OK) return fail("load");

  // The C API speaks bytes; this example assumes float32 tensors, as most models use.
  size_t inputBytes = 0, outputBytes = 0;
  if (tessel_module_tensor_bytes(module, inputName, &inputBytes) != TESSEL_OK ||
      tessel_module_tensor_bytes(module, outputName, &outputBytes) != TESSEL_OK) {
    int status = fail("tensor size");
    tessel_module_free(module);
    return status;
  }
  std::vector<float> input(inputBytes / sizeof(float));
  for (size_t i = 0; i < input.size(); ++i) input[i] = 0.25f * float(i % 8) - 1.0f;
  std::vector<float> output(outputBytes / sizeof(float));

  int status = 0;
  if (tessel_module_set_input(module, inputName, input.data(), inputBytes) != TESSEL_OK) status = fail("set input");
  else if (tessel_module_run(module) != TESSEL_OK) status = fail("run");
  else if (tessel_module_get_output(module, outputName, output.data(), outputBytes) != TESSEL_OK) status = fail("get output");
  else {
    std::printf("%s (%zu values):", outputName, output.size());
    for (size_t i = 0; i < output.size() && i < 16; ++i) std::printf(" %g", output[i]);
    std::printf(output.size() > 16 ? " ...\n" : "\n");
  }
  tessel_module_free(module);
  return status;
}
