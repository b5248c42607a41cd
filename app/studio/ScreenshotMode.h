// Screenshot mode (`tessel-studio --screenshot OUT.png ...`): opens a file, waits until every
// background job (import, compile, layout, lowering) has finished, grabs the window and saves
// it, for documentation and CI. Works headless on the offscreen platform.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

#include "app/studio/MainWindow.h"
#include "views/common/Theme.h"

namespace tessel::studio {

struct ScreenshotRequest {
  QString output;                       ///< The PNG to write.
  QString file;                         ///< Model or project to open.
  StudioView view = StudioView::Graph;
  QSize size{1440, 900};
  std::optional<views::Theme> theme;    ///< The remembered theme when unset.
  views::HeatMode colourBy = views::HeatMode::None;  ///< --colour-by: the graph's tuning heat map.
  /// --open-group: module groups of the Graph view to open once it shows the model
  /// ("/features/denseblock2", with the groups around it), the view then showing the first's top.
  QStringList openGroups;
  int timeoutMs = 10 * 60 * 1000;       ///< Gives up (exit 2) when work takes longer.
};

/// What --timings reports (bench/graph_view.sh reads it): how long opening took and how the
/// Graph view's layout went (with --view timeline, the layout of the step the Timeline shows),
/// measured while the screenshot waited.
struct ScreenshotTimings {
  double compileMs = 0;       ///< From asking to open the file until it was compiled (or imported to view).
  double firstPictureMs = -1; ///< From then until the Graph view first showed a layout (-1: never).
  double finalLayoutMs = -1;  ///< From then until the last background job ended (within 50 ms).
  double longestStallMs = 0;  ///< The longest the event loop was unresponsive after the open (5 ms ticks).
  int boxes = 0, edges = 0;   ///< Of the layout shown at the end.
  int64_t edgeCrossings = 0, boxesCrossed = 0;  ///< views::measureLayoutQuality of it.
  int visibleBoxes = 0;       ///< Boxes inside the view's initial viewport (0: the user sees none).
};

/// Parses the value of --size ("1440x900"); false when malformed or absurd.
bool parseScreenshotSize(const QString& text, QSize* size);

/// Opens request.file in `window`, shows it at request.size with request.view and theme,
/// waits for every job to finish, and saves a grab of the window to request.output.
/// Returns the exit code (0, or 2 with `error` set: the file did not open, the wait timed
/// out or the PNG could not be written). Runs the event loop while it waits.
/// With `timings`, also fills it in.
int takeScreenshot(MainWindow& window, const ScreenshotRequest& request, QString* error,
                   ScreenshotTimings* timings = nullptr);

}  // namespace tessel::studio
