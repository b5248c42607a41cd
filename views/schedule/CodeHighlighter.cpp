// Regular-expression colouring of generated code; later rules win where rules overlap.
#include "views/schedule/CodeHighlighter.h"

#include "views/common/Theme.h"

namespace tessel::views {

CodeHighlighter::CodeHighlighter(QTextDocument* document, Language language, const QPalette& palette)
    : QSyntaxHighlighter(document), language_(language) {
  setPalette(palette);
}

void CodeHighlighter::setPalette(const QPalette& palette) {
  ThemeColors colors = themeColors(palette);
  bool dark = palette.color(QPalette::Base).lightness() < 128;
  auto format = [](QColor color, bool bold = false, bool italic = false) {
    QTextCharFormat f;
    f.setForeground(color);
    if (bold) f.setFontWeight(QFont::Bold);
    f.setFontItalic(italic);
    return f;
  };
  QTextCharFormat keyword = format(colors.keyword, true);
  QTextCharFormat number = format(colors.number);
  QTextCharFormat comment = format(colors.comment, false, true);
  QTextCharFormat label = format(dark ? QColor(0xdc, 0xdc, 0xaa) : QColor(0x79, 0x5e, 0x26), true);
  QTextCharFormat type = format(dark ? QColor(0x4e, 0xc9, 0xb0) : QColor(0x26, 0x7f, 0x99));
  QTextCharFormat name = format(dark ? QColor(0x9c, 0xdc, 0xfe) : QColor(0x00, 0x1f, 0x9e));
  auto rule = [](const char* pattern, QTextCharFormat f) { return Rule{QRegularExpression(pattern), f}; };
  rules_.clear();
  switch (language_) {
    case Language::LoopIR:
      rules_ = {rule("\\b\\d+(\\.\\d+)?f?\\b", number),
                rule("\\b(float|int|uint|bfloat)\\d+\\b|\\bbool\\b", type),
                rule("\\b(func|for|parallel|vectorized|unrolled|bind|allocate|realize|if|else|let|in|assert|ramp|broadcast|select|likely)\\b",
                     keyword),
                rule("//.*$", comment)};
      break;
    case Language::LlvmIR:
      rules_ = {rule("\\b-?\\d+(\\.\\d+(e[+-]?\\d+)?)?\\b", number),
                rule("%[\\w.$-]+|@[\\w.$-]+", name),
                rule("\\b(i\\d+|float|double|half|bfloat|void|ptr|x)\\b", type),
                rule("\\b(define|declare|internal|private|ret|br|label|phi|call|tail|load|store|getelementptr|inbounds|"
                     "alloca|icmp|fcmp|select|add|sub|mul|fadd|fsub|fmul|fdiv|nsw|nuw|fast|bitcast|sext|zext|trunc|"
                     "shufflevector|insertelement|extractelement|align)\\b",
                     keyword),
                rule("^[\\w.$-]+:", label),
                rule(";.*$", comment)};
      break;
    case Language::Assembly:
      rules_ = {rule("\\$?-?\\b(0x[0-9a-fA-F]+|\\d+)\\b", number),
                rule("%\\w+", name),
                rule("^\\s+[a-z][a-z0-9]*\\b", keyword),
                rule("^\\s*\\.[\\w]+", type),
                rule("^[\\w.$]+:", label),
                rule("#.*$", comment)};
      break;
  }
  rehighlight();
}

void CodeHighlighter::highlightBlock(const QString& text) {
  for (const Rule& rule : rules_)
    for (auto it = rule.pattern.globalMatch(text); it.hasNext();) {
      auto match = it.next();
      setFormat(int(match.capturedStart()), int(match.capturedLength()), rule.format);
    }
}

}  // namespace tessel::views
