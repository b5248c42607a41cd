// Syntax colours for the read-only code views: loop IR, LLVM IR and assembly.
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

#include <vector>

namespace tessel::views {

class CodeHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

public:
  enum class Language { LoopIR, LlvmIR, Assembly };

  /// Colours `document` as `language`, with colours from `palette`.
  CodeHighlighter(QTextDocument* document, Language language, const QPalette& palette);
  void setPalette(const QPalette& palette);

protected:
  void highlightBlock(const QString& text) override;

private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  Language language_;
  std::vector<Rule> rules_;
};

}  // namespace tessel::views
