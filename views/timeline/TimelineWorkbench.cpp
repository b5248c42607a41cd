// The pass timeline workbench: wires the strip, the step view, the comparison and the options.
#include "views/timeline/TimelineWorkbench.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "compiler/graph/GraphDiff.h"
#include "views/graph/GraphLayout.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/timeline/GraphCompareView.h"
#include "views/timeline/PassOptionsPanel.h"
#include "views/timeline/PassTimelineModel.h"
#include "views/timeline/PassTimelineView.h"

namespace tessel::views {

struct TimelineWorkbench::StepLayout {
  Expected<GraphLayout> layout = Diagnostic{"not laid out", "", 0, 0, ""};
  std::shared_ptr<const graph::GraphDiff> changes;  ///< Against the previous step; may be null.
};

TimelineWorkbench::TimelineWorkbench(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);

  mainSplitter_ = new QSplitter(Qt::Horizontal, this);
  mainSplitter_->setChildrenCollapsible(false);
  auto* left = new QWidget(mainSplitter_);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->setSpacing(0);

  model_ = new PassTimelineModel(this);
  timeline_ = new PassTimelineView(left);
  timeline_->setModel(model_);
  leftLayout->addWidget(timeline_);
  auto* rule = new QFrame(left);
  rule->setFrameShape(QFrame::HLine);
  rule->setFrameShadow(QFrame::Plain);
  rule->setForegroundRole(QPalette::Mid);
  leftLayout->addWidget(rule);

  stack_ = new QStackedWidget(left);
  placeholder_ = new QLabel(tr("Open a model to see the graph after every optimization pass."), stack_);
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setForegroundRole(QPalette::PlaceholderText);
  stack_->addWidget(placeholder_);

  stepPane_ = new QWidget(stack_);
  auto* stepLayout = new QVBoxLayout(stepPane_);
  stepLayout->setContentsMargins(0, 0, 0, 0);
  stepLayout->setSpacing(0);
  auto* stepHeader = new QWidget(stepPane_);
  stepHeader->setBackgroundRole(QPalette::AlternateBase);
  stepHeader->setAutoFillBackground(true);
  auto* stepHeaderLayout = new QHBoxLayout(stepHeader);
  stepHeaderLayout->setContentsMargins(8, 3, 8, 3);
  stepTitle_ = new QLabel(stepHeader);
  highlightBox_ = new QCheckBox(tr("Highlight changes from the previous step"), stepHeader);
  highlightBox_->setChecked(true);
  stepHeaderLayout->addWidget(stepTitle_, 1);
  stepHeaderLayout->addWidget(highlightBox_);
  stepView_ = new GraphView(stepPane_);
  colouringLegend_ = new QLabel(stepPane_);
  colouringLegend_->setWordWrap(true);
  colouringLegend_->setContentsMargins(8, 2, 8, 2);
  colouringLegend_->hide();
  stepLayout->addWidget(stepHeader);
  stepLayout->addWidget(colouringLegend_);
  stepLayout->addWidget(stepView_, 1);
  stack_->addWidget(stepPane_);

  compare_ = new GraphCompareView(stack_);
  stack_->addWidget(compare_);
  leftLayout->addWidget(stack_, 1);

  options_ = new PassOptionsPanel(mainSplitter_);
  mainSplitter_->addWidget(left);
  mainSplitter_->addWidget(options_);
  mainSplitter_->setStretchFactor(0, 1);
  mainSplitter_->setStretchFactor(1, 0);
  mainSplitter_->setSizes({900, 240});
  layout->addWidget(mainSplitter_);

  if (palette().color(QPalette::Base).lightness() < 128) stepView_->setGraphPalette(GraphPalette::dark());

  connect(timeline_, &PassTimelineView::stepSelected, this, &TimelineWorkbench::showStep);
  connect(timeline_, &PassTimelineView::comparisonRequested, this, &TimelineWorkbench::showComparison);
  connect(options_, &PassOptionsPanel::optionsChanged, this, &TimelineWorkbench::optionsChanged);
  connect(highlightBox_, &QCheckBox::toggled, this, &TimelineWorkbench::setHighlightChanges);
  connect(stepView_, &GraphView::nodeSelected, this,
          [this](const QString& id) { emit nodeSelected(model_->graphAt(shownStep_), id); });
  connect(stepView_, &GraphView::nodeActivated, this,
          [this](const QString& id) { emit nodeActivated(model_->graphAt(shownStep_), id); });
  connect(stepView_, &GraphView::fusedGroupToggleRequested, this, [this](const QString& name, bool expand) {
    if (expand) expandedFused_.insert(name);
    else expandedFused_.erase(name);
    // A module group that opens by default is kept closed by name.
    if (expand) collapsedModules_.erase(name);
    else if (auto shown = stepView_->graphLayout(); shown && shown->modules && shown->modules->opensByDefault(name))
      collapsedModules_.insert(name);
    if (shownStep_ >= 0) showStep(shownStep_);
  });
  connect(compare_, &GraphCompareView::nodeSelected, this, [this](DiffSide side, const QString& id) {
    int row = side == DiffSide::Before ? timeline_->comparedBefore() : timeline_->comparedAfter();
    emit nodeSelected(model_->graphAt(row), id);
  });
  connect(compare_, &GraphCompareView::nodeActivated, this, [this](DiffSide side, const QString& id) {
    int row = side == DiffSide::Before ? timeline_->comparedBefore() : timeline_->comparedAfter();
    emit nodeActivated(model_->graphAt(row), id);
  });
  connect(compare_, &GraphCompareView::comparisonReady, this, [this] {
    if (timeline_->isComparing()) emit comparisonShown(timeline_->comparedBefore(), timeline_->comparedAfter());
  });
  connect(compare_, &GraphCompareView::comparisonFailed, this, &TimelineWorkbench::failed);
}

TimelineWorkbench::~TimelineWorkbench() {
  jobs_.cancelAll();
  // See ~GraphCompareView: a scene must not see its own destruction's selection change.
  stepView_->graphScene()->blockSignals(true);
}

void TimelineWorkbench::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  // A theme switch: the step view redraws in the new palette, its overlay in the new variants.
  bool dark = palette().color(QPalette::Base).lightness() < 128;
  stepView_->setGraphPalette(dark ? GraphPalette::dark() : GraphPalette::light());
  if (shownStep_ >= 0 && !timeline_->isComparing()) showStep(shownStep_);
}

void TimelineWorkbench::setModel(std::shared_ptr<const graph::Graph> imported,
                                 std::shared_ptr<const driver::CompiledModel> compiled) {
  // Remember what the user looked at, to show the same step(s) of the new compile.
  pendingBefore_ = timeline_->isComparing() ? timeline_->comparedBefore() : -1;
  pendingAfter_ = timeline_->isComparing() ? timeline_->comparedAfter() : -1;
  // A recompile keeps the imported graph; another model (or a re-import) starts afresh.
  bool sameModel = imported && imported == imported_;
  imported_ = std::move(imported);
  compiled_ = std::move(compiled);
  if (!imported_ || !compiled_) {
    jobs_.cancel(QStringLiteral("timeline-steps"));
    jobs_.cancel(QStringLiteral("timeline-step"));
    model_->clear();
    stack_->setCurrentWidget(placeholder_);
    shownStep_ = -1;
    return;
  }
  auto imported_copy = imported_;
  auto compiled_copy = compiled_;
  jobs_.start<std::vector<TimelineStep>>(
      QStringLiteral("timeline-steps"), tr("Diffing pass snapshots"),
      [imported_copy, compiled_copy](JobContext&) { return makeTimelineSteps(imported_copy, compiled_copy); },
      [this, sameModel](std::vector<TimelineStep> steps) {
        if (!sameModel) {
          // Shown fitted at its last step (the optimized graph), nothing expanded.
          pendingBefore_ = pendingAfter_ = -1;
          shownStep_ = -1;
          expandedFused_.clear();
          model_->clear();
        }
        model_->setSteps(std::move(steps));
        onStepsReady();
      });
}

void TimelineWorkbench::onStepsReady() {
  // The strip's reset already announced its selection (kept, or the last step), which showed
  // that step of the new compile; a comparison the user had open comes back on top.
  if (pendingBefore_ >= 0 && pendingAfter_ < model_->rowCount()) timeline_->compareSteps(pendingBefore_, pendingAfter_);
  pendingBefore_ = pendingAfter_ = -1;
}

void TimelineWorkbench::setPassOptions(const graph::PassOptions& options) { options_->setOptions(options); }

void TimelineWorkbench::selectStep(int row) { timeline_->selectStep(row); }

void TimelineWorkbench::compareSteps(int first, int second) { timeline_->compareSteps(first, second); }

int TimelineWorkbench::selectedStep() const { return timeline_->selectedStep(); }

bool TimelineWorkbench::isComparing() const { return timeline_->isComparing(); }

void TimelineWorkbench::setHighlightChanges(bool on) {
  highlightChanges_ = on;
  if (highlightBox_->isChecked() != on) highlightBox_->setChecked(on);
  if (!timeline_->isComparing() && shownStep_ >= 0) showStep(shownStep_);
}

void TimelineWorkbench::setNodeColouring(std::vector<NodeDecoration> decorations, const QString& legend) {
  colouring_ = std::move(decorations);
  colouringLegend_->setText(legend);
  colouringLegend_->setVisible(!legend.isEmpty());
  highlightBox_->setEnabled(colouring_.empty() && shownStep_ > 0);
  if (shownStep_ < 0 || timeline_->isComparing()) return;
  if (colouring_.empty()) {
    showStep(shownStep_);  // the change outline comes back with the step's diff
    return;
  }
  stepView_->clearDecorations();
  for (const NodeDecoration& d : colouring_) stepView_->setNodeDecoration(d.nodeId, d.colour, d.badge, d.tooltip);
}

QString TimelineWorkbench::nodeColouringLegend() const { return colouringLegend_->isHidden() ? QString() : colouringLegend_->text(); }

void TimelineWorkbench::showStep(int row) {
  const TimelineStep* step = model_->step(row);
  if (!step) return;
  stack_->setCurrentWidget(stepPane_);
  QString muted = palette().color(QPalette::PlaceholderText).name();
  QString title = QStringLiteral("<b>%1&nbsp;&nbsp;%2</b>&nbsp;&nbsp;&nbsp;<span style='color:%4'>%3 nodes")
                      .arg(row)
                      .arg(step->name.toHtmlEscaped())
                      .arg(step->operationCount)
                      .arg(muted);
  if (row > 0) title += QStringLiteral(" · %1").arg(step->changeSummary.toHtmlEscaped());
  if (step->milliseconds >= 0 && !step->skipped) title += QStringLiteral(" · %1").arg(formatMilliseconds(step->milliseconds));
  title += QStringLiteral("</span>");
  stepTitle_->setText(title);
  highlightBox_->setEnabled(row > 0 && colouring_.empty());

  bool fit = shownStep_ < 0;
  std::shared_ptr<const graph::Graph> graph = step->graph;
  std::shared_ptr<const graph::Graph> previous = row > 0 && highlightChanges_ && !step->skipped && colouring_.empty()
                                                     ? model_->graphAt(row - 1)
                                                     : nullptr;
  GraphLayoutOptions options = stepView_->graphScene()->layoutOptions();
  options.expandedFusedNodes = expandedFused_;
  options.expandedModules = expandedFused_;  // a module group's id has its own prefix
  options.collapsedModules = collapsedModules_;
  // Steps are flipped through: a big graph takes the fast layered layout here.
  options.dotNodeLimit = kInteractiveDotNodeLimit;
  jobs_.start<StepLayout>(
      QStringLiteral("timeline-step"), tr("Laying out %1").arg(step->name),
      [graph, previous, options](JobContext& job) {
        StepLayout result;
        if (previous) result.changes = std::make_shared<const graph::GraphDiff>(graph::diffGraphs(*previous, *graph));
        result.layout = layoutGraph(graph, options, job);
        return result;
      },
      [this, row, fit](StepLayout result) {
        if (!result.layout) {
          emit failed(QString::fromStdString(result.layout.error().toString()));
          return;
        }
        shownStep_ = row;
        stepView_->clearDecorations();
        stepView_->setGraphLayout(std::make_shared<const GraphLayout>(std::move(*result.layout)));
        if (!colouring_.empty()) {
          for (const NodeDecoration& d : colouring_)
            stepView_->setNodeDecoration(d.nodeId, d.colour, d.badge, d.tooltip);
        } else if (result.changes) {
          bool dark = palette().color(QPalette::Base).lightness() < 128;
          std::vector<NodeDecoration> changes = diffDecorations(*result.changes, DiffSide::After, dark);
          for (const NodeDecoration& d : changes) stepView_->setNodeDecoration(d.nodeId, d.colour, d.badge, d.tooltip);
          // A step drawn by module: a closed module's box says what changed inside it.
          auto shown = stepView_->graphLayout();
          if (shown && shown->modules && shown->graph)
            for (const NodeDecoration& d : moduleDiffDecorations(changes, *shown->modules, *shown->graph, dark))
              stepView_->setNodeDecoration(d.nodeId, d.colour, d.badge, d.tooltip);
        }
        if (fit) stepView_->showStart();
        emit stepShown(row);
      });
}

void TimelineWorkbench::showComparison(int before, int after) {
  const TimelineStep* a = model_->step(before);
  const TimelineStep* b = model_->step(after);
  if (!a || !b) return;
  jobs_.cancel(QStringLiteral("timeline-step"));
  stack_->setCurrentWidget(compare_);
  compare_->setGraphs(a->graph, b->graph, QStringLiteral("%1 · %2").arg(before).arg(a->name),
                      QStringLiteral("%1 · %2").arg(after).arg(b->name));
}

}  // namespace tessel::views
