// Shared by the Studio's test suites: settings isolated in a temporary directory, example
// model paths, and waiting for a main window to finish its background work.
#pragma once

#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "app/studio/MainWindow.h"

namespace tessel::studio::testing {

inline QString example(const char* name) {
  return QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/") + name;
}

/// Drops the offscreen platform's "does not support propagateSizeHints()" warning, printed
/// for every dock shown, so real warnings stand out.
inline void quietOffscreenWarnings() {
  static QtMessageHandler previous = nullptr;
  previous = qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (message.contains("propagateSizeHints")) return;
    if (previous) previous(type, context, message);
  });
}

/// Points every QSettings of this process at `dir` (call before the first QSettings exists),
/// so tests neither read nor overwrite the user's Studio settings.
inline void isolateSettings(const QTemporaryDir& dir) {
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName("Tessel");
  QCoreApplication::setApplicationName("Tessel Studio Tests");
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir.path());
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.path());
  // Untitled projects autosave into the per-user state directory: keep it in `dir` too.
  qputenv("XDG_STATE_HOME", dir.filePath("state").toUtf8());
  quietOffscreenWarnings();
}

inline void clearSettings() {
  QSettings settings;
  settings.clear();
  settings.sync();
}

/// Opens `path` and waits until the window has shown it and every job is done.
inline bool openAndWait(MainWindow& window, const QString& path, int timeoutMs = 120000) {
  QSignalSpy opened(&window, &MainWindow::fileOpened);
  window.openFile(path);
  if (!QTest::qWaitFor([&] { return opened.count() > 0; }, timeoutMs)) return false;
  return QTest::qWaitFor([&] { return window.isIdle(); }, timeoutMs);
}

}  // namespace tessel::studio::testing
