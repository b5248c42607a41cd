// Colours, badges and tooltips of the tuning heat map.
#include "views/tuning/TuningHeatMap.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace tessel::views {

namespace {

// Sequential scales that read on light and dark canvases.
QColor mix(const QColor& from, const QColor& to, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromRgbF(float(from.redF() + (to.redF() - from.redF()) * t),
                          float(from.greenF() + (to.greenF() - from.greenF()) * t),
                          float(from.blueF() + (to.blueF() - from.blueF()) * t));
}

const QColor kSlower(0xd9, 0x43, 0x3d);
const QColor kSame(0x9e, 0x9e, 0x9e);
const QColor kFaster(0x2e, 0xa0, 0x4f);
const QColor kLow(0xd9, 0x43, 0x3d);
const QColor kMiddle(0xe8, 0xb0, 0x2a);
const QColor kHigh(0x2e, 0xa0, 0x4f);
const QColor kFewTrials(0xb8, 0xd4, 0xf0);
const QColor kManyTrials(0x1f, 0x5f, 0xb0);
const QColor kLittleTime(0xf6, 0xe3, 0xc8);
const QColor kMostTime(0xc0, 0x39, 0x1b);

// Share of the model's time: a square-root scale, so that a node at 2% is visibly warmer than
// one at 0.1% while the 20% node still stands out.
QColor timeColour(double share) { return mix(kLittleTime, kMostTime, std::sqrt(std::clamp(share / 0.2, 0.0, 1.0))); }

// Speedup: grey at 1x, green towards 2x and beyond, red below 1x (a tuned schedule slower
// than the default, which confirmation should never let through).
QColor speedupColour(double speedup) {
  if (speedup >= 1) return mix(kSame, kFaster, std::log2(speedup));
  return mix(kSame, kSlower, std::log2(1 / speedup) * 2);
}

QColor fractionColour(double fraction) {
  return fraction < 0.5 ? mix(kLow, kMiddle, fraction * 2) : mix(kMiddle, kHigh, (fraction - 0.5) * 2);
}

QString swatch(const QColor& colour) {
  return QStringLiteral("<span style=\"color:%1\">&#9632;</span>").arg(colour.name());
}

}  // namespace

QString heatModeName(HeatMode mode) {
  switch (mode) {
    case HeatMode::None: return QStringLiteral("none");
    case HeatMode::Speedup: return QStringLiteral("speedup");
    case HeatMode::Roofline: return QStringLiteral("roofline");
    case HeatMode::Trials: return QStringLiteral("trials");
    case HeatMode::Time: return QStringLiteral("time");
  }
  return {};
}

std::vector<NodeHeat> tuningHeat(const tuner::TuningEventLog& log,
                                 const std::map<std::string, std::string>& kernelNodes, HeatMode mode) {
  std::vector<NodeHeat> heat;
  if (mode == HeatMode::None || mode == HeatMode::Time) return heat;
  int mostTrials = 1;
  for (const tuner::LoggedTaskState& state : log.taskStates()) mostTrials = std::max(mostTrials, state.trials);
  for (size_t task = 0; task < log.tasks().size(); ++task) {
    const tuner::LoggedTask& info = log.tasks()[task];
    const tuner::LoggedTaskState& state = log.taskStates()[task];
    if (state.trials == 0) continue;
    // The confirmed choice once the session has one; the fastest trial while it runs.
    std::optional<double> best = state.chosenMs ? state.chosenMs : state.bestMs;
    QColor colour;
    QString badge, tooltip = QString::fromStdString(info.name) + '\n';
    switch (mode) {
      case HeatMode::Speedup: {
        if (!state.defaultMs || !best || *best <= 0) continue;
        double speedup = state.confirmedSpeedup ? *state.confirmedSpeedup : *state.defaultMs / *best;
        colour = speedupColour(speedup);
        badge = QStringLiteral("%1x").arg(speedup, 0, 'f', 2);
        tooltip += QObject::tr("%1x the default schedule's speed: %2 ms, default %3 ms, %4 trials")
                       .arg(speedup, 0, 'f', 2)
                       .arg(*best, 0, 'g', 4)
                       .arg(*state.defaultMs, 0, 'g', 4)
                       .arg(state.trials);
        break;
      }
      case HeatMode::Roofline: {
        if (!best || *best <= 0 || info.flops <= 0 || log.peakGflops() <= 0) continue;
        double gflops = info.flops / (*best * 1e6);
        double roof = log.peakGflops();
        if (info.bytes > 0 && log.bandwidthGBps() > 0) roof = std::min(roof, log.bandwidthGBps() * info.flops / info.bytes);
        double fraction = std::min(1.0, gflops / roof);
        colour = fractionColour(fraction);
        badge = QStringLiteral("%1%").arg(int(std::round(fraction * 100)));
        tooltip += QObject::tr("%1 GFLOP/s, %2% of its roofline ceiling (%3 GFLOP/s)")
                       .arg(gflops, 0, 'f', 1)
                       .arg(int(std::round(fraction * 100)))
                       .arg(roof, 0, 'f', 1);
        break;
      }
      case HeatMode::Trials: {
        colour = mix(kFewTrials, kManyTrials, std::log1p(state.trials) / std::log1p(mostTrials));
        badge = QString::number(state.trials);
        tooltip += QObject::tr("%1 trials (%2 failed)").arg(state.trials).arg(state.errors);
        break;
      }
      case HeatMode::None:
      case HeatMode::Time: break;
    }
    for (const std::string& kernel : info.kernels) {
      auto node = kernelNodes.find(kernel);
      if (node == kernelNodes.end()) continue;
      heat.push_back({QString::fromStdString(node->second), colour, badge, tooltip});
    }
  }
  return heat;
}

std::vector<NodeHeat> profileHeat(const driver::ModelProfile& profile) {
  std::vector<NodeHeat> heat;
  double total = profile.nodeSumMs();
  if (total <= 0) return heat;
  for (const driver::ProfiledNode& node : profile.nodes) {
    if (node.milliseconds <= 0) continue;
    double share = node.milliseconds / total;
    QString percent = share >= 0.01 ? QString::number(share * 100, 'f', 1) : QString::number(share * 100, 'f', 2);
    heat.push_back({QString::fromStdString(node.node), timeColour(share), percent + '%',
                    QObject::tr("%1\n%2 ms, %3% of the model's %4 ms (median of %5 runs, %6)")
                        .arg(QString::fromStdString(node.kernel))
                        .arg(node.milliseconds, 0, 'g', 4)
                        .arg(percent)
                        .arg(total, 0, 'g', 4)
                        .arg(profile.runs)
                        .arg(QString::fromStdString(profile.createdAt))});
  }
  return heat;
}

QString heatLegendHtml(HeatMode mode) {
  switch (mode) {
    case HeatMode::None: return {};
    case HeatMode::Speedup:
      return QObject::tr("Speedup over the default schedule: %1 slower %2 1x %3 1.4x %4 2x and more; untuned "
                         "nodes plain")
          .arg(swatch(speedupColour(0.8)), swatch(speedupColour(1)), swatch(speedupColour(1.4)),
               swatch(speedupColour(2)));
    case HeatMode::Roofline:
      return QObject::tr("Share of the roofline ceiling reached: %1 0% %2 50% %3 100%; untuned nodes plain")
          .arg(swatch(fractionColour(0)), swatch(fractionColour(0.5)), swatch(fractionColour(1)));
    case HeatMode::Trials:
      return QObject::tr("Trials spent: %1 few %2 most; nodes without trials plain")
          .arg(swatch(kFewTrials), swatch(kManyTrials));
    case HeatMode::Time:
      return QObject::tr("Share of the model's time in its last profile: %1 0.1% %2 2% %3 8% %4 20% and more")
          .arg(swatch(timeColour(0.001)), swatch(timeColour(0.02)), swatch(timeColour(0.08)), swatch(timeColour(0.2)));
  }
  return {};
}

}  // namespace tessel::views
