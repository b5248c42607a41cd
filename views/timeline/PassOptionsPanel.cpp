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
  for (auto& row : configRows_) delete row.container;
  rows_.clear();
  configRows_.clear();
  for (const graph::Pass& pass : passes.passes()) {
    PassRow row;
    row.name = QString::fromStdString(pass.name);
    row.minOptLevel = pass.minOptLevel;
    row.box = new QCheckBox(row.name, passArea_);
    row.box->setChecked(true);
    passArea_->layout()->addWidget(row.box);
    connect(row.box, &QCheckBox::toggled, this, &PassOptionsPanel::refresh);
    rows_.push_back(row);
    for (const graph::PassOption& option : pass.options) {
      ConfigRow config;
      config.pass = row.name;
      config.key = pass.name + "." + option.name;
      config.defaultValue = option.defaultValue;
      QString label = QString::fromStdString(option.name).replace('_', ' ');
      QString tooltip = QStringLiteral("%1\n(%2, default %3)")
                            .arg(QString::fromStdString(option.help), QString::fromStdString(config.key),
                                 QString::fromStdString(option.defaultValue));
      // Indented under its pass, like a tree, so it reads as that pass's setting.
      config.container = new QWidget(passArea_);
      auto* indent = new QHBoxLayout(config.container);
      indent->setContentsMargins(22, 0, 0, 0);
      QWidget* editor;
      bool isFlag = option.values == std::vector<std::string>{"true", "false"} ||
                    option.values == std::vector<std::string>{"false", "true"};
      if (isFlag) {
        config.flag = new QCheckBox(label, config.container);
        connect(config.flag, &QCheckBox::toggled, this, &PassOptionsPanel::refresh);
        editor = config.flag;
      } else {
        config.choice = new QComboBox(config.container);
        for (auto& value : option.values) config.choice->addItem(QString::fromStdString(value));
        connect(config.choice, &QComboBox::currentIndexChanged, this, &PassOptionsPanel::refresh);
        editor = config.choice;
      }
      editor->setToolTip(tooltip);
      indent->addWidget(editor);
      if (config.choice) indent->addStretch(1);
      passArea_->layout()->addWidget(config.container);
      config.show(option.defaultValue);
      configRows_.push_back(config);
    }
  }
  setOptions(applied_);
}

std::string PassOptionsPanel::ConfigRow::value() const {
  if (flag) return flag->isChecked() ? "true" : "false";
  return choice->currentText().toStdString();
}

void PassOptionsPanel::ConfigRow::show(const std::string& value) {
  QWidget* editor = flag ? static_cast<QWidget*>(flag) : choice;
  editor->blockSignals(true);
  if (flag) flag->setChecked(value == "true");
  else choice->setCurrentText(QString::fromStdString(value));
  editor->blockSignals(false);
}

QCheckBox* PassOptionsPanel::configCheckBox(const QString& key) const {
  for (auto& row : configRows_)
    if (QString::fromStdString(row.key) == key) return row.flag;
  return nullptr;
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
  for (auto& row : configRows_) {
    auto it = options.config.find(row.key);
    row.show(it == options.config.end() ? row.defaultValue : it->second);
  }
  refresh();
}

graph::PassOptions PassOptionsPanel::options() const {
  graph::PassOptions options = applied_;  // Keeps what this panel does not edit.
  options.optLevel = optLevel_->currentData().toInt();
  options.disabledPasses.clear();
  for (auto& row : rows_)
    if (!row.box->isChecked()) options.disabledPasses.push_back(row.name.toStdString());
  // Only what differs from the default: the config then says what the user changed.
  for (auto& row : configRows_) {
    std::string value = row.value();
    if (value == row.defaultValue) options.config.erase(row.key);
    else options.config[row.key] = value;
  }
  return options;
}

bool PassOptionsPanel::hasPendingChanges() const {
  graph::PassOptions now = options();
  auto sorted = [](std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    return names;
  };
  auto withoutDefaults = [this](std::map<std::string, std::string> config) {
    for (auto& row : configRows_)
      if (auto it = config.find(row.key); it != config.end() && it->second == row.defaultValue) config.erase(it);
    return config;
  };
  return now.optLevel != applied_.optLevel || sorted(now.disabledPasses) != sorted(applied_.disabledPasses) ||
         withoutDefaults(now.config) != withoutDefaults(applied_.config);
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
  for (auto& row : configRows_) {
    // A pass's options matter only when it runs.
    QCheckBox* pass = passCheckBox(row.pass);
    bool runs = pass && pass->isEnabled() && pass->isChecked();
    (row.flag ? static_cast<QWidget*>(row.flag) : row.choice)->setEnabled(runs);
  }
  bool pending = hasPendingChanges();
  pending_->setVisible(pending);
  apply_->setEnabled(pending);
  revert_->setEnabled(pending);
}

}  // namespace tessel::views
