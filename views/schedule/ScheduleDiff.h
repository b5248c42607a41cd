// Two schedules side by side, line against line: the default schedule on the left, the text in
// the editor (a tuning trial, an edit) on the right, with what was removed, added or changed
// marked, as a code review tool shows a diff. Lines are matched by a longest common
// subsequence, so a primitive inserted in the middle does not misalign everything after it.
#pragma once

#include <QPlainTextEdit>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QLabel;

namespace tessel::views {

struct DiffRow {
  enum class Kind { Same, Removed, Added, Changed };
  Kind kind = Kind::Same;
  int left = -1;   ///< 0-based line of the left text, -1 for a gap on that side.
  int right = -1;  ///< 0-based line of the right text, -1 for a gap on that side.
};

/// Aligns `left` and `right` line by line. Runs of removed lines followed by added ones pair up
/// as Changed rows (the edited factor of a split reads as one row); the rest stay Removed or
/// Added with a gap opposite. Lines compare with surrounding whitespace ignored.
std::vector<DiffRow> sideBySideDiff(const QStringList& left, const QStringList& right);

/// The rows as text, one per line: "  a | a", "- a |", "+   | b", "~ a | b" (for tests and
/// for copying a diff into a bug report).
QString diffRowsText(const std::vector<DiffRow>& rows, const QStringList& left, const QStringList& right);

/// Two read-only panes scrolling together, gaps where one side has no line, and a summary
/// ("2 primitives changed, 1 added") above them.
class ScheduleDiffView : public QWidget {
  Q_OBJECT

public:
  explicit ScheduleDiffView(QWidget* parent = nullptr);

  /// Shows `reference` (titled `referenceTitle`) against `current`.
  void setTexts(const QString& referenceTitle, const QString& reference, const QString& current);
  const std::vector<DiffRow>& rows() const { return rows_; }
  QString summary() const;
  QPlainTextEdit* leftPane() const { return left_; }
  QPlainTextEdit* rightPane() const { return right_; }

protected:
  void changeEvent(QEvent* event) override;

private:
  void render();

  QLabel* summary_ = nullptr;
  QLabel* leftTitle_ = nullptr;
  QLabel* rightTitle_ = nullptr;
  QPlainTextEdit* left_ = nullptr;
  QPlainTextEdit* right_ = nullptr;
  QStringList leftLines_, rightLines_;
  std::vector<DiffRow> rows_;
};

}  // namespace tessel::views
