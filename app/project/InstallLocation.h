// Where the programs find their shared files (examples, later lessons): beside their own
// executable, as bin/../share/tessel, the same in the build tree (build/bin, build/share) and
// in an installed package (/usr/bin, /usr/share). Nothing depends on the source tree or on
// the install prefix chosen at configure time, so a relocated install works too.
#pragma once

#include <string>
#include <vector>

#include "core/support/Error.h"

namespace tessel::project {

/// The directory holding the running program's shared files (".../share/tessel"), or empty
/// when it does not exist (a program copied somewhere on its own).
std::string sharedDataDirectory();

/// The example project shipped with Tessel (share/tessel/examples/tiny_resnet.tessel), or empty
/// when it is not installed.
std::string exampleProjectPath();

/// The example project in a copy the user can edit and save: the shipped examples are copied
/// once into the per-user data directory ($XDG_DATA_HOME/tessel/examples, else
/// ~/.local/share/tessel/examples) and that copy is returned from then on, edits and all (files
/// already there are never overwritten). A Diagnostic when the examples are not installed or
/// the copy cannot be made.
Expected<std::string> editableExampleProject();

/// Tessel's own Debian packages (tessel, libtessel-runtime, libtessel-runtime-dev .deb files)
/// for Export for CI to ship with a project: those in `folder` when given, else in
/// $TESSEL_PACKAGES_DIR when it is set, else those scripts/package.sh left beside a build
/// tree's programs (build/packages). Sorted; empty when there are none (an installed Tessel
/// keeps no .deb files).
std::vector<std::string> tesselPackageFiles(const std::string& folder = {});

}  // namespace tessel::project
