// Tessel Studio's main window as a user meets it: opening files (command line, recent files,
// drag and drop), a failed open keeping the model on screen, dock layout restored in the next
// session, theme switching, shortcuts, exports and screenshot mode.
#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QListWidget>
#include <QMimeData>
#include <QStackedWidget>
#include <QTableView>
#include <QtTest>

#include "StudioTestSupport.h"
#include "app/studio/MainWindow.h"
#include "app/studio/ScreenshotMode.h"
#include "app/studio/WelcomePage.h"
#include "views/common/DiagnosticsModel.h"
#include "views/common/JobListModel.h"
#include "views/common/JobStatusWidget.h"
#include "views/graph/GraphFindBar.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/quantization/QuantizationPanel.h"
#include "views/schedule/ScheduleWorkbench.h"

using namespace tessel;
using namespace tessel::studio;
using testing::example;

namespace {

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& contents) {
  QString path = dir.filePath(name);
  QFile file(path);
  if (file.open(QIODevice::WriteOnly)) file.write(contents);
  return path;
}

QString lastError(const views::DiagnosticsModel& log) {
  for (int row = log.rowCount() - 1; row >= 0; --row)
    if (log.entry(row).severity == views::Severity::Error) return log.entry(row).message;
  return {};
}

// Distinct colours in a sample of the image: a blank or single-colour grab has one or two.
int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 7)
    for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
  return colours.size();
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

  QTemporaryDir settingsDir_;

private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_); }
  void init() { testing::clearSettings(); }

  void opensAModelAndRemembersItAsRecent() {
    MainWindow window;
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(example("tiny_resnet.onnx")));
    QVERIFY(window.windowTitle().contains("tiny_resnet.onnx"));
    QVERIFY(window.hasModel());
    QCOMPARE(QFileInfo(window.recentFiles().files().value(0)), QFileInfo(example("tiny_resnet.onnx")));

    // The next session lists it under File > Open Recent, and picking it opens it.
    MainWindow next;
    QAction* entry = nullptr;
    for (QMenu* menu : next.findChildren<QMenu*>()) {
      for (QAction* action : menu->actions())
        if (action->text().contains("tiny_resnet.onnx")) entry = action;
    }
    QVERIFY2(entry, "File > Open Recent lists the model opened in the previous session");
    // Before anything is open the welcome page lists it too; after opening, the view shows.
    auto* central = qobject_cast<QStackedWidget*>(next.centralWidget());
    QVERIFY(central);
    auto* welcome = qobject_cast<WelcomePage*>(central->currentWidget());
    QVERIFY(welcome);
    QVERIFY(welcome->recentList()->item(0)->text().contains("tiny_resnet.onnx"));
    QSignalSpy opened(&next, &MainWindow::fileOpened);
    entry->trigger();
    QVERIFY(opened.wait(60000));
    QCOMPARE(QFileInfo(next.currentFile()), QFileInfo(example("tiny_resnet.onnx")));
    QCOMPARE(central->currentWidget(), next.viewWidget(StudioView::Graph));
  }

  void failedOpenKeepsThePreviousModelAndLogsTheDiagnostic() {
    QTemporaryDir dir;
    QString broken = writeFile(dir, "broken.onnx", "this is not a protobuf");
    MainWindow window;
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    auto before = window.session().compiledModel();

    QSignalSpy failed(&window, &MainWindow::openFailed);
    window.openFile(broken);
    QVERIFY(failed.wait(30000));
    QVERIFY(QTest::qWaitFor([&] { return window.isIdle(); }, 30000));
    // The compiler's diagnostic names the file; the model on screen is still the old one.
    QVERIFY2(failed.at(0).at(1).toString().contains("broken.onnx"), qPrintable(failed.at(0).at(1).toString()));
    QVERIFY2(lastError(window.diagnostics()).contains("broken.onnx"), qPrintable(lastError(window.diagnostics())));
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(example("tiny_resnet.onnx")));
    QCOMPARE(window.session().compiledModel(), before);
    QVERIFY(window.windowTitle().contains("tiny_resnet.onnx"));

    // A file that does not exist is reported the same way.
    window.openFile(dir.filePath("missing.onnx"));
    QVERIFY(lastError(window.diagnostics()).contains("missing.onnx"));
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(example("tiny_resnet.onnx")));
  }

  void aModelNeedingAnInputByValueOpensWithItsTestData() {
    // A Reshape whose shape is an input: it compiles only with that input's value, which the
    // test data beside the model gives (as `tessel run --inputs-dir` would).
    const QString suite = QStringLiteral("/usr/share/libonnx-testdata/data/node/test_reshape_reduced_dims");
    if (!QFileInfo::exists(suite)) QSKIP("libonnx-testdata is not installed");
    QTemporaryDir withData, alone;
    QVERIFY(QFile::copy(suite + "/model.onnx", withData.filePath("model.onnx")));
    QVERIFY(QDir().mkpath(withData.filePath("test_data_set_0")));
    for (const QString& file : QDir(suite + "/test_data_set_0").entryList(QDir::Files))
      QVERIFY(QFile::copy(suite + "/test_data_set_0/" + file, withData.filePath("test_data_set_0/" + file)));
    QVERIFY(QFile::copy(suite + "/model.onnx", alone.filePath("model.onnx")));

    MainWindow window;
    QVERIFY(testing::openAndWait(window, withData.filePath("model.onnx")));
    QVERIFY(window.hasModel());
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(withData.filePath("model.onnx")));
    // Without the data the message says what is missing and how to give it.
    QSignalSpy failed(&window, &MainWindow::openFailed);
    window.openFile(alone.filePath("model.onnx"));
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 60000);
    QVERIFY2(lastError(window.diagnostics()).contains("must be a constant"), qPrintable(lastError(window.diagnostics())));
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(withData.filePath("model.onnx")));
  }

  void dockLayoutAndViewAreRestoredInTheNextSession() {
    {
      MainWindow first;
      first.show();
      QVERIFY(QTest::qWaitForWindowExposed(&first));
      first.setCurrentView(StudioView::Schedule);
      QDockWidget* log = first.dock(MainWindow::Dock::Diagnostics);
      QDockWidget* tasks = first.dock(MainWindow::Dock::Tasks);
      QVERIFY(tasks->isHidden());
      first.addDockWidget(Qt::RightDockWidgetArea, log);
      tasks->show();
      first.close();
    }
    MainWindow second;
    second.show();
    QVERIFY(QTest::qWaitForWindowExposed(&second));
    QCOMPARE(second.currentView(), StudioView::Schedule);
    QCOMPARE(second.dockWidgetArea(second.dock(MainWindow::Dock::Diagnostics)), Qt::RightDockWidgetArea);
    QVERIFY(!second.dock(MainWindow::Dock::Tasks)->isHidden());

    // Each view keeps its own arrangement: the graph view still has its default docks.
    second.setCurrentView(StudioView::Graph);
    QVERIFY(!second.dock(MainWindow::Dock::Properties)->isHidden());
    QVERIFY(second.dock(MainWindow::Dock::Tasks)->isHidden());
    QCOMPARE(second.dockWidgetArea(second.dock(MainWindow::Dock::Diagnostics)), Qt::BottomDockWidgetArea);
    // Reset Layout puts a moved dock back.
    second.setCurrentView(StudioView::Schedule);
    second.studioAction("actionResetLayout")->trigger();
    QVERIFY(second.dock(MainWindow::Dock::Tasks)->isHidden());
    QCOMPARE(second.dockWidgetArea(second.dock(MainWindow::Dock::Diagnostics)), Qt::BottomDockWidgetArea);
  }

  void themeSwitchesAtRunTimeAndIsRemembered() {
    MainWindow window;
    window.setTheme(views::Theme::Light);
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 128);
    QSignalSpy changed(&window, &MainWindow::themeChanged);
    window.studioAction("actionToggleTheme")->trigger();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(window.theme(), views::Theme::Dark);
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 128);
    // Text stays readable: strong contrast between text and background in the new palette.
    QPalette dark = QApplication::palette();
    QVERIFY(qAbs(dark.color(QPalette::Text).lightness() - dark.color(QPalette::Base).lightness()) > 150);
    // Graph colours follow the palette: node fills dark enough for the light node text.
    views::ThemeColors colours = views::themeColors(dark);
    QVERIFY(colours.nodeText.lightness() - views::operatorColor(colours, "Conv").lightness() > 100);

    MainWindow next;
    QCOMPARE(next.theme(), views::Theme::Dark);
    window.setTheme(views::Theme::Light);
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 128);
  }

  void frequentActionsHaveDistinctShortcuts() {
    MainWindow window;
    const QStringList frequent = {"actionOpen",      "actionSave",      "actionQuit",         "actionFind",
                                  "actionViewGraph", "actionViewTimeline", "actionViewSchedule", "actionFit",
                                  "actionZoomIn",    "actionZoomOut",   "actionExportView",   "actionExportModule",
                                  "actionToggleTheme", "actionRecompile", "actionMeasure", "actionCancelJobs",
                                  "actionShortcuts"};
    QSet<QString> seen;
    for (const QString& name : frequent) {
      QAction* action = window.studioAction(name);
      QVERIFY2(action, qPrintable(name));
      QVERIFY2(!action->shortcut().isEmpty(), qPrintable(name + " has no shortcut"));
    }
    for (QAction* action : window.studioActions()) {
      if (action->shortcut().isEmpty()) continue;
      QString keys = action->shortcut().toString();
      QVERIFY2(!seen.contains(keys), qPrintable(keys + " is bound twice"));
      seen.insert(keys);
    }
    // The keys work: Ctrl+3 shows the schedule editor, Ctrl+1 the graph.
    window.show();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keySequence(&window, QKeySequence("Ctrl+3"));
    QCOMPARE(window.currentView(), StudioView::Schedule);
    QTest::keySequence(&window, QKeySequence("Ctrl+1"));
    QCOMPARE(window.currentView(), StudioView::Graph);
    // Ctrl+F opens the graph's find bar even with the focus inside the graph (no shortcut of a
    // view competes with the window's).
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    auto* graph = window.findChild<views::GraphWorkbench*>();
    QVERIFY(graph);
    graph->view()->setFocus();
    QTRY_VERIFY(graph->view()->hasFocus());
    QTest::keySequence(QApplication::focusWidget(), QKeySequence::Find);
    QTRY_VERIFY(graph->findBar()->isVisible());
  }

  void dropsAModelFileOntoTheWindow() {
    MainWindow window;
    QMimeData model;
    model.setUrls({QUrl::fromLocalFile(example("tiny_resnet.onnx"))});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &model, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QSignalSpy opened(&window, &MainWindow::fileOpened);
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &model, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &drop);
    QVERIFY(opened.wait(60000));
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(example("tiny_resnet.onnx")));

    // Other files are refused at the door.
    QMimeData text;
    text.setUrls({QUrl::fromLocalFile(QStringLiteral(TESSEL_SOURCE_DIR "/README.md"))});
    QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
    refused.setAccepted(false);
    QCoreApplication::sendEvent(&window, &refused);
    QVERIFY(!refused.isAccepted());
  }

  void tasksDockOpensAKernelsSchedule() {
    MainWindow window;
    window.show();
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    auto* tasks = window.dock(MainWindow::Dock::Tasks)->findChild<QTableView*>("TaskOverview");
    QVERIFY(tasks);
    QTRY_VERIFY(tasks->model()->rowCount() > 0);
    QModelIndex softmax;
    for (int row = 0; row < tasks->model()->rowCount(); ++row)
      if (tasks->model()->index(row, 0).data().toString() == "Softmax__Softmax") softmax = tasks->model()->index(row, 0);
    QVERIFY(softmax.isValid());
    emit tasks->activated(softmax);
    QCOMPARE(window.currentView(), StudioView::Schedule);
    auto* workbench = window.findChild<views::ScheduleWorkbench*>();
    QCOMPARE(workbench->currentTaskName(), QString("Softmax__Softmax"));
  }

  // Build > Quantize to int8 brings the Quantization dock forward, set to the open model
  // and proposing its .int8.onnx beside it.
  void quantizeActionShowsTheQuantizationDockForTheOpenModel() {
    MainWindow window;
    window.show();
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    QDockWidget* dock = window.dock(MainWindow::Dock::Quantization);
    QVERIFY(dock && dock->isHidden());
    window.studioAction("actionQuantize")->trigger();
    QVERIFY(!dock->isHidden());
    auto* panel = dock->findChild<views::QuantizationPanel*>();
    QVERIFY(panel);
    QVERIFY2(panel->outputPath().endsWith("tiny_resnet.int8.onnx"), qPrintable(panel->outputPath()));
  }

  void statusBarShowsRunningJobsWithCancel() {
    MainWindow window;
    window.show();
    auto* status = window.findChild<views::JobStatusWidget*>();
    QVERIFY(status);
    QVERIFY(status->isHidden());
    window.openFile(example("long_chain.onnx"));
    // While the model imports and compiles, the status bar names the work.
    QVERIFY(QTest::qWaitFor([&] { return !status->isHidden() && !status->currentText().isEmpty(); }, 10000));
    QVERIFY2(status->currentText().contains("long_chain.onnx"), qPrintable(status->currentText()));
    // Cancel stops it; nothing is opened and the window goes idle.
    QSignalSpy opened(&window, &MainWindow::fileOpened);
    window.studioAction("actionCancelJobs")->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.jobs().rowCount() == 0; }, 10000));
    QVERIFY(status->isHidden());
    window.session().jobs().waitForAll();
    QTest::qWait(100);
    QCOMPARE(opened.count(), 0);
  }

  void exportsTheViewAsPngAndSvg() {
    QTemporaryDir dir;
    MainWindow window;
    window.resize(1000, 700);
    window.show();
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    QString png = dir.filePath("graph.png"), svg = dir.filePath("graph.svg");
    QVERIFY(window.exportCurrentView(png));
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(distinctColours(image) > 2);
    QVERIFY(window.exportCurrentView(svg));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("<svg"));
    // An unknown format is a diagnostic naming the file, not a crash or an empty file.
    QVERIFY(!window.exportCurrentView(dir.filePath("graph.bmp")));
    QVERIFY(lastError(window.diagnostics()).contains("graph.bmp"));
    QVERIFY(!QFile::exists(dir.filePath("graph.bmp")));
  }

  void exportsTheDeployableModuleInTheBackground() {
    QTemporaryDir dir;
    MainWindow window;
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    QSignalSpy exported(&window, &MainWindow::moduleExported);
    // The status bar's job list follows the export step by step.
    QStringList steps;
    QList<int> percents;
    connect(&window.jobs(), &QAbstractItemModel::dataChanged, this, [&](const QModelIndex& first) {
      if (first.data(views::JobListModel::ChannelRole).toString() != "export") return;
      steps << first.data(views::JobListModel::MessageRole).toString();
      percents << first.data(views::JobListModel::PercentRole).toInt();
    });
    window.exportModule(dir.path());
    QVERIFY(!window.isIdle());
    QVERIFY(exported.wait(120000));
    QVERIFY2(exported.at(0).at(1).toBool(), qPrintable(exported.at(0).at(2).toString()));
    QVERIFY(QFile::exists(dir.filePath("graph.json")));
    QVERIFY(QFile::exists(dir.filePath("kernels.so")));
    QVERIFY2(steps.filter("Compiling kernel").size() == int(window.session().compiledModel()->kernels.size()),
             qPrintable(steps.join('\n')));
    QVERIFY2(!steps.filter("Linking").isEmpty(), qPrintable(steps.join('\n')));
    QVERIFY(std::is_sorted(percents.begin(), percents.end()));
    QVERIFY(percents.first() >= 0 && percents.last() <= 100);
  }

  void cancellingAnExportKeepsTheModuleAlreadyThere() {
    QTemporaryDir dir;
    MainWindow window;
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    QSignalSpy exported(&window, &MainWindow::moduleExported);
    window.exportModule(dir.path());
    QVERIFY(exported.wait(120000));
    QFile graph(dir.filePath("graph.json"));
    QVERIFY(graph.open(QIODevice::ReadOnly));
    QByteArray before = graph.readAll();
    graph.close();
    // A second export, stopped from the status bar as soon as it reports progress.
    connect(&window.jobs(), &QAbstractItemModel::dataChanged, this, [&](const QModelIndex& first) {
      if (first.data(views::JobListModel::ChannelRole).toString() == "export") window.jobs().cancel(first.row());
    });
    window.exportModule(dir.path());
    QTRY_VERIFY_WITH_TIMEOUT(window.isIdle(), 120000);
    QCOMPARE(exported.count(), 1);  // the cancelled export reports nothing
    QVERIFY(graph.open(QIODevice::ReadOnly));
    QCOMPARE(graph.readAll(), before);
    QStringList left = QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
    left.sort();
    QCOMPARE(left, (QStringList{"graph.json", "kernels.so", "params.bin"}));
  }

  void screenshotModeWritesTheWindowAtTheRequestedSize() {
    QTemporaryDir dir;
    MainWindow window;
    ScreenshotRequest request;
    request.output = dir.filePath("shots/timeline.png");
    request.file = example("tiny_resnet.onnx");
    request.view = StudioView::Timeline;
    request.size = QSize(1100, 720);
    request.theme = views::Theme::Dark;
    QString error;
    QCOMPARE(takeScreenshot(window, request, &error), 0);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QImage image(request.output);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1100, 720));
    QVERIFY(distinctColours(image) > 10);
    QCOMPARE(window.currentView(), StudioView::Timeline);
    // The dark theme is what was drawn: the window's background is dark.
    QVERIFY(QColor(image.pixel(image.width() / 2, image.height() / 2)).lightness() < 128);
    window.setTheme(views::Theme::Light);
  }

  void screenshotModeFailsWithTheDiagnostic() {
    QTemporaryDir dir;
    MainWindow window;
    ScreenshotRequest request;
    request.output = dir.filePath("never.png");
    request.file = writeFile(dir, "broken.onnx", "garbage");
    QString error;
    QCOMPARE(takeScreenshot(window, request, &error), 2);
    QVERIFY2(error.contains("broken.onnx"), qPrintable(error));
    QVERIFY(!QFile::exists(request.output));
  }

  void screenshotSizesAreChecked() {
    QSize size;
    QVERIFY(parseScreenshotSize("1280x800", &size));
    QCOMPARE(size, QSize(1280, 800));
    QVERIFY(!parseScreenshotSize("1280", &size));
    QVERIFY(!parseScreenshotSize("10x10", &size));
    QVERIFY(!parseScreenshotSize("wide", &size));
  }

  void jobListFollowsSeveralRunners() {
    views::JobRunner compiler, layout;
    views::JobListModel jobs;
    QAbstractItemModelTester tester(&jobs, QAbstractItemModelTester::FailureReportingMode::QtTest);
    jobs.watch(&compiler, "Compiler");
    jobs.watch(&layout, "Graph");
    std::atomic<bool> release{false};
    auto waitForRelease = [&](views::JobContext& job) {
      job.reportProgress(40, "halfway");
      while (!release && !job.cancelled()) QThread::msleep(1);
      return 0;
    };
    compiler.start<int>("compile", "Compiling", waitForRelease, [](int) {});
    layout.start<int>("layout", "Laying out", waitForRelease, [](int) {});
    QCOMPARE(jobs.rowCount(), 2);
    QCOMPARE(jobs.index(1).data().toString(), QString("Laying out"));
    QTRY_COMPARE(jobs.index(0).data(views::JobListModel::PercentRole).toInt(), 40);
    QCOMPARE(jobs.index(0).data(views::JobListModel::MessageRole).toString(), QString("halfway"));
    QVERIFY(!jobs.allIdle());
    // Cancelling a row cancels that runner's job only.
    jobs.cancel(1);
    QCOMPARE(jobs.rowCount(), 1);
    QVERIFY(!layout.isRunning("layout"));
    QVERIFY(compiler.isRunning("compile"));
    release = true;
    QTRY_COMPARE(jobs.rowCount(), 0);
    compiler.waitForAll();
    layout.waitForAll();
    QTRY_VERIFY(jobs.allIdle());
  }

  void diagnosticsLogKeepsTheFullMessage() {
    views::DiagnosticsModel log;
    QAbstractItemModelTester tester(&log, QAbstractItemModelTester::FailureReportingMode::QtTest);
    log.add(views::Severity::Error, "Compile", "model.onnx: node 'conv1' (Conv): bad weight\n  hint: check the shape");
    log.add(views::Severity::Note, "Open", "Opened model.onnx");
    QCOMPARE(log.rowCount(), 2);
    QCOMPARE(log.errorCount(), 1);
    QModelIndex message = log.index(0, views::DiagnosticsModel::MessageColumn);
    QCOMPARE(message.data().toString(), QString("model.onnx: node 'conv1' (Conv): bad weight"));
    QVERIFY(message.data(views::DiagnosticsModel::FullMessageRole).toString().contains("hint: check the shape"));
    for (int i = 0; i < views::DiagnosticsModel::maximumEntries(); ++i) log.add(views::Severity::Note, "Test", "x");
    QCOMPARE(log.rowCount(), views::DiagnosticsModel::maximumEntries());
    log.clear();
    QCOMPARE(log.rowCount(), 0);
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
