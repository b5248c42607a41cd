// ScreenshotMode: open, wait for quiet, grab, save.
#include "app/studio/ScreenshotMode.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QImage>
#include <QRegularExpression>
#include <QTimer>

namespace tessel::studio {

namespace {

// A finished job may start the next (compile, then layout, then lowering), so the window must
// stay idle across several polls before it counts as done.
constexpr int kPollMs = 50;
constexpr int kQuietPolls = 6;

}  // namespace

bool parseScreenshotSize(const QString& text, QSize* size) {
  static const QRegularExpression pattern(QStringLiteral("^(\\d{2,5})[xX](\\d{2,5})$"));
  auto match = pattern.match(text.trimmed());
  if (!match.hasMatch()) return false;
  int width = match.captured(1).toInt(), height = match.captured(2).toInt();
  if (width < 320 || height < 240 || width > 8192 || height > 8192) return false;
  *size = QSize(width, height);
  return true;
}

int takeScreenshot(MainWindow& window, const ScreenshotRequest& request, QString* error) {
  // Nobody is there to answer: open a project as saved, keeping any autosave for later.
  window.projects().setRecoveryPrompt(
      [](const QString&, const QDateTime&) { return ProjectController::RecoveryChoice::OpenSaved; });
  // A model with open input dimensions is shown with the proposed shapes (a batch of one).
  window.setInputShapesPrompt([](const QString&, const std::vector<frontend::OnnxInputInfo>&,
                                 const InputShapes& proposed) -> std::optional<InputShapes> { return proposed; });
  window.projects().setUntitledRecoveryPrompt(
      [](const QString&, const QDateTime&) { return ProjectController::RecoveryChoice::OpenSaved; });
  // A tuning records file with problems is reported in the log, which the screenshot shows.
  window.tuningRecords().setProblemNotice([](const QString&, const QString&) {});
  if (request.theme) window.setTheme(*request.theme);
  window.resize(request.size);
  window.setCurrentView(request.view);
  window.setHeatMode(request.colourBy);
  window.show();

  bool opened = false;
  QString failure;
  QObject::connect(&window, &MainWindow::fileOpened, &window, [&](const QString&) { opened = true; });
  QObject::connect(&window, &MainWindow::openFailed, &window,
                   [&](const QString&, const QString& message) { failure = message; });
  window.openFile(request.file);

  QElapsedTimer clock;
  clock.start();
  QEventLoop loop;
  QTimer poll;
  int quietPolls = 0;
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (!failure.isEmpty() || clock.elapsed() > request.timeoutMs) {
      loop.quit();
      return;
    }
    quietPolls = opened && window.isIdle() ? quietPolls + 1 : 0;
    if (quietPolls >= kQuietPolls) loop.quit();
  });
  poll.start(kPollMs);
  loop.exec();
  poll.stop();

  if (!failure.isEmpty()) {
    *error = failure;
    return 2;
  }
  if (quietPolls < kQuietPolls) {
    *error = QObject::tr("%1: still working after %2 s; no screenshot taken")
                 .arg(request.file)
                 .arg(request.timeoutMs / 1000);
    return 2;
  }
  // Let the last results paint (scene updates are posted events).
  QCoreApplication::processEvents();
  QImage image = window.grab().toImage();
  QDir().mkpath(QFileInfo(request.output).absolutePath());
  if (image.isNull() || !image.save(request.output, "PNG")) {
    *error = QObject::tr("%1: cannot write the screenshot").arg(request.output);
    return 2;
  }
  return 0;
}

}  // namespace tessel::studio
