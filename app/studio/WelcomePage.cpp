// WelcomePage: a centred column with a heading, the open and example buttons and the recent files.
#include "app/studio/WelcomePage.h"

#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace tessel::studio {

WelcomePage::WelcomePage(QWidget* parent) : QWidget(parent) {
  setObjectName("WelcomePage");
  auto* outer = new QHBoxLayout(this);
  auto* column = new QVBoxLayout;
  outer->addStretch(1);
  outer->addLayout(column, 2);
  outer->addStretch(1);

  auto* title = new QLabel(tr("Tessel Studio"));
  QFont big = title->font();
  big.setPointSizeF(big.pointSizeF() * 2.2);
  big.setWeight(QFont::Light);
  title->setFont(big);
  auto* subtitle = new QLabel(tr("See, compare, edit and measure a model's graph, its passes and every "
                                 "kernel's schedule."));
  subtitle->setWordWrap(true);
  subtitle->setForegroundRole(QPalette::PlaceholderText);
  auto* open = new QPushButton(tr("Open Model or Project…"));
  open->setToolTip(tr("An ONNX model (.onnx) or a Tessel project (.tessel); Ctrl+O"));
  open->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  example_ = new QPushButton(tr("Open Example Project"));
  example_->setObjectName("OpenExampleButton");
  example_->setToolTip(tr("A small ResNet-style model with a saved schedule, reference data and an expectation, "
                          "copied to your data folder so you can edit it"));
  example_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  example_->hide();
  auto* lessons = new QPushButton(tr("Lessons: Learn to Schedule"));
  lessons->setObjectName("OpenLessonsButton");
  lessons->setToolTip(tr("Lessons on loop order, tiling, vectorizing, parallel loops, pipelines, caching and "
                         "reductions, checked as you go (F1)"));
  lessons->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  auto* hint = new QLabel(tr("or drop a file onto the window"));
  hint->setForegroundRole(QPalette::PlaceholderText);
  auto* recentTitle = new QLabel(tr("<b>Recent</b>"));
  recent_ = new QListWidget;
  recent_->setObjectName("RecentFilesList");
  recent_->setFrameShape(QFrame::NoFrame);
  recent_->setMaximumHeight(260);

  column->addStretch(2);
  column->addWidget(title);
  column->addWidget(subtitle);
  column->addSpacing(18);
  column->addWidget(open);
  column->addWidget(example_);
  column->addWidget(lessons);
  column->addWidget(hint);
  column->addSpacing(24);
  column->addWidget(recentTitle);
  column->addWidget(recent_);
  column->addStretch(3);

  connect(open, &QPushButton::clicked, this, &WelcomePage::openRequested);
  connect(example_, &QPushButton::clicked, this, &WelcomePage::exampleRequested);
  connect(lessons, &QPushButton::clicked, this, &WelcomePage::lessonsRequested);
  connect(recent_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    emit recentFileRequested(item->data(Qt::UserRole).toString());
  });
}

void WelcomePage::setExampleAvailable(bool available) { example_->setVisible(available); }

void WelcomePage::setRecentFiles(const QStringList& files) {
  recent_->clear();
  for (const QString& path : files) {
    QFileInfo info(path);
    auto* item = new QListWidgetItem(QStringLiteral("%1    %2").arg(info.fileName(), info.absolutePath()), recent_);
    item->setData(Qt::UserRole, path);
    item->setToolTip(path);
  }
  if (files.isEmpty()) {
    auto* none = new QListWidgetItem(tr("No recent files"), recent_);
    none->setFlags(Qt::NoItemFlags);
  }
}

}  // namespace tessel::studio
