// The process-wide Graphviz lock (see GraphvizMutex.h).
#include "views/graph/GraphvizMutex.h"

namespace tessel::views {

std::mutex& graphvizMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace tessel::views
