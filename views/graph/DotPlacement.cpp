// Graphviz `dot` placement through libgvc/cgraph, every call under graphvizMutex().
#include "views/graph/DotPlacement.h"

#include <QByteArray>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "views/graph/GraphvizMutex.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <graphviz/types.h>

namespace tessel::views {

namespace {

// cgraph's API takes char* for strings it only reads.
char* text(const char* literal) { return const_cast<char*>(literal); }

void set(void* object, const char* name, const QByteArray& value) {
  agsafeset(object, text(name), const_cast<char*>(value.constData()), text(""));
}

// One Graphviz context for the process: creating one loads the plugin configuration, and
// Graphviz's globals make several pointless anyway. Call with graphvizMutex() held.
GVC_t* graphvizContext() {
  static GVC_t* context = [] {
    agseterr(AGERR);  // Keep layout warnings off the terminal; failures still return codes.
    return gvContext();
  }();
  return context;
}

QByteArray inches(double points) { return QByteArray::number(points / 72.0, 'f', 4); }

// Frees the graph and its layout on every path out.
class DotGraph {
public:
  DotGraph() : graph_(agopen(text("tessel"), Agdirected, nullptr)) {}
  // Only a child process lays the graph out (and exits without freeing): here there is no
  // layout to free.
  ~DotGraph() { agclose(graph_); }
  DotGraph(const DotGraph&) = delete;
  DotGraph& operator=(const DotGraph&) = delete;
  Agraph_t* get() const { return graph_; }

private:
  Agraph_t* graph_;
};

// Settings that keep dot's crossing minimisation and network simplex bounded on big graphs
// (they dominate its running time) while leaving small graphs at full quality.
void applyEffortLimits(Agraph_t* graph, size_t nodeCount) {
  if (nodeCount < 300) return;
  set(graph, "mclimit", nodeCount < 800 ? "0.5" : "0.2");
  set(graph, "nslimit", "2");
  set(graph, "nslimit1", "2");
  set(graph, "searchsize", "20");
  set(graph, "remincross", "false");
}

class DotPlacer {
public:
  DotPlacer(GraphLayout& layout, JobContext& job, bool edgeLabels)
      : layout_(layout), job_(job), edgeLabels_(edgeLabels) {}

  Status run() {
    std::lock_guard<std::mutex> lock(graphvizMutex());
    GVC_t* context = graphvizContext();
    if (!context) return Diagnostic{"Graphviz could not start (gvContext failed)", "", 0, 0, "check the Graphviz installation"};
    DotGraph dot;
    Agraph_t* root = dot.get();
    set(root, "rankdir", "TB");
    set(root, "nodesep", "0.3");
    // Without label boxes between the ranks, a little more room for the labels drawn there.
    set(root, "ranksep", edgeLabels_ ? "0.35" : "0.45");
    set(root, "splines", "spline");
    set(root, "fontname", "Helvetica");
    set(root, "fontsize", "11");
    set(root, "outputorder", "edgesfirst");
    applyEffortLimits(root, layout_.nodes.size());
    agattr(root, AGNODE, text("shape"), text("box"));
    agattr(root, AGNODE, text("fixedsize"), text("true"));
    agattr(root, AGNODE, text("label"), text(""));
    agattr(root, AGEDGE, text("fontname"), text("Helvetica"));
    agattr(root, AGEDGE, text("fontsize"), text("9"));
    agattr(root, AGEDGE, text("arrowsize"), text("0.7"));

    std::map<QString, Agraph_t*> clusterGraphs;
    for (size_t i = 0; i < layout_.clusters.size(); ++i) {
      const auto& cluster = layout_.clusters[i];
      auto parent = clusterGraphs.find(cluster.parentClusterId);
      Agraph_t* owner = parent == clusterGraphs.end() ? root : parent->second;
      QByteArray name = "cluster_" + QByteArray::number(qulonglong(i));
      Agraph_t* sub = agsubg(owner, name.data(), 1);
      set(sub, "label", cluster.title.toUtf8());  // Reserves the header's room above the body.
      set(sub, "labeljust", "l");
      set(sub, "margin", "10");
      clusterGraphs[cluster.id] = sub;
      clusterIndex_[name.toStdString()] = i;
    }

    nodes_.resize(layout_.nodes.size());
    for (size_t i = 0; i < layout_.nodes.size(); ++i) {
      if (i % 256 == 0) {
        if (job_.cancelled()) return Diagnostic{"layout cancelled", "", 0, 0, ""};
        job_.reportProgress(30 + int(10 * i / layout_.nodes.size()), QStringLiteral("Preparing the layout"));
      }
      const auto& box = layout_.nodes[i];
      QByteArray name = "n" + QByteArray::number(qulonglong(i));
      Agnode_t* node = agnode(root, name.data(), 1);
      set(node, "width", inches(box.box.width()));
      set(node, "height", inches(box.box.height()));
      auto cluster = clusterGraphs.find(box.clusterId);
      if (cluster != clusterGraphs.end()) agsubnode(cluster->second, node, 1);
      nodes_[i] = node;
    }
    edges_.resize(layout_.edges.size());
    for (size_t i = 0; i < layout_.edges.size(); ++i) {
      const auto& edge = layout_.edges[i];
      QByteArray name = "e" + QByteArray::number(qulonglong(i));
      Agedge_t* dotEdge = agedge(root, nodes_[size_t(edge.from)], nodes_[size_t(edge.to)], name.data(), 1);
      if (edgeLabels_ && !edge.shapeText.isEmpty()) set(dotEdge, "label", edge.label().toUtf8());
      edges_[i] = dotEdge;
    }
    if (job_.cancelled()) return Diagnostic{"layout cancelled", "", 0, 0, ""};

    job_.reportProgress(-1, QStringLiteral("Running dot on %1 nodes").arg(layout_.nodes.size()));
    return layOutInChild(context, root);
  }

private:
  // dot cannot be interrupted in a thread, so it runs in a child process (a fork, which has the
  // graph just built) that sends back every number the layout needs and can be killed: on
  // cancel, and at the time limit. Graphviz's mutex is held throughout, so the fork copies no
  // Graphviz state another thread is changing; the child only lays out, writes and exits.
  Status layOutInChild(GVC_t* context, Agraph_t* root) {
    int pipeEnds[2];
    if (::pipe(pipeEnds) != 0)
      return Diagnostic{std::string("cannot start dot: ") + std::strerror(errno), "", 0, 0, ""};
    pid_t child = ::fork();
    if (child < 0) {
      ::close(pipeEnds[0]);
      ::close(pipeEnds[1]);
      return Diagnostic{std::string("cannot start dot: ") + std::strerror(errno), "", 0, 0, ""};
    }
    if (child == 0) {
      ::close(pipeEnds[0]);
      if (gvLayout(context, root, "dot") != 0) ::_exit(3);
      std::vector<double> numbers = layoutNumbers(root);
      const char* bytes = reinterpret_cast<const char*>(numbers.data());
      size_t left = numbers.size() * sizeof(double);
      while (left > 0) {
        ssize_t written = ::write(pipeEnds[1], bytes, left);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) ::_exit(4);
        bytes += written;
        left -= size_t(written);
      }
      ::_exit(0);
    }
    ::close(pipeEnds[1]);
    std::vector<char> received;
    std::optional<Diagnostic> stopped = readFromChild(pipeEnds[0], child, received);
    ::close(pipeEnds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (stopped) return *stopped;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return Diagnostic{WIFEXITED(status) && WEXITSTATUS(status) == 3
                            ? std::string("Graphviz dot could not lay out the graph")
                            : "Graphviz dot ended abnormally (" +
                                  (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                       : "exit code " + std::to_string(WEXITSTATUS(status))) +
                                  ")",
                        "", 0, 0, "check that the Graphviz dot plugin (libgvplugin_dot_layout) is installed"};
    std::vector<double> numbers(received.size() / sizeof(double));
    std::memcpy(numbers.data(), received.data(), numbers.size() * sizeof(double));
    if (job_.cancelled()) return Diagnostic{"layout cancelled", "", 0, 0, ""};
    job_.reportProgress(90, QStringLiteral("Reading the layout"));
    if (!applyLayoutNumbers(numbers))
      return Diagnostic{"Graphviz dot's layout came back incomplete", "", 0, 0, "report this with the model"};
    return Status::success();
  }

  // Reads everything the child writes until it closes the pipe; kills it (and says why) when
  // the job is cancelled or the time limit passes first.
  std::optional<Diagnostic> readFromChild(int fd, pid_t child, std::vector<char>& received) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    char buffer[65536];
    for (;;) {
      if (job_.cancelled()) {
        ::kill(child, SIGKILL);
        return Diagnostic{"layout cancelled", "", 0, 0, ""};
      }
      double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (timeLimitSeconds_ > 0 && elapsed > timeLimitSeconds_) {
        ::kill(child, SIGKILL);
        timedOut_ = true;
        return Diagnostic{"Graphviz dot took longer than " + std::to_string(int(timeLimitSeconds_ + 0.5)) +
                              " s and was stopped",
                          "", 0, 0, "the layered layout is used instead"};
      }
      pollfd waiting{fd, POLLIN, 0};
      int ready = ::poll(&waiting, 1, 50);
      if (ready < 0 && errno != EINTR) return Diagnostic{"lost dot's output", "", 0, 0, ""};
      if (ready <= 0) continue;
      ssize_t count = ::read(fd, buffer, sizeof buffer);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) return std::nullopt;  // the child is done
      received.insert(received.end(), buffer, buffer + count);
    }
  }

  // In the child: the layout as numbers, in the order applyLayoutNumbers reads them.
  std::vector<double> layoutNumbers(Agraph_t* root) {
    boxf bounds = GD_bb(root);
    std::vector<double> out{bounds.LL.x, bounds.LL.y, bounds.UR.x, bounds.UR.y};
    out.reserve(4 + 2 * nodes_.size() + 16 * edges_.size() + 5 * layout_.clusters.size());
    for (Agnode_t* node : nodes_) out.insert(out.end(), {ND_coord(node).x, ND_coord(node).y});
    for (Agedge_t* dotEdge : edges_) {
      const splines* routes = ED_spl(dotEdge);
      std::vector<pointf> points;
      bool hasTip = false;
      pointf tip{0, 0};
      if (routes && routes->size > 0) {
        for (int b = 0; b < routes->size; ++b) {
          const bezier& curve = routes->list[b];
          for (int p = 0; p < curve.size; ++p)
            if (!(b > 0 && p == 0)) points.push_back(curve.list[p]);  // joints shared: 1 + 3k points
          if (curve.eflag) {
            hasTip = true;
            tip = curve.ep;
          }
        }
        if (!routes->list[routes->size - 1].eflag && !points.empty()) {
          hasTip = true;
          tip = points.back();
        }
      }
      out.push_back(double(points.size()));
      for (const pointf& point : points) out.insert(out.end(), {point.x, point.y});
      out.insert(out.end(), {hasTip ? 1.0 : 0.0, tip.x, tip.y});
      const textlabel_t* label = ED_label(dotEdge);
      bool hasLabel = label && label->set;
      out.insert(out.end(), {hasLabel ? 1.0 : 0.0, hasLabel ? label->pos.x : 0, hasLabel ? label->pos.y : 0});
    }
    std::vector<std::optional<boxf>> clusterBoxes(layout_.clusters.size());
    collectClusters(root, clusterBoxes);
    for (const auto& box : clusterBoxes) {
      out.push_back(box ? 1.0 : 0.0);
      out.insert(out.end(), {box ? box->LL.x : 0, box ? box->LL.y : 0, box ? box->UR.x : 0, box ? box->UR.y : 0});
    }
    return out;
  }

  void collectClusters(Agraph_t* graph, std::vector<std::optional<boxf>>& boxes) {
    for (int i = 1; i <= GD_n_cluster(graph); ++i) {
      Agraph_t* cluster = GD_clust(graph)[i];
      auto found = clusterIndex_.find(agnameof(cluster));
      if (found != clusterIndex_.end()) boxes[found->second] = GD_bb(cluster);
      collectClusters(cluster, boxes);
    }
  }

  // In the parent: the child's numbers put into the layout; false when they do not add up.
  bool applyLayoutNumbers(const std::vector<double>& in) {
    size_t at = 0;
    auto next = [&](double* value) {
      if (at >= in.size()) return false;
      *value = in[at++];
      return true;
    };
    auto nextPoint = [&](pointf* point) { return next(&point->x) && next(&point->y); };
    pointf lowerLeft, upperRight;
    if (!nextPoint(&lowerLeft) || !nextPoint(&upperRight)) return false;
    origin_ = lowerLeft;
    top_ = upperRight.y;
    for (LayoutNode& node : layout_.nodes) {
      pointf center;
      if (!nextPoint(&center)) return false;
      node.box.moveCenter(toScene(center));
    }
    for (LayoutEdge& edge : layout_.edges) {
      double count = 0, hasTip = 0, hasLabel = 0;
      if (!next(&count) || count < 0 || count > double(in.size())) return false;
      edge.spline.clear();
      for (int p = 0; p < int(count); ++p) {
        pointf point;
        if (!nextPoint(&point)) return false;
        edge.spline.push_back(toScene(point));
      }
      pointf tip, label;
      if (!next(&hasTip) || !nextPoint(&tip) || !next(&hasLabel) || !nextPoint(&label)) return false;
      const QRectF& from = layout_.nodes[size_t(edge.from)].box;
      const QRectF& to = layout_.nodes[size_t(edge.to)].box;
      if (edge.spline.empty()) {
        QPointF start(from.center().x(), from.bottom()), end(to.center().x(), to.top());
        edge.spline = {start, start + (end - start) / 3, start + 2 * (end - start) / 3, end};
        edge.arrowTip = end;
      } else {
        edge.arrowTip = hasTip != 0 ? toScene(tip) : edge.spline.back();
      }
      if (hasLabel != 0) edge.labelCenter = toScene(label);
      else edge.labelCenter = edge.spline[edge.spline.size() / 2];
    }
    for (LayoutCluster& cluster : layout_.clusters) {
      double has = 0;
      pointf clusterLowerLeft, clusterUpperRight;
      if (!next(&has) || !nextPoint(&clusterLowerLeft) || !nextPoint(&clusterUpperRight)) return false;
      if (has != 0)
        cluster.box = QRectF(toScene(pointf{clusterLowerLeft.x, clusterUpperRight.y}),
                             toScene(pointf{clusterUpperRight.x, clusterLowerLeft.y}));
    }
    return at == in.size();
  }

public:
  bool timedOut() const { return timedOut_; }
  void setTimeLimit(double seconds) { timeLimitSeconds_ = seconds; }

private:
private:
  QPointF toScene(pointf point) const { return QPointF(point.x - origin_.x, top_ - point.y); }

  GraphLayout& layout_;
  JobContext& job_;
  bool edgeLabels_;
  std::vector<Agnode_t*> nodes_;
  std::vector<Agedge_t*> edges_;
  std::map<std::string, size_t> clusterIndex_;
  pointf origin_{0, 0};
  double top_ = 0;
  double timeLimitSeconds_ = 0;
  bool timedOut_ = false;
};

}  // namespace

Status placeWithDot(GraphLayout& layout, JobContext& job, bool edgeLabels, double timeLimitSeconds, bool* timedOut) {
  DotPlacer placer(layout, job, edgeLabels);
  placer.setTimeLimit(timeLimitSeconds);
  Status placed = placer.run();
  if (timedOut) *timedOut = placer.timedOut();
  return placed;
}

}  // namespace tessel::views
