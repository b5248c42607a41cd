// What MainWindow.cpp and MainWindowSetup.cpp share. Private to the Studio's main window.
#pragma once

#include <QObject>

#include <exception>

#include "app/studio/MainWindow.h"

namespace tessel::studio {

/// How long a transient status-bar message stays.
constexpr int kStatusMessageMs = 8000;

/// The view's slot in MainWindow::views_ (and its Ctrl+number, less one).
inline int indexOf(StudioView view) { return static_cast<int>(view); }

/// An exception out of the compiler is a bug: the message says so.
inline QString describeException(const std::exception& error) {
  return QObject::tr("internal compiler error (please report): %1").arg(error.what());
}

}  // namespace tessel::studio
