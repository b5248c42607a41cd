// The pass timeline strip: a horizontal list of step cards with a small header of actions.
#include "views/timeline/PassTimelineView.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QMouseEvent>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "views/timeline/PassTimelineDelegate.h"
#include "views/timeline/PassTimelineModel.h"

namespace tessel::views {

PassTimelineView::PassTimelineView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 2);
  layout->setSpacing(2);

  auto* header = new QHBoxLayout;
  header->setSpacing(8);
  title_ = new QLabel(tr("Pass timeline"), this);
  QFont titleFont = title_->font();
  titleFont.setBold(true);
  title_->setFont(titleFont);
  status_ = new QLabel(this);
  status_->setForegroundRole(QPalette::PlaceholderText);
  comparePrevious_ = new QToolButton(this);
  comparePrevious_->setText(tr("Compare with previous"));
  comparePrevious_->setToolTip(tr("Show the selected step beside the step before it, with the changes coloured "
                                  "(or Ctrl+click any two steps)"));
  comparePrevious_->setAutoRaise(true);
  exitCompare_ = new QToolButton(this);
  exitCompare_->setText(tr("Exit comparison"));
  exitCompare_->setToolTip(tr("Back to the selected step alone (Esc)"));
  exitCompare_->setAutoRaise(true);
  header->addWidget(title_);
  header->addWidget(status_, 1);
  header->addWidget(comparePrevious_);
  header->addWidget(exitCompare_);
  layout->addLayout(header);

  list_ = new QListView(this);
  list_->setFlow(QListView::LeftToRight);
  list_->setWrapping(false);
  list_->setSpacing(0);
  list_->setUniformItemSizes(true);
  list_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  list_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->setMouseTracking(true);
  list_->setFrameShape(QFrame::NoFrame);
  list_->setContextMenuPolicy(Qt::CustomContextMenu);
  list_->setBackgroundRole(QPalette::Window);
  list_->viewport()->setBackgroundRole(QPalette::Window);
  list_->setAutoFillBackground(false);
  delegate_ = new PassTimelineDelegate(list_);
  list_->setItemDelegate(delegate_);
  list_->setFixedHeight(PassTimelineDelegate::kCardHeight + list_->horizontalScrollBar()->sizeHint().height() + 4);
  list_->viewport()->installEventFilter(this);
  layout->addWidget(list_);

  connect(list_, &QListView::customContextMenuRequested, this, &PassTimelineView::showContextMenu);
  connect(comparePrevious_, &QToolButton::clicked, this, [this] {
    if (selected_ > 0) compareSteps(selected_ - 1, selected_);
  });
  connect(exitCompare_, &QToolButton::clicked, this, &PassTimelineView::clearComparison);
  setFocusPolicy(Qt::StrongFocus);
  updateHeader();
}

void PassTimelineView::setModel(PassTimelineModel* model) {
  if (model_) disconnect(model_, nullptr, this, nullptr);
  model_ = model;
  list_->setModel(model);
  if (model_) {
    connect(model_, &QAbstractItemModel::modelReset, this, &PassTimelineView::onModelReset);
    // The list's own clicks (keyboard moves included) select steps.
    connect(list_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
              if (current.isValid() && current.row() != selected_) selectStep(current.row());
            });
  }
  onModelReset();
}

void PassTimelineView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitCards();
}

void PassTimelineView::fitCards() {
  int rows = model_ ? model_->rowCount() : 0;
  int width = rows > 0 ? list_->viewport()->width() / rows : PassTimelineDelegate::kMaximumCardWidth;
  width = std::clamp(width, PassTimelineDelegate::kMinimumCardWidth, PassTimelineDelegate::kMaximumCardWidth);
  if (width == delegate_->cardWidth()) return;
  delegate_->setCardWidth(width);
  list_->doItemsLayout();
  if (selected_ >= 0) list_->scrollTo(model_->index(selected_, 0));
}

void PassTimelineView::onModelReset() {
  fitCards();
  comparedBefore_ = comparedAfter_ = -1;
  delegate_->setComparedSteps(-1, -1);
  int rows = model_ ? model_->rowCount() : 0;
  int keep = selected_ >= 0 && selected_ < rows ? selected_ : rows - 1;
  selected_ = -1;
  if (keep >= 0) selectStep(keep);
  updateHeader();
}

void PassTimelineView::selectStep(int row) {
  if (!model_ || row < 0 || row >= model_->rowCount()) return;
  bool wasComparing = isComparing();
  comparedBefore_ = comparedAfter_ = -1;
  delegate_->setComparedSteps(-1, -1);
  bool changed = row != selected_;
  selected_ = row;
  QModelIndex index = model_->index(row, 0);
  if (list_->currentIndex() != index) list_->setCurrentIndex(index);
  list_->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect);
  list_->scrollTo(index);
  list_->viewport()->update();
  updateHeader();
  if (wasComparing) emit comparisonCleared();
  if (changed || wasComparing) emit stepSelected(row);
}

void PassTimelineView::compareSteps(int first, int second) {
  int rows = model_ ? model_->rowCount() : 0;
  if (first == second || first < 0 || second < 0 || first >= rows || second >= rows) return;
  comparedBefore_ = std::min(first, second);
  comparedAfter_ = std::max(first, second);
  delegate_->setComparedSteps(comparedBefore_, comparedAfter_);
  list_->viewport()->update();
  updateHeader();
  emit comparisonRequested(comparedBefore_, comparedAfter_);
}

void PassTimelineView::clearComparison() {
  if (!isComparing()) return;
  comparedBefore_ = comparedAfter_ = -1;
  delegate_->setComparedSteps(-1, -1);
  list_->viewport()->update();
  updateHeader();
  emit comparisonCleared();
  if (selected_ >= 0) emit stepSelected(selected_);
}

bool PassTimelineView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == list_->viewport() && event->type() == QEvent::MouseButtonPress) {
    auto* mouse = static_cast<QMouseEvent*>(event);
    QModelIndex index = list_->indexAt(mouse->position().toPoint());
    if (mouse->button() == Qt::LeftButton && index.isValid()) {
      if (mouse->modifiers() & (Qt::ControlModifier | Qt::ShiftModifier)) {
        // The second pick of a comparison: the selection stays on the first step.
        if (selected_ >= 0 && index.row() != selected_) compareSteps(selected_, index.row());
      } else {
        selectStep(index.row());
      }
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

void PassTimelineView::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && isComparing()) {
    clearComparison();
    return;
  }
  QWidget::keyPressEvent(event);
}

void PassTimelineView::showContextMenu(const QPoint& position) {
  QModelIndex index = list_->indexAt(position);
  if (!index.isValid()) return;
  int row = index.row();
  QMenu menu(this);
  menu.addAction(tr("Show this step"), this, [this, row] { selectStep(row); });
  QAction* withSelected = menu.addAction(tr("Compare with selected step"), this,
                                         [this, row] { compareSteps(selected_, row); });
  withSelected->setEnabled(selected_ >= 0 && selected_ != row);
  QAction* withPrevious = menu.addAction(tr("Compare with previous step"), this,
                                         [this, row] { compareSteps(row - 1, row); });
  withPrevious->setEnabled(row > 0);
  if (isComparing()) {
    menu.addSeparator();
    menu.addAction(tr("Exit comparison"), this, &PassTimelineView::clearComparison);
  }
  menu.exec(list_->viewport()->mapToGlobal(position));
}

void PassTimelineView::updateHeader() {
  int rows = model_ ? model_->rowCount() : 0;
  double total = 0;
  int skipped = 0;
  if (model_)
    for (auto& step : model_->steps()) {
      if (step.milliseconds > 0) total += step.milliseconds;
      skipped += step.skipped ? 1 : 0;
    }
  QString text;
  if (rows == 0) {
    text = tr("no compiled model");
  } else {
    text = tr("%1 passes, %2").arg(rows - 1).arg(formatMilliseconds(total));
    if (skipped) text += tr(", %1 skipped").arg(skipped);
    if (isComparing())
      text += tr("   —   comparing A: %1 with B: %2")
                  .arg(model_->step(comparedBefore_)->name, model_->step(comparedAfter_)->name);
    else
      text += tr("   —   Ctrl+click a second step to compare");
  }
  status_->setText(text);
  comparePrevious_->setEnabled(selected_ > 0);
  exitCompare_->setVisible(isComparing());
}

}  // namespace tessel::views
