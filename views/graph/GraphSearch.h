// Finding nodes of a laid-out graph by name, op or tensor name.
#pragma once

#include <QString>
#include <QStringList>

#include "views/graph/GraphLayout.h"

namespace tessel::views {

/// Ids of the boxes whose name, op, title or any tensor they read or write contains `query`
/// (case-insensitive), in the layout's order (producers before consumers). Fused groups
/// drawn expanded match through their frame's id too (the frame id is returned). An empty
/// query matches nothing.
QStringList findGraphNodes(const GraphLayout& layout, const QString& query);

}  // namespace tessel::views
