// Grading a schedule against a lesson step's goal: each check of the goal, passed or not, with
// a sentence saying what holds or what is missing ("the innermost loop of C comes from axis k;
// the goal wants one from axis j"). What the Studio's Check button and `tessel lesson check`
// report.
#pragma once

#include <string>
#include <vector>

#include "app/lessons/Lesson.h"
#include "core/support/Error.h"

namespace tessel::lessons {

struct CheckResult {
  GoalCheck check;
  bool passed = false;
  std::string message;
};

struct StepGrade {
  bool passed = false;  ///< Every check passed.
  std::vector<CheckResult> results;
  /// Measured with a fraction_of_peak check (else 0): the schedule's GFLOP/s, the machine's FMA
  /// peak and their ratio, medians of alternating blocks.
  double gflops = 0, peakGflops = 0, fractionOfPeak = 0;
};

struct GradeOptions {
  /// Time spent measuring for a fraction_of_peak check (alternating blocks of the kernel and
  /// the FMA peak probe, at least three pairs).
  double measureSeconds = 1.0;
};

/// Grades `scheduleText` (the learner's schedule for `step`'s operator). A schedule that does
/// not parse or apply is a Diagnostic naming its line and column, as the schedule editor shows
/// it; a schedule that applies but misses the goal is a StepGrade with failed checks.
Expected<StepGrade> gradeSchedule(const LessonStep& step, const std::string& scheduleText,
                                  const GradeOptions& options = {});

}  // namespace tessel::lessons
