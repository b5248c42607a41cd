// JobStatusWidget: newest job in the status bar, every job in a popup list.
#include "views/common/JobStatusWidget.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/common/JobListModel.h"

namespace tessel::views {

namespace {

QString rowText(const JobListModel& jobs, int row) {
  QModelIndex index = jobs.index(row);
  QString title = index.data(JobListModel::TitleRole).toString();
  QString message = index.data(JobListModel::MessageRole).toString();
  return message.isEmpty() ? title : QStringLiteral("%1 - %2").arg(title, message);
}

void showPercent(QProgressBar* bar, int percent) {
  if (percent < 0) {
    bar->setRange(0, 0);  // busy indicator
  } else {
    bar->setRange(0, 100);
    bar->setValue(percent);
  }
}

}  // namespace

JobStatusWidget::JobStatusWidget(JobListModel* jobs, QWidget* parent) : QWidget(parent), jobs_(jobs) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  title_ = new QLabel;
  title_->setObjectName("JobTitle");
  title_->setMaximumWidth(420);
  progress_ = new QProgressBar;
  progress_->setFixedWidth(140);
  progress_->setTextVisible(false);
  cancel_ = new QToolButton;
  cancel_->setObjectName("CancelJob");
  cancel_->setIcon(style()->standardIcon(QStyle::SP_DialogCancelButton));
  cancel_->setAutoRaise(true);
  cancel_->setToolTip(tr("Cancel this job"));
  more_ = new QToolButton;
  more_->setObjectName("JobList");
  more_->setAutoRaise(true);
  more_->setToolTip(tr("Show every running job"));
  layout->addWidget(title_);
  layout->addWidget(progress_);
  layout->addWidget(cancel_);
  layout->addWidget(more_);

  connect(cancel_, &QToolButton::clicked, this, [this] { jobs_->cancel(jobs_->rowCount() - 1); });
  connect(more_, &QToolButton::clicked, this, &JobStatusWidget::showJobList);
  connect(jobs_, &QAbstractItemModel::rowsInserted, this, &JobStatusWidget::refresh);
  connect(jobs_, &QAbstractItemModel::rowsRemoved, this, &JobStatusWidget::refresh);
  connect(jobs_, &QAbstractItemModel::dataChanged, this, &JobStatusWidget::refresh);
  connect(jobs_, &QAbstractItemModel::modelReset, this, &JobStatusWidget::refresh);
  refresh();
}

QString JobStatusWidget::currentText() const { return title_->text(); }

void JobStatusWidget::refresh() {
  int count = jobs_->rowCount();
  setVisible(count > 0);
  if (count == 0) {
    title_->clear();
    return;
  }
  int newest = count - 1;
  QString text = rowText(*jobs_, newest);
  title_->setText(title_->fontMetrics().elidedText(text, Qt::ElideMiddle, title_->maximumWidth()));
  title_->setToolTip(jobs_->index(newest).data(Qt::ToolTipRole).toString());
  showPercent(progress_, jobs_->index(newest).data(JobListModel::PercentRole).toInt());
  more_->setVisible(count > 1);
  more_->setText(tr("%n job(s)", nullptr, count));
}

void JobStatusWidget::showJobList() {
  // A popup rebuilt from the model each time it opens: jobs are few and short-lived.
  auto* popup = new QFrame(this, Qt::Popup);
  popup->setAttribute(Qt::WA_DeleteOnClose);
  popup->setFrameShape(QFrame::StyledPanel);
  auto* rows = new QVBoxLayout(popup);
  rows->setContentsMargins(8, 8, 8, 8);
  for (int row = 0; row < jobs_->rowCount(); ++row) {
    auto* line = new QHBoxLayout;
    auto* label = new QLabel(rowText(*jobs_, row));
    label->setToolTip(jobs_->index(row).data(Qt::ToolTipRole).toString());
    auto* bar = new QProgressBar;
    bar->setFixedWidth(120);
    bar->setTextVisible(false);
    showPercent(bar, jobs_->index(row).data(JobListModel::PercentRole).toInt());
    auto* stop = new QToolButton;
    stop->setIcon(style()->standardIcon(QStyle::SP_DialogCancelButton));
    stop->setAutoRaise(true);
    connect(stop, &QToolButton::clicked, popup, [this, popup, row] {
      jobs_->cancel(row);
      popup->close();
    });
    line->addWidget(label, 1);
    line->addWidget(bar);
    line->addWidget(stop);
    rows->addLayout(line);
  }
  if (jobs_->rowCount() == 0) rows->addWidget(new QLabel(tr("No background jobs")));
  popup->adjustSize();
  QPoint anchor = mapToGlobal(QPoint(width() - popup->width(), -popup->height()));
  popup->move(anchor);
  popup->show();
}

}  // namespace tessel::views
