// Help > Keyboard Shortcuts: every action that has a shortcut, generated from the actions
// themselves so the list cannot drift from what the keys do.
#pragma once

#include <QDialog>
#include <QList>

class QAction;
class QTreeWidget;

namespace tessel::studio {

class ShortcutsDialog : public QDialog {
  Q_OBJECT

public:
  ShortcutsDialog(const QList<QAction*>& actions, QWidget* parent = nullptr);
  /// Number of actions listed (those with a shortcut).
  int shortcutCount() const;

private:
  QTreeWidget* list_ = nullptr;
};

}  // namespace tessel::studio
