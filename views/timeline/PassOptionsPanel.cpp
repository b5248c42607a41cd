// The pass options editor: opt level combo, one checkbox per pass, apply/revert.
#include "views/timeline/PassOptionsPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

#include "compiler/driver/Driver.h"

namespace tessel::views {

PassOptionsPanel::PassOptionsPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);

  auto* form = new QFormLayout;
  optLevel_ = new QComboBox(this);
  optLevel_->addItem(tr("0 — no optimization"), 0);
  optLevel_->addItem(tr("1 — basic"), 1);
  optLevel_->addItem(tr("2 — standard"), 2);
  optLevel_->addItem(tr("3 — all passes"), 3);
  optLevel_->setToolTip(tr("Passes whose minimum level is above this one do not run"));
  form->addRow(tr("Optimization level"), optLevel_);
  layout->addLayout(form);

  auto* group = new QGroupBox(tr("Passes"), this);
  auto* groupLayout = new QVBoxLayout(group);
  passArea_ = new QWidget(group);
  new QVBoxLayout(passArea_);
  passArea_->layout()->setContentsMargins(0, 0, 0, 0);
  passArea_->layout()->setSpacing(3);
  groupLayout->addWidget(passArea_);
  layout->addWidget(group);

  pending_ = new QLabel(tr("Changes not applied"), this);
  pending_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(pending_);

  auto* buttons = new QHBoxLayout;
  revert_ = new QPushButton(tr("Revert"), this);
  apply_ = new QPushButton(tr("Apply && Recompile"), this);
  apply_->setDefault(true);
  apply_->setToolTip(tr("Compile the model again with these options (in the background)"));
  buttons->addStretch(1);
  buttons->addWidget(revert_);
  buttons->addWidget(apply_);
  layout->addLayout(buttons);
  layout->addStretch(1);

  connect(optLevel_, &QComboBox::currentIndexChanged, this, &PassOptionsPanel::refresh);
  connect(apply_, &QPushButton::clicked, this, &PassOptionsPanel::apply);
  connect(revert_, &QPushButton::clicked, this, &PassOptionsPanel::revert);

  setPasses(driver::standardPasses());
}

void PassOptionsPanel::setPasses(const graph::PassManager& passes) {
  for (auto& row : rows_) delete row.box;
  rows_.clear();
  for (const graph::Pass& pass : passes.passes()) {
    PassRow row;
    row.name = QString::fromStdString(pass.name);
    row.minOptLevel = pass.minOptLevel;
    row.box = new QCheckBox(row.name, passArea_);
    row.box->setChecked(true);
    passArea_->layout()->addWidget(row.box);
    connect(row.box, &QCheckBox::toggled, this, &PassOptionsPanel::refresh);
    rows_.push_back(row);
  }
  setOptions(applied_);
}

void PassOptionsPanel::setOptions(const graph::PassOptions& options) {
  applied_ = options;
  optLevel_->blockSignals(true);
  optLevel_->setCurrentIndex(std::clamp(options.optLevel, 0, 3));
  optLevel_->blockSignals(false);
  for (auto& row : rows_) {
    bool disabled = std::find(options.disabledPasses.begin(), options.disabledPasses.end(), row.name.toStdString()) !=
                    options.disabledPasses.end();
    row.box->blockSignals(true);
    row.box->setChecked(!disabled);
    row.box->blockSignals(false);
  }
  refresh();
}

graph::PassOptions PassOptionsPanel::options() const {
  graph::PassOptions options = applied_;  // Keeps what this panel does not edit.
  options.optLevel = optLevel_->currentData().toInt();
  options.disabledPasses.clear();
  for (auto& row : rows_)
    if (!row.box->isChecked()) options.disabledPasses.push_back(row.name.toStdString());
  return options;
}

bool PassOptionsPanel::hasPendingChanges() const {
  graph::PassOptions now = options();
  auto sorted = [](std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    return names;
  };
  return now.optLevel != applied_.optLevel || sorted(now.disabledPasses) != sorted(applied_.disabledPasses);
}

QCheckBox* PassOptionsPanel::passCheckBox(const QString& name) const {
  for (auto& row : rows_)
    if (row.name == name) return row.box;
  return nullptr;
}

void PassOptionsPanel::apply() {
  applied_ = options();
  refresh();
  emit optionsChanged(applied_);
}

void PassOptionsPanel::revert() { setOptions(applied_); }

void PassOptionsPanel::refresh() {
  int level = optLevel_->currentData().toInt();
  for (auto& row : rows_) {
    // A pass above the opt level will not run whatever its box says: greyed, with the reason.
    bool belowLevel = row.minOptLevel > level;
    row.box->setEnabled(!belowLevel);
    row.box->setText(belowLevel ? tr("%1  (needs level %2)").arg(row.name).arg(row.minOptLevel) : row.name);
    row.box->setToolTip(belowLevel ? tr("Runs only at optimization level %1 or above").arg(row.minOptLevel)
                                   : tr("Uncheck to skip %1 (its snapshot stays in the timeline, marked skipped)")
                                         .arg(row.name));
  }
  bool pending = hasPendingChanges();
  pending_->setVisible(pending);
  apply_->setEnabled(pending);
  revert_->setEnabled(pending);
}

}  // namespace tessel::views
