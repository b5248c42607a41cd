// The graph compiler driver (being written).
#include "compiler/driver/Driver.h"

namespace tessel::driver {
}  // namespace tessel::driver
