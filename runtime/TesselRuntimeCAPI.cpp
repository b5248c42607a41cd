// The C API (tessel_runtime.h) over GraphExecutor: every exception becomes a status and a message.
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "runtime/GraphExecutor.h"
#include "runtime/tessel_runtime.h"

struct TesselModule {
  std::unique_ptr<tessel::runtime::GraphExecutor> executor;
};

namespace {

thread_local std::string lastError;

int failWith(std::string message) {
  try {
    lastError = std::move(message);
  } catch (...) {
    // Out of memory while recording the message; the status still reports the failure.
  }
  return TESSEL_ERROR;
}

/// Runs `body`, turning any exception into TESSEL_ERROR with its message.
template <class Body>
int guarded(Body&& body) {
  try {
    body();
    return TESSEL_OK;
  } catch (const std::bad_alloc&) {
    return failWith("out of memory");
  } catch (const std::exception& error) {
    return failWith(error.what());
  } catch (...) {
    return failWith("unknown error");
  }
}

bool checkArguments(TesselModule* module, const char* name, const char* function) {
  if (!module) return failWith(std::string(function) + ": module is NULL"), false;
  if (!name) return failWith(std::string(function) + ": name is NULL"), false;
  return true;
}

}  // namespace

extern "C" {

int tessel_module_load(const char* directory, TesselModule** module) {
  if (!module) return failWith("tessel_module_load: the result pointer is NULL");
  *module = nullptr;
  if (!directory) return failWith("tessel_module_load: directory is NULL");
  return guarded([&] {
    auto handle = std::make_unique<TesselModule>();
    handle->executor = tessel::runtime::GraphExecutor::load(directory);
    *module = handle.release();
  });
}

int tessel_module_set_input(TesselModule* module, const char* name, const void* data, size_t bytes) {
  if (!checkArguments(module, name, "tessel_module_set_input")) return TESSEL_ERROR;
  return guarded([&] { module->executor->setInput(name, data, bytes); });
}

int tessel_module_run(TesselModule* module) {
  if (!module) return failWith("tessel_module_run: module is NULL");
  return guarded([&] { module->executor->run(); });
}

int tessel_module_get_output(TesselModule* module, const char* name, void* data, size_t bytes) {
  if (!checkArguments(module, name, "tessel_module_get_output")) return TESSEL_ERROR;
  return guarded([&] { module->executor->getOutput(name, data, bytes); });
}

int tessel_module_tensor_bytes(TesselModule* module, const char* name, size_t* bytes) {
  if (!checkArguments(module, name, "tessel_module_tensor_bytes")) return TESSEL_ERROR;
  if (!bytes) return failWith("tessel_module_tensor_bytes: the result pointer is NULL");
  return guarded([&] { *bytes = static_cast<size_t>(module->executor->tensorInfo(name).byteSize()); });
}

void tessel_module_free(TesselModule* module) { delete module; }

const char* tessel_last_error(void) { return lastError.c_str(); }

}  // extern "C"
