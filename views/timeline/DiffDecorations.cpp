// Turns a GraphDiff into per-node decorations for the two sides of a comparison.
#include "views/timeline/DiffDecorations.h"

#include <map>
#include <unordered_map>

namespace tessel::views {

using graph::NodeChange;

// The theme's diff colours (views/common/Theme) for added, removed and fused; blue and orange
// for the two kinds it has no colour for.
QColor diffColour(NodeChange change, bool dark) {
  switch (change) {
    case NodeChange::Added: return dark ? QColor(0x3f, 0xb9, 0x50) : QColor(0x1a, 0x7f, 0x37);
    case NodeChange::Removed: return dark ? QColor(0xf8, 0x51, 0x49) : QColor(0xcf, 0x22, 0x2e);
    case NodeChange::Fused: return dark ? QColor(0xa3, 0x71, 0xf7) : QColor(0x82, 0x50, 0xdf);
    case NodeChange::Relaid: return dark ? QColor(0x58, 0xa6, 0xff) : QColor(0x09, 0x69, 0xda);
    case NodeChange::Modified: return dark ? QColor(0xff, 0xa6, 0x57) : QColor(0xd9, 0x6c, 0x00);
    case NodeChange::Unchanged: break;
  }
  return {};
}

QString diffLabel(NodeChange change) {
  switch (change) {
    case NodeChange::Added: return QStringLiteral("Added");
    case NodeChange::Removed: return QStringLiteral("Removed");
    case NodeChange::Fused: return QStringLiteral("Fused");
    case NodeChange::Relaid: return QStringLiteral("Re-laid-out");
    case NodeChange::Modified: return QStringLiteral("Modified");
    case NodeChange::Unchanged: break;
  }
  return QStringLiteral("Unchanged");
}

namespace {
QString nodeText(const graph::GraphNode* node) {
  QString name = QString::fromStdString(node->name).toHtmlEscaped();
  if (auto* op = graph::asOperation(node)) return QStringLiteral("%1 <i>%2</i>").arg(QString::fromStdString(op->op), name);
  return name;
}

QString detailText(const graph::NodeDiff& entry) {
  return QString::fromStdString(entry.detail).toHtmlEscaped().replace(QStringLiteral("; "), QStringLiteral("<br>"));
}

// Constants are drawn inside their consumers' boxes, so only boxes get decorations.
bool hasBox(const graph::GraphNode* node) { return node && !graph::asConstant(node); }

NodeDecoration decoration(const graph::GraphNode* node, NodeChange change, bool dark) {
  NodeDecoration d;
  d.nodeId = QString::fromStdString(node->name);
  d.change = change;
  d.colour = diffColour(change, dark);
  return d;
}
}  // namespace

std::vector<NodeDecoration> diffDecorations(const graph::GraphDiff& diff, DiffSide side, bool dark) {
  std::vector<NodeDecoration> result;
  for (const graph::NodeDiff& entry : diff.entries) {
    switch (entry.change) {
      case NodeChange::Unchanged: break;
      case NodeChange::Added:
        if (side == DiffSide::After && hasBox(entry.after)) {
          auto d = decoration(entry.after, entry.change, dark);
          d.badge = QStringLiteral("added");
          d.tooltip = QStringLiteral("<b>Added</b> %1").arg(nodeText(entry.after));
          if (!entry.detail.empty()) d.tooltip += QStringLiteral("<br>") + detailText(entry);
          result.push_back(d);
        }
        break;
      case NodeChange::Removed:
        if (side == DiffSide::Before && hasBox(entry.before)) {
          auto d = decoration(entry.before, entry.change, dark);
          d.badge = QStringLiteral("removed");
          d.tooltip = QStringLiteral("<b>Removed</b> %1").arg(nodeText(entry.before));
          result.push_back(d);
        }
        break;
      case NodeChange::Fused: {
        QStringList absorbed;
        for (const graph::GraphNode* node : entry.absorbed) absorbed << nodeText(node);
        if (side == DiffSide::After) {
          auto d = decoration(entry.after, entry.change, dark);
          d.badge = QStringLiteral("fused %1").arg(entry.absorbed.size());
          d.tooltip = QStringLiteral("<b>Fused</b> %1<br>absorbed:<br>&nbsp;&nbsp;%2")
                          .arg(nodeText(entry.after), absorbed.join(QStringLiteral("<br>&nbsp;&nbsp;")));
          result.push_back(d);
        } else {
          for (const graph::GraphNode* node : entry.absorbed) {
            if (!hasBox(node)) continue;
            auto d = decoration(node, entry.change, dark);
            d.badge = QStringLiteral("→ fused");
            d.tooltip = QStringLiteral("<b>Fused</b> into %1 with:<br>&nbsp;&nbsp;%2")
                            .arg(nodeText(entry.after), absorbed.join(QStringLiteral("<br>&nbsp;&nbsp;")));
            result.push_back(d);
          }
        }
        break;
      }
      case NodeChange::Relaid:
      case NodeChange::Modified: {
        const graph::GraphNode* node = side == DiffSide::After ? entry.after : entry.before;
        if (!hasBox(node)) break;
        auto d = decoration(node, entry.change, dark);
        d.badge = entry.change == NodeChange::Relaid ? QStringLiteral("layout") : QStringLiteral("modified");
        d.tooltip = QStringLiteral("<b>%1</b> %2<br>%3").arg(diffLabel(entry.change), nodeText(node), detailText(entry));
        result.push_back(d);
        break;
      }
    }
  }
  return result;
}

std::vector<NodeDecoration> moduleDiffDecorations(const std::vector<NodeDecoration>& decorations,
                                                  const ModuleGroups& modules, const graph::Graph& graph,
                                                  bool dark) {
  std::vector<NodeDecoration> grouped;
  if (decorations.empty() || modules.empty()) return grouped;
  std::unordered_map<std::string, NodeChange> changeOf;
  for (const NodeDecoration& d : decorations)
    if (d.change != NodeChange::Unchanged) changeOf.emplace(d.nodeId.toStdString(), d.change);
  std::map<QString, std::map<NodeChange, int>> counts;  // by group, by change
  for (const graph::OperationNode* op : graph.operations()) {
    auto found = changeOf.find(op->name);
    if (found == changeOf.end()) continue;
    for (const QString& group : modules.groupsOf(op)) ++counts[group][found->second];
  }
  for (const auto& [group, byChange] : counts) {
    int total = 0;
    NodeChange most = NodeChange::Unchanged;
    int mostCount = 0;
    QStringList lines;
    for (const auto& [change, count] : byChange) {
      total += count;
      if (count > mostCount) {
        most = change;
        mostCount = count;
      }
      lines << QStringLiteral("%1 %2").arg(count).arg(diffLabel(change).toLower());
    }
    NodeDecoration d;
    d.nodeId = group;
    d.change = most;
    d.colour = diffColour(most, dark);
    d.badge = byChange.size() == 1 ? QStringLiteral("%1 %2").arg(total).arg(diffLabel(most).toLower())
                                   : QStringLiteral("%1 changed").arg(total);
    d.tooltip = QStringLiteral("<b>%1</b>: %2 of its %3 operations changed (%4); open it to see them")
                    .arg(group.mid(kModuleGroupIdPrefix.size()).toHtmlEscaped())
                    .arg(total)
                    .arg(modules.operationCount(group))
                    .arg(lines.join(QStringLiteral(", ")));
    grouped.push_back(std::move(d));
  }
  return grouped;
}

}  // namespace tessel::views
