// The side-by-side schedule diff: alignment and its two panes.
#include "views/schedule/ScheduleDiff.h"

#include <QFontDatabase>
#include <QGridLayout>
#include <QLabel>
#include <QScrollBar>
#include <QTextBlock>

namespace tessel::views {

namespace {

// Comments and blank lines are shown but not counted: the summary is about primitives.
bool isPrimitive(const QString& line) {
  QString trimmed = line.trimmed();
  return !trimmed.isEmpty() && !trimmed.startsWith('#');
}

QStringList linesOf(const QString& text) {
  QStringList lines = text.split('\n');
  if (!lines.isEmpty() && lines.back().isEmpty()) lines.removeLast();
  return lines;
}

}  // namespace

std::vector<DiffRow> sideBySideDiff(const QStringList& left, const QStringList& right) {
  const int n = int(left.size()), m = int(right.size());
  QStringList a, b;
  for (const QString& line : left) a << line.trimmed();
  for (const QString& line : right) b << line.trimmed();
  // common[i][j]: the longest common subsequence of a[i..] and b[j..]. Schedules are tens of
  // lines, so the quadratic table is nothing.
  std::vector<std::vector<int>> common(size_t(n + 1), std::vector<int>(size_t(m + 1), 0));
  for (int i = n - 1; i >= 0; --i)
    for (int j = m - 1; j >= 0; --j)
      common[size_t(i)][size_t(j)] = a[i] == b[j] ? common[size_t(i + 1)][size_t(j + 1)] + 1
                                                  : std::max(common[size_t(i + 1)][size_t(j)], common[size_t(i)][size_t(j + 1)]);
  std::vector<DiffRow> rows;
  std::vector<int> removed, added;
  auto flush = [&] {
    size_t paired = std::min(removed.size(), added.size());
    for (size_t k = 0; k < paired; ++k) rows.push_back({DiffRow::Kind::Changed, removed[k], added[k]});
    for (size_t k = paired; k < removed.size(); ++k) rows.push_back({DiffRow::Kind::Removed, removed[k], -1});
    for (size_t k = paired; k < added.size(); ++k) rows.push_back({DiffRow::Kind::Added, -1, added[k]});
    removed.clear();
    added.clear();
  };
  int i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      flush();
      rows.push_back({DiffRow::Kind::Same, i++, j++});
    } else if (j >= m || (i < n && common[size_t(i + 1)][size_t(j)] >= common[size_t(i)][size_t(j + 1)])) {
      removed.push_back(i++);
    } else {
      added.push_back(j++);
    }
  }
  flush();
  return rows;
}

QString diffRowsText(const std::vector<DiffRow>& rows, const QStringList& left, const QStringList& right) {
  QStringList lines;
  for (const DiffRow& row : rows) {
    QChar mark = ' ';
    switch (row.kind) {
      case DiffRow::Kind::Same: mark = ' '; break;
      case DiffRow::Kind::Removed: mark = '-'; break;
      case DiffRow::Kind::Added: mark = '+'; break;
      case DiffRow::Kind::Changed: mark = '~'; break;
    }
    QString l = row.left >= 0 ? left[row.left].trimmed() : QString();
    QString r = row.right >= 0 ? right[row.right].trimmed() : QString();
    QString line = QString(mark) + (l.isEmpty() ? QString() : ' ' + l) + QStringLiteral(" |") +
                   (r.isEmpty() ? QString() : ' ' + r);
    lines << line.trimmed();
  }
  return lines.join('\n');
}

ScheduleDiffView::ScheduleDiffView(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel;
  summary_->setObjectName(QStringLiteral("diffSummary"));
  summary_->setWordWrap(true);
  leftTitle_ = new QLabel;
  rightTitle_ = new QLabel(tr("<b>In the editor</b>"));
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  for (QPlainTextEdit** pane : {&left_, &right_}) {
    *pane = new QPlainTextEdit;
    (*pane)->setReadOnly(true);
    (*pane)->setLineWrapMode(QPlainTextEdit::NoWrap);
    (*pane)->setFont(mono);
    (*pane)->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  }
  left_->setObjectName(QStringLiteral("diffLeft"));
  right_->setObjectName(QStringLiteral("diffRight"));
  // The two panes scroll as one: their rows are aligned, gaps included.
  for (auto [from, to] : {std::pair{left_, right_}, std::pair{right_, left_}}) {
    connect(from->verticalScrollBar(), &QScrollBar::valueChanged, to->verticalScrollBar(), &QScrollBar::setValue);
    connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, to->horizontalScrollBar(), &QScrollBar::setValue);
  }
  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(3);
  layout->addWidget(summary_, 0, 0, 1, 2);
  layout->addWidget(leftTitle_, 1, 0);
  layout->addWidget(rightTitle_, 1, 1);
  layout->addWidget(left_, 2, 0);
  layout->addWidget(right_, 2, 1);
  layout->setRowStretch(2, 1);
  setTexts(tr("Default schedule"), {}, {});
}

void ScheduleDiffView::setTexts(const QString& referenceTitle, const QString& reference, const QString& current) {
  leftTitle_->setText(QStringLiteral("<b>%1</b>").arg(referenceTitle.toHtmlEscaped()));
  QStringList leftLines = linesOf(reference), rightLines = linesOf(current);
  if (leftLines == leftLines_ && rightLines == rightLines_ && !rows_.empty()) return;
  leftLines_ = std::move(leftLines);
  rightLines_ = std::move(rightLines);
  rows_ = sideBySideDiff(leftLines_, rightLines_);
  render();
}

QString ScheduleDiffView::summary() const { return summary_->text(); }

void ScheduleDiffView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) render();
}

void ScheduleDiffView::render() {
  int changed = 0, removed = 0, added = 0;
  QStringList leftText, rightText;
  for (const DiffRow& row : rows_) {
    leftText << (row.left >= 0 ? leftLines_[row.left] : QString());
    rightText << (row.right >= 0 ? rightLines_[row.right] : QString());
    bool counts = (row.left >= 0 && isPrimitive(leftLines_[row.left])) ||
                  (row.right >= 0 && isPrimitive(rightLines_[row.right]));
    if (!counts) continue;
    changed += row.kind == DiffRow::Kind::Changed;
    removed += row.kind == DiffRow::Kind::Removed;
    added += row.kind == DiffRow::Kind::Added;
  }
  int scroll = left_->verticalScrollBar()->value();
  left_->setPlainText(leftText.join('\n'));
  right_->setPlainText(rightText.join('\n'));
  // Backgrounds that read on light and dark themes: the base colour tinted red, green, amber
  // or grey (a gap).
  bool dark = palette().color(QPalette::Base).lightness() < 128;
  auto tint = [dark](int r, int g, int b) { return dark ? QColor(r / 3, g / 3, b / 3) : QColor(r, g, b); };
  const QColor removedColour = tint(0xfd, 0xd8, 0xd8), addedColour = tint(0xd8, 0xf5, 0xdc),
               changedColour = tint(0xfb, 0xee, 0xc8), gapColour = dark ? QColor(0x30, 0x30, 0x30) : QColor(0xee, 0xee, 0xee);
  auto paint = [&](QPlainTextEdit* pane, bool leftSide) {
    QList<QTextEdit::ExtraSelection> marks;
    QTextBlock block = pane->document()->firstBlock();
    for (const DiffRow& row : rows_) {
      if (!block.isValid()) break;
      bool gap = (leftSide ? row.left : row.right) < 0;
      QColor colour;
      if (gap) colour = gapColour;
      else if (row.kind == DiffRow::Kind::Removed) colour = removedColour;
      else if (row.kind == DiffRow::Kind::Added) colour = addedColour;
      else if (row.kind == DiffRow::Kind::Changed) colour = changedColour;
      if (colour.isValid()) {
        QTextEdit::ExtraSelection mark;
        mark.cursor = QTextCursor(block);
        mark.format.setBackground(colour);
        mark.format.setProperty(QTextFormat::FullWidthSelection, true);
        marks << mark;
      }
      block = block.next();
    }
    pane->setExtraSelections(marks);
  };
  paint(left_, true);
  paint(right_, false);
  left_->verticalScrollBar()->setValue(scroll);
  QStringList parts;
  if (changed) parts << (changed == 1 ? tr("1 primitive changed") : tr("%1 primitives changed").arg(changed));
  if (removed) parts << tr("%1 removed").arg(removed);
  if (added) parts << tr("%1 added").arg(added);
  summary_->setText(parts.isEmpty() ? tr("The same primitives as the default schedule.")
                                    : parts.join(QStringLiteral(", ")) + tr(" against the default schedule"));
}

}  // namespace tessel::views
