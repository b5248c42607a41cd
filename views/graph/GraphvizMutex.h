// The one process-wide lock every Graphviz (gvc/cgraph) call must hold: Graphviz keeps global
// state and is not thread-safe, and layouts run on worker threads.
#pragma once

#include <mutex>

namespace tessel::views {

/// Hold this (std::lock_guard) around every call into libgvc or libcgraph, in any view.
std::mutex& graphvizMutex();

}  // namespace tessel::views
