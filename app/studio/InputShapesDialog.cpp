// InputShapesDialog: the shapes of a model's open input dimensions, checked as they are typed.
#include "app/studio/InputShapesDialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tessel::studio {

namespace {

enum Column { NameColumn, TypeColumn, DeclaredColumn, ShapeColumn, ColumnCount };

QString shapeText(const std::vector<int64_t>& shape) {
  QStringList dims;
  for (int64_t d : shape) dims << QString::number(d);
  return dims.join(", ");
}

Diagnostic shapeProblem(const frontend::OnnxInputInfo& input, const std::string& message, const std::string& hint) {
  return Diagnostic{message, "input '" + input.name + "'", 0, 0, hint};
}

}  // namespace

bool hasOpenDimensions(const frontend::OnnxInputInfo& input) {
  if (!input.rankKnown) return true;
  for (int64_t d : input.shape)
    if (d < 0) return true;
  return false;
}

std::vector<frontend::OnnxInputInfo> inputsNeedingShapes(const std::vector<frontend::OnnxInputInfo>& inputs,
                                                         const InputShapes& given) {
  std::vector<frontend::OnnxInputInfo> needing;
  for (const auto& input : inputs)
    if (hasOpenDimensions(input) && !given.count(input.name)) needing.push_back(input);
  return needing;
}

InputShapes proposedShapes(const std::vector<frontend::OnnxInputInfo>& inputs, const InputShapes& given) {
  InputShapes proposed;
  for (const auto& input : inputs) {
    if (!hasOpenDimensions(input)) continue;
    if (auto found = given.find(input.name); found != given.end()) {
      proposed[input.name] = found->second;
    } else if (input.rankKnown) {
      std::vector<int64_t> shape = input.shape;
      for (int64_t& d : shape)
        if (d < 0) d = 1;  // a batch of one: what a person inspecting a model usually wants
      proposed[input.name] = shape;
    }
  }
  return proposed;
}

QString declaredShapeText(const frontend::OnnxInputInfo& input) {
  if (!input.rankKnown) return QStringLiteral("unknown rank");
  QStringList dims;
  for (int64_t d : input.shape) dims << (d < 0 ? QStringLiteral("?") : QString::number(d));
  return "[" + dims.join(", ") + "]";
}

Expected<std::vector<int64_t>> parseShapeFor(const frontend::OnnxInputInfo& input, const QString& text) {
  static const QRegularExpression separators(QStringLiteral("\\s*[,x×]\\s*|\\s+"));
  QString trimmed = text.trimmed();
  trimmed.remove(QRegularExpression(QStringLiteral("^\\[|\\]$")));
  if (trimmed.trimmed().isEmpty())
    return shapeProblem(input, "no shape given", "type its dimensions, e.g. 1, 3, 224, 224");
  std::vector<int64_t> shape;
  for (const QString& part : trimmed.trimmed().split(separators)) {
    bool ok = false;
    qlonglong d = part.toLongLong(&ok);
    if (!ok || d <= 0)
      return shapeProblem(input, "'" + part.toStdString() + "' is not a positive whole number",
                          "dimensions are positive whole numbers separated by commas, e.g. 1, 3, 224, 224");
    shape.push_back(d);
  }
  if (input.rankKnown && shape.size() != input.shape.size())
    return shapeProblem(input,
                        std::to_string(shape.size()) + " dimensions given; the model declares " +
                            std::to_string(input.shape.size()) + " " + declaredShapeText(input).toStdString(),
                        "give one size per dimension");
  if (input.rankKnown)
    for (size_t i = 0; i < shape.size(); ++i)
      if (input.shape[i] >= 0 && shape[i] != input.shape[i])
        return shapeProblem(input,
                            "dimension " + std::to_string(i) + " is " + std::to_string(shape[i]) +
                                ", but the model fixes it at " + std::to_string(input.shape[i]),
                            "only the dimensions shown as ? can be chosen");
  return shape;
}

InputShapesDialog::InputShapesDialog(const QString& modelPath, const std::vector<frontend::OnnxInputInfo>& inputs,
                                     const InputShapes& current, QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Input Shapes"));
  for (const auto& input : inputs)
    if (hasOpenDimensions(input)) inputs_.push_back(input);
  InputShapes proposed = proposedShapes(inputs, current);

  auto* layout = new QVBoxLayout(this);
  auto* explanation = new QLabel(
      tr("<b>%1</b> leaves some input dimensions open (shown as ?). Tessel compiles for fixed "
         "shapes: choose them. A project keeps them as its input shapes.")
          .arg(QFileInfo(modelPath).fileName().toHtmlEscaped()));
  explanation->setWordWrap(true);
  layout->addWidget(explanation);

  table_ = new QTableWidget(int(inputs_.size()), ColumnCount);
  table_->setHorizontalHeaderLabels({tr("Input"), tr("Type"), tr("Declared"), tr("Shape")});
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  for (int row = 0; row < int(inputs_.size()); ++row) {
    const auto& input = inputs_[size_t(row)];
    auto readOnly = [](const QString& text) {
      auto* item = new QTableWidgetItem(text);
      item->setFlags(item->flags() & ~Qt::ItemIsEditable);
      return item;
    };
    table_->setItem(row, NameColumn, readOnly(QString::fromStdString(input.name)));
    table_->setItem(row, TypeColumn, readOnly(QString::fromStdString(input.dtype.toString())));
    table_->setItem(row, DeclaredColumn, readOnly(declaredShapeText(input)));
    auto found = proposed.find(input.name);
    table_->setItem(row, ShapeColumn, new QTableWidgetItem(found == proposed.end() ? QString() : shapeText(found->second)));
  }
  layout->addWidget(table_, 1);

  problem_ = new QLabel;
  problem_->setWordWrap(true);
  problem_->setStyleSheet(QStringLiteral("color: #c0392b;"));
  layout->addWidget(problem_);

  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons_->button(QDialogButtonBox::Ok)->setText(tr("Compile"));
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons_);

  connect(table_, &QTableWidget::itemChanged, this, &InputShapesDialog::check);
  check();
  resize(560, 160 + 30 * int(inputs_.size()));
  if (!inputs_.empty()) table_->setCurrentCell(0, ShapeColumn);
}

InputShapes InputShapesDialog::shapes() const {
  InputShapes shapes;
  for (int row = 0; row < int(inputs_.size()); ++row) {
    auto shape = parseShapeFor(inputs_[size_t(row)], table_->item(row, ShapeColumn)->text());
    if (shape) shapes[inputs_[size_t(row)].name] = *shape;
  }
  return shapes;
}

bool InputShapesDialog::isComplete() const { return buttons_->button(QDialogButtonBox::Ok)->isEnabled(); }

void InputShapesDialog::check() {
  QString problem;
  for (int row = 0; row < int(inputs_.size()); ++row) {
    QTableWidgetItem* item = table_->item(row, ShapeColumn);
    if (!item) continue;
    auto shape = parseShapeFor(inputs_[size_t(row)], item->text());
    QSignalBlocker quiet(table_);  // colouring the cell is no edit
    item->setForeground(shape ? palette().color(QPalette::Text) : QColor("#c0392b"));
    item->setToolTip(shape ? QString() : QString::fromStdString(shape.error().toString()));
    if (!shape && problem.isEmpty()) problem = QString::fromStdString(shape.error().toString());
  }
  problem_->setText(problem);
  problem_->setVisible(!problem.isEmpty());
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

}  // namespace tessel::studio
