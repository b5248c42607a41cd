// The schedule text editor: syntax colours, line numbers, completion of primitive, stage and
// loop names valid at the cursor, an inline diagnostic (red squiggle + tooltip), and the lines
// linked to what the user points at in the lowered code.
#pragma once

#include <QPlainTextEdit>

#include <memory>
#include <optional>

#include "compiler/driver/ScheduleTask.h"
#include "core/support/Error.h"

class QCompleter;
class QStringListModel;

namespace tessel::views {

class ScheduleHighlighter;

/// Edits one task's schedule text at a time. The text lives in a QTextDocument the caller
/// owns (one per task, so each keeps its undo history); the editor shows whichever is set
/// with setScheduleDocument().
class ScheduleEditor : public QPlainTextEdit {
  Q_OBJECT

public:
  explicit ScheduleEditor(QWidget* parent = nullptr);
  ~ScheduleEditor() override;

  /// Shows and edits `document` (not owned; it must outlive its use here).
  void setScheduleDocument(QTextDocument* document);

  /// The last successful lowering of the text: where stage and loop names for colours and
  /// completion come from (null: only primitive names are known).
  void setLowering(std::shared_ptr<const driver::TaskLowering> lowering);

  /// Marks `diagnostic` (its 1-based line and column) with a squiggle and a tooltip; nullopt
  /// clears it.
  void setDiagnostic(const std::optional<Diagnostic>& diagnostic);
  const std::optional<Diagnostic>& diagnostic() const { return diagnostic_; }
  /// The character range the squiggle covers (document positions), or {-1, -1} without one:
  /// the word at the diagnostic's column, or, when the message quotes a name written later on
  /// that line (schedule errors point at the primitive, the unknown loop comes after), that name.
  std::pair<int, int> diagnosticRange() const;

  /// Tints `lines` (1-based): the schedule lines linked to what is pointed at in the code.
  void setLinkedLines(const QList<int>& lines);
  const QList<int>& linkedLines() const { return linkedLines_; }

  /// The schedule the text is compared with (the task's default): each line whose primitive
  /// the reference does not have (added, or changed in place) gets a bar at the gutter's right
  /// edge, as a version-control gutter would show it. Empty: no marks.
  void setReferenceText(const QString& reference);
  /// The 1-based lines marked so (comments and blank lines never are).
  QList<int> linesChangedFromReference() const;

  /// Opens completion at the cursor (also bound to Ctrl+Space; typing a name opens it too).
  void showCompletions();
  QCompleter* completer() const { return completer_; }

  /// The 1-based line of the cursor.
  int cursorLine() const;

signals:
  /// The cursor moved to another line (1-based).
  void cursorLineChanged(int line);

protected:
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;
  void changeEvent(QEvent* event) override;

private:
  class LineNumberGutter;
  friend class LineNumberGutter;
  int gutterWidth() const;
  void paintGutter(QPaintEvent* event);
  void updateGutter(const QRect& rect, int dy);
  void updateExtraSelections();
  void insertCompletion(const QString& completion);
  void onCursorMoved();

  ScheduleHighlighter* highlighter_;
  LineNumberGutter* gutter_;
  QCompleter* completer_;
  QStringListModel* completionModel_;
  QString completionPrefix_;
  std::shared_ptr<const driver::TaskLowering> lowering_;
  std::optional<Diagnostic> diagnostic_;
  QList<int> linkedLines_;
  QStringList referenceLines_;  // the reference's primitives, trimmed; empty: no reference
  int lastCursorLine_ = -1;
};

}  // namespace tessel::views
