// tessel-studio: the desktop IDE for graphs and schedules (and, with --screenshot, a headless
// renderer of its window for documentation and CI).
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/studio/MainWindow.h"
#include "app/studio/ScreenshotMode.h"
#include "app/studio/StudioIcons.h"

namespace {

bool hasDisplay() {
  auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value && *value;
  };
  return set("DISPLAY") || set("WAYLAND_DISPLAY") || set("QT_QPA_PLATFORM");
}

bool wantsScreenshot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0) return true;
  return false;
}

bool wantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--version"))
      return true;
  return false;
}

int fail(const QString& message) {
  std::fprintf(stderr, "tessel-studio: %s\n", qPrintable(message));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Qt must know the platform before QApplication exists. Screenshot mode and --help need no
  // screen; a window does, and without one Qt would abort with a cryptic message.
  if (!hasDisplay()) {
    if (wantsScreenshot(argc, argv) || wantsHelp(argc, argv)) {
      qputenv("QT_QPA_PLATFORM", "offscreen");
    } else {
      std::fprintf(stderr,
                   "tessel-studio: no display (DISPLAY and WAYLAND_DISPLAY are unset).\n"
                   "  Render the window headless instead:\n"
                   "    tessel-studio --screenshot out.png [--view graph|timeline|schedule|tuning] MODEL_OR_PROJECT\n"
                   "  or run a project without the GUI:\n"
                   "    tessel project run FILE.tessel\n");
      return 2;
    }
  }

  QApplication app(argc, argv);
  QApplication::setApplicationName("Tessel Studio");
  QApplication::setOrganizationName("Tessel");
  QApplication::setApplicationVersion("0.4");
  QApplication::setWindowIcon(tessel::studio::studioIcon(tessel::studio::StudioIcon::Graph, QColor("#2f65ca")));
  QCommandLineParser parser;
  parser.setApplicationDescription("Tessel Studio: see, compare, edit and measure a model's graph and schedules.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("file", "An ONNX model or a .tessel project to open.", "[FILE]");
  QCommandLineOption screenshot("screenshot", "Render the window with FILE open into OUT.png and exit.", "OUT.png");
  QCommandLineOption view("view", "The view to show: graph, timeline, schedule or tuning.", "VIEW", "graph");
  QCommandLineOption size("size", "Window size for --screenshot.", "WxH", "1440x900");
  QCommandLineOption theme("theme", "light or dark (default: the remembered theme).", "THEME");
  QCommandLineOption colourBy("colour-by",
                              "Colour the graph by the tuning session kept beside the records (none, speedup, "
                              "roofline or trials) or by the model's last profile (time).",
                              "MODE", "none");
  QCommandLineOption timings("timings",
                             "With --screenshot: also print how long the open and the Graph view's layout took, and "
                             "the layout's edge crossings (key=value lines, for bench/graph_view.sh).");
  QCommandLineOption openGroup("open-group",
                               "With --screenshot: open this module group of the graph (and the groups around it), "
                               "e.g. /features/denseblock2, and show its top. May be given more than once.",
                               "PATH");
  parser.addOptions({screenshot, view, size, theme, colourBy, timings, openGroup});
  parser.process(app);

  const QStringList files = parser.positionalArguments();
  if (files.size() > 1) return fail("expected at most one file to open");
  tessel::studio::StudioView startView = tessel::studio::StudioView::Graph;
  if (!tessel::studio::parseStudioView(parser.value(view), &startView))
    return fail(QStringLiteral("--view %1: expected graph, timeline, schedule or tuning").arg(parser.value(view)));
  tessel::views::HeatMode heatMode = tessel::views::HeatMode::None;
  {
    bool known = false;
    for (auto mode : {tessel::views::HeatMode::None, tessel::views::HeatMode::Speedup,
                      tessel::views::HeatMode::Roofline, tessel::views::HeatMode::Trials,
                      tessel::views::HeatMode::Time})
      if (parser.value(colourBy).compare(tessel::views::heatModeName(mode), Qt::CaseInsensitive) == 0) {
        heatMode = mode;
        known = true;
      }
    if (!known)
      return fail(QStringLiteral("--colour-by %1: expected none, speedup, roofline, trials or time").arg(parser.value(colourBy)));
  }
  std::optional<tessel::views::Theme> startTheme;
  if (parser.isSet(theme)) {
    QString name = parser.value(theme).toLower();
    if (name != "light" && name != "dark")
      return fail(QStringLiteral("--theme %1: expected light or dark").arg(parser.value(theme)));
    startTheme = tessel::views::themeFromName(name);
  }

  tessel::studio::MainWindow window;
  if (parser.isSet(screenshot)) {
    tessel::studio::ScreenshotRequest request;
    request.output = parser.value(screenshot);
    if (files.isEmpty()) return fail("--screenshot needs a model or project to open");
    request.file = files.first();
    request.view = startView;
    request.theme = startTheme;
    request.colourBy = heatMode;
    request.openGroups = parser.values(openGroup);
    if (!tessel::studio::parseScreenshotSize(parser.value(size), &request.size))
      return fail(QStringLiteral("--size %1: expected WIDTHxHEIGHT, e.g. 1440x900").arg(parser.value(size)));
    QString error;
    tessel::studio::ScreenshotTimings measured;
    int code = tessel::studio::takeScreenshot(window, request, &error, parser.isSet(timings) ? &measured : nullptr);
    if (code != 0) return fail(error);
    std::printf("%s\n", qPrintable(QFileInfo(request.output).absoluteFilePath()));
    if (parser.isSet(timings))
      std::printf("compile_ms=%.0f\nfirst_picture_ms=%.0f\nfinal_layout_ms=%.0f\nlongest_stall_ms=%.0f\nboxes=%d\n"
                  "edges=%d\nedge_crossings=%lld\nboxes_crossed=%lld\nvisible_boxes=%d\n",
                  measured.compileMs, measured.firstPictureMs, measured.finalLayoutMs, measured.longestStallMs,
                  measured.boxes, measured.edges, (long long)measured.edgeCrossings,
                  (long long)measured.boxesCrossed, measured.visibleBoxes);
    return 0;
  }

  if (startTheme) window.setTheme(*startTheme);
  window.setHeatMode(heatMode);
  if (parser.isSet(view)) window.setCurrentView(startView);
  window.show();
  if (!files.isEmpty()) {
    window.openFile(files.first());
  } else {
    // Once the window is up, so the question appears over it.
    QTimer::singleShot(0, &window, [&window] { window.offerUntitledRecovery(); });
  }
  return app.exec();
}
