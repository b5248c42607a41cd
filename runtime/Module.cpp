// Module base: anchors its vtable in the runtime library and reports missing functions.
#include "runtime/Module.h"

namespace tessel::runtime {

Module::~Module() = default;

PackedFunc Module::requireFunction(const std::string& name) const {
  if (PackedFunc function = getFunction(name)) return function;
  std::string available;
  for (const std::string& candidate : functionNames()) available += (available.empty() ? "" : ", ") + candidate;
  throw Error(typeKey() + " module has no function '" + name + "' (it has: " +
              (available.empty() ? "none" : available) + ")");
}

}  // namespace tessel::runtime
