// Tessel Studio's light and dark themes: the application palette, the style sheet, and the
// colours the views draw graphs, diffs and code with, so both themes stay readable.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

class QApplication;

namespace tessel::views {

enum class Theme { Light, Dark };

/// "light" / "dark"; anything else is std::nullopt-like: themeFromName returns `fallback`.
QString themeName(Theme theme);
Theme themeFromName(const QString& name, Theme fallback = Theme::Light);

/// Colours the views use where a palette role does not say enough (graph canvases, op
/// categories, pass diffs, code). Views read them through studioColors(palette) so a theme
/// switch, which changes the application palette, is all they need to follow.
struct ThemeColors {
  QColor canvas;         ///< Background of graph and plot canvases.
  QColor gridLine;       ///< Faint lines on canvases.
  QColor nodeText;       ///< Text on graph nodes.
  QColor nodeBorder;
  QColor edge;           ///< Graph edges and their labels.
  QColor selection;      ///< Selected node outline.
  QColor clusterFill;    ///< Fused group background.
  // Op categories (fill colours of graph nodes).
  QColor convolution, matmul, elementwise, activation, normalization, pooling, reshape, reduction,
      fused, constant, input, other;
  // Pass diff overlay.
  QColor added, removed, changed, fusedInto;
  // Code and diagnostics.
  QColor keyword, number, comment, error, warning;
};

/// The colours of `theme`.
ThemeColors themeColors(Theme theme);
/// The colours matching a palette (decided by its window colour's lightness), for views that
/// only see their own palette().
ThemeColors themeColors(const QPalette& palette);
/// The fill colour of a node whose operator is `op` ("Conv", "Relu", "fused_conv_add_relu").
QColor operatorColor(const ThemeColors& colors, const QString& op);

/// The palette of `theme` (Fusion style colours tuned for long sessions).
QPalette themePalette(Theme theme);
/// The style sheet (resources/themes/studio.qss.inc); it refers to palette roles only, so one
/// sheet serves both themes.
QString themeStyleSheet();
/// Sets the Fusion style, the palette and the style sheet on the whole application. Widgets
/// that draw with palette roles or themeColors(palette()) follow immediately.
void applyTheme(QApplication& application, Theme theme);

}  // namespace tessel::views
