// The pass options editor: opt level and which passes run; applying asks for a recompile.
#pragma once

#include <QWidget>

#include <vector>

#include "compiler/graph/PassManager.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;

namespace tessel::views {

/// Edits graph::PassOptions for the pipeline's passes: the opt level (0-3), a checkbox per
/// pass (unchecked: disabled by name; a pass below the opt level is shown greyed, as it will
/// not run anyway) and, under a pass, the options it declares (PassOptions::config: a
/// checkbox for a true/false option, a list for the others; only values other than the
/// default are written to the config). Edits are pending until "Apply", which emits optionsChanged (the
/// window hands them to ModelSession::recompile, which runs in the background).
class PassOptionsPanel : public QWidget {
  Q_OBJECT

public:
  /// Lists the passes of driver::standardPasses().
  explicit PassOptionsPanel(QWidget* parent = nullptr);

  /// Lists the passes of `passes` instead (their names and minimum opt levels).
  void setPasses(const graph::PassManager& passes);
  /// Shows `options` (what the open model was compiled with); nothing pending afterwards.
  void setOptions(const graph::PassOptions& options);
  /// What the widgets say now, applied or not.
  graph::PassOptions options() const;
  /// Whether the widgets differ from the last setOptions/apply.
  bool hasPendingChanges() const;

  /// Emits optionsChanged(options()) and makes them the applied ones.
  void apply();
  /// Back to the applied options.
  void revert();

  QComboBox* optLevelBox() const { return optLevel_; }
  /// The checkbox of pass `name`, or null.
  QCheckBox* passCheckBox(const QString& name) const;
  QPushButton* applyButton() const { return apply_; }
  /// The checkbox of a true/false pass option ("AlterLayout.blocked_activations"), or null.
  QCheckBox* configCheckBox(const QString& key) const;

signals:
  void optionsChanged(const tessel::graph::PassOptions& options);

private:
  struct PassRow {
    QString name;
    int minOptLevel = 0;
    QCheckBox* box = nullptr;
  };
  struct ConfigRow {
    QString pass;
    std::string key;           ///< "AlterLayout.blocked_activations".
    std::string defaultValue;
    QWidget* container = nullptr;  ///< The indented row holding the editor.
    QCheckBox* flag = nullptr;    ///< For a true/false option.
    QComboBox* choice = nullptr;  ///< For any other.
    std::string value() const;
    void show(const std::string& value);
  };
  void refresh();

  QComboBox* optLevel_;
  QWidget* passArea_;
  std::vector<PassRow> rows_;
  std::vector<ConfigRow> configRows_;
  QLabel* pending_;
  QPushButton* apply_;
  QPushButton* revert_;
  graph::PassOptions applied_;
};

}  // namespace tessel::views
