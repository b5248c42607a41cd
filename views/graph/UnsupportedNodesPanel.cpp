// UnsupportedNodesPanel: a notice in the error colour over a short list of the nodes.
#include "views/graph/UnsupportedNodesPanel.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QTreeView>
#include <QVBoxLayout>

#include "views/common/Theme.h"
#include "views/graph/UnsupportedNodesModel.h"

namespace tessel::views {

namespace {
// Rows shown before the list scrolls: the graph keeps most of the height.
constexpr int kVisibleRows = 5;
constexpr int kEdgeWidth = 4;
}  // namespace

UnsupportedNodesPanel::UnsupportedNodesPanel(QWidget* parent)
    : QWidget(parent), model_(new UnsupportedNodesModel(this)), message_(new QLabel), list_(new QTreeView) {
  setObjectName(QStringLiteral("UnsupportedNodesPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(kEdgeWidth + 8, 6, 10, 6);
  layout->setSpacing(4);
  message_->setObjectName(QStringLiteral("UnsupportedNodesMessage"));
  message_->setTextFormat(Qt::RichText);
  message_->setWordWrap(true);
  layout->addWidget(message_);
  list_->setObjectName(QStringLiteral("UnsupportedNodesList"));
  list_->setModel(model_);
  list_->setRootIsDecorated(false);
  list_->setUniformRowHeights(true);
  list_->setAlternatingRowColors(true);
  list_->setSelectionBehavior(QAbstractItemView::SelectRows);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  list_->header()->setStretchLastSection(true);
  // Sized from the few operator names, not by the header measuring every row: a model of
  // custom operators lists ten thousand nodes, and measuring them stalled the window.
  list_->header()->setSectionResizeMode(UnsupportedNodesModel::OperatorColumn, QHeaderView::Interactive);
  layout->addWidget(list_);
  // Clicking and keyboard moves both go to the node.
  connect(list_, &QTreeView::clicked, this, [this](const QModelIndex& index) {
    emit nodeChosen(index.data(UnsupportedNodesModel::NodeIdRole).toString());
  });
  connect(list_, &QTreeView::activated, this, [this](const QModelIndex& index) {
    emit nodeChosen(index.data(UnsupportedNodesModel::NodeIdRole).toString());
  });
  hide();
}

void UnsupportedNodesPanel::setGraphLayout(const std::shared_ptr<const GraphLayout>& layout) {
  model_->setGraphLayout(layout);
  int nodes = model_->rowCount();
  setVisible(nodes > 0);
  if (nodes == 0) return;
  QString operators = model_->operatorCount() == 1 ? tr("one of its operators") : tr("%1 of its operators").arg(model_->operatorCount());
  QString used = nodes == 1 ? tr("used by 1 node") : tr("used by %1 nodes").arg(nodes);
  message_->setText(tr("<b>This model cannot be compiled:</b> Tessel does not implement %1, %2 (marked in red "
                       "below). The graph shows the model's structure; compiling, the pass timeline and measuring "
                       "wait until these operators are supported. Click a node to find it in the graph.")
                        .arg(operators, used));
  int widest = list_->header()->sectionSizeHint(UnsupportedNodesModel::OperatorColumn);
  for (const QString& label : model_->operatorLabels())
    widest = std::max(widest, list_->fontMetrics().horizontalAdvance(label) + 24);
  list_->setColumnWidth(UnsupportedNodesModel::OperatorColumn, widest);
  int rowHeight = list_->sizeHintForRow(0) > 0 ? list_->sizeHintForRow(0) : fontMetrics().height() + 4;
  list_->setFixedHeight(list_->header()->sizeHint().height() + rowHeight * std::min(nodes, kVisibleRows) +
                        2 * list_->frameWidth() + 2);
}

void UnsupportedNodesPanel::setCurrentNode(const QString& id) {
  int row = model_->rowOf(id);
  if (row < 0) {
    list_->clearSelection();
    return;
  }
  QModelIndex index = model_->index(row, UnsupportedNodesModel::OperatorColumn);
  list_->setCurrentIndex(index);
  list_->scrollTo(index);
}

QString UnsupportedNodesPanel::message() const {
  QString text = message_->text();
  text.remove(QStringLiteral("<b>")).remove(QStringLiteral("</b>"));
  return text;
}

void UnsupportedNodesPanel::paintEvent(QPaintEvent*) {
  // A tint of the theme's error colour with an edge in it full: a notice, not an alarm. Read at
  // every paint, so a theme switch needs nothing else.
  QColor error = themeColors(palette()).error;
  QColor window = palette().color(QPalette::Window);
  const double tint = 0.12;
  QPainter painter(this);
  painter.fillRect(rect(), QColor::fromRgbF(float(window.redF() * (1 - tint) + error.redF() * tint),
                                            float(window.greenF() * (1 - tint) + error.greenF() * tint),
                                            float(window.blueF() * (1 - tint) + error.blueF() * tint)));
  painter.fillRect(QRect(0, 0, kEdgeWidth, height()), error);
}

}  // namespace tessel::views
