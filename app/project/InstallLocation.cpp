#include "app/project/InstallLocation.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace tessel::project {

namespace fs = std::filesystem;

std::string sharedDataDirectory() {
  std::error_code error;
  // The executable itself, whatever the working directory or the name it was started by.
  fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (error) return "";
  fs::path data = executable.parent_path().parent_path() / "share" / "tessel";
  return fs::is_directory(data, error) ? data.string() : "";
}

std::string exampleProjectPath() {
  std::string data = sharedDataDirectory();
  if (data.empty()) return "";
  fs::path project = fs::path(data) / "examples" / "tiny_resnet.tessel";
  std::error_code error;
  return fs::is_regular_file(project, error) ? project.string() : "";
}

Expected<std::string> editableExampleProject() {
  std::string shipped = exampleProjectPath();
  if (shipped.empty())
    return Diagnostic{"the example project is not installed", sharedDataDirectory().empty() ? "share/tessel" : sharedDataDirectory(),
                      0, 0, "reinstall the tessel package, or build Tessel (the build tree has build/share/tessel)"};
  fs::path userData;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) userData = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home) userData = fs::path(home) / ".local" / "share";
  else return Diagnostic{"cannot tell where to copy the example: neither XDG_DATA_HOME nor HOME is set", "", 0, 0, ""};
  fs::path source = fs::path(shipped).parent_path();
  fs::path target = userData / "tessel" / "examples";
  std::error_code error;
  fs::create_directories(target, error);
  // skip_existing: a file the user has (an edited project, its autosave) stays as it is.
  if (!error) fs::copy(source, target, fs::copy_options::recursive | fs::copy_options::skip_existing, error);
  if (error)
    return Diagnostic{"cannot copy the examples: " + error.message(), target.string(), 0, 0,
                      "make the directory writable, or set XDG_DATA_HOME to one that is"};
  return (target / fs::path(shipped).filename()).string();
}

std::vector<std::string> tesselPackageFiles(const std::string& given) {
  std::error_code error;
  const char* chosen = std::getenv("TESSEL_PACKAGES_DIR");
  fs::path folder = !given.empty() ? fs::path(given) : chosen && *chosen ? fs::path(chosen) : fs::path();
  if (folder.empty()) {
    fs::path executable = fs::read_symlink("/proc/self/exe", error);
    if (error) return {};
    folder = executable.parent_path().parent_path() / "packages";
  }
  std::vector<std::string> packages;
  if (!fs::is_directory(folder, error)) return packages;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    std::string name = entry.path().filename().string();
    bool ours = name.rfind("tessel_", 0) == 0 || name.rfind("libtessel-runtime", 0) == 0;
    if (ours && entry.path().extension() == ".deb" && entry.is_regular_file(error)) packages.push_back(entry.path().string());
  }
  std::sort(packages.begin(), packages.end());
  return packages;
}

}  // namespace tessel::project
