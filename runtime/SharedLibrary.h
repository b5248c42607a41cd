// A shared library opened with dlopen: the kernels of an exported model.
#pragma once

#include <string>

namespace tessel::runtime {

/// Owns one dlopen handle (RTLD_NOW, so an unresolved symbol fails at open, not mid-run;
/// RTLD_LOCAL, so two exported models with equally named kernels do not collide). The
/// runtime's C backend API (tessel_parallel_for, ...) that kernels call resolves from the
/// libtessel_runtime already loaded in the process.
class SharedLibrary {
public:
  /// Opens `path`; throws Error with dlerror()'s explanation when it cannot.
  explicit SharedLibrary(const std::string& path);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  /// The address of symbol `name`, or null when the library does not define it.
  void* findSymbol(const std::string& name) const;
  const std::string& path() const { return path_; }

private:
  std::string path_;
  void* handle_ = nullptr;
};

}  // namespace tessel::runtime
