// What the tuning dashboard's plot files share: their colours, how they shorten kernel names,
// and how they write CSV. Private to views/tuning/TuningPlots*.cpp.
#pragma once

#include <QColor>
#include <QString>

#include <cmath>
#include <string>

#include "tuner/session/TuningEventLog.h"

namespace tessel::views::plots {

inline const QColor kEstimateColor(0x3d, 0x8b, 0xd9);
inline const QColor kMeasuredColor(0x3f, 0xa8, 0x5a);
inline const QColor kErrorColor(0xd9, 0x43, 0x3d);
inline const QColor kAccuracyColor(0x3d, 0x8b, 0xd9);
inline const QColor kRhoColor(0xe0, 0x8a, 0x1e);
inline const QColor kTauColor(0x8e, 0x5c, 0xc9);

// Kernel names can be long (fused chains): legends and axis labels show the start.
inline QString shortName(const std::string& name) {
  QString text = QString::fromStdString(name);
  return text.size() <= 32 ? text : text.left(31) + QChar(0x2026);
}

inline QString csvNumber(double value) { return std::isfinite(value) ? QString::number(value, 'g', 8) : QString(); }

inline QString csvText(const std::string& text) {
  QString quoted = QString::fromStdString(text);
  quoted.replace('"', QStringLiteral("\"\""));
  return '"' + quoted + '"';
}

// Kernels without floating-point work (copies, transposes) have no GFLOP/s: they are
// plotted as calls per millisecond.
inline double trialGflops(const tuner::LoggedTrial& trial) {
  if (trial.gflops > 0) return trial.gflops;
  return trial.medianMs > 0 ? 1.0 / trial.medianMs : 0;
}

}  // namespace tessel::views::plots
