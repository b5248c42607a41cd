// The one exception type the runtime throws: a deployed model reports problems with it.
#pragma once

#include <stdexcept>
#include <string>

namespace tessel::runtime {

/// A runtime failure a caller can act on: a shape or size mismatch, a wrong argument to a
/// packed function, a missing device, a kernel that reported failure. The message says what
/// was expected and what was found.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

}  // namespace tessel::runtime
