// What MainWindow.cpp and MainWindowSetup.cpp share. Private to the Studio's main window.
#pragma once

#include "app/studio/MainWindow.h"

namespace tessel::studio {

/// How long a transient status-bar message stays.
constexpr int kStatusMessageMs = 8000;

/// The view's slot in MainWindow::views_ (and its Ctrl+number, less one).
inline int indexOf(StudioView view) { return static_cast<int>(view); }

}  // namespace tessel::studio
