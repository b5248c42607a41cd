// The diagnostics dock's contents: the log table, the selected entry in full (monospace, as
// the compiler wrote it) and a Clear button.
#pragma once

#include <QWidget>

class QTreeView;
class QPlainTextEdit;
class QLabel;

namespace tessel::views {

class DiagnosticsModel;

class DiagnosticsPanel : public QWidget {
  Q_OBJECT

public:
  explicit DiagnosticsPanel(DiagnosticsModel* model, QWidget* parent = nullptr);

  QTreeView* table() const { return table_; }
  /// The full text of the selected entry (the newest error is selected as it arrives).
  QString detailsText() const;

private:
  void showDetails(const QModelIndex& index);

  DiagnosticsModel* model_;
  QTreeView* table_ = nullptr;
  QPlainTextEdit* details_ = nullptr;
  QLabel* summary_ = nullptr;
};

}  // namespace tessel::views
