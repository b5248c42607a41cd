// Colours, badges and tooltips of the tuning heat map.
#include "views/tuning/TuningHeatMap.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <set>

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
    double value = 0, milliseconds = 0;
    QString badge, tooltip = QString::fromStdString(info.name) + '\n';
    switch (mode) {
      case HeatMode::Speedup: {
        if (!state.defaultMs || !best || *best <= 0) continue;
        double speedup = state.confirmedSpeedup ? *state.confirmedSpeedup : *state.defaultMs / *best;
        colour = speedupColour(speedup);
        value = speedup;
        milliseconds = *state.defaultMs;
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
        value = fraction;
        milliseconds = *best;
        badge = QStringLiteral("%1%").arg(int(std::round(fraction * 100)));
        tooltip += QObject::tr("%1 GFLOP/s, %2% of its roofline ceiling (%3 GFLOP/s)")
                       .arg(gflops, 0, 'f', 1)
                       .arg(int(std::round(fraction * 100)))
                       .arg(roof, 0, 'f', 1);
        break;
      }
      case HeatMode::Trials: {
        colour = mix(kFewTrials, kManyTrials, std::log1p(state.trials) / std::log1p(mostTrials));
        value = state.trials;
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
      heat.push_back({QString::fromStdString(node->second), colour, badge, tooltip, value, milliseconds, int(task)});
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
                        .arg(QString::fromStdString(profile.createdAt)),
                    share, node.milliseconds});
  }
  return heat;
}

std::vector<NodeHeat> moduleHeat(const std::vector<NodeHeat>& heat, const ModuleGroups& modules,
                                 const graph::Graph& graph, HeatMode mode) {
  std::vector<NodeHeat> grouped;
  if (mode == HeatMode::None || heat.empty()) return grouped;
  std::map<std::string, const NodeHeat*> byNode;
  for (const NodeHeat& node : heat) byNode.emplace(node.node.toStdString(), &node);
  struct Sum {
    int operations = 0;
    double value = 0, milliseconds = 0, weighted = 0, tunedMilliseconds = 0;
    std::set<int> tasks;
  };
  std::map<QString, Sum> sums;
  for (const graph::OperationNode* op : graph.operations()) {
    auto found = byNode.find(op->name);
    if (found == byNode.end()) continue;
    const NodeHeat& node = *found->second;
    for (const QString& group : modules.groupsOf(op)) {
      Sum& sum = sums[group];
      ++sum.operations;
      sum.milliseconds += node.milliseconds;
      if (mode == HeatMode::Speedup && node.value > 0) sum.tunedMilliseconds += node.milliseconds / node.value;
      if (mode == HeatMode::Roofline) sum.weighted += node.value * node.milliseconds;
      if (mode == HeatMode::Time) sum.value += node.value;
      if (mode == HeatMode::Trials && sum.tasks.insert(node.task).second) sum.value += node.value;
    }
  }
  double mostTrials = 1;
  for (const auto& [group, sum] : sums) mostTrials = std::max(mostTrials, sum.value);
  for (const auto& [group, sum] : sums) {
    NodeHeat entry;
    entry.node = group;
    QString members = QObject::tr("%1 of its %2 operations").arg(sum.operations).arg(modules.operationCount(group));
    entry.tooltip = group.mid(kModuleGroupIdPrefix.size()) + '\n';
    switch (mode) {
      case HeatMode::Speedup:
        if (sum.tunedMilliseconds <= 0) continue;
        entry.value = sum.milliseconds / sum.tunedMilliseconds;
        entry.colour = speedupColour(entry.value);
        entry.badge = QStringLiteral("%1x").arg(entry.value, 0, 'f', 2);
        entry.tooltip += QObject::tr("%1x the default schedules' speed over %2: %3 ms, default %4 ms")
                             .arg(entry.value, 0, 'f', 2)
                             .arg(members)
                             .arg(sum.tunedMilliseconds, 0, 'g', 4)
                             .arg(sum.milliseconds, 0, 'g', 4);
        break;
      case HeatMode::Roofline:
        if (sum.milliseconds <= 0) continue;
        entry.value = sum.weighted / sum.milliseconds;
        entry.colour = fractionColour(entry.value);
        entry.badge = QStringLiteral("%1%").arg(int(std::round(entry.value * 100)));
        entry.tooltip += QObject::tr("%1% of their roofline ceilings, weighted by time, over %2")
                             .arg(int(std::round(entry.value * 100)))
                             .arg(members);
        break;
      case HeatMode::Trials:
        entry.value = sum.value;
        entry.colour = mix(kFewTrials, kManyTrials, std::log1p(sum.value) / std::log1p(mostTrials));
        entry.badge = QString::number(int(sum.value));
        entry.tooltip += QObject::tr("%1 trials on the kernels of %2").arg(int(sum.value)).arg(members);
        break;
      case HeatMode::Time: {
        entry.value = sum.value;
        entry.colour = timeColour(sum.value);
        QString percent = QString::number(sum.value * 100, 'f', sum.value >= 0.01 ? 1 : 2);
        entry.badge = percent + '%';
        entry.tooltip += QObject::tr("%1 ms, %2% of the model's time, in %3").arg(sum.milliseconds, 0, 'g', 4).arg(percent, members);
        break;
      }
      case HeatMode::None: continue;
    }
    entry.milliseconds = sum.milliseconds;
    grouped.push_back(std::move(entry));
  }
  return grouped;
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
