// DiagnosticsPanel: table + details of the Studio's diagnostics log.
#include "views/common/DiagnosticsPanel.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

#include "views/common/DiagnosticsModel.h"

namespace tessel::views {

DiagnosticsPanel::DiagnosticsPanel(DiagnosticsModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(6, 2, 6, 2);
  summary_ = new QLabel;
  auto* clear = new QToolButton;
  clear->setText(tr("Clear"));
  clear->setAutoRaise(true);
  clear->setToolTip(tr("Remove every entry from the log"));
  bar->addWidget(summary_, 1);
  bar->addWidget(clear);
  layout->addLayout(bar);

  auto* split = new QSplitter(Qt::Horizontal);
  table_ = new QTreeView;
  table_->setModel(model_);
  table_->setRootIsDecorated(false);
  table_->setAlternatingRowColors(true);
  table_->setUniformRowHeights(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->header()->setStretchLastSection(true);
  table_->header()->setSectionResizeMode(DiagnosticsModel::SeverityColumn, QHeaderView::ResizeToContents);
  table_->header()->setSectionResizeMode(DiagnosticsModel::TimeColumn, QHeaderView::ResizeToContents);
  table_->header()->setSectionResizeMode(DiagnosticsModel::SourceColumn, QHeaderView::ResizeToContents);
  details_ = new QPlainTextEdit;
  details_->setReadOnly(true);
  details_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  details_->setPlaceholderText(tr("Select an entry to see the full diagnostic."));
  details_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  split->addWidget(table_);
  split->addWidget(details_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);

  auto updateSummary = [this] {
    int errors = model_->errorCount();
    int entries = model_->rowCount();
    QString total = entries == 1 ? tr("1 entry") : tr("%1 entries").arg(entries);
    summary_->setText(errors == 0   ? total
                      : errors == 1 ? tr("1 error, %1").arg(total)
                                    : tr("%1 errors, %2").arg(errors).arg(total));
  };
  connect(clear, &QToolButton::clicked, model_, &DiagnosticsModel::clear);
  connect(model_, &QAbstractItemModel::rowsInserted, this, updateSummary);
  connect(model_, &QAbstractItemModel::rowsRemoved, this, updateSummary);
  connect(model_, &QAbstractItemModel::modelReset, this, [this, updateSummary] {
    details_->clear();
    updateSummary();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showDetails(current); });
  connect(model_, &DiagnosticsModel::entryAdded, this, [this](const DiagnosticEntry& entry) {
    // Newest error first in the reader's eye: select it so its full text shows.
    QModelIndex last = model_->index(model_->rowCount() - 1, DiagnosticsModel::MessageColumn);
    if (entry.severity == Severity::Error) table_->setCurrentIndex(last);
    table_->scrollTo(last);
  });
  updateSummary();
}

QString DiagnosticsPanel::detailsText() const { return details_->toPlainText(); }

void DiagnosticsPanel::showDetails(const QModelIndex& index) {
  details_->setPlainText(index.isValid() ? index.data(DiagnosticsModel::FullMessageRole).toString() : QString());
}

}  // namespace tessel::views
