// The graph's colouring from a tuning session (View > Colour Graph by Tuning): each node whose
// kernel was tuned gets a colour, a badge and a tooltip for its speedup over the default
// schedule, the fraction of its roofline ceiling it reaches, or the trials spent on it; nodes
// without records stay neutral. A person sees at a glance where tuning paid and where the time
// still goes.
#pragma once

#include <QColor>
#include <QString>

#include <map>
#include <string>
#include <vector>

#include "compiler/driver/ModelProfile.h"
#include "tuner/session/TuningEventLog.h"
#include "views/graph/ModuleGroups.h"

namespace tessel::views {

enum class HeatMode { None, Speedup, Roofline, Trials, Time };

/// "none", "speedup", "roofline", "trials", "time".
QString heatModeName(HeatMode mode);

struct NodeHeat {
  QString node;  ///< The graph node (operation) id.
  QColor colour;
  QString badge;
  QString tooltip;
  /// What the colour shows, for summing over a module (moduleHeat): the speedup, the roofline
  /// fraction, the trials or the share of the model's time...
  double value = 0;
  /// ...and the milliseconds it stands for (the default's for a speedup, the tuned kernel's for
  /// a roofline fraction, the profiled time for a share).
  double milliseconds = 0;
  int task = -1;  ///< The tuning task (identical kernels share one and its trials).
};

/// One entry per node whose kernel has trials in `log`. `kernelNodes` maps kernel names to
/// the graph node each computes (CompiledKernel::node). Empty for HeatMode::None.
std::vector<NodeHeat> tuningHeat(const tuner::TuningEventLog& log,
                                 const std::map<std::string, std::string>& kernelNodes, HeatMode mode);

/// HeatMode::Time: one entry per node of `profile` that took any time, coloured by its share of
/// the model's time (the nodes' sum), with its time and share as badge and tooltip.
std::vector<NodeHeat> profileHeat(const driver::ModelProfile& profile);

/// The heat of module groups (the boxes of a graph drawn by module) from their operations':
/// the speedup as their default time over their tuned time, the roofline fraction weighted by
/// time, the trials of their tasks summed, the shares of the model's time summed. One entry per
/// group of `modules` holding any operation of `heat`; the badge says how many of its
/// operations have results.
std::vector<NodeHeat> moduleHeat(const std::vector<NodeHeat>& heat, const ModuleGroups& modules,
                                 const graph::Graph& graph, HeatMode mode);

/// The legend of a mode, as rich text with the colour scale (empty for None).
QString heatLegendHtml(HeatMode mode);

}  // namespace tessel::views
