// Edge crossings and boxes crossed by edges, found through a grid of cells over the scene.
#include "views/graph/LayoutQuality.h"

#include <QLineF>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tessel::views {

namespace {

constexpr int kPiecesPerSegment = 8;
constexpr double kCellSize = 160;  // about a box's width: few boxes and pieces share a cell

struct Piece {
  QLineF line;
  int edge = 0;
};

// The edge's curve as straight pieces: each cubic segment sampled evenly, then the arrowhead.
std::vector<QLineF> flatten(const LayoutEdge& edge) {
  std::vector<QPointF> points;
  const std::vector<QPointF>& spline = edge.spline;
  if (spline.empty()) return {};
  points.push_back(spline[0]);
  for (size_t start = 0; start + 3 < spline.size(); start += 3) {
    const QPointF &p0 = spline[start], &p1 = spline[start + 1], &p2 = spline[start + 2], &p3 = spline[start + 3];
    for (int step = 1; step <= kPiecesPerSegment; ++step) {
      double t = double(step) / kPiecesPerSegment, u = 1 - t;
      points.push_back(u * u * u * p0 + 3 * u * u * t * p1 + 3 * u * t * t * p2 + t * t * t * p3);
    }
  }
  if (!edge.arrowTip.isNull()) points.push_back(edge.arrowTip);
  std::vector<QLineF> lines;
  for (size_t i = 1; i < points.size(); ++i)
    if (points[i] != points[i - 1]) lines.emplace_back(points[i - 1], points[i]);
  return lines;
}

bool crosses(const QLineF& a, const QLineF& b) {
  QPointF at;
  return a.intersects(b, &at) == QLineF::BoundedIntersection;
}

// Whether `line` passes through the inside of `box`.
bool passesThrough(const QLineF& line, const QRectF& box) {
  if (box.contains(line.p1()) || box.contains(line.p2())) return true;
  const QLineF sides[] = {{box.topLeft(), box.topRight()},
                          {box.topRight(), box.bottomRight()},
                          {box.bottomRight(), box.bottomLeft()},
                          {box.bottomLeft(), box.topLeft()}};
  return std::any_of(std::begin(sides), std::end(sides), [&](const QLineF& side) { return crosses(line, side); });
}

// The grid cells a rectangle covers, as keys.
template <class Visit>
void forEachCell(const QRectF& rect, const Visit& visit) {
  auto cellOf = [](double v) { return int64_t(std::floor(v / kCellSize)); };
  for (int64_t x = cellOf(rect.left()); x <= cellOf(rect.right()); ++x)
    for (int64_t y = cellOf(rect.top()); y <= cellOf(rect.bottom()); ++y) visit(uint64_t(x) << 32 ^ uint64_t(uint32_t(y)));
}

uint64_t pairKey(int a, int b) { return uint64_t(uint32_t(std::min(a, b))) << 32 | uint32_t(std::max(a, b)); }

}  // namespace

LayoutQuality measureLayoutQuality(const GraphLayout& layout) {
  LayoutQuality quality;
  quality.boxes = int(layout.nodes.size());
  quality.edges = int(layout.edges.size());

  std::vector<Piece> pieces;
  for (size_t e = 0; e < layout.edges.size(); ++e)
    for (const QLineF& line : flatten(layout.edges[e])) pieces.push_back({line, int(e)});
  std::unordered_map<uint64_t, std::vector<int>> piecesInCell, boxesInCell;
  for (size_t p = 0; p < pieces.size(); ++p)
    forEachCell(QRectF(pieces[p].line.p1(), pieces[p].line.p2()).normalized(),
                [&](uint64_t cell) { piecesInCell[cell].push_back(int(p)); });
  // Boxes a little smaller than drawn: an edge ends on its box's border, and one grazing a
  // neighbour's corner is not hidden by it.
  std::vector<QRectF> inner;
  for (size_t n = 0; n < layout.nodes.size(); ++n) {
    inner.push_back(layout.nodes[n].box.adjusted(2, 2, -2, -2));
    forEachCell(inner.back(), [&](uint64_t cell) { boxesInCell[cell].push_back(int(n)); });
  }

  auto shareABox = [&](int a, int b) {
    const LayoutEdge &x = layout.edges[size_t(a)], &y = layout.edges[size_t(b)];
    return x.from == y.from || x.from == y.to || x.to == y.from || x.to == y.to;
  };
  std::unordered_set<uint64_t> crossingPairs, crossedBoxes;
  for (const auto& [cell, members] : piecesInCell) {
    for (size_t i = 0; i < members.size(); ++i) {
      const Piece& a = pieces[size_t(members[i])];
      for (size_t j = i + 1; j < members.size(); ++j) {
        const Piece& b = pieces[size_t(members[j])];
        if (a.edge == b.edge || shareABox(a.edge, b.edge)) continue;
        uint64_t key = pairKey(a.edge, b.edge);
        if (!crossingPairs.count(key) && crosses(a.line, b.line)) crossingPairs.insert(key);
      }
      auto boxes = boxesInCell.find(cell);
      if (boxes == boxesInCell.end()) continue;
      const LayoutEdge& edge = layout.edges[size_t(a.edge)];
      for (int box : boxes->second) {
        if (box == edge.from || box == edge.to || inner[size_t(box)].isEmpty()) continue;
        uint64_t key = uint64_t(uint32_t(a.edge)) << 32 | uint32_t(box);
        if (!crossedBoxes.count(key) && passesThrough(a.line, inner[size_t(box)])) crossedBoxes.insert(key);
      }
    }
  }
  quality.edgeCrossings = int64_t(crossingPairs.size());
  quality.boxesCrossed = int64_t(crossedBoxes.size());
  return quality;
}

}  // namespace tessel::views
