// Turns a graph::Graph into boxes, edges and clusters, then places them with dot or, for
// very large graphs, with the layered fallback.
#include "views/graph/GraphLayout.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/graph/UnsupportedOperations.h"
#include "views/graph/DotPlacement.h"
#include "views/graph/LayeredPlacement.h"
#include "views/graph/ModuleGroups.h"
#include "views/graph/QuantizationInfo.h"

namespace tessel::views {

namespace {

// Where a value comes from in the drawing: a box, or a constant folded into its consumers.
struct Endpoint {
  int node = -1;
  const graph::ConstantNode* constant = nullptr;
  // The producing node's output in its own scope (for the edge's name and type).
  const graph::GraphNode* producer = nullptr;
  int index = 0;

  QString tensorName() const {
    if (!producer) return {};
    std::string name = producer->name;
    if (index > 0) name += ":" + std::to_string(index);
    return QString::fromStdString(name);
  }
  const graph::TensorType* type() const {
    return producer && size_t(index) < producer->outputTypes.size() ? &producer->outputTypes[size_t(index)] : nullptr;
  }
};

using ValueKey = std::pair<const graph::GraphNode*, int>;

// Role names Netron-style for the inputs of common operators, so a folded weight reads
// "W 64x3x7x7" instead of its (often generated) tensor name.
QString inputRole(const std::string& op, size_t index) {
  static const std::map<std::string, std::vector<const char*>> roles = {
      {"Conv", {"X", "W", "B"}},
      {"ConvPrepacked", {"X", "W", "B"}},
      {"ConvTranspose", {"X", "W", "B"}},
      {"Gemm", {"A", "B", "C"}},
      {"MatMul", {"A", "B"}},
      {"DensePrepacked", {"X", "W"}},
      {"BatchNormalization", {"X", "scale", "B", "mean", "var"}},
      {"InstanceNormalization", {"X", "scale", "B"}},
      {"LayerNormalization", {"X", "scale", "B"}},
      {"Reshape", {"data", "shape"}},
      {"Clip", {"X", "min", "max"}},
      {"PRelu", {"X", "slope"}},
      {"Pad", {"data", "pads", "value"}},
      {"Resize", {"X", "roi", "scales", "sizes"}},
      {"Slice", {"data", "starts", "ends", "axes", "steps"}},
      {"Gather", {"data", "indices"}},
  };
  auto it = roles.find(op);
  if (it != roles.end() && index < it->second.size()) return QString::fromLatin1(it->second[index]);
  return QStringLiteral("in%1").arg(index);
}

QString typeText(const graph::TensorType& type) {
  if (!type.known()) return QStringLiteral("?");
  QString text = QString::fromStdString(type.dtype.toString());
  if (!type.layout.empty()) text += QLatin1Char('@') + QString::fromStdString(type.layout);
  return text;
}

QString shapeOf(const graph::TensorType& type) {
  return type.known() ? shapeText(type.shape) : QStringLiteral("?");
}

// The role of input `index` of `op`; for a fused operation, the role it has for the body
// operation that reads it ("W" of the fused convolution).
QString roleOf(const graph::OperationNode& op, size_t index) {
  if (!op.isFused() || index >= op.body->inputs.size()) return inputRole(op.op, index);
  const graph::GraphNode* bodyInput = op.body->inputs[index].node();
  for (const auto* inner : op.body->operations())
    for (size_t i = 0; i < inner->inputs.size(); ++i)
      if (inner->inputs[i].node() == bodyInput) return inputRole(inner->op, i);
  return inputRole(op.op, index);
}

// "Conv + Relu" from a fused operation's body, in execution order.
QString fusedTitle(const graph::OperationNode& op) {
  QStringList ops;
  for (const auto* inner : op.body->operations()) ops << QString::fromStdString(inner->op);
  return ops.isEmpty() ? QString::fromStdString(op.op) : ops.join(QStringLiteral(" + "));
}

// Builds the abstract drawing (boxes with sizes, edges, clusters) with no positions yet.
class LayoutBuilder {
public:
  LayoutBuilder(const GraphLayoutOptions& options, JobContext& job, GraphLayout& layout)
      : options_(options), job_(job), layout_(layout) {}

  // False when cancelled.
  bool build(const graph::Graph& graph) {
    totalHint_ = std::max<size_t>(1, graph.topologicalOrder().size());
    if (drawnByModule(graph)) {
      std::shared_ptr<const ModuleGroups> modules = options_.reuseModules;
      if (!modules || !modules->builtFor(graph, options_.costs.get(), options_.openModulesHolding))
        modules = std::make_shared<const ModuleGroups>(graph, options_.costs.get(), options_.openModulesHolding);
      if (!modules->empty()) layout_.modules = modules_ = std::move(modules);
    }
    topLevel_ = &graph;
    std::map<const graph::GraphNode*, Endpoint> noBindings;
    std::vector<Endpoint> outputs;
    if (!addGraph(graph, noBindings, QString(), outputs)) return false;
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const graph::Value& value = graph.outputs[i];
      QString name = i < graph.outputNames.size() ? QString::fromStdString(graph.outputNames[i])
                                                  : QString::fromStdString(value.name());
      LayoutNode box;
      box.id = uniqueId(QStringLiteral("output:") + name);
      box.name = name;
      box.op = QStringLiteral("Output");
      box.title = QStringLiteral("Output");
      box.category = NodeCategory::InputOutput;
      box.source = value.node();
      if (value.type().known()) box.details << shapeOf(value.type()) + QStringLiteral("  ") + typeText(value.type());
      box.tensorNames << name << QString::fromStdString(value.name());
      int index = addNode(std::move(box));
      connect(outputs[i], index);
    }
    // Sized last: folded weights add lines to their consumer after it was created.
    for (auto& node : layout_.nodes) sizeBox(node);
    return true;
  }

private:
  // Many operations, or fewer but densely connected (GraphLayoutOptions::denseGraphShare).
  bool drawnByModule(const graph::Graph& graph) const {
    if (options_.moduleGroupsAbove <= 0) return false;
    std::vector<const graph::OperationNode*> operations = graph.operations();
    double count = double(operations.size());
    if (count > options_.moduleGroupsAbove) return true;
    if (count <= options_.moduleGroupsAbove * options_.denseGraphShare) return false;
    size_t computedInputs = 0;
    for (const graph::OperationNode* op : operations)
      for (const graph::Value& input : op->inputs)
        computedInputs += input.defined() && graph::asOperation(input.node()) != nullptr;
    return double(computedInputs) > options_.denseInputsPerOperation * count;
  }

  // Adds the boxes of `graph` (the top level or a fused body whose inputs are `bindings`);
  // `outputs` receives where each of its outputs comes from.
  bool addGraph(const graph::Graph& graph, const std::map<const graph::GraphNode*, Endpoint>& bindings,
                const QString& clusterId, std::vector<Endpoint>& outputs) {
    std::map<ValueKey, Endpoint> produced;
    auto endpointOf = [&](const graph::Value& value) -> Endpoint {
      auto bound = bindings.find(value.node());
      if (bound != bindings.end()) return bound->second;
      auto it = produced.find({value.node(), value.index()});
      if (it != produced.end()) return it->second;
      return Endpoint{-1, nullptr, value.node(), value.index()};
    };

    for (const graph::GraphNode* node : graph.topologicalOrder()) {
      if (++visited_ % 64 == 0) {
        if (job_.cancelled()) return false;
        job_.reportProgress(int(std::min<size_t>(30, 30 * visited_ / totalHint_)),
                            QStringLiteral("Building the graph (%1 nodes)").arg(visited_));
      }
      if (bindings.count(node)) continue;
      if (const auto* input = graph::asInput(node)) {
        LayoutNode box;
        box.id = uniqueId(QString::fromStdString(input->name));
        box.name = QString::fromStdString(input->name);
        box.op = QStringLiteral("Input");
        box.title = QStringLiteral("Input");
        box.category = NodeCategory::InputOutput;
        box.source = input;
        box.clusterId = clusterId;
        box.details << shapeOf(input->outputTypes[0]) + QStringLiteral("  ") + typeText(input->outputTypes[0]);
        box.tensorNames << box.name;
        int index = addNode(std::move(box));
        produced[{node, 0}] = Endpoint{index, nullptr, node, 0};
        continue;
      }
      if (const auto* constant = graph::asConstant(node)) {
        produced[{node, 0}] = Endpoint{-1, constant, node, 0};
        continue;
      }
      const auto* op = graph::asOperation(node);
      if (!op) continue;
      if (&graph == topLevel_ && graph::isUnsupported(*op)) layout_.unsupported.push_back(op);
      QString name = QString::fromStdString(op->name);
      // Inside collapsed module groups the outermost closed one stands for the operation;
      // open ones frame it.
      QString opClusterId = clusterId;
      if (modules_ && &graph == topLevel_) {
        QString closed;
        for (const QString& group : modules_->groupsOf(op)) {
          if (!isOpen(group)) {
            closed = group;
            break;
          }
          openModuleFrame(group, opClusterId);
          opClusterId = group;
        }
        if (!closed.isEmpty()) {
          addToModuleBox(*op, closed, opClusterId, endpointOf, produced);
          continue;
        }
      }
      bool expand = op->isFused() && (options_.expandAllFused || options_.expandedFusedNodes.count(name));
      if (expand) {
        LayoutCluster cluster;
        cluster.id = name;
        cluster.title = fusedTitle(*op);
        cluster.parentClusterId = opClusterId;
        cluster.source = op;
        layout_.clusters.push_back(cluster);
        std::map<const graph::GraphNode*, Endpoint> bodyBindings;
        for (size_t i = 0; i < op->body->inputs.size() && i < op->inputs.size(); ++i) {
          if (op->inputs[i].defined()) bodyBindings[op->body->inputs[i].node()] = endpointOf(op->inputs[i]);
        }
        std::vector<Endpoint> bodyOutputs;
        if (!addGraph(*op->body, bodyBindings, name, bodyOutputs)) return false;
        for (size_t j = 0; j < bodyOutputs.size(); ++j) produced[{node, int(j)}] = bodyOutputs[j];
        continue;
      }
      LayoutNode box;
      box.id = uniqueId(name);
      box.name = name;
      box.op = QString::fromStdString(op->op);
      box.collapsedFused = op->isFused();
      box.title = op->isFused() ? fusedTitle(*op) : box.op;
      box.category = op->isFused() ? NodeCategory::Fused : categorizeOperator(op->op);
      if (graph::isUnsupported(*op)) {
        // Drawn as the ONNX operator it stands for, as Netron would; the category marks it.
        graph::OnnxOperatorName onnx = graph::unsupportedOperator(*op);
        box.op = box.title = QString::fromStdString(onnx.opType);
        if (!onnx.domain.empty()) box.details << QStringLiteral("domain ") + QString::fromStdString(onnx.domain);
      }
      box.quantizationTag = quantizationTag(quantizationRole(*op));
      box.clusterId = opClusterId;
      box.source = op;
      for (size_t j = 0; j < op->outputTypes.size(); ++j) box.tensorNames << Endpoint{-1, nullptr, op, int(j)}.tensorName();
      int index = addNode(std::move(box));
      for (size_t i = 0; i < op->inputs.size(); ++i) {
        if (!op->inputs[i].defined()) continue;
        Endpoint from = endpointOf(op->inputs[i]);
        if (from.constant) {
          auto& target = layout_.nodes[size_t(index)];
          target.tensorNames << QString::fromStdString(from.constant->name);
          QString line = roleOf(*op, i) + QLatin1Char(' ') + shapeOf(from.constant->outputTypes[0]);
          if (target.details.size() < kMaxDetailLines) target.details << line;
          else if (target.details.size() == kMaxDetailLines) target.details << QStringLiteral("…");
          continue;
        }
        layout_.nodes[size_t(index)].tensorNames << from.tensorName();
        connect(from, index);
      }
      for (size_t j = 0; j < op->outputTypes.size(); ++j) produced[{node, int(j)}] = Endpoint{index, nullptr, op, int(j)};
    }
    for (const auto& value : graph.outputs) outputs.push_back(endpointOf(value));
    return true;
  }

  bool isOpen(const QString& group) const {
    if (options_.expandedModules.count(group)) return true;
    return modules_->opensByDefault(group) && !options_.collapsedModules.count(group);
  }

  // A frame for open module group `id` inside `parentId` (its enclosing open group), once.
  void openModuleFrame(const QString& id, const QString& parentId) {
    if (!openModules_.insert(id).second) return;
    LayoutCluster cluster;
    cluster.id = id;
    cluster.title = ModuleGroups::titleOf(id) + QStringLiteral("  (%1 ops").arg(modules_->operationCount(id));
    if (QString cost = modules_->costLine(id); !cost.isEmpty()) cluster.title += QStringLiteral(" · ") + cost;
    cluster.title += QLatin1Char(')');
    cluster.parentClusterId = parentId;
    layout_.clusters.push_back(std::move(cluster));
  }

  // Draws `op` as part of closed module group `id`'s box (made by its first operation): its
  // inputs from outside the group become the box's, what it computes comes from the box.
  template <class EndpointOf>
  void addToModuleBox(const graph::OperationNode& op, const QString& id, const QString& parentId,
                      const EndpointOf& endpointOf, std::map<ValueKey, Endpoint>& produced) {
    int index = layout_.indexOf(id);
    if (index < 0) {
      LayoutNode box;
      box.id = id;
      box.name = id.mid(kModuleGroupIdPrefix.size());
      box.op = QStringLiteral("Module");
      box.title = ModuleGroups::titleOf(id);
      box.category = NodeCategory::Module;
      box.collapsedModule = true;
      box.clusterId = parentId;
      box.source = &op;  // its first operation: what the properties panel shows
      box.details << modules_->summary(id);
      if (QString cost = modules_->costLine(id); !cost.isEmpty()) box.details << cost;
      index = addNode(std::move(box));
    }
    LayoutNode& box = layout_.nodes[size_t(index)];
    for (size_t j = 0; j < op.outputTypes.size(); ++j) {
      box.tensorNames << Endpoint{-1, nullptr, &op, int(j)}.tensorName();
      produced[{&op, int(j)}] = Endpoint{index, nullptr, &op, int(j)};
    }
    box.tensorNames << QString::fromStdString(op.name);
    for (const graph::Value& input : op.inputs) {
      if (!input.defined()) continue;
      Endpoint from = endpointOf(input);
      if (from.constant) box.tensorNames << QString::fromStdString(from.constant->name);
      else connect(from, index);  // once per tensor entering the group (connect sees to that)
    }
  }

  void connect(const Endpoint& from, int to) {
    if (from.node < 0 || from.node == to) return;
    // Into or out of a closed module group, the tensors between two boxes are one edge, a
    // bundle (a DenseNet block hands the next one all its 25 feature maps: 25 edges side by
    // side read as noise and cost dot minutes); a tensor counts once however many of the
    // group's operations read it.
    if (layout_.nodes[size_t(from.node)].collapsedModule || layout_.nodes[size_t(to)].collapsedModule) {
      if (!moduleEdges_.insert({from.node, to, from.tensorName()}).second) return;
      auto [bundle, isNew] = bundles_.try_emplace({from.node, to}, layout_.edges.size());
      if (!isNew) {
        LayoutEdge& edge = layout_.edges[bundle->second];
        ++edge.tensorCount;
        edge.shapeText = QStringLiteral("%1 tensors").arg(edge.tensorCount);
        edge.dtypeText.clear();
        return;
      }
    }
    LayoutEdge edge;
    edge.from = from.node;
    edge.to = to;
    edge.tensor = from.tensorName();
    // An unknown type (a model open for viewing only) gets no label: a "?" on every edge is noise.
    if (const auto* type = from.type(); type && type->known()) {
      edge.shapeText = shapeOf(*type);
      edge.dtypeText = typeText(*type);
      edge.quantized = isQuantizedType(*type);
    }
    layout_.edges.push_back(std::move(edge));
  }

  int addNode(LayoutNode box) {
    int index = int(layout_.nodes.size());
    layout_.nodeIndexById.insert(box.id, index);
    layout_.nodes.push_back(std::move(box));
    return index;
  }

  QString uniqueId(const QString& wanted) {
    if (!layout_.nodeIndexById.contains(wanted)) return wanted;
    for (int n = 2;; ++n) {
      QString candidate = wanted + QStringLiteral("#%1").arg(n);
      if (!layout_.nodeIndexById.contains(candidate)) return candidate;
    }
  }

  // Box size from its text, with the widths the scene will draw it with (bold title, name
  // elided at kMaxNameCharacters).
  void sizeBox(LayoutNode& box) const {
    const double cw = options_.characterWidth;
    // Room at the header's right end for the fused toggle or the unsupported operator's sign.
    double headerMark =
        box.collapsedFused || box.collapsedModule || box.category == NodeCategory::Unsupported ? 18.0 : 0.0;
    double textWidth = std::max(double(box.title.size()) * cw * 1.3 + headerMark,
                                double(std::min<qsizetype>(box.name.size(), kMaxNameCharacters)) * cw * 0.92);
    for (const auto& line : box.details) textWidth = std::max(textWidth, double(line.size()) * cw * 0.92);
    double width = std::clamp(textWidth + 24.0, 96.0, 300.0);
    double height = options_.lineHeight * 1.5 + options_.lineHeight + 6.0 +
                    double(box.details.size()) * options_.lineHeight * 0.95;
    box.box = QRectF(0, 0, std::round(width), std::round(height));
  }

  static constexpr qsizetype kMaxNameCharacters = 34;
  static constexpr qsizetype kMaxDetailLines = 4;

  const GraphLayoutOptions& options_;
  JobContext& job_;
  GraphLayout& layout_;
  size_t visited_ = 0, totalHint_ = 1;
  std::shared_ptr<const ModuleGroups> modules_;  ///< Set when the graph is drawn by module.
  const graph::Graph* topLevel_ = nullptr;
  std::set<QString> openModules_;                      ///< Whose frames exist.
  std::set<std::tuple<int, int, QString>> moduleEdges_;  ///< (from, to, tensor) drawn into or out of a module box.
  std::map<std::pair<int, int>, size_t> bundles_;        ///< (from, to) of those: their one edge.
};

// The most edges crossing one gap between longest-path ranks: what dot's crossing
// minimization has to order there. Linear in the drawing.
int widestRankGap(const GraphLayout& layout) {
  size_t n = layout.nodes.size();
  std::vector<int> rank = longestPathRanks(layout);
  // Each edge crosses the gaps from its source's rank to its target's: a difference array.
  std::vector<int> crossing(n + 1, 0);
  for (const auto& edge : layout.edges) {
    int from = rank[size_t(edge.from)], to = rank[size_t(edge.to)];
    if (to <= from) continue;  // on a cycle (not a dataflow graph's)
    ++crossing[size_t(from)];
    --crossing[size_t(to)];
  }
  int widest = 0, running = 0;
  for (int delta : crossing) widest = std::max(widest, running += delta);
  return widest;
}

Diagnostic cancelledDiagnostic() {
  return Diagnostic{"layout cancelled", "", 0, 0, ""};
}

}  // namespace

QString shapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return QStringLiteral("scalar");
  QStringList parts;
  for (int64_t extent : shape) parts << QString::number(extent);
  return parts.join(QLatin1Char('x'));
}

const LayoutNode* GraphLayout::findNode(const QString& id) const {
  int index = indexOf(id);
  return index < 0 ? nullptr : &nodes[size_t(index)];
}

int GraphLayout::indexOf(const QString& id) const { return nodeIndexById.value(id, -1); }

const LayoutCluster* GraphLayout::findCluster(const QString& id) const {
  for (const auto& cluster : clusters)
    if (cluster.id == id) return &cluster;
  return nullptr;
}

QStringList GraphLayout::enclosingClusters(const QString& id) const {
  QString parent;
  if (const LayoutNode* node = findNode(id)) parent = node->clusterId;
  else if (const LayoutCluster* cluster = findCluster(id)) parent = cluster->parentClusterId;
  QStringList chain;
  // Bounded by the cluster count: a malformed parent cycle cannot loop forever.
  while (!parent.isEmpty() && chain.size() <= int(clusters.size())) {
    chain.prepend(parent);
    const LayoutCluster* cluster = findCluster(parent);
    parent = cluster ? cluster->parentClusterId : QString();
  }
  return chain;
}

Expected<GraphLayout> layoutGraph(std::shared_ptr<const graph::Graph> graph, const GraphLayoutOptions& options,
                                  JobContext& job) {
  TESSEL_ICHECK(graph) << "layoutGraph needs a graph";
  GraphLayout layout;
  layout.graph = graph;
  LayoutBuilder builder(options, job, layout);
  if (!builder.build(*graph)) return cancelledDiagnostic();
  if (job.cancelled()) return cancelledDiagnostic();

  const int nodes = int(layout.nodes.size()), edges = int(layout.edges.size());
  const int widest = layout.widestRankGap = widestRankGap(layout);
  const bool dense = layout.denselyConnected =
      nodes >= options.denseDrawingBoxes && edges > options.dotEdgesPerBoxLimit * nodes;
  if (nodes <= options.dotNodeLimit && widest <= options.dotRankGapLimit && !dense) {
    layout.engine = QStringLiteral("dot");
    bool edgeLabels = nodes <= options.dotEdgeLabelLimit && edges <= options.dotEdgeLabelLimit;
    if (!edgeLabels)
      job.reportProgress(30, QStringLiteral("%1 nodes: shape labels placed on their edges, not by dot (faster)")
                                 .arg(layout.nodes.size()));
    bool timedOut = false;
    Status placed = placeWithDot(layout, job, edgeLabels, options.dotTimeLimitSeconds, &timedOut);
    if (!placed && !timedOut) return placed.error();
    if (timedOut) {
      layout.engine = QStringLiteral("layered");
      layout.dotTimedOut = true;
      job.reportProgress(35, QStringLiteral("dot took longer than %1 s: using the fast layered layout")
                                 .arg(options.dotTimeLimitSeconds));
      if (!placeLayered(layout, job)) return cancelledDiagnostic();
    }
  } else {
    layout.engine = QStringLiteral("layered");
    if (dense && nodes <= options.dotNodeLimit && widest <= options.dotRankGapLimit)
      job.reportProgress(35, QStringLiteral("%1 nodes, %2 edges: densely connected, using the layered layout, "
                                            "which gathers the edges into one box as a trunk")
                                 .arg(nodes)
                                 .arg(edges));
    else
      job.reportProgress(35, QStringLiteral("%1 nodes, up to %2 edges between two ranks: above dot's limits (%3 nodes, "
                                            "%4 edges), using the fast layered layout")
                                 .arg(nodes)
                                 .arg(widest)
                                 .arg(options.dotNodeLimit)
                                 .arg(options.dotRankGapLimit));
    if (!placeLayered(layout, job)) return cancelledDiagnostic();
  }
  if (job.cancelled()) return cancelledDiagnostic();

  QRectF bounds;
  for (const auto& node : layout.nodes) bounds |= node.box;
  for (const auto& cluster : layout.clusters) bounds |= cluster.box;
  for (const auto& edge : layout.edges)
    for (const auto& point : edge.spline) bounds |= QRectF(point, QSizeF(1, 1));
  layout.bounds = bounds.adjusted(-20, -20, 20, 20);
  job.reportProgress(100, QStringLiteral("Laid out %1 nodes").arg(layout.nodes.size()));
  return layout;
}

}  // namespace tessel::views
