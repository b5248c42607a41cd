// Find bar widgets and keyboard handling (Enter next, Shift+Enter previous, Escape closes).
#include "views/graph/GraphFindBar.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QStyle>
#include <QToolButton>

#include "views/graph/GraphSearch.h"

namespace tessel::views {

GraphFindBar::GraphFindBar(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(6, 3, 6, 3);
  layout->setSpacing(4);
  auto* label = new QLabel(tr("Find:"), this);
  field_ = new QLineEdit(this);
  field_->setPlaceholderText(tr("Node name, operator or tensor"));
  field_->setClearButtonEnabled(true);
  field_->installEventFilter(this);
  label->setBuddy(field_);
  status_ = new QLabel(this);
  status_->setMinimumWidth(80);
  previous_ = new QToolButton(this);
  previous_->setArrowType(Qt::UpArrow);
  previous_->setToolTip(tr("Previous match (Shift+Enter)"));
  previous_->setAutoRaise(true);
  next_ = new QToolButton(this);
  next_->setArrowType(Qt::DownArrow);
  next_->setToolTip(tr("Next match (Enter)"));
  next_->setAutoRaise(true);
  auto* close = new QToolButton(this);
  close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
  close->setToolTip(tr("Close (Escape)"));
  close->setAutoRaise(true);
  layout->addWidget(label);
  layout->addWidget(field_, 1);
  layout->addWidget(status_);
  layout->addWidget(previous_);
  layout->addWidget(next_);
  layout->addWidget(close);
  connect(field_, &QLineEdit::textChanged, this, &GraphFindBar::search);
  connect(next_, &QToolButton::clicked, this, &GraphFindBar::findNext);
  connect(previous_, &QToolButton::clicked, this, &GraphFindBar::findPrevious);
  connect(close, &QToolButton::clicked, this, [this] {
    hide();
    emit closed();
  });
  updateStatus();
}

void GraphFindBar::setGraphLayout(std::shared_ptr<const GraphLayout> layout) {
  QString previous = currentMatch();
  layout_ = std::move(layout);
  search();
  // Stay on the same node across a re-layout (expanding a group, a new compile).
  int kept = matches_.indexOf(previous);
  if (kept >= 0 && kept != current_) setCurrent(kept);
}

void GraphFindBar::activate() {
  show();
  field_->setFocus(Qt::ShortcutFocusReason);
  field_->selectAll();
}

void GraphFindBar::setQuery(const QString& query) { field_->setText(query); }
QString GraphFindBar::query() const { return field_->text(); }

QString GraphFindBar::currentMatch() const { return current_ >= 0 && current_ < matches_.size() ? matches_[current_] : QString(); }

void GraphFindBar::search() {
  matches_ = layout_ ? findGraphNodes(*layout_, field_->text()) : QStringList();
  current_ = -1;
  if (!matches_.isEmpty()) {
    setCurrent(0);
  } else {
    updateStatus();
    emit matchesChanged(matches_, QString());
  }
}

void GraphFindBar::findNext() {
  if (matches_.isEmpty()) return;
  setCurrent((current_ + 1) % int(matches_.size()));
}

void GraphFindBar::findPrevious() {
  if (matches_.isEmpty()) return;
  setCurrent((current_ - 1 + int(matches_.size())) % int(matches_.size()));
}

void GraphFindBar::setCurrent(int index) {
  current_ = index;
  updateStatus();
  emit matchesChanged(matches_, currentMatch());
  emit currentMatchChanged(currentMatch());
}

void GraphFindBar::updateStatus() {
  bool any = !matches_.isEmpty();
  previous_->setEnabled(matches_.size() > 1);
  next_->setEnabled(matches_.size() > 1);
  if (field_->text().trimmed().isEmpty()) {
    status_->clear();
    field_->setStyleSheet(QString());
  } else if (!any) {
    status_->setText(tr("No matches"));
    // A reddish field says "nothing found" at a glance, as in Qt Creator.
    field_->setStyleSheet(QStringLiteral("QLineEdit { background: rgba(220, 60, 60, 60); }"));
  } else {
    status_->setText(tr("%1 of %2").arg(current_ + 1).arg(matches_.size()));
    field_->setStyleSheet(QString());
  }
}

bool GraphFindBar::eventFilter(QObject* watched, QEvent* event) {
  if (watched == field_ && event->type() == QEvent::KeyPress) {
    auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
      if (key->modifiers() & Qt::ShiftModifier) findPrevious();
      else findNext();
      return true;
    }
    if (key->key() == Qt::Key_Escape) {
      hide();
      emit closed();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace tessel::views
