// Side-by-side comparison of two graphs: background diff and layout, the overlay, the
// legend, and mirrored navigation and selection.
#include "views/timeline/GraphCompareView.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QScopedValueRollback>
#include <QSplitter>
#include <QVBoxLayout>

#include <limits>

#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"

namespace tessel::views {

namespace {
constexpr graph::NodeChange kLegendOrder[] = {graph::NodeChange::Added, graph::NodeChange::Removed,
                                              graph::NodeChange::Fused, graph::NodeChange::Relaid,
                                              graph::NodeChange::Modified};

int sideIndex(DiffSide side) { return side == DiffSide::Before ? 0 : 1; }
DiffSide otherSide(DiffSide side) { return side == DiffSide::Before ? DiffSide::After : DiffSide::Before; }

// A small rounded colour chip for the legend, drawn into a pixmap so the label stays a QLabel.
QPixmap legendChip(const QColor& colour, qreal devicePixelRatio) {
  QPixmap pixmap(QSize(14, 14) * devicePixelRatio);
  pixmap.setDevicePixelRatio(devicePixelRatio);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  QColor fill = colour;
  fill.setAlphaF(0.25);
  painter.setBrush(fill);
  painter.setPen(QPen(colour, 2));
  painter.drawRoundedRect(QRectF(1.5, 1.5, 11, 11), 3, 3);
  return pixmap;
}

bool isDark(const QPalette& palette) { return palette.color(QPalette::Base).lightness() < 128; }
}  // namespace

struct GraphCompareView::Result {
  std::shared_ptr<const graph::GraphDiff> diff;
  Expected<GraphLayout> before = Diagnostic{"not laid out", "", 0, 0, ""};
  Expected<GraphLayout> after = Diagnostic{"not laid out", "", 0, 0, ""};
};

GraphCompareView::GraphCompareView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);

  // Legend bar: one chip per change kind with its count, then the sync switch.
  legend_ = new QWidget(this);
  auto* legendLayout = new QHBoxLayout(legend_);
  legendLayout->setContentsMargins(8, 4, 8, 4);
  legendLayout->setSpacing(4);
  for (graph::NodeChange change : kLegendOrder) {
    auto* chip = new QLabel(legend_);
    chip->setObjectName(QStringLiteral("legendChip"));
    chip->setProperty("change", int(change));
    auto* text = new QLabel(diffLabel(change), legend_);
    text->setToolTip(change == graph::NodeChange::Fused
                         ? tr("A node that absorbed others (hover it to see which); on side A, the absorbed nodes")
                         : change == graph::NodeChange::Relaid ? tr("Same node, other memory layout (AlterLayout)")
                                                               : QString());
    legendLayout->addWidget(chip);
    legendLayout->addWidget(text);
    legendLayout->addSpacing(10);
    legendCounts_.push_back(text);
  }
  legendLayout->addStretch(1);
  status_ = new QLabel(legend_);
  status_->setForegroundRole(QPalette::PlaceholderText);
  legendLayout->addWidget(status_);
  legendLayout->addSpacing(12);
  syncBox_ = new QCheckBox(tr("Synchronize navigation"), legend_);
  syncBox_->setChecked(true);
  syncBox_->setToolTip(tr("Zoom, pan and selection on one side follow on the other, through matched nodes"));
  legendLayout->addWidget(syncBox_);
  layout->addWidget(legend_);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->setChildrenCollapsible(false);
  auto makePane = [&](QLabel*& title, GraphView*& view) {
    auto* pane = new QWidget(splitter);
    auto* paneLayout = new QVBoxLayout(pane);
    paneLayout->setContentsMargins(0, 0, 0, 0);
    paneLayout->setSpacing(0);
    title = new QLabel(pane);
    title->setContentsMargins(8, 3, 8, 3);
    title->setBackgroundRole(QPalette::AlternateBase);
    title->setAutoFillBackground(true);
    view = new GraphView(pane);
    paneLayout->addWidget(title);
    paneLayout->addWidget(view, 1);
    splitter->addWidget(pane);
  };
  makePane(beforeTitle_, beforeView_);
  makePane(afterTitle_, afterView_);
  splitter->setSizes({1, 1});
  layout->addWidget(splitter, 1);

  applyTheme();

  for (DiffSide side : {DiffSide::Before, DiffSide::After}) {
    GraphView* v = view(side);
    connect(v, &GraphView::viewportChanged, this, [this, side] { mirrorViewport(side); });
    connect(v, &GraphView::nodeSelected, this, [this, side](const QString& id) {
      if (mirroring_) return;
      emit nodeSelected(side, id);
      mirrorSelection(side, id);
    });
    connect(v, &GraphView::nodeActivated, this, [this, side](const QString& id) { emit nodeActivated(side, id); });
    connect(v, &GraphView::fusedGroupToggleRequested, this, [this, side](const QString& name, bool expand) {
      auto& expanded = expanded_[sideIndex(side)];
      if (expand) expanded.insert(name);
      else expanded.erase(name);
      startComparison();
    });
  }
  connect(syncBox_, &QCheckBox::toggled, this, &GraphCompareView::setSynchronized);
  updateLegend();
}

void GraphCompareView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) applyTheme();
}

// Follows the light/dark theme: the graphs' palette, the overlay's colour variants, the legend.
void GraphCompareView::applyTheme() {
  bool dark = isDark(palette());
  for (DiffSide side : {DiffSide::Before, DiffSide::After}) {
    GraphView* v = view(side);
    v->setGraphPalette(dark ? GraphPalette::dark() : GraphPalette::light());
    if (!diff_) continue;
    v->clearDecorations();
    decorations_[sideIndex(side)] = diffDecorations(*diff_, side, dark);
    for (const NodeDecoration& d : decorations_[sideIndex(side)])
      v->setNodeDecoration(d.nodeId, d.colour, d.badge, d.tooltip);
  }
  if (!legendCounts_.empty()) updateLegend();
}

GraphCompareView::~GraphCompareView() {
  // GraphScene reacts to the selection change its own destruction causes after its members
  // are gone; with its signals blocked that cannot happen (reported to the graph view's owner).
  jobs_.cancelAll();
  for (GraphView* v : {beforeView_, afterView_}) v->graphScene()->blockSignals(true);
}

void GraphCompareView::setGraphs(std::shared_ptr<const graph::Graph> before, std::shared_ptr<const graph::Graph> after,
                                 const QString& beforeTitle, const QString& afterTitle) {
  bool sameGraphs = before == before_ && after == after_;
  before_ = std::move(before);
  after_ = std::move(after);
  beforeName_ = beforeTitle;
  afterName_ = afterTitle;
  if (!sameGraphs) {
    expanded_[0].clear();
    expanded_[1].clear();
    fitOnResult_ = true;
  }
  startComparison();
}

void GraphCompareView::clear() { setGraphs(nullptr, nullptr); }

const std::vector<NodeDecoration>& GraphCompareView::decorations(DiffSide side) const {
  return decorations_[sideIndex(side)];
}

void GraphCompareView::setSynchronized(bool on) {
  synchronized_ = on;
  if (syncBox_->isChecked() != on) syncBox_->setChecked(on);
  if (on) mirrorViewport(DiffSide::Before);
}

void GraphCompareView::startComparison() {
  beforeTitle_->setText(QStringLiteral("<b>A</b>&nbsp;&nbsp;%1").arg(beforeName_.toHtmlEscaped()));
  afterTitle_->setText(QStringLiteral("<b>B</b>&nbsp;&nbsp;%1").arg(afterName_.toHtmlEscaped()));
  if (!before_ || !after_) {
    jobs_.cancel(QStringLiteral("compare"));
    diff_.reset();
    decorations_[0].clear();
    decorations_[1].clear();
    beforeView_->setGraphLayout(nullptr);
    afterView_->setGraphLayout(nullptr);
    updateLegend();
    return;
  }
  status_->setText(tr("Laying out…"));
  // Layout options carry the scenes' font metrics: read them here, on the GUI thread.
  GraphLayoutOptions beforeOptions = beforeView_->graphScene()->layoutOptions();
  GraphLayoutOptions afterOptions = afterView_->graphScene()->layoutOptions();
  beforeOptions.expandedFusedNodes = expanded_[0];
  afterOptions.expandedFusedNodes = expanded_[1];
  // Operation by operation, never by module: the diff marks boxes, and a closed module's box
  // would hide what changed inside it.
  beforeOptions.moduleGroupsAbove = afterOptions.moduleGroupsAbove = 0;
  // Two layouts per comparison, flipped through: big graphs take the fast layered layout.
  beforeOptions.dotNodeLimit = afterOptions.dotNodeLimit = kInteractiveDotNodeLimit;
  auto before = before_;
  auto after = after_;
  jobs_.start<Result>(
      QStringLiteral("compare"), tr("Comparing %1 with %2").arg(beforeName_, afterName_),
      [before, after, beforeOptions, afterOptions](JobContext& job) {
        Result result;
        job.reportProgress(5, QStringLiteral("Diffing"));
        result.diff = std::make_shared<const graph::GraphDiff>(graph::diffGraphs(*before, *after));
        if (job.cancelled()) return result;
        job.reportProgress(15, QStringLiteral("Laying out A"));
        result.before = layoutGraph(before, beforeOptions, job);
        if (job.cancelled()) return result;
        job.reportProgress(55, QStringLiteral("Laying out B"));
        result.after = layoutGraph(after, afterOptions, job);
        return result;
      },
      [this](Result result) { showResult(std::move(result)); });
}

void GraphCompareView::showResult(Result result) {
  if (!result.before || !result.after) {
    const Diagnostic& error = !result.before ? result.before.error() : result.after.error();
    status_->setText(tr("Layout failed"));
    emit comparisonFailed(QString::fromStdString(error.toString()));
    return;
  }
  diff_ = std::move(result.diff);
  QScopedValueRollback guard(mirroring_, true);
  bool dark = isDark(palette());
  for (DiffSide side : {DiffSide::Before, DiffSide::After}) {
    GraphView* v = view(side);
    auto layout = std::make_shared<const GraphLayout>(std::move(side == DiffSide::Before ? *result.before : *result.after));
    v->clearDecorations();
    v->setGraphLayout(layout);
    decorations_[sideIndex(side)] = diffDecorations(*diff_, side, dark);
    for (const NodeDecoration& d : decorations_[sideIndex(side)])
      v->setNodeDecoration(d.nodeId, d.colour, d.badge, d.tooltip);
  }
  if (fitOnResult_) {
    beforeView_->showStart();
    afterView_->showStart();
    // Each side fitted on its own, so both read at first sight; the first zoom or pan on
    // one side brings the other to the same scale and place.
    fitOnResult_ = false;
  }
  updateLegend();
  emit comparisonReady();
}

void GraphCompareView::updateLegend() {
  qreal ratio = devicePixelRatioF();
  bool dark = isDark(palette());
  auto chips = legend_->findChildren<QLabel*>(QStringLiteral("legendChip"));
  for (QLabel* chip : chips)
    chip->setPixmap(legendChip(diffColour(graph::NodeChange(chip->property("change").toInt()), dark), ratio));
  for (size_t i = 0; i < legendCounts_.size(); ++i) {
    graph::NodeChange change = kLegendOrder[i];
    legendCounts_[i]->setText(diff_ ? QStringLiteral("%1 %2").arg(diffLabel(change)).arg(diff_->count(change, true))
                                    : diffLabel(change));
  }
  if (!diff_) {
    status_->setText(before_ && after_ ? tr("Laying out…") : QString());
    return;
  }
  status_->setText(tr("%1 → %2 nodes")
                       .arg(diff_->before.operationCount())
                       .arg(diff_->after.operationCount()));
}

const graph::GraphNode* GraphCompareView::sourceOf(DiffSide side, const QString& id) const {
  auto layout = view(side)->graphLayout();
  if (!layout) return nullptr;
  const LayoutNode* node = layout->findNode(id);
  return node ? node->source : nullptr;
}

QString GraphCompareView::boxIdOf(DiffSide side, const graph::GraphNode* node) const {
  auto layout = view(side)->graphLayout();
  if (!layout || !node) return {};
  QString id = QString::fromStdString(node->name);
  return layout->findNode(id) ? id : QString();
}

QStringList GraphCompareView::counterparts(DiffSide side, const QString& id) const {
  QStringList ids;
  if (!diff_) return ids;
  DiffSide other = otherSide(side);
  // Output boxes are named after the model's outputs on both sides.
  if (id.startsWith(QStringLiteral("output:"))) {
    if (auto layout = view(other)->graphLayout(); layout && layout->findNode(id)) ids << id;
    return ids;
  }
  const graph::GraphNode* node = sourceOf(side, id);
  if (!node) return ids;
  const graph::NodeDiff* entry = side == DiffSide::Before ? diff_->forBefore(node) : diff_->forAfter(node);
  if (!entry) return ids;
  auto add = [&](const graph::GraphNode* n) {
    QString boxId = boxIdOf(other, n);
    if (!boxId.isEmpty() && !ids.contains(boxId)) ids << boxId;
  };
  if (side == DiffSide::Before) {
    add(entry->after);
  } else {
    add(entry->before);
    for (const graph::GraphNode* n : entry->absorbed) add(n);
  }
  return ids;
}

void GraphCompareView::selectNode(DiffSide side, const QString& id) {
  {
    QScopedValueRollback guard(mirroring_, true);
    view(side)->selectNode(id);
    if (!id.isEmpty()) view(side)->centerOnNode(id);
  }
  mirrorSelection(side, id);
}

void GraphCompareView::mirrorSelection(DiffSide from, const QString& id) {
  if (!synchronized_ || mirroring_) return;
  QScopedValueRollback guard(mirroring_, true);
  GraphView* target = view(otherSide(from));
  QStringList ids = id.isEmpty() ? QStringList() : counterparts(from, id);
  target->selectNode(ids.isEmpty() ? QString() : ids.front());
  if (!ids.isEmpty()) target->centerOnNode(ids.front());
}

void GraphCompareView::mirrorViewport(DiffSide from) {
  if (!synchronized_ || mirroring_ || !diff_) return;
  QScopedValueRollback guard(mirroring_, true);
  GraphView* source = view(from);
  GraphView* target = view(otherSide(from));
  auto sourceLayout = source->graphLayout();
  auto targetLayout = target->graphLayout();
  if (!sourceLayout || !targetLayout) return;
  GraphViewport state = source->viewportState();
  // Anchor on the box nearest the center that exists on both sides, so the other side shows
  // the same part of the model even where the two layouts differ.
  double best = std::numeric_limits<double>::max();
  QPointF anchorHere, anchorThere;
  bool found = false;
  for (const LayoutNode& node : sourceLayout->nodes) {
    QPointF delta = node.box.center() - state.center;
    double distance = delta.x() * delta.x() + delta.y() * delta.y();
    if (distance >= best) continue;
    QStringList ids = counterparts(from, node.id);
    if (ids.isEmpty()) continue;
    const LayoutNode* match = targetLayout->findNode(ids.front());
    if (!match) continue;
    best = distance;
    anchorHere = node.box.center();
    anchorThere = match->box.center();
    found = true;
  }
  GraphViewport mirrored = state;
  if (found) {
    mirrored.center = anchorThere + (state.center - anchorHere);
  } else {
    // Nothing matched: keep the same relative position in the graph's bounds.
    QRectF a = sourceLayout->bounds, b = targetLayout->bounds;
    double fx = a.width() > 0 ? (state.center.x() - a.left()) / a.width() : 0.5;
    double fy = a.height() > 0 ? (state.center.y() - a.top()) / a.height() : 0.5;
    mirrored.center = QPointF(b.left() + fx * b.width(), b.top() + fy * b.height());
  }
  target->setViewportState(mirrored);
}

}  // namespace tessel::views
