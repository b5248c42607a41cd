// Fuzzes parseGraphJson: an exported module's graph.json (read by GraphExecutor::load).
#include "fuzz/FuzzInput.h"
#include "runtime/Error.h"
#include "runtime/GraphPlan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  try {
    runtime::GraphPlan plan = runtime::parseGraphJson(fuzz::asString(data, size), "graph.json");
    // What the parser accepted must write back and parse again to a valid plan.
    runtime::parseGraphJson(runtime::writeGraphJson(plan), "graph.json (rewritten)");
  } catch (const runtime::Error&) {
  }
  return 0;
}
