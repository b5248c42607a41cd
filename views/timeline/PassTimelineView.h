// The pass timeline strip: one card per step (imported graph, then each pass) with its time;
// the user picks a step to view, or two steps to compare.
#pragma once

#include <QWidget>

class QLabel;
class QListView;
class QToolButton;

namespace tessel::views {

class PassTimelineDelegate;
class PassTimelineModel;

/// A horizontal strip of timeline steps over a PassTimelineModel.
///  - Click a step: stepSelected(row) (and any comparison ends).
///  - Ctrl+click a second step, "Compare with previous", or the context menu: compare two
///    steps; comparisonRequested(before, after) with the earlier step first.
///  - Escape or "Exit comparison": comparisonCleared().
/// The programmatic setters behave like the user's actions and emit the same signals.
class PassTimelineView : public QWidget {
  Q_OBJECT

public:
  explicit PassTimelineView(QWidget* parent = nullptr);

  /// The model to show (not owned). After a reset the selection is kept when the row still
  /// exists (a recompile), else the last step is selected.
  void setModel(PassTimelineModel* model);
  PassTimelineModel* model() const { return model_; }

  /// Selects `row` (ending a comparison); -1 when out of range is ignored.
  void selectStep(int row);
  int selectedStep() const { return selected_; }

  /// Compares two different steps; the earlier becomes "before" (A). Ignored for equal or
  /// out-of-range rows.
  void compareSteps(int first, int second);
  void clearComparison();
  bool isComparing() const { return comparedBefore_ >= 0; }
  int comparedBefore() const { return comparedBefore_; }
  int comparedAfter() const { return comparedAfter_; }

  /// The list the cards are in (for tests: click positions via visualRect).
  QListView* listView() const { return list_; }

signals:
  void stepSelected(int row);
  void comparisonRequested(int before, int after);
  void comparisonCleared();

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

private:
  void onModelReset();
  void showContextMenu(const QPoint& position);
  void updateHeader();
  void fitCards();

  PassTimelineModel* model_ = nullptr;
  PassTimelineDelegate* delegate_;
  QListView* list_;
  QLabel* title_;
  QLabel* status_;
  QToolButton* comparePrevious_;
  QToolButton* exitCompare_;
  int selected_ = -1;
  int comparedBefore_ = -1, comparedAfter_ = -1;
};

}  // namespace tessel::views
