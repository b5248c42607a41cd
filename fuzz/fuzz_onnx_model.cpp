// Fuzzes loadModelBytes: ONNX model bytes through import and type inference (what
// `tessel compile`, Studio and projects do first with a model file).
#include "compiler/driver/Driver.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  // External data resolves against the source's folder; one that does not exist keeps the
  // fuzzer from reading the machine's files.
  Expected<graph::Graph> graph = driver::loadModelBytes(fuzz::asString(data, size), "/nonexistent/fuzz.onnx");
  (void)graph.ok();
  return 0;
}
