// ShortcutsDialog: a two-column, filterable table of action names and their keys.
#include "app/studio/ShortcutsDialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace tessel::studio {

ShortcutsDialog::ShortcutsDialog(const QList<QAction*>& actions, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Keyboard Shortcuts"));
  resize(520, 560);
  auto* layout = new QVBoxLayout(this);
  auto* filter = new QLineEdit;
  filter->setPlaceholderText(tr("Filter"));
  filter->setClearButtonEnabled(true);
  list_ = new QTreeWidget;
  list_->setColumnCount(2);
  list_->setHeaderLabels({tr("Action"), tr("Shortcut")});
  list_->setRootIsDecorated(false);
  list_->setAlternatingRowColors(true);
  list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  for (QAction* action : actions) {
    if (action->shortcut().isEmpty()) continue;
    QString text = action->text().remove('&');
    auto* item = new QTreeWidgetItem(list_, {text, action->shortcut().toString(QKeySequence::NativeText)});
    item->setToolTip(0, action->toolTip());
  }
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(filter, &QLineEdit::textChanged, this, [this](const QString& text) {
    for (int i = 0; i < list_->topLevelItemCount(); ++i) {
      QTreeWidgetItem* item = list_->topLevelItem(i);
      item->setHidden(!item->text(0).contains(text, Qt::CaseInsensitive) &&
                      !item->text(1).contains(text, Qt::CaseInsensitive));
    }
  });
  layout->addWidget(filter);
  layout->addWidget(list_, 1);
  layout->addWidget(buttons);
}

int ShortcutsDialog::shortcutCount() const { return list_->topLevelItemCount(); }

}  // namespace tessel::studio
