// Substring search over a layout's boxes (see GraphSearch.h).
#include "views/graph/GraphSearch.h"

namespace tessel::views {

QStringList findGraphNodes(const GraphLayout& layout, const QString& query) {
  QStringList matches;
  const QString needle = query.trimmed();
  if (needle.isEmpty()) return matches;
  auto has = [&](const QString& text) { return text.contains(needle, Qt::CaseInsensitive); };
  for (const auto& node : layout.nodes) {
    bool hit = has(node.name) || has(node.op) || has(node.title);
    for (qsizetype i = 0; !hit && i < node.tensorNames.size(); ++i) hit = has(node.tensorNames[i]);
    if (hit) matches << node.id;
  }
  for (const auto& cluster : layout.clusters)
    if (has(cluster.id) || has(cluster.title) || (cluster.source && has(QString::fromStdString(cluster.source->op))))
      matches << cluster.id;
  return matches;
}

}  // namespace tessel::views
