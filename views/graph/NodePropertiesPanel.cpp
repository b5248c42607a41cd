// Properties tree and weight statistics; the histogram is a QCustomPlot bar chart.
#include "views/graph/NodePropertiesPanel.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "views/graph/NodePropertiesModel.h"

namespace tessel::views {

namespace {

QString number(double value) { return QString::number(value, 'g', 5); }

}  // namespace

NodePropertiesPanel::NodePropertiesPanel(QWidget* parent) : QWidget(parent), model_(new NodePropertiesModel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  heading_ = new QLabel(this);
  heading_->setContentsMargins(8, 6, 8, 6);
  heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  heading_->setWordWrap(true);
  layout->addWidget(heading_);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  tree_ = new QTreeView(splitter);
  tree_->setModel(model_);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->setFrameShape(QFrame::NoFrame);
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree_->header()->setStretchLastSection(true);
  connect(tree_, &QTreeView::clicked, this, [this](const QModelIndex& index) {
    if (const auto* constant = model_->constantAt(index)) showStatistics(constant);
  });

  statisticsBox_ = new QWidget(splitter);
  auto* statsLayout = new QVBoxLayout(statisticsBox_);
  statsLayout->setContentsMargins(8, 6, 8, 6);
  statisticsTitle_ = new QLabel(statisticsBox_);
  statisticsTitle_->setWordWrap(true);
  statisticsText_ = new QLabel(statisticsBox_);
  statisticsText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  plot_ = new QCustomPlot(statisticsBox_);
  plot_->setMinimumHeight(130);
  plot_->xAxis->setLabel(tr("value"));
  plot_->yAxis->setLabel(tr("count"));
  statsLayout->addWidget(statisticsTitle_);
  statsLayout->addWidget(statisticsText_);
  statsLayout->addWidget(plot_, 1);
  splitter->addWidget(tree_);
  splitter->addWidget(statisticsBox_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  layout->addWidget(splitter, 1);
  applyPlotColours();
  setNode(nullptr, nullptr);
}

void NodePropertiesPanel::setNode(std::shared_ptr<const graph::Graph> owner, const graph::GraphNode* node) {
  owner_ = owner;
  model_->setNode(std::move(owner), node);
  if (!node) {
    heading_->setText(tr("<i>Select a node to see its properties</i>"));
  } else {
    QString op = model_->index(0, 1).data().toString();
    heading_->setText(QStringLiteral("<b>%1</b>&nbsp;&nbsp;%2")
                          .arg(op.toHtmlEscaped(), QString::fromStdString(node->name).toHtmlEscaped()));
  }
  // Open the groups a reader looks at first; attributes of fused bodies stay folded.
  for (const char* group : {"Attributes", "Inputs", "Outputs", "Provenance", "Fused operations", "Type"}) {
    QModelIndex index = model_->findRow(QString::fromLatin1(group));
    if (index.isValid()) tree_->expand(index);
  }
  auto constants = model_->constants();
  // The largest constant is the weight people ask about (not a bias or a shape).
  const graph::ConstantNode* largest = nullptr;
  for (const auto* constant : constants)
    if (!largest || constant->outputTypes[0].elementCount() > largest->outputTypes[0].elementCount()) largest = constant;
  showStatistics(largest);
}

void NodePropertiesPanel::showStatistics(const graph::ConstantNode* constant) {
  shownConstant_ = constant;
  statistics_.reset();
  plot_->clearPlottables();
  if (!constant) {
    statisticsBox_->setVisible(false);
    plot_->replot();
    return;
  }
  statisticsBox_->setVisible(true);
  statisticsTitle_->setText(QStringLiteral("<b>%1</b>&nbsp;&nbsp;%2")
                                .arg(QString::fromStdString(constant->name).toHtmlEscaped(),
                                     QString::fromStdString(constant->outputTypes[0].toString()).toHtmlEscaped()));
  statistics_ = computeTensorStatistics(constant->data);
  if (!statistics_) {
    statisticsText_->setText(tr("No statistics for this element type (%1).")
                                 .arg(QString::fromStdString(constant->outputTypes[0].dtype.toString())));
    plot_->replot();
    return;
  }
  const TensorStatistics& s = *statistics_;
  QString text = tr("min %1   max %2   mean %3   std %4   zeros %5%")
                     .arg(number(s.minimum), number(s.maximum), number(s.mean), number(s.standardDeviation),
                          QString::number(s.zeroPercent, 'f', 1));
  if (s.nonFinite) text += tr("   non-finite %1").arg(s.nonFinite);
  statisticsText_->setText(text);

  auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
  QVector<double> centers, counts;
  double width = s.binWidth() > 0 ? s.binWidth() : 1.0;
  double highest = 0;
  for (size_t i = 0; i < s.histogram.size(); ++i) {
    centers << s.minimum + (double(i) + 0.5) * width;
    counts << double(s.histogram[i]);
    highest = std::max(highest, double(s.histogram[i]));
  }
  bars->setData(centers, counts, true);
  bars->setWidth(width * 0.9);
  QColor fill = palette().color(QPalette::Highlight);
  bars->setPen(Qt::NoPen);
  bars->setBrush(fill);
  plot_->xAxis->setRange(s.minimum - width, s.minimum + width * (double(s.histogram.size()) + 1));
  plot_->yAxis->setRange(0, highest * 1.1 + 1);
  plot_->replot();
}

QString NodePropertiesPanel::statisticsTensor() const {
  return shownConstant_ ? QString::fromStdString(shownConstant_->name) : QString();
}

void NodePropertiesPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    applyPlotColours();
    showStatistics(shownConstant_);
  }
}

// The plot follows the widget palette so the histogram reads on the dark theme too.
void NodePropertiesPanel::applyPlotColours() {
  const QPalette& colours = palette();
  plot_->setBackground(colours.color(QPalette::Base));
  QColor text = colours.color(QPalette::Text);
  for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
    axis->setBasePen(QPen(text));
    axis->setTickPen(QPen(text));
    axis->setSubTickPen(QPen(text));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    QColor grid = text;
    grid.setAlpha(40);
    axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
  }
}

}  // namespace tessel::views
