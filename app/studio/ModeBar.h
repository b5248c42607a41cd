// The vertical bar on the window's left edge that switches the central view (Graph,
// Timeline, Schedule), as Qt Creator's mode selector does.
#pragma once

#include <QIcon>
#include <QWidget>

class QButtonGroup;
class QToolButton;
class QVBoxLayout;

namespace tessel::studio {

class ModeBar : public QWidget {
  Q_OBJECT

public:
  explicit ModeBar(QWidget* parent = nullptr);

  /// Adds a mode button; modes are numbered in the order they are added.
  void addMode(const QIcon& icon, const QString& label, const QString& toolTip);
  void setCurrentMode(int mode);
  int currentMode() const;
  QToolButton* button(int mode) const;

signals:
  /// The user picked `mode` (not emitted by setCurrentMode).
  void modeSelected(int mode);

private:
  QVBoxLayout* layout_ = nullptr;
  QButtonGroup* group_ = nullptr;
};

}  // namespace tessel::studio
