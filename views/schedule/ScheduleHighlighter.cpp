// Colours schedule text one line at a time; names are looked up, so a loop created by an
// earlier line is coloured as a loop once the schedule has been replayed.
#include "views/schedule/ScheduleHighlighter.h"

#include <QGuiApplication>
#include <QRegularExpression>

#include "views/common/Theme.h"
#include "views/schedule/ScheduleCompletion.h"

namespace tessel::views {

ScheduleHighlighter::ScheduleHighlighter(QObject* parent) : QSyntaxHighlighter(parent) {
  for (const QString& name : primitiveNames()) primitives_.insert(name);
  setPalette(QGuiApplication::palette());
}

void ScheduleHighlighter::setNames(const QSet<QString>& stages, const QSet<QString>& loops) {
  if (stages == stages_ && loops == loops_) return;
  stages_ = stages;
  loops_ = loops;
  rehighlight();
}

void ScheduleHighlighter::setPalette(const QPalette& palette) {
  ThemeColors colors = themeColors(palette);
  bool dark = palette.color(QPalette::Base).lightness() < 128;
  primitive_ = {};
  primitive_.setForeground(colors.keyword);
  primitive_.setFontWeight(QFont::Bold);
  stage_ = {};
  stage_.setForeground(dark ? QColor(0x4e, 0xc9, 0xb0) : QColor(0x26, 0x7f, 0x99));
  loop_ = {};
  loop_.setForeground(dark ? QColor(0x9c, 0xdc, 0xfe) : QColor(0x00, 0x1f, 0x9e));
  number_ = {};
  number_.setForeground(colors.number);
  keyword_ = {};
  keyword_.setForeground(dark ? QColor(0xc5, 0x86, 0xc0) : QColor(0xaf, 0x00, 0xdb));
  comment_ = {};
  comment_.setForeground(colors.comment);
  comment_.setFontItalic(true);
  rehighlight();
}

void ScheduleHighlighter::highlightBlock(const QString& text) {
  static const QRegularExpression token(QStringLiteral("#.*$|-?\\d+|[A-Za-z_][A-Za-z0-9_.]*(\\s*=(?!=))?"));
  for (auto it = token.globalMatch(text); it.hasNext();) {
    auto match = it.next();
    QString word = match.captured(0);
    int start = int(match.capturedStart());
    int length = int(match.capturedLength());
    if (word.startsWith(QLatin1Char('#'))) {
      setFormat(start, length, comment_);
    } else if (word[0].isDigit() || word[0] == QLatin1Char('-')) {
      setFormat(start, length, number_);
    } else if (!match.captured(1).isEmpty()) {
      // "name =": a keyword argument (factor=) inside a call, else a result being named.
      QString name = word.left(word.indexOf(QLatin1Char('='))).trimmed();
      bool insideCall = text.left(start).contains(QLatin1Char('('));
      if (insideCall) setFormat(start, int(name.size()), keyword_);
      else if (loops_.contains(name)) setFormat(start, int(name.size()), loop_);
      else if (stages_.contains(name)) setFormat(start, int(name.size()), stage_);
    } else if (primitives_.contains(word) && text.mid(start + length).trimmed().startsWith(QLatin1Char('('))) {
      setFormat(start, length, primitive_);
    } else if (stages_.contains(word)) {
      setFormat(start, length, stage_);
    } else if (loops_.contains(word)) {
      setFormat(start, length, loop_);
    }
  }
}

}  // namespace tessel::views
