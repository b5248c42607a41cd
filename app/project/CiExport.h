// A project exported for CI: a self-contained folder (the project, its model, reference data
// and tuning records, every path relative) with ready jobs for GitLab CI and GitHub Actions
// that install Tessel from its Debian packages, run the project and publish the JUnit report.
// The Studio's File > Export for CI writes it; so can anything else that holds a Project.
#pragma once

#include <string>
#include <vector>

#include "app/project/Project.h"
#include "core/support/Error.h"

namespace tessel::project {

/// The report file the jobs write and publish, relative to the folder.
inline constexpr const char* kCiReportFile = "tessel-report.xml";
/// The script holding the one command both jobs run, relative to the folder.
inline constexpr const char* kCiRunScript = "ci/run-project.sh";

/// What was written.
struct CiExport {
  std::string directory;
  std::string projectFile;          ///< DIRECTORY/NAME.tessel
  std::string command;              ///< The command the jobs run, from DIRECTORY.
  std::vector<std::string> files;   ///< Every file written, relative to DIRECTORY, sorted.
  std::vector<std::string> packages;  ///< The .deb files copied into tessel-packages/, by name.
};

/// Writes `project` for CI into `directory` (created when missing) as NAME.tessel:
///   NAME.tessel                     the project, paths relative to it
///   model/MODEL.onnx                the model (with its external data files, if any)
///   reference/                      the reference data, when the project names some
///   records/RECORDS                 the tuning records, when it names some
///   ci/run-project.sh               `tessel project run NAME.tessel --junit tessel-report.xml`
///   .gitlab-ci.yml                  a job: install the packages, run, report (artifacts:reports:junit)
///   .github/workflows/tessel.yml    the same for GitHub Actions (a JUnit report action)
///   tessel-packages/README.md       where the jobs expect the .deb files (scripts/package.sh)
///   tessel-packages/*.deb           `packages`, copied (project::tesselPackageFiles finds them)
///   README.md                       what the folder is and how to use it
/// An export the project enables writes to "module/" in the folder. Files already in
/// `directory` with these names are replaced; nothing else there is touched. The written
/// project is read back (as `tessel project check` would) before this returns, so the export
/// is known to load. `name` empty: the project's model's file stem.
Expected<CiExport> exportProjectForCi(const Project& project, const std::string& directory,
                                      const std::string& name = {}, const std::vector<std::string>& packages = {});

}  // namespace tessel::project
