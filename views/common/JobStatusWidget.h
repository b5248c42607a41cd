// The status bar's view of background work: the newest job's title, its progress and a
// cancel button, and a button listing every running job with its own cancel.
#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;
class QToolButton;

namespace tessel::views {

class JobListModel;

/// Shows `jobs` (rows of a JobListModel) compactly; hides itself while nothing runs.
class JobStatusWidget : public QWidget {
  Q_OBJECT

public:
  explicit JobStatusWidget(JobListModel* jobs, QWidget* parent = nullptr);

  /// The text shown for the newest job ("Compiling tiny_resnet.onnx - Importing").
  QString currentText() const;
  /// Opens the list of all running jobs (also what the "N jobs" button does).
  void showJobList();

private:
  void refresh();

  JobListModel* jobs_;
  QLabel* title_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancel_ = nullptr;
  QToolButton* more_ = nullptr;
};

}  // namespace tessel::views
