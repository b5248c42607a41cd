// What the central area shows before any model is open: how to start (open a model or
// project, drag one in) and the recent files, one click away.
#pragma once

#include <QWidget>

class QListWidget;
class QPushButton;

namespace tessel::studio {

class WelcomePage : public QWidget {
  Q_OBJECT

public:
  explicit WelcomePage(QWidget* parent = nullptr);

  /// The files listed under "Recent" (newest first).
  void setRecentFiles(const QStringList& files);
  QListWidget* recentList() const { return recent_; }
  /// Shows "Open Example Project" when the examples are installed.
  void setExampleAvailable(bool available);

signals:
  void openRequested();
  void recentFileRequested(const QString& path);
  void exampleRequested();
  void lessonsRequested();

private:
  QListWidget* recent_ = nullptr;
  QPushButton* example_ = nullptr;
};

}  // namespace tessel::studio
