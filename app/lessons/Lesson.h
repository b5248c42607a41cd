// A schedule lesson: a sequence of steps, each an operator, a starting schedule, a goal the
// learner's schedule must reach, and hints. Lessons are data (resources/lessons/*.json,
// installed as share/tessel/lessons), so a teacher adds one without building Tessel.
//
// On disk (format "tessel-lesson", version 1):
//   {
//     "format": "tessel-lesson", "version": 1,
//     "id": "loop-order", "number": 1,
//     "title": "Loop order and locality",
//     "summary": "One sentence: what the lesson teaches.",
//     "steps": [{
//       "id": "reorder",
//       "title": "Walk memory in order",
//       "text": ["paragraph", "paragraph with <b>bold</b> and <code>code</code>"],
//       "operator": {"name": "matmul", "m": 256, "n": 256, "k": 256},
//       "start": ["schedule line", ...],            // the starting schedule; may be empty
//       "goal": {"summary": "What to reach, in one sentence",
//                "checks": [{"kind": "innermost_axis", "stage": "C", "axis": "j"}, ...]},
//       "hints": ["first hint", "a more direct one"],
//       "solution": ["schedule line", ...],         // one schedule that reaches the goal
//       "tune": {"trials": 64}                      // optional: the step offers the auto-tuner
//     }]
//   }
//
// Check kinds (LessonCheck.h grades them):
//   uses             {"primitive": "split", "stage": "C"}       the schedule applies it (stage optional)
//   innermost_axis   {"stage": "C", "axis": "j"}                the innermost loop comes from axis j
//   vectorized       {"stage": "C"}                             its innermost loop is vectorized
//   parallel         {"stage": "C"}                             one of its loops runs in parallel
//   attached         {"stage": "blur_x", "how": "at"|"inline"|"root", "to": "blur_y"}
//   matches_reference {}                                        the results equal a plain C++ loop's
//   fraction_of_peak {"at_least": 0.2}                          measured against the FMA peak
//   working_set      {"at_most_kib": 32}                        every reused element comes back
//                                                               within that much other data
//                                                               (features::reuseDistances)
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/support/Error.h"

namespace tessel::lessons {

inline constexpr const char* kLessonFormat = "tessel-lesson";
inline constexpr int kLessonVersion = 1;

/// The operator a step schedules: a name (see LessonOperators.h) and its integer sizes.
struct LessonOperator {
  std::string name;
  std::map<std::string, int64_t> sizes;
  /// "matmul m=256 n=256 k=256".
  std::string describe() const;
};

/// One requirement of a goal, as written in the lesson.
struct GoalCheck {
  std::string kind;
  std::string stage, axis, primitive, how, to;
  double atLeast = 0;
  double atMostKib = 0;
};

struct LessonStep {
  std::string id;
  std::string title;
  std::vector<std::string> text;  ///< Paragraphs (a small HTML subset: b, i, code).
  LessonOperator op;
  std::string start;     ///< The starting schedule text (lines joined, newline-terminated).
  std::string goalSummary;
  std::vector<GoalCheck> checks;
  std::vector<std::string> hints;
  std::string solution;  ///< A schedule reaching the goal (for teachers and tests).
  /// When above 0, the step lets the learner run the auto-tuner on its operator for this many
  /// trials (the Studio's Tune button, `tessel tune lesson_OP ...`); 0 in steps about writing
  /// a schedule by hand, where it would give the answer away.
  int tuneTrials = 0;
  /// The command that tunes this step's operator as the Studio's Tune button does, writing
  /// its records to `records`.
  std::string tuneCommand(const std::string& records) const;
};

struct Lesson {
  std::string id;
  int number = 0;
  std::string title;
  std::string summary;
  std::vector<LessonStep> steps;
  std::string path;  ///< The file it was read from.

  /// The step with `id`, or by its 1-based number ("2"); null when there is none.
  const LessonStep* findStep(const std::string& idOrNumber) const;
};

/// Parses a lesson; every mistake is a Diagnostic naming `path`, the JSON path of the value
/// ("steps[1].goal.checks[0].kind") and what is expected. Unknown keys, check kinds and
/// operators are errors, so that a typing mistake cannot drop a check.
Expected<Lesson> parseLesson(const std::string& text, const std::string& path);

/// Every *.json lesson in `directory`, ordered by number. A Diagnostic for the first file
/// that does not parse, or two lessons with one id.
Expected<std::vector<Lesson>> loadLessons(const std::string& directory);

/// The lessons installed with Tessel (share/tessel/lessons beside the program, see
/// project::sharedDataDirectory) or, when TESSEL_LESSONS_DIR is set, those in that directory.
Expected<std::vector<Lesson>> loadInstalledLessons();

/// The lesson with `idOrNumber` ("loop-order" or "1") among `lessons`, or null.
const Lesson* findLesson(const std::vector<Lesson>& lessons, const std::string& idOrNumber);

}  // namespace tessel::lessons
