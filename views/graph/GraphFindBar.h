// The graph view's find bar (Ctrl+F): a query field, "3 of 12", next/previous and close.
// It searches the layout it is given and says which node is the current match; the owner
// highlights and centers (GraphWorkbench does both).
#pragma once

#include <QStringList>
#include <QWidget>

#include <memory>

#include "views/graph/GraphLayout.h"

class QLabel;
class QLineEdit;
class QToolButton;

namespace tessel::views {

class GraphFindBar : public QWidget {
  Q_OBJECT

public:
  explicit GraphFindBar(QWidget* parent = nullptr);

  /// The layout to search; the current query is searched again in it.
  void setGraphLayout(std::shared_ptr<const GraphLayout> layout);

  /// Shows the bar and focuses the query field with its text selected.
  void activate();
  void setQuery(const QString& query);
  QString query() const;

  QStringList matches() const { return matches_; }
  /// The current match's id; empty when there is none.
  QString currentMatch() const;
  int currentIndex() const { return current_; }

  /// Moves to the next/previous match, wrapping around.
  void findNext();
  void findPrevious();

  QLineEdit* queryField() const { return field_; }

signals:
  /// The matches or the current one changed (highlight them).
  void matchesChanged(const QStringList& matches, const QString& current);
  /// The current match changed to `id` (center the view on it).
  void currentMatchChanged(const QString& id);
  /// The bar was closed (Escape or its close button); highlights should go.
  void closed();

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  void search();
  void setCurrent(int index);
  void updateStatus();

  std::shared_ptr<const GraphLayout> layout_;
  QLineEdit* field_;
  QLabel* status_;
  QToolButton* previous_;
  QToolButton* next_;
  QStringList matches_;
  int current_ = -1;
};

}  // namespace tessel::views
