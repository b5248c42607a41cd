// The layered fallback placement: longest-path ranks, barycenter ordering, straight splines.
#include "views/graph/LayeredPlacement.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tessel::views {

namespace {

constexpr double kNodeGap = 28.0;
constexpr double kRankGap = 56.0;  // Room for an edge label between ranks.
constexpr double kArrowLength = 7.0;
constexpr double kLaneGap = 24.0;    // Between the boxes and a lane beside them, and between lanes.
constexpr double kEdgeMargin = 6.0;  // An edge this close to a box reads as touching it.

class LayeredPlacer {
public:
  LayeredPlacer(GraphLayout& layout, JobContext& job) : layout_(layout), job_(job), n_(layout.nodes.size()) {}

  bool run() {
    predecessors_.assign(n_, {});
    successors_.assign(n_, {});
    for (const auto& edge : layout_.edges) {
      predecessors_[size_t(edge.to)].push_back(edge.from);
      successors_[size_t(edge.from)].push_back(edge.to);
    }
    assignRanks();
    if (job_.cancelled()) return false;
    job_.reportProgress(50, QStringLiteral("Ordering %1 ranks").arg(ranks_.size()));
    orderRanks();
    if (job_.cancelled()) return false;
    job_.reportProgress(70, QStringLiteral("Placing nodes"));
    assignCoordinates();
    if (job_.cancelled()) return false;
    routeEdges();
    frameClusters();
    return true;
  }

private:
  void assignRanks() {
    rank_ = longestPathRanks(layout_);
    int rankCount = n_ ? *std::max_element(rank_.begin(), rank_.end()) + 1 : 0;
    ranks_.assign(size_t(rankCount), {});
    for (size_t v = 0; v < n_; ++v) ranks_[size_t(rank_[v])].push_back(int(v));
  }

  // Barycenter heuristic: a few sweeps down (by predecessors) and up (by successors).
  void orderRanks() {
    position_.assign(n_, 0.0);
    for (const auto& members : ranks_)
      for (size_t i = 0; i < members.size(); ++i) position_[size_t(members[i])] = double(i);
    for (int sweep = 0; sweep < 4; ++sweep) {
      bool down = sweep % 2 == 0;
      for (size_t r = 0; r < ranks_.size(); ++r) {
        auto& members = ranks_[down ? r : ranks_.size() - 1 - r];
        if (members.size() < 2) continue;
        std::vector<std::pair<double, int>> keyed;
        keyed.reserve(members.size());
        for (int v : members) {
          const auto& neighbours = down ? predecessors_[size_t(v)] : successors_[size_t(v)];
          double key = position_[size_t(v)];
          if (!neighbours.empty()) {
            key = 0;
            for (int w : neighbours) key += position_[size_t(w)];
            key /= double(neighbours.size());
          }
          keyed.push_back({key, v});
        }
        std::stable_sort(keyed.begin(), keyed.end(), [](auto& a, auto& b) { return a.first < b.first; });
        for (size_t i = 0; i < keyed.size(); ++i) {
          members[i] = keyed[i].second;
          position_[size_t(keyed[i].second)] = double(i);
        }
      }
    }
  }

  // Each rank sits below the previous one; within a rank a node goes under the mean of its
  // predecessors, then nodes are pushed apart (in their order) until none overlap.
  void assignCoordinates() {
    std::vector<double> centerX(n_, 0.0);
    double top = 0;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const auto& members = ranks_[r];
      double height = 0;
      std::vector<double> wanted(members.size());
      double cursor = 0;
      for (size_t i = 0; i < members.size(); ++i) {
        const auto& box = layout_.nodes[size_t(members[i])].box;
        height = std::max(height, box.height());
        const auto& preds = predecessors_[size_t(members[i])];
        if (preds.empty()) {
          wanted[i] = cursor + box.width() / 2;
        } else {
          double sum = 0;
          for (int p : preds) sum += centerX[size_t(p)];
          wanted[i] = sum / double(preds.size());
        }
        cursor += box.width() + kNodeGap;
      }
      // Left-to-right: no overlap, as close to the wanted centers as the order allows.
      std::vector<double> x(members.size());
      for (size_t i = 0; i < members.size(); ++i) {
        double half = layout_.nodes[size_t(members[i])].box.width() / 2;
        x[i] = wanted[i];
        if (i > 0) {
          double previousHalf = layout_.nodes[size_t(members[i - 1])].box.width() / 2;
          x[i] = std::max(x[i], x[i - 1] + previousHalf + kNodeGap + half);
        }
      }
      // Pushing only rightwards drifts a crowded rank; shift it back so its mean matches the
      // mean of what it wanted.
      if (!members.empty()) {
        double shift = (std::accumulate(wanted.begin(), wanted.end(), 0.0) - std::accumulate(x.begin(), x.end(), 0.0)) /
                       double(members.size());
        for (auto& value : x) value += shift;
      }
      for (size_t i = 0; i < members.size(); ++i) {
        auto& box = layout_.nodes[size_t(members[i])].box;
        centerX[size_t(members[i])] = x[i];
        box.moveTopLeft(QPointF(x[i] - box.width() / 2, top + (height - box.height()) / 2));
      }
      rankTop_.push_back(top);
      rankBottom_.push_back(top + height);
      top += height + kRankGap;
    }
    // Scene coordinates start at the origin like dot's.
    double left = 0;
    for (const auto& node : layout_.nodes) left = std::min(left, node.box.left());
    for (auto& node : layout_.nodes) node.box.translate(-left, 0);
  }

  // An edge between neighbouring ranks, or one whose straight path meets no box, is one
  // S-curve. A longer edge that would run through boxes (a DenseNet concatenation reading
  // every earlier layer of its block: hundreds of edges drawn through the trunk's boxes) goes
  // around them instead: down the gap below its source, right to a lane beside every box of
  // the ranks it passes, down the lane, and in above its target. The edges into one target
  // share its lane, so a wide fan-in reads as one trunk with branches; lanes that overlap in
  // height sit side by side.
  void routeEdges() {
    struct Lane {
      int target = 0, firstRank = 0;
      double x = 0;
    };
    std::map<int, Lane> lanes;  // by target
    std::vector<bool> aroundBoxes(layout_.edges.size(), false);
    for (size_t e = 0; e < layout_.edges.size(); ++e) {
      const auto& edge = layout_.edges[e];
      int from = rank_[size_t(edge.from)], to = rank_[size_t(edge.to)];
      if (to - from < 2) continue;
      double sx = layout_.nodes[size_t(edge.from)].box.center().x(), tx = layout_.nodes[size_t(edge.to)].box.center().x();
      if (!boxBetween(from + 1, to - 1, std::min(sx, tx), std::max(sx, tx))) continue;
      aroundBoxes[e] = true;
      auto [lane, isNew] = lanes.try_emplace(edge.to, Lane{edge.to, from, 0});
      lane->second.firstRank = std::min(lane->second.firstRank, from);
    }
    // Each lane right of the boxes it passes and of the lanes beside it, widest span first.
    std::vector<Lane*> ordered;
    for (auto& [target, lane] : lanes) ordered.push_back(&lane);
    std::sort(ordered.begin(), ordered.end(), [&](const Lane* a, const Lane* b) {
      return std::make_pair(a->firstRank, rank_[size_t(a->target)]) < std::make_pair(b->firstRank, rank_[size_t(b->target)]);
    });
    std::vector<const Lane*> placed;
    for (Lane* lane : ordered) {
      int lastRank = rank_[size_t(lane->target)];
      double x = rightmostBox(lane->firstRank + 1, lastRank - 1) + kLaneGap;
      for (const Lane* other : placed)
        if (other->firstRank < lastRank && lane->firstRank < rank_[size_t(other->target)])
          x = std::max(x, other->x + kLaneGap / 2);
      lane->x = x;
      placed.push_back(lane);
    }
    for (size_t e = 0; e < layout_.edges.size(); ++e) {
      auto& edge = layout_.edges[e];
      const QRectF& from = layout_.nodes[size_t(edge.from)].box;
      const QRectF& to = layout_.nodes[size_t(edge.to)].box;
      QPointF start(from.center().x(), from.bottom());
      QPointF tip(to.center().x(), to.top());
      QPointF end(tip.x(), tip.y() - kArrowLength);
      if (!aroundBoxes[e]) {
        double bend = std::max(12.0, (end.y() - start.y()) / 2);
        edge.spline = {start, start + QPointF(0, bend), end - QPointF(0, bend), end};
      } else {
        edge.inLane = true;
        double laneX = lanes[edge.to].x;
        double below = rankBottom_[size_t(rank_[size_t(edge.from)])] + kRankGap * 0.3;
        double above = rankTop_[size_t(rank_[size_t(edge.to)])] - kRankGap * 0.3;
        edge.spline = {start};
        for (QPointF corner : {QPointF(start.x(), below), QPointF(laneX, below), QPointF(laneX, above),
                               QPointF(end.x(), above), end})
          appendStraight(edge.spline, corner);
      }
      edge.arrowTip = tip;
      size_t middle = (edge.spline.size() - 1) / 3 / 2 * 3;  // the start of the middle segment
      const QPointF* segment = &edge.spline[middle];
      edge.labelCenter = (segment[0] + 3 * segment[1] + 3 * segment[2] + segment[3]) / 8;
    }
  }

  // A straight piece as a cubic segment (control points on the line).
  static void appendStraight(std::vector<QPointF>& spline, QPointF to) {
    QPointF from = spline.back();
    spline.insert(spline.end(), {from + (to - from) / 3, from + 2 * (to - from) / 3, to});
  }

  // Whether a box of ranks first..last reaches into the x range [left, right] (with a margin).
  bool boxBetween(int first, int last, double left, double right) const {
    for (int r = first; r <= last; ++r) {
      const auto& members = ranks_[size_t(r)];  // left to right after assignCoordinates
      auto after = std::lower_bound(members.begin(), members.end(), left - kEdgeMargin, [&](int v, double x) {
        return layout_.nodes[size_t(v)].box.right() < x;
      });
      if (after != members.end() && layout_.nodes[size_t(*after)].box.left() <= right + kEdgeMargin) return true;
    }
    return false;
  }

  double rightmostBox(int first, int last) const {
    double right = 0;
    for (int r = std::max(0, first); r <= last; ++r)
      if (!ranks_[size_t(r)].empty()) right = std::max(right, layout_.nodes[size_t(ranks_[size_t(r)].back())].box.right());
    return right;
  }

  // Frames enclose their members; children come after their parents in the list, so walking
  // backwards grows each parent around its finished children.
  void frameClusters() {
    for (auto& cluster : layout_.clusters) cluster.box = QRectF();
    for (const auto& node : layout_.nodes) {
      if (node.clusterId.isEmpty()) continue;
      for (auto& cluster : layout_.clusters)
        if (cluster.id == node.clusterId) cluster.box |= node.box;
    }
    for (auto it = layout_.clusters.rbegin(); it != layout_.clusters.rend(); ++it) {
      it->box = it->box.adjusted(-10, -26, 10, 10);
      for (auto& parent : layout_.clusters)
        if (parent.id == it->parentClusterId) parent.box |= it->box;
    }
  }

  GraphLayout& layout_;
  JobContext& job_;
  size_t n_;
  std::vector<std::vector<int>> predecessors_, successors_, ranks_;
  std::vector<int> rank_;
  std::vector<double> position_;
  std::vector<double> rankTop_, rankBottom_;
};

}  // namespace

std::vector<int> longestPathRanks(const GraphLayout& layout) {
  size_t n = layout.nodes.size();
  std::vector<std::vector<int>> successors(n);
  std::vector<int> rank(n, 0), pending(n, 0), queue;
  for (const auto& edge : layout.edges) {
    successors[size_t(edge.from)].push_back(edge.to);
    ++pending[size_t(edge.to)];
  }
  for (size_t v = 0; v < n; ++v)
    if (pending[v] == 0) queue.push_back(int(v));
  for (size_t head = 0; head < queue.size(); ++head) {
    int v = queue[head];
    for (int w : successors[size_t(v)]) {
      rank[size_t(w)] = std::max(rank[size_t(w)], rank[size_t(v)] + 1);
      if (--pending[size_t(w)] == 0) queue.push_back(w);
    }
  }
  return rank;
}

bool placeLayered(GraphLayout& layout, JobContext& job) { return LayeredPlacer(layout, job).run(); }

}  // namespace tessel::views
