// Models whose file leaves input dimensions open (a dynamic batch, as PyTorch exports them):
// the shape text is checked, the Studio asks before compiling (or takes the project's
// shapes), a cancelled question keeps the open model, and Build > Input Shapes recompiles.
#include <QtTest>

#include <QTableWidget>

#include "StudioTestSupport.h"
#include "app/project/Project.h"
#include "app/studio/InputShapesDialog.h"
#include "app/studio/MainWindow.h"

using namespace tessel;
using namespace tessel::studio;
using testing::example;

namespace {

const QString kDynamicModel = example("tiny_resnet_dynamic_batch.onnx");

std::vector<frontend::OnnxInputInfo> dynamicInputs() {
  auto inputs = frontend::readOnnxInputs(kDynamicModel.toStdString());
  if (!inputs) qFatal("%s", inputs.error().toString().c_str());
  return *inputs;
}

std::vector<int64_t> compiledInputShape(MainWindow& window) {
  return window.session().compiledModel()->optimized.inputs.at(0).type().shape;
}

/// Answers the shapes question with `answer` (nullopt: cancel) and counts the questions.
struct ShapesAnswer {
  std::optional<InputShapes> answer;
  int asked = 0;
  InputShapes lastProposed;
  MainWindow::InputShapesPrompt prompt() {
    return [this](const QString&, const std::vector<frontend::OnnxInputInfo>&, const InputShapes& proposed) {
      ++asked;
      lastProposed = proposed;
      return answer;
    };
  }
};

}  // namespace

class TestInputShapes : public QObject {
  Q_OBJECT

  QTemporaryDir settingsDir_;

private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_); }
  void init() { testing::clearSettings(); }

  void shapeTextIsCheckedAgainstTheDeclaredShape_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("problem");  // empty: accepted
    QTest::newRow("commas") << "2, 3, 32, 32" << "";
    QTest::newRow("times") << "4x3x32x32" << "";
    QTest::newRow("brackets") << "[8, 3, 32, 32]" << "";
    QTest::newRow("fixed dimension changed") << "2, 4, 32, 32" << "fixes it at 3";
    QTest::newRow("rank") << "2, 3, 32" << "3 dimensions given; the model declares 4 [?, 3, 32, 32]";
    QTest::newRow("zero") << "0, 3, 32, 32" << "'0' is not a positive whole number";
    QTest::newRow("word") << "batch, 3, 32, 32" << "'batch' is not a positive whole number";
    QTest::newRow("empty") << "  " << "no shape given";
  }
  void shapeTextIsCheckedAgainstTheDeclaredShape() {
    QFETCH(QString, text);
    QFETCH(QString, problem);
    const frontend::OnnxInputInfo image = dynamicInputs().at(0);
    QCOMPARE(declaredShapeText(image), QString("[?, 3, 32, 32]"));
    auto shape = parseShapeFor(image, text);
    if (problem.isEmpty()) {
      QVERIFY2(shape.ok(), shape.ok() ? "" : shape.error().toString().c_str());
      QCOMPARE(shape->size(), size_t(4));
    } else {
      QVERIFY(!shape.ok());
      QString message = QString::fromStdString(shape.error().toString());
      QVERIFY2(message.contains(problem) && message.contains("input 'image'"), qPrintable(message));
    }
  }

  void onlyOpenInputsAreAskedForWithABatchOfOneProposed() {
    auto inputs = dynamicInputs();
    QCOMPARE(inputsNeedingShapes(inputs, {}).size(), size_t(1));
    QVERIFY(inputsNeedingShapes(inputs, {{"image", {2, 3, 32, 32}}}).empty());
    QCOMPARE(proposedShapes(inputs, {}), (InputShapes{{"image", {1, 3, 32, 32}}}));
    QCOMPARE(proposedShapes(inputs, {{"image", {5, 3, 32, 32}}}), (InputShapes{{"image", {5, 3, 32, 32}}}));
    auto fixed = frontend::readOnnxInputs(example("tiny_resnet.onnx").toStdString());
    QVERIFY(fixed.ok());
    QVERIFY(inputsNeedingShapes(*fixed, {}).empty());
    QVERIFY(proposedShapes(*fixed, {}).empty());
  }

  void theDialogChecksAsYouType() {
    InputShapesDialog dialog(kDynamicModel, dynamicInputs(), {});
    QTableWidget* table = dialog.table();
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(table->item(0, 0)->text(), QString("image"));
    QCOMPARE(table->item(0, 3)->text(), QString("1, 3, 32, 32"));
    QVERIFY(dialog.isComplete());
    table->item(0, 3)->setText("2, 4, 32, 32");
    QVERIFY(!dialog.isComplete());
    // For a person to look at: the dialog with the problem shown.
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    dialog.grab().save(TESSEL_BINARY_DIR "/input_shapes_dialog.png");
    table->item(0, 3)->setText("2, 3, 32, 32");
    QVERIFY(dialog.isComplete());
    QCOMPARE(dialog.shapes(), (InputShapes{{"image", {2, 3, 32, 32}}}));
  }

  void openingAsksAndTheProjectKeepsTheAnswer() {
    QTemporaryDir dir;
    MainWindow window;
    ShapesAnswer answer{InputShapes{{"image", {2, 3, 32, 32}}}};
    window.setInputShapesPrompt(answer.prompt());
    QVERIFY(testing::openAndWait(window, kDynamicModel));
    QCOMPARE(answer.asked, 1);
    QCOMPARE(answer.lastProposed, (InputShapes{{"image", {1, 3, 32, 32}}}));
    QCOMPARE(compiledInputShape(window), (std::vector<int64_t>{2, 3, 32, 32}));
    // Saved as a project, the shapes go with it, and opening it asks nothing.
    QString path = dir.filePath("dynamic.tessel");
    window.projects().setSaveAsPrompt([&](const QString&) { return path; });
    window.studioAction("actionSave")->trigger();
    auto saved = project::loadProject(path.toStdString());
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().toString().c_str());
    QCOMPARE(saved->inputShapes, (InputShapes{{"image", {2, 3, 32, 32}}}));
    MainWindow again;
    ShapesAnswer none{std::nullopt};
    again.setInputShapesPrompt(none.prompt());
    QVERIFY(testing::openAndWait(again, path));
    QCOMPARE(none.asked, 0);
    QCOMPARE(compiledInputShape(again), (std::vector<int64_t>{2, 3, 32, 32}));
  }

  void cancellingTheQuestionKeepsTheOpenModel() {
    MainWindow window;
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    ShapesAnswer cancel{std::nullopt};
    window.setInputShapesPrompt(cancel.prompt());
    QSignalSpy failed(&window, &MainWindow::openFailed);
    window.openFile(kDynamicModel);
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 60000);
    QTRY_VERIFY(window.isIdle());
    QCOMPARE(cancel.asked, 1);
    QVERIFY(failed.at(0).at(1).toString().contains("need shapes"));
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(example("tiny_resnet.onnx")));
    QCOMPARE(compiledInputShape(window), (std::vector<int64_t>{1, 3, 32, 32}));
  }

  void inputShapesActionRecompilesWithNewShapes() {
    MainWindow window;
    ShapesAnswer answer{InputShapes{{"image", {1, 3, 32, 32}}}};
    window.setInputShapesPrompt(answer.prompt());
    QVERIFY(testing::openAndWait(window, kDynamicModel));
    QVERIFY(!window.isWindowModified());
    answer.answer = InputShapes{{"image", {4, 3, 32, 32}}};
    QSignalSpy opened(&window, &MainWindow::fileOpened);
    window.studioAction("actionInputShapes")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(opened.count() == 1 && window.isIdle(), 60000);
    QCOMPARE(answer.asked, 2);
    // The question starts from the shapes in use.
    QCOMPARE(answer.lastProposed, (InputShapes{{"image", {1, 3, 32, 32}}}));
    QCOMPARE(compiledInputShape(window), (std::vector<int64_t>{4, 3, 32, 32}));
    QCOMPARE(window.projects().project()->inputShapes, (InputShapes{{"image", {4, 3, 32, 32}}}));
    QVERIFY(window.isWindowModified());
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(kDynamicModel));
  }
};

QTEST_MAIN(TestInputShapes)
#include "test_input_shapes.moc"
