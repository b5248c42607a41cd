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

#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/graph/LayoutQuality.h"
#include "views/timeline/TimelineWorkbench.h"

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

namespace {

// Opens each of `paths` ("/features/denseblock2") and the groups around it in the Graph view;
// a message naming the first that the graph does not have (empty when all are there).
QString openModuleGroups(views::GraphWorkbench& workbench, const QStringList& paths) {
  auto layout = workbench.currentLayout();
  if (!layout || !layout->modules)
    return QObject::tr("--open-group: the graph (%1 boxes) is not drawn by module groups").arg(layout ? layout->nodes.size() : 0);
  const QStringList known = layout->modules->groups();
  for (const QString& path : paths) {
    QString id = views::kModuleGroupIdPrefix + path;
    if (!known.contains(id))
      return QObject::tr("--open-group %1: the graph has no such module group (its groups: %2)")
          .arg(path, known.mid(0, 8).join(QStringLiteral(", ")).remove(views::kModuleGroupIdPrefix));
    for (const QString& group : known)
      if (group == id || id.startsWith(group + QLatin1Char('/'))) workbench.setModuleGroupExpanded(group, true);
  }
  return {};
}

// Scrolls so the group's frame starts near the top of the view, its title readable.
void showTopOf(views::GraphWorkbench& workbench, const QString& id) {
  views::GraphView* view = workbench.view();
  QRectF frame = view->graphScene()->itemRect(id);
  if (frame.isNull()) return;
  if (view->zoom() < views::GraphView::readableZoom) view->setZoom(views::GraphView::readableZoom);
  QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
  view->centerOn(frame.center().x(), frame.top() - 40 + visible.height() / 2);
}

}  // namespace

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

  // What --timings measures: the Graph view's layout, or with --view timeline the step shown.
  auto measuredView = [&]() -> views::GraphView* {
    return request.view == StudioView::Timeline ? window.timelineWorkbench()->stepView() : window.graphWorkbench()->view();
  };
  QEventLoop loop;
  QTimer poll;
  int quietPolls = 0;
  bool groupsOpened = request.openGroups.isEmpty();
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (!failure.isEmpty() || clock.elapsed() > request.timeoutMs) {
      loop.quit();
      return;
    }
    bool idle = opened && window.isIdle();
    if (opened && !idle) lastBusyMs = double(clock.nsecsElapsed()) / 1e6;
    quietPolls = idle ? quietPolls + 1 : 0;
    if (quietPolls >= kQuietPolls && !groupsOpened) {
      // The model is shown: open the groups asked for, then wait for that layout as well.
      groupsOpened = true;
      quietPolls = 0;
      if (QString problem = openModuleGroups(*window.graphWorkbench(), request.openGroups); !problem.isEmpty()) {
        failure = problem;
        loop.quit();
      }
      return;
    }
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
      if (opened && timings->firstPictureMs < 0 && measuredView()->graphLayout())
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
    if (auto layout = measuredView()->graphLayout()) {
      views::LayoutQuality quality = views::measureLayoutQuality(*layout);
      timings->boxes = quality.boxes;
      timings->edges = quality.edges;
      timings->edgeCrossings = quality.edgeCrossings;
      timings->boxesCrossed = quality.boxesCrossed;
      QGraphicsView* view = measuredView();
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
  if (!request.openGroups.isEmpty()) {
    showTopOf(*window.graphWorkbench(), views::kModuleGroupIdPrefix + request.openGroups.first());
    // The breadcrumbs follow a moved view a moment later (they wait for the scrolling to stop).
    QEventLoop settle;
    QTimer::singleShot(300, &settle, &QEventLoop::quit);
    settle.exec();
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
