// The schedule workbench driven as a user would: typing schedule text with key events, seeing
// the diagnostic at the right place, the loop nest following the fix, completion, per-task
// undo/redo, reset, and the links between schedule lines and loops.
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QCompleter>
#include <QLabel>
#include <QPlainTextEdit>
#include <QStringListModel>
#include <QTableView>
#include <QTextBlock>
#include <QToolTip>

#include "compiler/driver/ScheduleTask.h"
#include "core/ir/IRPrinter.h"
#include "views/common/Theme.h"
#include "views/schedule/IterationOrderView.h"
#include "views/schedule/LoweringPanel.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/ScheduleDiff.h"
#include "views/schedule/ScheduleEditor.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/schedule/TaskListModel.h"

using namespace tessel;
using namespace tessel::views;

namespace {

std::shared_ptr<const driver::CompiledModel> exampleModel() {
  static std::shared_ptr<const driver::CompiledModel> model = [] {
    auto graph = driver::loadModel(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
    if (!graph) qFatal("%s", graph.error().toString().c_str());
    auto compiled = driver::compileGraph(*graph);
    if (!compiled) qFatal("%s", compiled.error().toString().c_str());
    return std::make_shared<const driver::CompiledModel>(std::move(*compiled));
  }();
  return model;
}

const std::vector<driver::ScheduleTask>& exampleTasks() {
  static std::vector<driver::ScheduleTask> tasks = *driver::extractTasks(*exampleModel());
  return tasks;
}

/// The task's output stage and its first axis of at least 4 iterations (a split by 2 keeps
/// both loops in the lowered code).
std::pair<QString, QString> splittable(const driver::ScheduleTask& task) {
  const te::Operation& op = task.workload.outputs.front().op();
  for (const IterVar& axis : te::asCompute(op)->axes) {
    auto* extent = axis.dom().extent.as<IntImmNode>();
    if (extent && extent->value >= 4) return {QString::fromStdString(op.name()), QString::fromStdString(axis.name())};
  }
  qFatal("no splittable axis");
}

/// Waits for the next lowering of the open task and returns whether it succeeded.
bool waitForLowering(ScheduleWorkbench& workbench) {
  QSignalSpy finished(&workbench, &ScheduleWorkbench::loweringFinished);
  if (!finished.wait(30000)) qFatal("no lowering arrived");
  return finished.last().at(1).toBool();
}

/// Replaces the editor's text by typing: select all, delete, type each line (hiding the
/// completion popup before Return, as a user would press Escape).
void typeSchedule(ScheduleEditor* editor, const QStringList& lines) {
  QTest::keyClick(editor, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClick(editor, Qt::Key_Delete);
  for (int i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      editor->completer()->popup()->hide();
      QTest::keyClick(editor, Qt::Key_Return);
    }
    QTest::keyClicks(editor, lines[i]);
  }
  editor->completer()->popup()->hide();
}

/// Puts the editor's cursor at the start of `line` (1-based).
void moveCursorToLine(QPlainTextEdit* view, int line) {
  QTextCursor cursor(view->document()->findBlockByNumber(line - 1));
  view->setTextCursor(cursor);
}

int lineContaining(const QString& text, const QString& needle) {
  QStringList lines = text.split('\n');
  for (int i = 0; i < lines.size(); ++i)
    if (lines[i].contains(needle)) return i;
  return -1;
}

}  // namespace

class TestScheduleWorkbench : public QObject {
  Q_OBJECT

  std::unique_ptr<ScheduleWorkbench> workbench;

  /// A workbench showing the example model's tasks with the first one open and lowered.
  void openFirstTask() {
    workbench = std::make_unique<ScheduleWorkbench>();
    workbench->resize(1500, 820);
    workbench->show();
    QSignalSpy ready(workbench.get(), &ScheduleWorkbench::tasksReady);
    QSignalSpy lowered(workbench.get(), &ScheduleWorkbench::loweringFinished);
    workbench->setModel(exampleModel());
    QVERIFY(ready.wait(30000));
    QCOMPARE(workbench->taskNames().size(), qsizetype(exampleTasks().size()));
    QCOMPARE(workbench->currentTaskName(), QString::fromStdString(exampleTasks().front().name));
    QVERIFY(lowered.wait(30000));
    QVERIFY(lowered.last().at(1).toBool());
  }

private slots:
  void init() { openFirstTask(); }
  void cleanup() { workbench.reset(); }

  void opensWithTheDefaultScheduleLowered() {
    const auto& task = exampleTasks().front();
    QCOMPARE(workbench->editor()->toPlainText(), QString::fromStdString(task.defaultTraceText()));
    // What the panel shows is the compiled kernel's loop nest.
    QCOMPARE(workbench->loweringPanel()->loopNestView()->toPlainText(),
             QString::fromStdString(toString(exampleModel()->kernels.front().function)));
    QVERIFY(!workbench->loweringPanel()->isStale());
    QVERIFY(workbench->editedSchedules().empty());
  }

  void badAxisIsMarkedThenTheFixShowsTheSplitLoops() {
    auto [stage, axis] = splittable(exampleTasks().front());
    ScheduleEditor* editor = workbench->editor();
    QString goodNest = workbench->loweringPanel()->loopNestView()->toPlainText();

    // A loop name the stage does not have, on the second line.
    typeSchedule(editor, {"# try a split", "outer, inner = split(" + stage + ", bogus, factor=2)"});
    QVERIFY(!waitForLowering(*workbench));
    QVERIFY(editor->diagnostic());
    QCOMPARE(editor->diagnostic()->line, 2);
    QCOMPARE(editor->diagnostic()->column, int(QString("outer, inner = ").size()) + 1);
    // The squiggle marks the unknown name itself.
    auto [start, end] = editor->diagnosticRange();
    QTextBlock second = editor->document()->findBlockByNumber(1);
    QCOMPARE(second.text().mid(start - second.position(), end - start), QString("bogus"));
    // Hovering the squiggle shows the message.
    QTextCursor atError(editor->document());
    atError.setPosition(start + 1);
    QPoint inViewport = editor->cursorRect(atError).center();
    QHelpEvent hover(QEvent::ToolTip, editor->viewport()->mapTo(editor, inViewport),
                     editor->viewport()->mapToGlobal(inViewport));
    QCoreApplication::sendEvent(editor, &hover);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().contains("no loop named 'bogus'"), qPrintable(QToolTip::text()));
    QToolTip::hideText();
    QVERIFY2(workbench->messageLine()->text().contains("bogus"), qPrintable(workbench->messageLine()->text()));
    QVERIFY(workbench->messageLine()->text().startsWith("Line 2, column 16"));
    // The last good code stays, greyed out.
    QVERIFY(workbench->loweringPanel()->isStale());
    QCOMPARE(workbench->loweringPanel()->loopNestView()->toPlainText(), goodNest);

    // Fix it: the squiggle goes, and the loop nest has the two loops of the split.
    typeSchedule(editor, {"# try a split", "outer, inner = split(" + stage + ", " + axis + ", factor=2)"});
    QVERIFY(waitForLowering(*workbench));
    QVERIFY(!editor->diagnostic());
    QCOMPARE(editor->diagnosticRange().first, -1);
    QVERIFY(!workbench->loweringPanel()->isStale());
    QString nest = workbench->loweringPanel()->loopNestView()->toPlainText();
    QVERIFY2(nest.contains("for (inner, 0, 2)"), qPrintable(nest));
    QVERIFY(nest.contains("for (outer, 0, "));
    QVERIFY(workbench->messageLine()->text().startsWith("Lowered in"));

    // The edit is reported for the project and marked in the task list.
    QString name = workbench->currentTaskName();
    QCOMPARE(workbench->editedSchedules().count(name), size_t(1));
    QVERIFY(workbench->taskModel()->isEdited(name));
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench.png");
  }

  void errorScreenshot() {
    auto [stage, axis] = splittable(exampleTasks().front());
    typeSchedule(workbench->editor(), {"# loops of " + stage, "outer, inner = split(" + stage + ", bogus, factor=2)"});
    QVERIFY(!waitForLowering(*workbench));
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench_error.png");
  }

  void scheduleEditedIsReportedAfterTheTypingPause() {
    QSignalSpy edited(workbench.get(), &ScheduleWorkbench::scheduleEdited);
    QTest::keyClicks(workbench->editor(), "# note");
    QCOMPARE(edited.count(), 0);  // not on every keystroke
    QVERIFY(edited.wait(5000));
    QCOMPARE(edited.count(), 1);
    QCOMPARE(edited.last().at(0).toString(), workbench->currentTaskName());
    QVERIFY(edited.last().at(1).toString().startsWith("# note"));
  }

  void completionOffersTheStagesLoops() {
    auto [stage, axis] = splittable(exampleTasks().front());
    ScheduleEditor* editor = workbench->editor();
    QTest::keyClick(editor, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(editor, Qt::Key_Delete);
    QTest::keyClicks(editor, "vec");
    QVERIFY(editor->completer()->popup()->isVisible());
    auto* model = qobject_cast<QStringListModel*>(editor->completer()->model());
    QVERIFY(model);
    QCOMPARE(model->stringList(), QStringList{"vectorize"});
    // Accepting inserts the rest of the name.
    QTest::keyClick(editor->completer()->popup(), Qt::Key_Return);
    QCOMPARE(editor->toPlainText(), QString("vectorize"));

    QTest::keyClicks(editor, "(" + stage + ", ");
    QVERIFY(editor->completer()->popup()->isVisible());
    // The stage's loops before any primitive: the operator's axes, outermost first.
    QStringList expected;
    auto lowering = workbench->currentLowering();
    for (auto& loops : lowering->initialStages)
      if (QString::fromStdString(loops.stage) == stage)
        for (auto& loop : loops.loops) expected << QString::fromStdString(loop);
    QVERIFY(expected.contains(axis));
    QCOMPARE(model->stringList(), expected);
  }

  void completionSeesLoopsCreatedByEarlierLines() {
    auto [stage, axis] = splittable(exampleTasks().front());
    ScheduleEditor* editor = workbench->editor();
    typeSchedule(editor, {"outer, inner = split(" + stage + ", " + axis + ", factor=2)"});
    QVERIFY(waitForLowering(*workbench));
    editor->moveCursor(QTextCursor::End);
    QTest::keyClick(editor, Qt::Key_Return);
    QTest::keyClicks(editor, "unroll(" + stage + ", in");
    QVERIFY(editor->completer()->popup()->isVisible());
    auto* model = qobject_cast<QStringListModel*>(editor->completer()->model());
    QCOMPARE(model->stringList(), QStringList{"inner"});
  }

  void undoAndRedoArePerTask() {
    QStringList names = workbench->taskNames();
    QVERIFY(names.size() >= 2);
    ScheduleEditor* editor = workbench->editor();
    QString firstDefault = editor->toPlainText();
    editor->moveCursor(QTextCursor::End);
    QTest::keyClicks(editor, "# first");
    QVERIFY(workbench->openTask(names[1]));
    QString secondDefault = editor->toPlainText();
    editor->moveCursor(QTextCursor::End);
    QTest::keyClicks(editor, "# second");

    QVERIFY(workbench->openTask(names[0]));
    QCOMPARE(editor->toPlainText(), firstDefault + "# first");
    QTest::keyClick(editor, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(editor->toPlainText(), firstDefault);
    QTest::keyClick(editor, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(editor->toPlainText(), firstDefault + "# first");

    // The other task's history is its own.
    QVERIFY(workbench->openTask(names[1]));
    QCOMPARE(editor->toPlainText(), secondDefault + "# second");
    workbench->undo();
    QCOMPARE(editor->toPlainText(), secondDefault);
    QCOMPARE(workbench->scheduleText(names[0]), firstDefault + "# first");
  }

  void resetToDefaultIsUndoable() {
    QString name = workbench->currentTaskName();
    ScheduleEditor* editor = workbench->editor();
    QString original = editor->toPlainText();
    typeSchedule(editor, {"# nothing scheduled"});
    QVERIFY(workbench->taskModel()->isEdited(name));
    workbench->resetToDefault();
    QCOMPARE(editor->toPlainText(), original);
    QVERIFY(!workbench->taskModel()->isEdited(name));
    workbench->undo();
    QCOMPARE(editor->toPlainText(), QString("# nothing scheduled"));
    QVERIFY(workbench->taskModel()->isEdited(name));
  }

  // The gutter marks the lines that differ from the task's default schedule: none for the
  // default itself, a line changed in place, and an added one; comments never.
  void theGutterMarksWhatDiffersFromTheDefault() {
    ScheduleEditor* editor = workbench->editor();
    QCOMPARE(editor->linesChangedFromReference(), QList<int>{});
    QStringList lines = editor->toPlainText().split('\n');
    QVERIFY(lines.size() >= 2);
    auto [stage, axis] = splittable(exampleTasks().front());
    lines[0] = lines[0] + "  ";  // only spacing: not a change
    lines[1] = "# a note";
    lines << QString("xo, xi = split(%1, %2, factor=2)").arg(stage, axis);
    typeSchedule(editor, lines);
    QCOMPARE(editor->linesChangedFromReference(), QList<int>{int(lines.size())});
    workbench->resetToDefault();
    QCOMPARE(editor->linesChangedFromReference(), QList<int>{});
  }

  // The diff tab aligns the text with the default line against line: a primitive inserted in
  // the middle leaves the lines after it paired, an edited factor is one changed row, and a
  // removed line leaves a gap opposite.
  void theDiffTabAlignsTheScheduleWithTheDefault() {
    const QStringList before = {"# default", "a, b = split(C, i, factor=8)", "reorder(C, a, j, b)", "vectorize(C, b)"};
    const QStringList after = {"# default", "a, b = split(C, i, factor=16)", "parallel(C, a)", "reorder(C, a, j, b)"};
    QCOMPARE(diffRowsText(sideBySideDiff(before, after), before, after),
             QString("# default | # default\n"
                     "~ a, b = split(C, i, factor=8) | a, b = split(C, i, factor=16)\n"
                     "+ | parallel(C, a)\n"
                     "reorder(C, a, j, b) | reorder(C, a, j, b)\n"
                     "- vectorize(C, b) |"));
    QCOMPARE(diffRowsText(sideBySideDiff({}, {"x"}), {}, {"x"}), QString("+ | x"));
    QCOMPARE(sideBySideDiff({" a "}, {"a"}).front().kind, DiffRow::Kind::Same);

    // In the workbench: the open task against its default, following every edit.
    ScheduleDiffView* diff = workbench->diffView();
    QVERIFY(diff);
    QVERIFY2(diff->summary().contains("same primitives"), qPrintable(diff->summary()));
    ScheduleEditor* editor = workbench->editor();
    QStringList lines = editor->toPlainText().split('\n');
    auto [stage, axis] = splittable(exampleTasks().front());
    lines << QString("xo, xi = split(%1, %2, factor=2)").arg(stage, axis);
    typeSchedule(editor, lines);
    QTRY_VERIFY2(diff->summary().startsWith("1 added"), qPrintable(diff->summary()));
    QCOMPARE(diff->rows().back().kind, DiffRow::Kind::Added);
    QVERIFY(diff->rightPane()->toPlainText().contains(QString("factor=2")));
    QVERIFY(!diff->leftPane()->toPlainText().contains(QString("factor=2")));
    // The panes have as many lines as rows: gaps keep them aligned.
    QCOMPARE(diff->leftPane()->document()->blockCount(), int(diff->rows().size()));
    QCOMPARE(diff->rightPane()->document()->blockCount(), int(diff->rows().size()));
    workbench->showDiffAgainstDefault();
    QCOMPARE(workbench->toolTabs()->currentWidget(), static_cast<QWidget*>(diff));
    workbench->resetToDefault();
    QTRY_VERIFY2(diff->summary().contains("same primitives"), qPrintable(diff->summary()));
  }

  void scheduleLineHighlightsItsLoopsAndBack() {
    auto [stage, axis] = splittable(exampleTasks().front());
    ScheduleEditor* editor = workbench->editor();
    typeSchedule(editor, {"# split", "outer, inner = split(" + stage + ", " + axis + ", factor=2)",
                          "parallel(" + stage + ", outer)"});
    QVERIFY(waitForLowering(*workbench));
    LoweringPanel* panel = workbench->loweringPanel();
    QString nest = panel->loopNestView()->toPlainText();
    int outerLine = lineContaining(nest, "for (outer, ");
    int innerLine = lineContaining(nest, "for (inner, ");
    QVERIFY2(outerLine >= 0 && innerLine > outerLine, qPrintable(nest));
    QStringList lines = nest.split('\n');

    // Cursor on the split line: the two loops it made are highlighted, no other.
    moveCursorToLine(editor, 2);
    QCOMPARE(panel->highlightedLoopHeaders(), (QList<int>{outerLine, innerLine}));
    // The parallel line links to the loop it runs in parallel.
    moveCursorToLine(editor, 3);
    QCOMPARE(panel->highlightedLoopHeaders(), QList<int>{outerLine});
    // A comment line links to nothing.
    moveCursorToLine(editor, 1);
    QVERIFY(panel->highlightedLoopHeaders().isEmpty());

    // Pointing at the inner loop in the loop nest marks the line that made it.
    moveCursorToLine(panel->loopNestView(), innerLine + 1);
    QCOMPARE(editor->linkedLines(), QList<int>{2});
    // An axis of the operator itself came from no line.
    int operatorLoop = -1;
    for (int i = 0; i < lines.size(); ++i)
      if (lines[i].contains("for (") && !lines[i].contains("for (outer,") && !lines[i].contains("for (inner,")) operatorLoop = i;
    QVERIFY(operatorLoop >= 0);
    moveCursorToLine(panel->loopNestView(), operatorLoop + 1);
    QVERIFY(editor->linkedLines().isEmpty());
    moveCursorToLine(editor, 2);
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench_linking.png");
  }

  void generatedCodeIsEmittedForItsTabAndLinked() {
    // The default schedule of a convolution runs its rows in parallel: its outlined function
    // is the code linked to the parallel line.
    const auto& task = exampleTasks().front();
    int parallelLine = 0;
    for (auto& p : task.defaultTrace.primitives)
      if (p.kind == PrimitiveKind::Parallel) {
        parallelLine = &p - task.defaultTrace.primitives.data() + 1;
        break;
      }
    if (parallelLine == 0) QSKIP("the default schedule runs nothing in parallel on this machine (one thread)");
    LoweringPanel* panel = workbench->loweringPanel();
    QVERIFY(panel->llvmView()->toPlainText().contains("emitted while this tab is open"));
    QSignalSpy finished(workbench.get(), &ScheduleWorkbench::loweringFinished);
    panel->setCurrentTab(LoweringPanel::Tab::LlvmIR);
    QVERIFY(finished.wait(30000));
    QString llvm = panel->llvmView()->toPlainText();
    QVERIFY(llvm.contains("define"));
    moveCursorToLine(workbench->editor(), parallelLine);
    QList<QTextEdit::ExtraSelection> marked = panel->llvmView()->extraSelections();
    QVERIFY(!marked.isEmpty());
    // The parallel loop is outlined into "<kernel>_parallel_<k>"; its definition is marked.
    QString function = "@" + workbench->currentTaskName() + "_parallel_";
    QStringList markedDefinitions;
    for (auto& selection : marked)
      if (selection.cursor.block().text().startsWith("define")) markedDefinitions << selection.cursor.block().text();
    QVERIFY(!markedDefinitions.isEmpty());
    for (auto& definition : markedDefinitions) QVERIFY2(definition.contains(function), qPrintable(definition));

    panel->setCurrentTab(LoweringPanel::Tab::Assembly);
    QVERIFY(finished.wait(30000));
    QVERIFY(panel->assemblyView()->toPlainText().contains(workbench->currentTaskName() + ":"));
    moveCursorToLine(workbench->editor(), 1);
    moveCursorToLine(workbench->editor(), parallelLine);
    QVERIFY(!panel->assemblyView()->extraSelections().isEmpty());
    // Pointing into an outlined parallel function marks the line that made its loop: the
    // convolution's rows come from a fuse line; the padding's channel axis from no line.
    QStringList llvmLines = llvm.split('\n');
    QStringList linkedTexts;
    for (int i = 0; i < llvmLines.size(); ++i) {
      if (!llvmLines[i].startsWith("define") || !llvmLines[i].contains(function)) continue;
      moveCursorToLine(panel->llvmView(), i + 2);
      for (int line : workbench->editor()->linkedLines())
        linkedTexts << workbench->editor()->document()->findBlockByNumber(line - 1).text();
    }
    QVERIFY(!linkedTexts.isEmpty());
    for (const QString& text : linkedTexts) QVERIFY2(text.startsWith("rows = fuse("), qPrintable(text));

    // Back to the LLVM IR: it was kept, nothing is emitted again.
    int lowerings = finished.count();
    panel->setCurrentTab(LoweringPanel::Tab::LlvmIR);
    QTest::qWait(100);
    QCOMPARE(finished.count(), lowerings);
    QCOMPARE(panel->llvmView()->toPlainText(), llvm);
    moveCursorToLine(workbench->editor(), 1);
    moveCursorToLine(workbench->editor(), parallelLine);
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench_llvm.png");
  }

  // The GPU tab lowers the same schedule for a GPU target and shows its device code, for the
  // target chosen: a CPU schedule's parallel() is refused there at its line; without it the
  // kernels run in one thread, and the code says so; bind() spreads them over threads.
  void gpuTabShowsTheDeviceCode() {
    LoweringPanel* panel = workbench->loweringPanel();
    QSignalSpy finished(workbench.get(), &ScheduleWorkbench::loweringFinished);
    panel->gpuTargetSelector()->setCurrentIndex(0);
    panel->setCurrentTab(LoweringPanel::Tab::Gpu);
    QVERIFY(finished.wait(30000));
    bool parallel = false;
    for (auto& p : exampleTasks().front().defaultTrace.primitives) parallel |= p.kind == PrimitiveKind::Parallel;
    if (parallel) {
      QString refused = panel->gpuView()->toPlainText();
      QVERIFY2(refused.startsWith("// This schedule does not lower for opencl") && refused.contains("bind it"),
               qPrintable(refused.left(400)));
    }

    auto [stage, axis] = splittable(exampleTasks().front());
    typeSchedule(workbench->editor(), {"# no schedule"});
    QVERIFY(waitForLowering(*workbench));
    QString opencl = panel->gpuView()->toPlainText();
    QVERIFY2(opencl.contains("__kernel void") && opencl.contains("No loop is bound to GPU threads"),
             qPrintable(opencl.left(400)));

    typeSchedule(workbench->editor(), {"bind(" + stage + ", " + axis + ", \"threadIdx.x\")"});
    QVERIFY(waitForLowering(*workbench));
    QString bound = panel->gpuView()->toPlainText();
    QVERIFY2(bound.contains("get_local_id(0)") && !bound.contains("No loop is bound"), qPrintable(bound.left(600)));

    panel->gpuTargetSelector()->setCurrentIndex(2);
    QVERIFY(finished.wait(30000));
    QString cuda = panel->gpuView()->toPlainText();
    QVERIFY2(cuda.contains("__global__ void") && cuda.contains("threadIdx.x") && cuda.contains("for cuda -arch=sm_90"),
             qPrintable(cuda.left(600)));
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench_gpu.png");
    panel->setCurrentTab(LoweringPanel::Tab::LoopNest);
  }

  void stepsShowTheIRAfterEachStep() {
    LoweringPanel* panel = workbench->loweringPanel();
    auto lowering = workbench->currentLowering();
    QCOMPARE(panel->stepSelector()->count(), int(lowering->steps.size()));
    panel->setCurrentTab(LoweringPanel::Tab::Steps);
    panel->stepSelector()->setCurrentIndex(0);
    auto* stepText = panel->findChild<QPlainTextEdit*>("stepText");
    QCOMPARE(stepText->toPlainText(), QString::fromStdString(lowering->steps.front().text));
    QCOMPARE(panel->changedStepLineCount(), 0);
    panel->stepSelector()->setCurrentIndex(panel->stepSelector()->count() - 1);
    QCOMPARE(stepText->toPlainText(), QString::fromStdString(lowering->loopNest));
    // A step that left the IR as it was marks nothing; the steps that rewrote it mark lines.
    int stepsWithChanges = 0;
    for (int i = 1; i < panel->stepSelector()->count(); ++i) {
      panel->stepSelector()->setCurrentIndex(i);
      if (lowering->steps[size_t(i)].text == lowering->steps[size_t(i) - 1].text)
        QCOMPARE(panel->changedStepLineCount(), 0);
      if (panel->changedStepLineCount() > 0) ++stepsWithChanges;
      QCOMPARE(stepText->extraSelections().size(), panel->changedStepLineCount());
    }
    QVERIFY(stepsWithChanges > 0);
    panel->stepSelector()->setCurrentIndex(1);
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench_steps.png");
  }

  void projectTextIsLoadedWithoutBeingReportedBack() {
    QSignalSpy edited(workbench.get(), &ScheduleWorkbench::scheduleEdited);
    QString second = workbench->taskNames().at(1);
    QVERIFY(workbench->setScheduleText(second, "# from the project\n"));
    QVERIFY(!workbench->setScheduleText("no_such_task", "x"));
    QVERIFY(!workbench->findTask("no_such_task"));
    QCOMPARE(workbench->findTask(second)->nodeName, exampleTasks().at(1).nodeName);
    QCOMPARE(workbench->scheduleText(second), QString("# from the project\n"));
    QVERIFY(workbench->taskModel()->isEdited(second));
    QTest::qWait(500);
    QCOMPARE(edited.count(), 0);
    QVERIFY(workbench->openTaskForNode(QString::fromStdString(exampleTasks().at(1).nodeName)));
    QCOMPARE(workbench->currentTaskName(), second);
  }

  void toolsFollowTheOpenTaskAndItsSchedule() {
    // The measure panel measures what the editor shows.
    QCOMPARE(workbench->measurePanel()->task(), workbench->currentTaskName());
    QCOMPARE(workbench->measurePanel()->traceText(), workbench->editor()->toPlainText());
    // The animation starts when its tab is shown, then follows each good lowering.
    IterationOrderView* order = workbench->iterationOrderView();
    QVERIFY(!order->order());
    QSignalSpy changed(order, &IterationOrderView::orderChanged);
    workbench->toolTabs()->setCurrentWidget(order);
    QVERIFY(changed.wait(30000));
    QVERIFY(order->stepCount() > 0);
    auto [stage, axis] = splittable(exampleTasks().front());
    typeSchedule(workbench->editor(), {"outer, inner = split(" + stage + ", " + axis + ", factor=2)"});
    QVERIFY(waitForLowering(*workbench));
    QCOMPARE(workbench->measurePanel()->traceText(), workbench->editor()->toPlainText());
    QVERIFY(changed.wait(30000));
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench_iteration_order.png");
  }

  void darkThemeKeepsTheCodeReadable() {
    auto* application = qobject_cast<QApplication*>(QCoreApplication::instance());
    applyTheme(*application, Theme::Dark);
    QCoreApplication::processEvents();
    moveCursorToLine(workbench->editor(), 4);
    // Text stays far from its background, in the editor and the code, stale or not.
    auto contrast = [](QWidget* view) {
      QPalette palette = view->palette();
      return std::abs(palette.color(QPalette::Text).lightness() - palette.color(QPalette::Base).lightness());
    };
    QVERIFY(workbench->editor()->palette().color(QPalette::Base).lightness() < 100);
    QVERIFY(contrast(workbench->editor()) > 120);
    QVERIFY(contrast(workbench->loweringPanel()->loopNestView()) > 120);
    workbench->loweringPanel()->setStale(true);
    QVERIFY(contrast(workbench->loweringPanel()->loopNestView()) > 60);
    workbench->loweringPanel()->setStale(false);
    workbench->grab().save(TESSEL_BINARY_DIR "/schedule_workbench_dark.png");
    applyTheme(*application, Theme::Light);
  }

  void taskListModelIsAWellBehavedModel() {
    TaskListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTasks(exampleTasks());
    QCOMPARE(model.rowCount(), int(exampleTasks().size()));
    QString name = model.nameAt(0);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setEdited(name, true);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(0, TaskListModel::Edited).data().toString(), QString("edited"));
    model.setEdited(name, true);
    QCOMPARE(changed.count(), 1);
    QVERIFY(model.index(0, TaskListModel::Operation).data().toString().startsWith("fused("));
    QCOMPARE(model.index(0, TaskListModel::Gflop).data(TaskListModel::SortRole).toDouble(),
             exampleTasks().front().flops / 1e9);
    model.setTasks({});
    QCOMPARE(model.rowCount(), 0);
  }
};

QTEST_MAIN(TestScheduleWorkbench)
#include "test_schedule_workbench.moc"
