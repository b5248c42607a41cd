#include "app/project/CiExport.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "app/project/AtomicFile.h"
#include "compiler/frontend/onnx/OnnxExternalData.h"

namespace tessel::project {

namespace {

namespace fs = std::filesystem;

Diagnostic copyFailure(const fs::path& from, const fs::path& to, const std::error_code& error) {
  return {"cannot copy " + from.string() + " to " + to.string() + ": " + error.message(), to.string(), 0, 0,
          "check that the folder is writable and has space"};
}

/// Copies `from` (a file or a folder, recursively) to `to`, replacing what is there.
Status copyInto(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::create_directories(to.parent_path(), error);
  if (!error) {
    if (fs::is_directory(from, error)) {
      fs::create_directories(to, error);
      if (!error) fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, error);
    } else if (!error) {
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
    }
  }
  if (error) return copyFailure(from, to, error);
  return Status::success();
}

/// The folder's files, relative to it and sorted.
std::vector<std::string> filesUnder(const fs::path& directory) {
  std::vector<std::string> files;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(directory, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error))
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), directory).string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string runScript(const std::string& projectFile) {
  return "#!/bin/sh\n"
         "# The command both CI jobs run (.gitlab-ci.yml, .github/workflows/tessel.yml); run it by hand\n"
         "# the same way: sh " +
         std::string(kCiRunScript) +
         "\n"
         "# Exit status: 0 all checks pass, 2 an error (project, model, schedule), 3 outputs differ from\n"
         "# the reference data, 4 an expectation failed. The JUnit report is written in every case.\n"
         "set -e\n"
         "cd \"$(dirname \"$0\")/..\"\n"
         "exec tessel project run " +
         projectFile + " --junit " + kCiReportFile + " \"$@\"\n";
}

// Both jobs install the packages from tessel-packages/ on Debian 12, the system they are built
// for; apt resolves their dependencies from Debian.
std::string gitlabJob() {
  return "# GitLab CI: runs the Tessel project and shows its checks on the pipeline's Tests page.\n"
         "# Written by Tessel Studio (File > Export for CI).\n"
         "tessel-project:\n"
         "  image: debian:12\n"
         "  script:\n"
         "    - apt-get update -qq\n"
         "    - apt-get install -y -qq ./tessel-packages/*.deb\n"
         "    - sh " +
         std::string(kCiRunScript) +
         "\n"
         "  artifacts:\n"
         "    when: always\n"
         "    paths:\n"
         "      - " +
         kCiReportFile +
         "\n"
         "    reports:\n"
         "      junit: " +
         kCiReportFile + "\n";
}

std::string githubWorkflow() {
  return "# GitHub Actions: runs the Tessel project and publishes its checks as a JUnit report.\n"
         "# Written by Tessel Studio (File > Export for CI).\n"
         "name: Tessel project\n"
         "on: [push, pull_request]\n"
         "jobs:\n"
         "  tessel-project:\n"
         "    runs-on: ubuntu-latest\n"
         "    container: debian:12\n"
         "    permissions:\n"
         "      contents: read\n"
         "      checks: write\n"
         "    steps:\n"
         "      - uses: actions/checkout@v4\n"
         "      - name: Install Tessel\n"
         "        run: apt-get update -qq && apt-get install -y -qq ./tessel-packages/*.deb\n"
         "      - name: Run the project\n"
         "        run: sh " +
         std::string(kCiRunScript) +
         "\n"
         "      - name: Publish the report\n"
         "        if: always()\n"
         "        uses: mikepenz/action-junit-report@v4\n"
         "        with:\n"
         "          report_paths: " +
         kCiReportFile +
         "\n"
         "      - name: Keep the report\n"
         "        if: always()\n"
         "        uses: actions/upload-artifact@v4\n"
         "        with:\n"
         "          name: tessel-report\n"
         "          path: " +
         kCiReportFile + "\n";
}

std::string packagesReadme(const std::vector<std::string>& copied) {
  std::string text = "# Tessel packages for CI\n\n"
                     "The CI jobs install Tessel from the `.deb` files in this folder.";
  if (!copied.empty()) {
    text += " The export copied these, the\npackages of the Tessel that exported the project:\n\n";
    for (const std::string& name : copied) text += "- `" + name + "`\n";
    text += "\nTo update them, build new ones from a Tessel checkout with `scripts/package.sh` and copy\n"
            "`build/packages/*.deb` here";
  } else {
    text += " Build them from a Tessel\ncheckout with `scripts/package.sh` and copy `build/packages/*.deb` here";
  }
  return text + " (tessel, libtessel-runtime, libtessel-runtime-dev), or change the jobs'\n"
                "install step to your own package repository.\n";
}

std::string folderReadme(const std::string& projectFile) {
  return "# " + projectFile +
         " for CI\n\n"
         "Exported by Tessel Studio (File > Export for CI). Everything the project needs is in this\n"
         "folder, with paths relative to it: the model in `model/`, the reference data in\n"
         "`reference/`, tuning records in `records/`.\n\n"
         "- `sh " +
         kCiRunScript +
         "` runs the project as CI does: compile with the saved schedules, compare with the\n"
         "  reference data, benchmark, check the expectations, and write `" +
         kCiReportFile +
         "` (JUnit XML).\n"
         "- `.gitlab-ci.yml` and `.github/workflows/tessel.yml` run that script on Debian 12 after\n"
         "  installing Tessel from `tessel-packages/` (see the README there).\n";
}

}  // namespace

Expected<CiExport> exportProjectForCi(const Project& project, const std::string& directory, const std::string& name,
                                      const std::vector<std::string>& packages) {
  fs::path root = fs::absolute(directory);
  std::string stem = name.empty() ? fs::path(project.model).stem().string() : name;
  if (stem.empty()) return Diagnostic{"the project has no model to export", directory, 0, 0, "open a model first"};
  std::error_code error;
  fs::create_directories(root, error);
  if (error)
    return Diagnostic{"cannot create the folder: " + error.message(), root.string(), 0, 0, "choose a writable folder"};

  Project exported = project;
  fs::path model = fs::path(project.model);
  exported.model = (root / "model" / model.filename()).string();
  if (Status copied = copyInto(model, exported.model); !copied) return copied.error();
  // A model saved with external data keeps its tensors in files beside it; they travel along.
  auto externalFiles = frontend::externalDataFiles(project.model);
  if (!externalFiles) return externalFiles.error();
  for (const std::string& file : *externalFiles) {
    fs::path relative(file);
    bool escapes = relative.is_absolute();
    for (const auto& part : relative) escapes = escapes || part == "..";
    if (escapes)
      return Diagnostic{"the model keeps data in '" + file + "', outside its folder", project.model, 0, 0,
                        "save the model with its external data beside it (ONNX requires a relative path below it)"};
    if (Status copied = copyInto(model.parent_path() / file, root / "model" / file); !copied) return copied.error();
  }
  if (!project.reference.directory.empty()) {
    exported.reference.directory = (root / "reference").string();
    if (Status copied = copyInto(project.reference.directory, exported.reference.directory); !copied)
      return copied.error();
  }
  if (!project.tuningRecords.empty()) {
    exported.tuningRecords = (root / "records" / fs::path(project.tuningRecords).filename()).string();
    if (Status copied = copyInto(project.tuningRecords, exported.tuningRecords); !copied) return copied.error();
  }
  if (exported.exportSettings.enabled) exported.exportSettings.directory = (root / "module").string();

  std::vector<std::string> copiedPackages;
  for (const std::string& package : packages) {
    fs::path from(package);
    if (from.extension() != ".deb")
      return Diagnostic{"not a Debian package (.deb)", package, 0, 0, "give Tessel's .deb files (scripts/package.sh)"};
    if (Status copied = copyInto(from, root / "tessel-packages" / from.filename()); !copied) return copied.error();
    copiedPackages.push_back(from.filename().string());
  }

  std::string projectFile = stem + kProjectExtension;
  const std::pair<std::string, std::string> texts[] = {
      {projectFile, formatProject(exported, (root / projectFile).string())},
      {kCiRunScript, runScript(projectFile)},
      {".gitlab-ci.yml", gitlabJob()},
      {".github/workflows/tessel.yml", githubWorkflow()},
      {"tessel-packages/README.md", packagesReadme(copiedPackages)},
      {"README.md", folderReadme(projectFile)},
  };
  for (const auto& [relative, text] : texts) {
    fs::path path = root / relative;
    fs::create_directories(path.parent_path(), error);
    Status written = writeFileAtomically(path.string(), text);
    if (!written) return written.error();
  }
  fs::permissions(root / kCiRunScript, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, error);

  // Read back as `tessel project run` will read it in CI.
  auto reloaded = loadProject((root / projectFile).string());
  if (!reloaded) return reloaded.error();

  CiExport result;
  result.directory = root.string();
  result.projectFile = (root / projectFile).string();
  result.command = "sh " + std::string(kCiRunScript);
  result.files = filesUnder(root);
  result.packages = copiedPackages;
  return result;
}

}  // namespace tessel::project
