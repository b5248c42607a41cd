// dlopen/dlsym behind an owning handle.
#include "runtime/SharedLibrary.h"

#include <dlfcn.h>

#include "runtime/Error.h"

namespace tessel::runtime {

SharedLibrary::SharedLibrary(const std::string& path) : path_(path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* reason = dlerror();
    throw Error(path + ": cannot load the kernel library: " + (reason ? reason : "unknown dlopen failure"));
  }
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

void* SharedLibrary::findSymbol(const std::string& name) const {
  dlerror();  // clear a stale error so a null result is read correctly
  return dlsym(handle_, name.c_str());
}

}  // namespace tessel::runtime
