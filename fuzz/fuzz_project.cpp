// Fuzzes parseProject: a .tessel project file (JSON), as Studio and `tessel project` open it.
#include "app/project/Project.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  // Skipped: the model and reference paths a fuzzed file names are not looked up on disk.
  Expected<project::Project> parsed =
      project::parseProject(fuzz::asString(data, size), "/nonexistent/fuzz.tessel", project::FileChecks::Skipped);
  if (!parsed) return 0;
  // What was accepted saves and opens again.
  std::string saved = project::formatProject(*parsed, "/nonexistent/fuzz.tessel");
  (void)project::parseProject(saved, "/nonexistent/fuzz.tessel", project::FileChecks::Skipped);
  return 0;
}
