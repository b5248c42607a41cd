// The schedule editor: a plain-text editor with a line-number gutter, colours, completion, an
// inline diagnostic and linked-line tints, all drawn as extra selections so undo never sees them.
#include "views/schedule/ScheduleEditor.h"

#include <QAbstractItemView>
#include <QCompleter>
#include <QFontDatabase>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QRegularExpression>
#include <QScrollBar>
#include <QStringListModel>
#include <QTextBlock>
#include <QToolTip>

#include "views/common/Theme.h"
#include "views/schedule/ScheduleCompletion.h"
#include "views/schedule/ScheduleHighlighter.h"

namespace tessel::views {

class ScheduleEditor::LineNumberGutter : public QWidget {
public:
  explicit LineNumberGutter(ScheduleEditor* editor) : QWidget(editor), editor_(editor) {}
  QSize sizeHint() const override { return {editor_->gutterWidth(), 0}; }

protected:
  void paintEvent(QPaintEvent* event) override { editor_->paintGutter(event); }

private:
  ScheduleEditor* editor_;
};

namespace {
bool isNameCharacter(QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char('.'); }

QString diagnosticText(const Diagnostic& d) {
  QString text = QString::fromStdString(d.message);
  if (!d.hint.empty()) text += QStringLiteral("\nHint: ") + QString::fromStdString(d.hint);
  return text;
}
}  // namespace

ScheduleEditor::ScheduleEditor(QWidget* parent)
    : QPlainTextEdit(parent),
      highlighter_(new ScheduleHighlighter(this)),
      gutter_(new LineNumberGutter(this)),
      completer_(new QCompleter(this)),
      completionModel_(new QStringListModel(this)) {
  setObjectName(QStringLiteral("scheduleEditor"));
  QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  font.setPointSizeF(std::max(font.pointSizeF(), 10.0));
  setFont(font);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTabChangesFocus(false);
  setTabStopDistance(fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 4);
  setMouseTracking(true);

  completer_->setModel(completionModel_);
  completer_->setWidget(this);
  completer_->setCompletionMode(QCompleter::PopupCompletion);
  completer_->setCaseSensitivity(Qt::CaseSensitive);
  completer_->setModelSorting(QCompleter::UnsortedModel);
  completer_->setMaxVisibleItems(12);
  connect(completer_, qOverload<const QString&>(&QCompleter::activated), this, &ScheduleEditor::insertCompletion);

  connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(gutterWidth(), 0, 0, 0); });
  connect(this, &QPlainTextEdit::updateRequest, this, &ScheduleEditor::updateGutter);
  connect(this, &QPlainTextEdit::cursorPositionChanged, this, &ScheduleEditor::onCursorMoved);
  setViewportMargins(gutterWidth(), 0, 0, 0);
  updateExtraSelections();
}

ScheduleEditor::~ScheduleEditor() = default;

void ScheduleEditor::setScheduleDocument(QTextDocument* document) {
  if (document == this->document()) return;
  completer_->popup()->hide();
  // The highlighter moves first: setDocument deletes the editor's own initial document.
  highlighter_->setDocument(document);
  setDocument(document);
  diagnostic_.reset();
  linkedLines_.clear();
  lastCursorLine_ = -1;
  setViewportMargins(gutterWidth(), 0, 0, 0);
  onCursorMoved();
}

void ScheduleEditor::setLowering(std::shared_ptr<const driver::TaskLowering> lowering) {
  lowering_ = std::move(lowering);
  QSet<QString> stages, loops;
  if (lowering_) {
    auto collect = [&](const std::vector<driver::StageLoops>& snapshot) {
      for (auto& stage : snapshot) {
        stages.insert(QString::fromStdString(stage.stage));
        for (auto& loop : stage.allLoops) loops.insert(QString::fromStdString(loop));
      }
    };
    collect(lowering_->initialStages);
    for (auto& snapshot : lowering_->stagesAfter) collect(snapshot);
  }
  highlighter_->setNames(stages, loops);
}

void ScheduleEditor::setDiagnostic(const std::optional<Diagnostic>& diagnostic) {
  diagnostic_ = diagnostic;
  updateExtraSelections();
  gutter_->update();
}

std::pair<int, int> ScheduleEditor::diagnosticRange() const {
  if (!diagnostic_ || diagnostic_->line <= 0) return {-1, -1};
  QTextBlock block = document()->findBlockByNumber(diagnostic_->line - 1);
  if (!block.isValid()) return {-1, -1};
  QString text = block.text();
  if (text.isEmpty()) return {block.position(), block.position()};
  // The word at the column; a column past the end (a missing ')') marks the last character.
  int start = std::clamp(std::max(diagnostic_->column, 1) - 1, 0, int(text.size()) - 1);
  // Schedule errors point at the primitive; when the message quotes a name written later on
  // the line (the unknown loop or stage), that name is what the user has to fix.
  static const QRegularExpression quoted(QStringLiteral("'([A-Za-z_][A-Za-z0-9_.]*)'"));
  auto match = quoted.match(QString::fromStdString(diagnostic_->message));
  if (match.hasMatch()) {
    QRegularExpression word(QStringLiteral("(?<![A-Za-z0-9_.])%1(?![A-Za-z0-9_.])")
                                .arg(QRegularExpression::escape(match.captured(1))));
    auto found = word.match(text, start);
    if (found.hasMatch()) return {block.position() + int(found.capturedStart()), block.position() + int(found.capturedEnd())};
  }
  int end = start + 1;
  while (end < text.size() && isNameCharacter(text[end]) && isNameCharacter(text[start])) ++end;
  return {block.position() + start, block.position() + end};
}

void ScheduleEditor::setLinkedLines(const QList<int>& lines) {
  if (lines == linkedLines_) return;
  linkedLines_ = lines;
  updateExtraSelections();
}

namespace {
// A line's primitive as compared: trimmed; empty for a blank line or a comment.
QString primitiveOf(const QString& line) {
  QString text = line.trimmed();
  return text.startsWith('#') ? QString() : text;
}
}  // namespace

void ScheduleEditor::setReferenceText(const QString& reference) {
  QStringList lines;
  for (const QString& line : reference.split('\n'))
    if (QString text = primitiveOf(line); !text.isEmpty()) lines << text;
  if (lines == referenceLines_) return;
  referenceLines_ = lines;
  gutter_->update();
}

QList<int> ScheduleEditor::linesChangedFromReference() const {
  QList<int> changed;
  if (referenceLines_.isEmpty()) return changed;
  // Each reference line pairs with one line of the text that is the same (a primitive written
  // twice must be there twice); the rest are new or changed.
  QStringList unmatched = referenceLines_;
  for (QTextBlock block = document()->begin(); block.isValid(); block = block.next()) {
    QString text = primitiveOf(block.text());
    if (text.isEmpty()) continue;
    if (qsizetype at = unmatched.indexOf(text); at >= 0) unmatched.removeAt(at);
    else changed << block.blockNumber() + 1;
  }
  return changed;
}

int ScheduleEditor::cursorLine() const { return textCursor().blockNumber() + 1; }

void ScheduleEditor::onCursorMoved() {
  updateExtraSelections();
  int line = cursorLine();
  if (line == lastCursorLine_) return;
  lastCursorLine_ = line;
  emit cursorLineChanged(line);
}

void ScheduleEditor::updateExtraSelections() {
  ThemeColors colors = themeColors(palette());
  bool dark = palette().color(QPalette::Base).lightness() < 128;
  QList<QTextEdit::ExtraSelection> selections;

  QTextEdit::ExtraSelection current;
  current.format.setBackground(dark ? QColor(255, 255, 255, 14) : QColor(0, 0, 0, 10));
  current.format.setProperty(QTextFormat::FullWidthSelection, true);
  current.cursor = textCursor();
  current.cursor.clearSelection();
  selections << current;

  for (int line : linkedLines_) {
    QTextBlock block = document()->findBlockByNumber(line - 1);
    if (!block.isValid()) continue;
    QTextEdit::ExtraSelection linked;
    linked.format.setBackground(dark ? QColor(0xe0, 0xb0, 0x40, 70) : QColor(0xff, 0xd8, 0x60, 110));
    linked.format.setProperty(QTextFormat::FullWidthSelection, true);
    linked.cursor = QTextCursor(block);
    selections << linked;
  }

  auto [start, end] = diagnosticRange();
  if (start >= 0) {
    QTextEdit::ExtraSelection squiggle;
    squiggle.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
    squiggle.format.setUnderlineColor(colors.error);
    squiggle.format.setToolTip(diagnosticText(*diagnostic_));
    squiggle.cursor = QTextCursor(document());
    squiggle.cursor.setPosition(start);
    squiggle.cursor.setPosition(std::max(end, start), QTextCursor::KeepAnchor);
    selections << squiggle;
  }
  setExtraSelections(selections);
}

// --- Completion ---------------------------------------------------------------------------------

void ScheduleEditor::showCompletions() {
  QTextCursor cursor = textCursor();
  QString lineText = cursor.block().text();
  int column = cursor.positionInBlock();
  static const std::vector<driver::StageLoops> noStages;
  const auto& stages = lowering_ ? stagesBeforeLine(*lowering_, cursorLine()) : noStages;
  CompletionContext context = completionsAt(lineText, column, stages);
  QStringList matching;
  for (const QString& candidate : context.candidates)
    if (candidate.startsWith(context.prefix) && candidate != context.prefix) matching << candidate;
  if (matching.isEmpty()) {
    completer_->popup()->hide();
    return;
  }
  completionPrefix_ = context.prefix;
  completionModel_->setStringList(matching);
  completer_->setCompletionPrefix(QString());
  completer_->popup()->setCurrentIndex(completer_->completionModel()->index(0, 0));
  QRect rect = cursorRect();
  rect.setWidth(completer_->popup()->sizeHintForColumn(0) + completer_->popup()->verticalScrollBar()->sizeHint().width() + 8);
  completer_->complete(rect);
}

void ScheduleEditor::insertCompletion(const QString& completion) {
  QTextCursor cursor = textCursor();
  cursor.movePosition(QTextCursor::Left, QTextCursor::KeepAnchor, int(completionPrefix_.size()));
  cursor.insertText(completion);
  setTextCursor(cursor);
}

void ScheduleEditor::keyPressEvent(QKeyEvent* event) {
  if (completer_->popup()->isVisible()) {
    switch (event->key()) {
      case Qt::Key_Enter:
      case Qt::Key_Return:
      case Qt::Key_Tab:
      case Qt::Key_Escape:
      case Qt::Key_Backtab:
        event->ignore();  // the completer's popup handles these
        return;
      default: break;
    }
  }
  bool explicitRequest = event->key() == Qt::Key_Space && (event->modifiers() & Qt::ControlModifier);
  if (!explicitRequest) QPlainTextEdit::keyPressEvent(event);
  QString typed = event->text();
  bool namePart = !typed.isEmpty() && (isNameCharacter(typed[0]) && !typed[0].isDigit());
  bool argumentStart = typed == QLatin1String("(") || typed == QLatin1String(",");
  if (explicitRequest || (completer_->popup()->isVisible() && !typed.isEmpty()) || namePart || argumentStart) {
    showCompletions();
  } else if (completer_->popup()->isVisible()) {
    completer_->popup()->hide();
  }
}

// --- Gutter -------------------------------------------------------------------------------------

int ScheduleEditor::gutterWidth() const {
  int digits = QString::number(std::max(1, blockCount())).size();
  return 14 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(digits, 2) + 8;
}

void ScheduleEditor::updateGutter(const QRect& rect, int dy) {
  if (dy) gutter_->scroll(0, dy);
  else gutter_->update(0, rect.y(), gutter_->width(), rect.height());
}

void ScheduleEditor::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  QRect contents = contentsRect();
  gutter_->setGeometry(QRect(contents.left(), contents.top(), gutterWidth(), contents.height()));
}

void ScheduleEditor::paintGutter(QPaintEvent* event) {
  QPainter painter(gutter_);
  QPalette pal = palette();
  ThemeColors colors = themeColors(pal);
  painter.fillRect(event->rect(), pal.color(QPalette::AlternateBase));
  QColor number = pal.color(QPalette::PlaceholderText);
  QColor currentNumber = pal.color(QPalette::Text);
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  int bottom = top + qRound(blockBoundingRect(block).height());
  int current = textCursor().blockNumber();
  int lineHeight = fontMetrics().height();
  const QList<int> changed = linesChangedFromReference();
  while (block.isValid() && top <= event->rect().bottom()) {
    if (block.isVisible() && bottom >= event->rect().top()) {
      int line = block.blockNumber() + 1;
      if (diagnostic_ && diagnostic_->line == line) {
        // A red dot marks the line with the diagnostic, visible even when scrolled sideways.
        painter.setPen(Qt::NoPen);
        painter.setBrush(colors.error);
        int size = std::max(6, lineHeight / 2);
        painter.drawEllipse(QRect(4, top + (lineHeight - size) / 2, size, size));
      }
      if (linkedLines_.contains(line)) painter.fillRect(QRect(0, top, 3, lineHeight), colors.warning);
      if (changed.contains(line)) painter.fillRect(QRect(gutter_->width() - 3, top, 3, lineHeight), colors.added);
      painter.setPen(block.blockNumber() == current ? currentNumber : number);
      painter.drawText(0, top, gutter_->width() - 6, lineHeight, Qt::AlignRight | Qt::AlignVCenter,
                       QString::number(line));
    }
    block = block.next();
    top = bottom;
    bottom = top + qRound(blockBoundingRect(block).height());
  }
}

// --- Tooltips and theme -------------------------------------------------------------------------

bool ScheduleEditor::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    auto [start, end] = diagnosticRange();
    QPoint inViewport = viewport()->mapFromGlobal(help->globalPos());
    int position = cursorForPosition(inViewport).position();
    if (start >= 0 && position >= start && position <= std::max(end, start + 1)) {
      QToolTip::showText(help->globalPos(), diagnosticText(*diagnostic_), this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QPlainTextEdit::event(event);
}

void ScheduleEditor::changeEvent(QEvent* event) {
  QPlainTextEdit::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    highlighter_->setPalette(palette());
    updateExtraSelections();
  }
}

}  // namespace tessel::views
