// MainWindow: wires the model session to the views and reports background work.
#include "app/studio/MainWindow.h"

#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>
#include <QToolButton>

namespace tessel::studio {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("Tessel Studio"));
  resize(1280, 800);
  createActions();
  createStatusBar();
  connect(&session_, &views::ModelSession::compiled, this, [this] {
    setWindowTitle(tr("%1 - Tessel Studio").arg(session_.modelPath()));
  });
  connect(&session_, &views::ModelSession::failed, this, [this](const QString& message) {
    statusLabel_->setText(message.section('\n', 0, 0));
  });
}

void MainWindow::openFile(const QString& path) { session_.open(path); }

void MainWindow::createActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open model"), {}, tr("Models (*.onnx);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::createStatusBar() {
  statusLabel_ = new QLabel(tr("Ready"));
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(180);
  progress_->hide();
  cancelButton_ = new QToolButton;
  cancelButton_->setText(tr("Cancel"));
  cancelButton_->hide();
  statusBar()->addWidget(statusLabel_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancelButton_);
  auto& jobs = session_.jobs();
  connect(cancelButton_, &QToolButton::clicked, &session_, &views::ModelSession::cancel);
  connect(&jobs, &views::JobRunner::jobStarted, this, [this](const QString&, const QString& title) {
    statusLabel_->setText(title);
    progress_->setRange(0, 0);
    progress_->show();
    cancelButton_->show();
  });
  connect(&jobs, &views::JobRunner::jobProgress, this, [this](const QString&, int percent, const QString& message) {
    if (percent >= 0) progress_->setRange(0, 100), progress_->setValue(percent);
    if (!message.isEmpty()) statusLabel_->setText(message);
  });
  connect(&jobs, &views::JobRunner::jobFinished, this, [this](const QString&, bool cancelled) {
    progress_->hide();
    cancelButton_->hide();
    statusLabel_->setText(cancelled ? tr("Cancelled") : tr("Ready"));
  });
}

}  // namespace tessel::studio
