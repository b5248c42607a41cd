// Asking for the shapes a model's file leaves open (a dynamic batch dimension, as PyTorch
// usually exports one) before the model is compiled: the compiler needs every dimension.
#pragma once

#include <QDialog>
#include <QString>

#include <map>
#include <string>
#include <vector>

#include "compiler/frontend/onnx/OnnxImporter.h"
#include "core/support/Error.h"

class QDialogButtonBox;
class QLabel;
class QTableWidget;

namespace tessel::studio {

/// Shapes by input name, as driver::LoadOptions::inputShapes and a project's input_shapes.
using InputShapes = std::map<std::string, std::vector<int64_t>>;

/// Whether `input`'s declared shape leaves something open (a dynamic dimension, or no rank).
bool hasOpenDimensions(const frontend::OnnxInputInfo& input);
/// The inputs with open dimensions that `given` has no shape for: what must be asked.
std::vector<frontend::OnnxInputInfo> inputsNeedingShapes(const std::vector<frontend::OnnxInputInfo>& inputs,
                                                         const InputShapes& given);
/// For every input with open dimensions: its shape in `given`, else the declared shape with
/// each dynamic dimension 1 (an input of unknown rank gets none: it must be typed).
InputShapes proposedShapes(const std::vector<frontend::OnnxInputInfo>& inputs, const InputShapes& given);

/// "[batch, 3, 32, 32]"-style text of a declared shape ("?" for each dynamic dimension).
QString declaredShapeText(const frontend::OnnxInputInfo& input);
/// Reads a shape typed for `input` ("1, 3, 224, 224" or "1x3x224x224"): every dimension a
/// positive whole number, the declared rank, and the declared size wherever it is fixed. A
/// Diagnostic says what is wrong.
Expected<std::vector<int64_t>> parseShapeFor(const frontend::OnnxInputInfo& input, const QString& text);

/// A table of the inputs with open dimensions, one editable shape each, checked as it is
/// typed (OK stays disabled while a shape is wrong, and the line under the table says why).
class InputShapesDialog : public QDialog {
  Q_OBJECT

public:
  /// Lists `inputs`' open ones, each starting from proposedShapes(inputs, current).
  InputShapesDialog(const QString& modelPath, const std::vector<frontend::OnnxInputInfo>& inputs,
                    const InputShapes& current, QWidget* parent = nullptr);

  /// The shapes as typed; complete and valid once the dialog was accepted.
  InputShapes shapes() const;
  /// Whether every shape typed is valid (what enables OK).
  bool isComplete() const;

  QTableWidget* table() const { return table_; }

private:
  void check();

  std::vector<frontend::OnnxInputInfo> inputs_;  // the listed ones, in table order
  QTableWidget* table_;
  QLabel* problem_;
  QDialogButtonBox* buttons_;
};

}  // namespace tessel::studio
