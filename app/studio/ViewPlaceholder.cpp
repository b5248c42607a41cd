// ViewPlaceholder: centred, muted text naming what will appear here.
#include "app/studio/ViewPlaceholder.h"

#include <QLabel>
#include <QVBoxLayout>

namespace tessel::studio {

ViewPlaceholder::ViewPlaceholder(const QString& title, const QString& component, QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->addStretch(1);
  auto* heading = new QLabel(title);
  heading->setObjectName("ViewPlaceholder");
  heading->setAlignment(Qt::AlignCenter);
  auto* origin = new QLabel(tr("Placeholder: %1 is not integrated yet").arg(component));
  origin->setAlignment(Qt::AlignCenter);
  origin->setEnabled(false);
  detail_ = new QLabel;
  detail_->setAlignment(Qt::AlignCenter);
  detail_->setWordWrap(true);
  layout->addWidget(heading);
  layout->addWidget(origin);
  layout->addWidget(detail_);
  layout->addStretch(1);
}

void ViewPlaceholder::setDetail(const QString& detail) { detail_->setText(detail); }

}  // namespace tessel::studio
