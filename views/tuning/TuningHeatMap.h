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

namespace tessel::views {

enum class HeatMode { None, Speedup, Roofline, Trials, Time };

/// "none", "speedup", "roofline", "trials", "time".
QString heatModeName(HeatMode mode);

struct NodeHeat {
  QString node;  ///< The graph node (operation) id.
  QColor colour;
  QString badge;
  QString tooltip;
};

/// One entry per node whose kernel has trials in `log`. `kernelNodes` maps kernel names to
/// the graph node each computes (CompiledKernel::node). Empty for HeatMode::None.
std::vector<NodeHeat> tuningHeat(const tuner::TuningEventLog& log,
                                 const std::map<std::string, std::string>& kernelNodes, HeatMode mode);

/// HeatMode::Time: one entry per node of `profile` that took any time, coloured by its share of
/// the model's time (the nodes' sum), with its time and share as badge and tooltip.
std::vector<NodeHeat> profileHeat(const driver::ModelProfile& profile);

/// The legend of a mode, as rich text with the colour scale (empty for None).
QString heatLegendHtml(HeatMode mode);

}  // namespace tessel::views
