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

#include <algorithm>

#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/graph/LayoutQuality.h"

namespace tessel::studio {

namespace {

// A finished job may start the next (compile, then layout, then lowering), so the window must
// stay idle across several polls before it counts as done.
constexpr int kPollMs = 50;
constexpr int kQuietPolls = 6;
constexpr int kTickMs = 5;

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

int takeScreenshot(MainWindow& window, const ScreenshotRequest& request, QString* error, ScreenshotTimings* timings) {
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
  QElapsedTimer clock;
  clock.start();
  double openedMs = 0, lastBusyMs = 0;
  QObject::connect(&window, &MainWindow::fileOpened, &window, [&](const QString&) {
    if (!opened) openedMs = lastBusyMs = double(clock.nsecsElapsed()) / 1e6;
    opened = true;
  });
  QObject::connect(&window, &MainWindow::openFailed, &window,
                   [&](const QString&, const QString& message) { failure = message; });
  window.openFile(request.file);

  QEventLoop loop;
  QTimer poll;
  int quietPolls = 0;
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (!failure.isEmpty() || clock.elapsed() > request.timeoutMs) {
      loop.quit();
      return;
    }
    bool idle = opened && window.isIdle();
    if (opened && !idle) lastBusyMs = double(clock.nsecsElapsed()) / 1e6;
    quietPolls = idle ? quietPolls + 1 : 0;
    if (quietPolls >= kQuietPolls) loop.quit();
  });
  // With --timings: a tick every 5 ms sees when the Graph view first shows a layout, and the
  // gaps between ticks are the event loop's stalls.
  QTimer tick;
  tick.setTimerType(Qt::PreciseTimer);
  double lastTickMs = -1;
  if (timings) {
    QObject::connect(&tick, &QTimer::timeout, &loop, [&] {
      double now = double(clock.nsecsElapsed()) / 1e6;
      if (opened && lastTickMs >= openedMs)
        timings->longestStallMs = std::max(timings->longestStallMs, now - lastTickMs - kTickMs);
      lastTickMs = now;
      if (opened && timings->firstPictureMs < 0 && window.graphWorkbench()->currentLayout())
        timings->firstPictureMs = now - openedMs;
    });
    tick.start(kTickMs);
  }
  poll.start(kPollMs);
  loop.exec();
  poll.stop();
  tick.stop();
  if (timings && opened) {
    timings->compileMs = openedMs;
    // The last job can end a poll before its layout reaches the view: the later of the two.
    timings->finalLayoutMs = std::max(lastBusyMs - openedMs, timings->firstPictureMs);
    if (auto layout = window.graphWorkbench()->currentLayout()) {
      views::LayoutQuality quality = views::measureLayoutQuality(*layout);
      timings->boxes = quality.boxes;
      timings->edges = quality.edges;
      timings->edgeCrossings = quality.edgeCrossings;
      timings->boxesCrossed = quality.boxesCrossed;
      QGraphicsView* view = window.graphWorkbench()->view();
      QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
      for (const views::LayoutNode& node : layout->nodes) timings->visibleBoxes += visible.intersects(node.box);
    }
  }

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
