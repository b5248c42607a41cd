// Theme: palettes, the shared style sheet and the graph colours of the light and dark themes.
#include "views/common/Theme.h"

#include <QApplication>
#include <QStyleFactory>

namespace tessel::views {

namespace {

// The style sheet lives in resources/ as a raw string, so it is compiled in (no resource
// compiler step) and a change to it rebuilds this file.
const char* const kStyleSheet =
#include "resources/themes/studio.qss.inc"
    ;

ThemeColors lightColors() {
  ThemeColors c;
  c.canvas = QColor("#fbfbfc");
  c.gridLine = QColor("#ececf0");
  c.nodeText = QColor("#1f2328");
  c.nodeBorder = QColor("#8c959f");
  c.edge = QColor("#6e7781");
  c.selection = QColor("#0969da");
  c.clusterFill = QColor("#f1f3f7");
  c.convolution = QColor("#cfe2ff");
  c.matmul = QColor("#d8d3f7");
  c.elementwise = QColor("#d7f0dd");
  c.activation = QColor("#fde8c8");
  c.normalization = QColor("#f6d5e5");
  c.pooling = QColor("#cdeff0");
  c.reshape = QColor("#e9e6df");
  c.reduction = QColor("#f3e3c3");
  c.fused = QColor("#ffe7a8");
  c.constant = QColor("#eeeeee");
  c.input = QColor("#e3f2d0");
  c.other = QColor("#e6e8eb");
  c.added = QColor("#1a7f37");
  c.removed = QColor("#cf222e");
  c.changed = QColor("#9a6700");
  c.fusedInto = QColor("#8250df");
  c.keyword = QColor("#cf222e");
  c.number = QColor("#0550ae");
  c.comment = QColor("#6e7781");
  c.error = QColor("#d1242f");
  c.warning = QColor("#bf8700");
  return c;
}

ThemeColors darkColors() {
  ThemeColors c;
  c.canvas = QColor("#1e1f22");
  c.gridLine = QColor("#2b2d30");
  c.nodeText = QColor("#e6e6e6");
  c.nodeBorder = QColor("#5a5d63");
  c.edge = QColor("#8b9098");
  c.selection = QColor("#4ea1ff");
  c.clusterFill = QColor("#26282c");
  // Muted, darker fills keep light node text readable.
  c.convolution = QColor("#23416b");
  c.matmul = QColor("#3b3470");
  c.elementwise = QColor("#25503a");
  c.activation = QColor("#6a4a1c");
  c.normalization = QColor("#5e2a48");
  c.pooling = QColor("#1e5257");
  c.reshape = QColor("#45423b");
  c.reduction = QColor("#5a4a22");
  c.fused = QColor("#6b5516");
  c.constant = QColor("#393b40");
  c.input = QColor("#34502a");
  c.other = QColor("#3a3d42");
  c.added = QColor("#3fb950");
  c.removed = QColor("#f85149");
  c.changed = QColor("#d29922");
  c.fusedInto = QColor("#a371f7");
  c.keyword = QColor("#ff7b72");
  c.number = QColor("#79c0ff");
  c.comment = QColor("#8b949e");
  c.error = QColor("#f85149");
  c.warning = QColor("#d29922");
  return c;
}

bool isOneOf(const QString& op, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (op.compare(QLatin1String(name), Qt::CaseInsensitive) == 0) return true;
  return false;
}

}  // namespace

QString themeName(Theme theme) { return theme == Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light"); }

Theme themeFromName(const QString& name, Theme fallback) {
  if (name.compare("dark", Qt::CaseInsensitive) == 0) return Theme::Dark;
  if (name.compare("light", Qt::CaseInsensitive) == 0) return Theme::Light;
  return fallback;
}

ThemeColors themeColors(Theme theme) { return theme == Theme::Dark ? darkColors() : lightColors(); }

ThemeColors themeColors(const QPalette& palette) {
  return themeColors(palette.color(QPalette::Window).lightness() < 128 ? Theme::Dark : Theme::Light);
}

QColor operatorColor(const ThemeColors& colors, const QString& op) {
  // Fused kernels are named after what they contain ("fused_conv_add_relu"); they get their
  // own colour so groups stand out from primitive operations.
  if (op.startsWith("fused", Qt::CaseInsensitive)) return colors.fused;
  if (isOneOf(op, {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DepthwiseConv"})) return colors.convolution;
  if (isOneOf(op, {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "Einsum"})) return colors.matmul;
  if (isOneOf(op, {"Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Gelu", "Elu",
                   "Selu", "HardSigmoid", "HardSwish", "Clip", "Softplus", "Mish"}))
    return colors.activation;
  if (isOneOf(op, {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
                   "LRN", "LpNormalization"}))
    return colors.normalization;
  if (op.contains("Pool", Qt::CaseInsensitive)) return colors.pooling;
  if (isOneOf(op, {"Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
                   "Gather", "Expand", "Pad", "Tile", "Shape", "LayoutTransform", "Identity", "Cast"}))
    return colors.reshape;
  if (op.startsWith("Reduce", Qt::CaseInsensitive) || isOneOf(op, {"ArgMax", "ArgMin", "TopK"}))
    return colors.reduction;
  if (isOneOf(op, {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Abs", "Neg", "Min", "Max", "Where",
                   "Equal", "Less", "Greater", "Not", "And", "Or", "Erf", "Reciprocal", "Floor", "Ceil",
                   "Round", "Sum", "Mean"}))
    return colors.elementwise;
  return colors.other;
}

QPalette themePalette(Theme theme) {
  QPalette p;
  auto set = [&p](QPalette::ColorRole role, const char* active, const char* disabled = nullptr) {
    p.setColor(QPalette::All, role, QColor(active));
    if (disabled) p.setColor(QPalette::Disabled, role, QColor(disabled));
  };
  if (theme == Theme::Dark) {
    set(QPalette::Window, "#2b2d30");
    set(QPalette::WindowText, "#dfe1e5", "#6f737a");
    set(QPalette::Base, "#1e1f22");
    set(QPalette::AlternateBase, "#25272a");
    set(QPalette::ToolTipBase, "#393b40");
    set(QPalette::ToolTipText, "#dfe1e5");
    set(QPalette::PlaceholderText, "#6f737a");
    set(QPalette::Text, "#dfe1e5", "#6f737a");
    set(QPalette::Button, "#34363a");
    set(QPalette::ButtonText, "#dfe1e5", "#6f737a");
    set(QPalette::BrightText, "#ffffff");
    set(QPalette::Light, "#45484d");
    set(QPalette::Midlight, "#393b40");
    set(QPalette::Mid, "#1e1f22");
    set(QPalette::Dark, "#8b9098");
    set(QPalette::Shadow, "#111214");
    set(QPalette::Highlight, "#2f65ca", "#43454a");
    set(QPalette::HighlightedText, "#ffffff");
    set(QPalette::Link, "#589df6");
    set(QPalette::LinkVisited, "#a371f7");
  } else {
    set(QPalette::Window, "#f3f4f6");
    set(QPalette::WindowText, "#1f2328", "#8c959f");
    set(QPalette::Base, "#ffffff");
    set(QPalette::AlternateBase, "#f6f8fa");
    set(QPalette::ToolTipBase, "#ffffff");
    set(QPalette::ToolTipText, "#1f2328");
    set(QPalette::PlaceholderText, "#8c959f");
    set(QPalette::Text, "#1f2328", "#8c959f");
    set(QPalette::Button, "#f6f8fa");
    set(QPalette::ButtonText, "#1f2328", "#8c959f");
    set(QPalette::BrightText, "#ffffff");
    set(QPalette::Light, "#ffffff");
    set(QPalette::Midlight, "#e6e8eb");
    set(QPalette::Mid, "#d0d7de");
    set(QPalette::Dark, "#6e7781");
    set(QPalette::Shadow, "#8c959f");
    set(QPalette::Highlight, "#0969da", "#d0d7de");
    set(QPalette::HighlightedText, "#ffffff");
    set(QPalette::Link, "#0969da");
    set(QPalette::LinkVisited, "#8250df");
  }
  return p;
}

QString themeStyleSheet() { return QString::fromUtf8(kStyleSheet); }

void applyTheme(QApplication& application, Theme theme) {
  if (QStyle* fusion = QStyleFactory::create("Fusion")) application.setStyle(fusion);
  application.setPalette(themePalette(theme));
  // Setting the sheet again re-polishes every widget, so palette(...) references in it pick up
  // the new palette.
  application.setStyleSheet(QString());
  application.setStyleSheet(themeStyleSheet());
}

}  // namespace tessel::views
