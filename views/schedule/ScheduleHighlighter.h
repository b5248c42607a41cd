// Syntax colours for schedule text: primitive names, stage names, loop names, numbers,
// keywords (factor=, nparts=) and comments.
#pragma once

#include <QSet>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace tessel::views {

class ScheduleHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

public:
  /// Owned by `parent`; colours the document set with setDocument().
  explicit ScheduleHighlighter(QObject* parent = nullptr);

  /// The stage and loop names of the task (from the last successful replay), coloured as such.
  void setNames(const QSet<QString>& stages, const QSet<QString>& loops);
  /// Re-derives the colours from `palette` (after a theme switch).
  void setPalette(const QPalette& palette);

protected:
  void highlightBlock(const QString& text) override;

private:
  QSet<QString> stages_, loops_, primitives_;
  QTextCharFormat primitive_, stage_, loop_, number_, keyword_, comment_;
};

}  // namespace tessel::views
