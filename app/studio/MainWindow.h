// Tessel Studio's main window: menus, docks and the central views over one model session.
#pragma once

#include <QMainWindow>

#include "views/session/ModelSession.h"

class QLabel;
class QProgressBar;
class QToolButton;

namespace tessel::studio {

class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  explicit MainWindow(QWidget* parent = nullptr);

  views::ModelSession& session() { return session_; }
  /// Opens a model (or, later, a project) file in the background.
  void openFile(const QString& path);

private:
  void createActions();
  void createStatusBar();

  views::ModelSession session_;
  QLabel* statusLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancelButton_ = nullptr;
};

}  // namespace tessel::studio
