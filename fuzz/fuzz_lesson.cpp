// Fuzzes parseLesson: a lesson file (JSON) as the Lessons window and `tessel lesson` read it,
// then what they do next with an accepted one: build each step's operator and parse its
// starting schedule and solution.
#include "app/lessons/Lesson.h"
#include "app/lessons/LessonOperators.h"
#include "compiler/schedule/TraceText.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  Expected<lessons::Lesson> lesson = lessons::parseLesson(fuzz::asString(data, size), "/nonexistent/fuzz.json");
  if (!lesson) return 0;
  for (const lessons::LessonStep& step : lesson->steps) {
    (void)lesson->findStep(step.id);
    (void)step.op.describe();
    (void)lessons::makeLessonOperator(step.op);
    (void)parseTraceText(step.start);
    (void)parseTraceText(step.solution);
  }
  return 0;
}
