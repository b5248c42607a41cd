// Graphviz `dot` placement through libgvc/cgraph, every call under graphvizMutex().
#include "views/graph/DotPlacement.h"

#include <QByteArray>

#include <map>
#include <mutex>
#include <string>

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
  ~DotGraph() {
    if (laidOut_) gvFreeLayout(graphvizContext(), graph_);
    agclose(graph_);
  }
  DotGraph(const DotGraph&) = delete;
  DotGraph& operator=(const DotGraph&) = delete;
  Agraph_t* get() const { return graph_; }
  void markLaidOut() { laidOut_ = true; }

private:
  Agraph_t* graph_;
  bool laidOut_ = false;
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

    job_.reportProgress(-1, QStringLiteral("Running dot on %1 nodes (cannot be interrupted)").arg(layout_.nodes.size()));
    if (gvLayout(context, root, "dot") != 0)
      return Diagnostic{"Graphviz dot could not lay out the graph", "", 0, 0,
                        "check that the Graphviz dot plugin (libgvplugin_dot_layout) is installed"};
    dot.markLaidOut();
    if (job_.cancelled()) return Diagnostic{"layout cancelled", "", 0, 0, ""};
    job_.reportProgress(90, QStringLiteral("Reading the layout"));
    readBack(root);
    return Status::success();
  }

private:
  QPointF toScene(pointf point) const { return QPointF(point.x - origin_.x, top_ - point.y); }

  void readBack(Agraph_t* root) {
    boxf bounds = GD_bb(root);
    origin_ = bounds.LL;
    top_ = bounds.UR.y;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      QPointF center = toScene(ND_coord(nodes_[i]));
      QRectF& box = layout_.nodes[i].box;
      box.moveCenter(center);
    }
    for (size_t i = 0; i < edges_.size(); ++i) readEdge(edges_[i], layout_.edges[i]);
    readClusters(root);
  }

  void readEdge(Agedge_t* dotEdge, LayoutEdge& edge) {
    edge.spline.clear();
    const splines* routes = ED_spl(dotEdge);
    const QRectF& from = layout_.nodes[size_t(edge.from)].box;
    const QRectF& to = layout_.nodes[size_t(edge.to)].box;
    if (routes && routes->size > 0) {
      for (int b = 0; b < routes->size; ++b) {
        const bezier& curve = routes->list[b];
        for (int p = 0; p < curve.size; ++p) {
          // Consecutive beziers share their joint: keep the control-point count 1 + 3k.
          if (b > 0 && p == 0) continue;
          edge.spline.push_back(toScene(curve.list[p]));
        }
        if (curve.eflag) edge.arrowTip = toScene(curve.ep);
      }
      if (!routes->list[routes->size - 1].eflag) edge.arrowTip = edge.spline.back();
    } else {
      QPointF start(from.center().x(), from.bottom()), end(to.center().x(), to.top());
      edge.spline = {start, start + (end - start) / 3, start + 2 * (end - start) / 3, end};
      edge.arrowTip = end;
    }
    const textlabel_t* label = ED_label(dotEdge);
    if (label && label->set) edge.labelCenter = toScene(label->pos);
    else if (!edge.spline.empty()) edge.labelCenter = edge.spline[edge.spline.size() / 2];
  }

  void readClusters(Agraph_t* graph) {
    for (int i = 1; i <= GD_n_cluster(graph); ++i) {
      Agraph_t* cluster = GD_clust(graph)[i];
      auto found = clusterIndex_.find(agnameof(cluster));
      if (found != clusterIndex_.end()) {
        boxf box = GD_bb(cluster);
        layout_.clusters[found->second].box = QRectF(toScene(pointf{box.LL.x, box.UR.y}), toScene(pointf{box.UR.x, box.LL.y}));
      }
      readClusters(cluster);
    }
  }

  GraphLayout& layout_;
  JobContext& job_;
  bool edgeLabels_;
  std::vector<Agnode_t*> nodes_;
  std::vector<Agedge_t*> edges_;
  std::map<std::string, size_t> clusterIndex_;
  pointf origin_{0, 0};
  double top_ = 0;
};

}  // namespace

Status placeWithDot(GraphLayout& layout, JobContext& job, bool edgeLabels) {
  return DotPlacer(layout, job, edgeLabels).run();
}

}  // namespace tessel::views
