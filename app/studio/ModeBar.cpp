// ModeBar: exclusive, checkable tool buttons stacked vertically (styled by studio.qss).
#include "app/studio/ModeBar.h"

#include <QButtonGroup>
#include <QToolButton>
#include <QVBoxLayout>

namespace tessel::studio {

ModeBar::ModeBar(QWidget* parent) : QWidget(parent) {
  setObjectName("ModeBar");
  // Style sheets only paint a plain QWidget's background with this attribute.
  setAttribute(Qt::WA_StyledBackground);
  setFixedWidth(72);
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);
  layout_ = new QVBoxLayout(this);
  layout_->setContentsMargins(0, 4, 0, 4);
  layout_->setSpacing(0);
  layout_->addStretch(1);
  group_ = new QButtonGroup(this);
  group_->setExclusive(true);
  connect(group_, &QButtonGroup::idClicked, this, &ModeBar::modeSelected);
}

void ModeBar::addMode(const QIcon& icon, const QString& label, const QString& toolTip) {
  auto* button = new QToolButton;
  button->setIcon(icon);
  button->setIconSize(QSize(26, 26));
  button->setText(label);
  button->setToolTip(toolTip);
  button->setCheckable(true);
  button->setToolButtonStyle(Qt::ToolButtonTextUnderIcon);
  button->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  button->setFocusPolicy(Qt::NoFocus);
  int mode = static_cast<int>(group_->buttons().size());
  group_->addButton(button, mode);
  // Before the stretch, so modes stack from the top.
  layout_->insertWidget(mode, button);
  if (mode == 0) button->setChecked(true);
}

void ModeBar::setCurrentMode(int mode) {
  if (QAbstractButton* b = group_->button(mode)) b->setChecked(true);
}

int ModeBar::currentMode() const { return group_->checkedId(); }

QToolButton* ModeBar::button(int mode) const { return qobject_cast<QToolButton*>(group_->button(mode)); }

}  // namespace tessel::studio
