// A project run as a JUnit XML report, the format the test reporters of Jenkins, GitLab CI and
// GitHub Actions read: one test case per check, so a CI page lists which check of which project
// failed without anyone reading the log.
#pragma once

#include <string>

#include "app/project/ProjectRunner.h"
#include "core/support/Error.h"

namespace tessel::project {

/// The report of running the project at `projectFile`: `run` is what runProject returned, or
/// the Diagnostic that stopped the run (a project that cannot be read, a model that fails to
/// compile, a broken schedule), which becomes one test case with an <error>.
///
/// Test cases, in the order a run checks them:
///   "compile"               import, schedules and compile (an <error> when the run stopped);
///   "output NAME"           one per output compared with the reference data (a <failure> when it
///                           differs; one skipped "outputs" when the project names no reference);
///   "benchmark"             the timed runs (skipped when the outputs differ: timing wrong code
///                           means nothing);
///   "expectation NAME"      one per benchmark expectation (a <failure> when it is not met);
///   "export"                when the run exported the module.
/// `timestamp` is ISO 8601 ("2026-11-27T18:59:17"); empty leaves the attribute out.
std::string junitReport(const std::string& projectFile, const Expected<ProjectRunReport>& run,
                        const std::string& timestamp = {});

}  // namespace tessel::project
