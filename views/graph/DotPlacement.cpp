// Graphviz `dot` placement: the graph goes as DOT text to a child process running libgvc.
#include "views/graph/DotPlacement.h"

#include <QByteArray>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <functional>
#include <optional>
#include <string>
#include <vector>


#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <graphviz/types.h>

namespace tessel::views {

namespace {

QByteArray inches(double points) { return QByteArray::number(points / 72.0, 'f', 4); }

// The environment variable that makes a process started from this program's own executable
// the dot child (see DotLayoutChild below); its value is "NODES,EDGES,CLUSTERS".
constexpr const char* kDotChildVariable = "TESSEL_DOT_LAYOUT_CHILD";
// Every node and edge carries its index in the layout, to be found again after the round trip
// through DOT text.
constexpr const char* kIdAttribute = "tessel_id";

void collectClusters(Agraph_t* graph, const std::map<std::string, size_t>& clusterIndex,
                     std::vector<std::optional<boxf>>& boxes) {
  for (int i = 1; i <= GD_n_cluster(graph); ++i) {
    Agraph_t* cluster = GD_clust(graph)[i];
    auto found = clusterIndex.find(agnameof(cluster));
    if (found != clusterIndex.end() && found->second < boxes.size()) boxes[found->second] = GD_bb(cluster);
    collectClusters(cluster, clusterIndex, boxes);
  }
}

// In the child: the layout as numbers, in the order DotPlacer::applyLayoutNumbers reads them.
std::vector<double> layoutNumbers(Agraph_t* root, const std::vector<Agnode_t*>& nodes, const std::vector<Agedge_t*>& edges,
                                  size_t clusterCount, const std::map<std::string, size_t>& clusterIndex) {
  boxf bounds = GD_bb(root);
  std::vector<double> out{bounds.LL.x, bounds.LL.y, bounds.UR.x, bounds.UR.y};
  out.reserve(4 + 2 * nodes.size() + 16 * edges.size() + 5 * clusterCount);
  for (Agnode_t* node : nodes) out.insert(out.end(), {ND_coord(node).x, ND_coord(node).y});
  for (Agedge_t* dotEdge : edges) {
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
  std::vector<std::optional<boxf>> clusterBoxes(clusterCount);
  collectClusters(root, clusterIndex, clusterBoxes);
  for (const auto& box : clusterBoxes) {
    out.push_back(box ? 1.0 : 0.0);
    out.insert(out.end(), {box ? box->LL.x : 0, box ? box->LL.y : 0, box ? box->UR.x : 0, box ? box->UR.y : 0});
  }
  return out;
}

bool writeAll(int fd, const char* bytes, size_t left) {
  while (left > 0) {
    ssize_t written = ::write(fd, bytes, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes += written;
    left -= size_t(written);
  }
  return true;
}

// The dot child: reads the graph as DOT text on stdin, lays it out and writes the numbers to
// stdout. Returns the exit status (0 done, 3 dot failed, 4 bad input or output).
int runDotLayoutChild(const char* spec) {
  unsigned long long nodeCount = 0, edgeCount = 0, clusterCount = 0;
  if (std::sscanf(spec, "%llu,%llu,%llu", &nodeCount, &edgeCount, &clusterCount) != 3) return 4;
  std::string input;
  char buffer[65536];
  for (;;) {
    ssize_t count = ::read(0, buffer, sizeof buffer);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return 4;
    if (count == 0) break;
    input.append(buffer, size_t(count));
  }
  agseterr(AGMAX);
  Agraph_t* root = agmemread(input.c_str());
  GVC_t* context = gvContext();
  if (!root || !context) return 4;
  std::vector<Agnode_t*> nodes(nodeCount, nullptr);
  std::vector<Agedge_t*> edges(edgeCount, nullptr);
  for (Agnode_t* node = agfstnode(root); node; node = agnxtnode(root, node)) {
    unsigned long long id = std::strtoull(agget(node, const_cast<char*>(kIdAttribute)), nullptr, 10);
    if (id < nodeCount) nodes[id] = node;
    for (Agedge_t* edge = agfstout(root, node); edge; edge = agnxtout(root, edge)) {
      unsigned long long edgeId = std::strtoull(agget(edge, const_cast<char*>(kIdAttribute)), nullptr, 10);
      if (edgeId < edgeCount) edges[edgeId] = edge;
    }
  }
  for (Agnode_t* node : nodes)
    if (!node) return 4;
  for (Agedge_t* edge : edges)
    if (!edge) return 4;
  std::map<std::string, size_t> clusterIndex;
  for (size_t i = 0; i < clusterCount; ++i) clusterIndex["cluster_" + std::to_string(i)] = i;
  if (gvLayout(context, root, "dot") != 0) return 3;
  std::vector<double> numbers = layoutNumbers(root, nodes, edges, clusterCount, clusterIndex);
  return writeAll(1, reinterpret_cast<const char*>(numbers.data()), numbers.size() * sizeof(double)) ? 0 : 4;
}

// A process started as the dot child does that and nothing else, before main() (every program
// that lays out graphs links this file, so each can be its own dot child).
struct DotLayoutChild {
  DotLayoutChild() {
    if (const char* spec = std::getenv(kDotChildVariable)) std::_Exit(runDotLayoutChild(spec));
  }
} dotLayoutChild;

class DotPlacer {
public:
  DotPlacer(GraphLayout& layout, JobContext& job, bool edgeLabels)
      : layout_(layout), job_(job), edgeLabels_(edgeLabels) {}

  Status run() {
    std::string graphText = dotText();
    if (job_.cancelled()) return Diagnostic{"layout cancelled", "", 0, 0, ""};
    job_.reportProgress(-1, QStringLiteral("Running dot on %1 nodes").arg(layout_.nodes.size()));
    return layOutInChild(graphText);
  }

private:
  // The graph as DOT text, for the child. Nodes are declared first, in layout order, then the
  // clusters naming their members, then the edges: dot's result (and how long it takes) depends
  // on the order nodes are created in, and this is the order the layout lists them.
  std::string dotText() {
    std::string out = "digraph tessel {\n graph [rankdir=TB, nodesep=0.3, splines=spline, fontname=Helvetica, "
                      "fontsize=11, outputorder=edgesfirst";
    // Without label boxes between the ranks, a little more room for the labels drawn there.
    out += edgeLabels_ ? ", ranksep=0.35" : ", ranksep=0.45";
    // Settings that keep dot's crossing minimisation and network simplex bounded on big graphs
    // (they dominate its running time) while leaving small graphs at full quality.
    const size_t nodeCount = layout_.nodes.size();
    if (nodeCount >= 300) {
      out += nodeCount < 800 ? ", mclimit=0.5" : ", mclimit=0.2";
      out += ", nslimit=2, nslimit1=2, searchsize=20, remincross=false";
    }
    out += "];\n node [shape=box, fixedsize=true, label=\"\"];\n edge [fontname=Helvetica, fontsize=9, arrowsize=0.7];\n";
    for (size_t i = 0; i < nodeCount; ++i) {
      if (i % 1024 == 0) {
        if (job_.cancelled()) return out;
        job_.reportProgress(30 + int(10 * i / nodeCount), QStringLiteral("Preparing the layout"));
      }
      const auto& box = layout_.nodes[i];
      out += " n" + std::to_string(i) + " [width=" + inches(box.box.width()).toStdString() +
             ", height=" + inches(box.box.height()).toStdString() + ", " + kIdAttribute + "=" + std::to_string(i) + "];\n";
    }
    // Clusters nest by parent; each names its own nodes (cluster ids are the layout's).
    std::map<QString, std::vector<size_t>> childClusters, members;
    for (size_t i = 0; i < layout_.clusters.size(); ++i) childClusters[layout_.clusters[i].parentClusterId].push_back(i);
    for (size_t i = 0; i < nodeCount; ++i) members[layout_.nodes[i].clusterId].push_back(i);
    std::function<void(size_t, int)> writeCluster = [&](size_t index, int depth) {
      const auto& cluster = layout_.clusters[index];
      std::string indent(size_t(depth + 1), ' ');
      // The label reserves the header's room above the body.
      out += indent + "subgraph cluster_" + std::to_string(index) + " {\n" + indent + " label=" + quoted(cluster.title) +
             "; labeljust=l; margin=10;\n";
      if (depth < 64)
        for (size_t child : childClusters[cluster.id]) writeCluster(child, depth + 1);
      for (size_t node : members[cluster.id]) out += indent + " n" + std::to_string(node) + ";\n";
      out += indent + "}\n";
    };
    for (size_t i = 0; i < layout_.clusters.size(); ++i) {
      const QString& parent = layout_.clusters[i].parentClusterId;
      bool nested = false;
      for (const auto& other : layout_.clusters) nested = nested || (!parent.isEmpty() && other.id == parent);
      if (!nested) writeCluster(i, 0);
    }
    for (size_t i = 0; i < layout_.edges.size(); ++i) {
      const auto& edge = layout_.edges[i];
      out += " n" + std::to_string(edge.from) + " -> n" + std::to_string(edge.to) + " [key=e" + std::to_string(i) + ", " +
             kIdAttribute + "=" + std::to_string(i);
      if (edgeLabels_ && !edge.shapeText.isEmpty()) out += ", label=" + quoted(edge.label());
      out += "];\n";
    }
    out += "}\n";
    return out;
  }

  static std::string quoted(const QString& value) {
    std::string out = "\"";
    for (char c : value.toStdString()) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out + "\"";
  }

  // dot cannot be interrupted in a thread, so it runs in a child process that can be killed: on
  // cancel, and at the time limit. The child is this program's executable started afresh
  // (posix_spawn, then DotLayoutChild before main), fed the graph as DOT text, rather than a
  // fork: a fork shares this process's memory copy-on-write for as long as dot runs (seconds),
  // and every page the GUI thread then writes costs a page fault and a TLB shootdown on every
  // core. On a 2-core virtual machine that stalled the window for 300-450 ms at a time.
  Status layOutInChild(const std::string& graphText) {
    int toChild[2], fromChild[2];
    if (::pipe2(toChild, O_CLOEXEC) != 0) return Diagnostic{std::string("cannot start dot: ") + std::strerror(errno), "", 0, 0, ""};
    if (::pipe2(fromChild, O_CLOEXEC) != 0) {
      ::close(toChild[0]);
      ::close(toChild[1]);
      return Diagnostic{std::string("cannot start dot: ") + std::strerror(errno), "", 0, 0, ""};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0);
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1);
    std::string spec = std::string(kDotChildVariable) + "=" + std::to_string(layout_.nodes.size()) + "," +
                       std::to_string(layout_.edges.size()) + "," + std::to_string(layout_.clusters.size());
    // The child needs only the loader's view of the system; no other variable of ours travels.
    std::vector<std::string> environment = {spec};
    for (const char* keep : {"PATH", "LD_LIBRARY_PATH", "GVBINDIR", "HOME"})
      if (const char* value = std::getenv(keep)) environment.push_back(std::string(keep) + "=" + value);
    std::vector<char*> envp;
    for (std::string& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    char program[] = "/proc/self/exe";
    char* argv[] = {program, nullptr};
    pid_t child = -1;
    int spawned = posix_spawn(&child, program, &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(toChild[0]);
    ::close(fromChild[1]);
    if (spawned != 0) {
      ::close(toChild[1]);
      ::close(fromChild[0]);
      return Diagnostic{std::string("cannot start dot: ") + std::strerror(spawned), "", 0, 0, ""};
    }
    // The child reads all of its input before it writes anything: no deadlock. A child that
    // dies early must not take this process with it (SIGPIPE); the Studio never wants that
    // signal anyway.
    ::signal(SIGPIPE, SIG_IGN);
    bool sent = writeAll(toChild[1], graphText.data(), graphText.size());
    ::close(toChild[1]);
    std::vector<char> received;
    std::optional<Diagnostic> stopped =
        sent ? readFromChild(fromChild[0], child, received) : std::optional<Diagnostic>();
    ::close(fromChild[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (stopped) return *stopped;
    if (!sent || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
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
  QPointF toScene(pointf point) const { return QPointF(point.x - origin_.x, top_ - point.y); }

  GraphLayout& layout_;
  JobContext& job_;
  bool edgeLabels_;
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
