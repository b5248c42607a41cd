// Progress and cancellation of compileGraph and exportModel on the example model: progress
// only moves forward and ends at 100, a cancel stops the work at the next step, and an export
// that is cancelled or fails leaves the module already in its directory as it was.
#include <QtTest>

#include <signal.h>

#include <cerrno>
#include <mutex>

#include "NDArrayTestSupport.h"
#include "compiler/driver/Driver.h"
#include "runtime/GraphExecutor.h"
#include "tests/ShellScripts.h"

using namespace tessel;

namespace {

const std::string kExample = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx";

struct Report {
  int percent;
  std::string what;
};

/// Collects progress reports (from any thread) and can ask the work to stop after the Nth.
class Recorder {
public:
  explicit Recorder(size_t cancelAfter = 0) : cancelAfter_(cancelAfter) {}

  std::function<void(int, const std::string&)> progress() {
    return [this](int percent, const std::string& what) {
      std::lock_guard<std::mutex> lock(mutex_);
      reports_.push_back({percent, what});
    };
  }
  std::function<bool()> cancelled() {
    return [this] {
      std::lock_guard<std::mutex> lock(mutex_);
      return cancelAfter_ > 0 && reports_.size() >= cancelAfter_;
    };
  }
  const std::vector<Report>& reports() const { return reports_; }

  /// The reports as "percent what" lines, for failure messages.
  QString listing() const {
    QStringList lines;
    for (const Report& report : reports_)
      lines << QString("%1 %2").arg(report.percent).arg(QString::fromStdString(report.what));
    return lines.join("\n");
  }

  bool monotone() const {
    for (size_t i = 1; i < reports_.size(); ++i)
      if (reports_[i].percent < reports_[i - 1].percent) return false;
    return true;
  }

private:
  std::mutex mutex_;
  size_t cancelAfter_;
  std::vector<Report> reports_;
};

/// Every file of `directory` (hidden ones and folders included) with its bytes.
QMap<QString, QByteArray> directoryContents(const QString& directory) {
  QMap<QString, QByteArray> contents;
  QDir dir(directory);
  for (const QFileInfo& entry : dir.entryInfoList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)) {
    QFile file(entry.filePath());
    if (entry.isDir() || !file.open(QIODevice::ReadOnly)) {
      contents[entry.fileName()] = "<not a readable file>";
      continue;
    }
    contents[entry.fileName()] = file.readAll();
  }
  return contents;
}


}  // namespace

class TestCompileProgress : public QObject {
  Q_OBJECT

private:
  graph::Graph imported_;
  std::shared_ptr<driver::CompiledModel> model_;
  std::vector<Report> compileReports_;
  QTemporaryDir workspace_;

  /// Exports model_ into a new directory of the workspace and returns it.
  QString exportedModule(const QString& name) {
    QString directory = workspace_.filePath(name);
    Status exported = driver::exportModel(*model_, directory.toStdString());
    if (!exported) qFatal("%s", exported.error().toString().c_str());
    return directory;
  }

  /// Runs the module in `directory` on fixed inputs and checks it computes what the JIT does.
  void verifyModuleRuns(const QString& directory) {
    auto loaded = runtime::GraphExecutor::load(directory.toStdString());
    auto jit = driver::createExecutor(*model_);
    QVERIFY2(jit.ok(), jit.ok() ? "" : jit.error().toString().c_str());
    unsigned seed = 1;
    for (const std::string& input : loaded->inputNames()) {
      runtime::NDArray value = testing::randomFloatArray(loaded->tensorInfo(input).shape, seed++);
      loaded->setInput(input, value);
      (*jit)->setInput(input, value);
    }
    loaded->run();
    (*jit)->run();
    for (const std::string& output : loaded->outputNames())
      QCOMPARE(loaded->getOutput(output).toVector<float>(), (*jit)->getOutput(output).toVector<float>());
  }

private slots:
  void initTestCase() {
    auto imported = driver::loadModel(kExample);
    QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().toString().c_str());
    imported_ = *imported;
    Recorder recorder;
    driver::CompileOptions options;
    options.progress = recorder.progress();
    auto compiled = driver::compileGraph(imported_, options);
    QVERIFY2(compiled.ok(), compiled.ok() ? "" : compiled.error().toString().c_str());
    model_ = std::make_shared<driver::CompiledModel>(std::move(*compiled));
    compileReports_ = recorder.reports();
  }

  void compileProgressIsMonotoneAndEndsAtHundred() {
    QVERIFY(!compileReports_.empty());
    for (size_t i = 1; i < compileReports_.size(); ++i)
      QVERIFY2(compileReports_[i].percent >= compileReports_[i - 1].percent, compileReports_[i].what.c_str());
    QCOMPARE(compileReports_.front().percent, 0);
    QCOMPARE(compileReports_.back().percent, 100);
    // Every pass of the pipeline is named as it starts, in order, before any lowering.
    std::vector<std::string> passNames = driver::standardPasses().passNames();
    QVERIFY(compileReports_.size() > passNames.size());
    for (size_t i = 0; i < passNames.size(); ++i) QCOMPARE(compileReports_[i].what, passNames[i]);
    QVERIFY(compileReports_[passNames.size()].what.find("Lowering") == 0);
    // Then every kernel as it is lowered.
    size_t kernels = 0;
    for (const auto& report : compileReports_) kernels += report.what.find("Lowering kernel ") == 0;
    auto compiled = driver::compileGraph(imported_);
    QVERIFY(compiled.ok());
    QCOMPARE(kernels, compiled->optimized.operationCount());
  }

  void importingReportsItsNodesAndStopsWhenCancelled() {
    // A few thousand operations: the importer reports (and asks) every few dozen nodes.
    const std::string chain = TESSEL_SOURCE_DIR "/resources/examples/long_chain.onnx";
    Recorder recorder;
    driver::LoadOptions options;
    options.progress = recorder.progress();
    auto loaded = driver::loadModel(chain, options);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
    QVERIFY2(recorder.monotone(), qPrintable(recorder.listing()));
    QVERIFY2(recorder.reports().size() > 20, qPrintable(recorder.listing()));
    QVERIFY(recorder.reports().front().what.find("Importing node 1 of ") == 0);
    QCOMPARE(recorder.reports().back().percent, 100);

    Recorder stopping{5};
    options.progress = stopping.progress();
    options.cancelled = stopping.cancelled();
    auto stopped = driver::loadModel(chain, options);
    QVERIFY(!stopped.ok());
    QVERIFY2(driver::isCancellation(stopped.error()), stopped.error().toString().c_str());
    QVERIFY2(stopping.reports().size() == 5, qPrintable(stopping.listing()));
  }

  void cancellingStopsTheCompileAtTheNextStep_data() {
    QTest::addColumn<int>("cancelAfter");
    // Every point of the compile: after each pass started, and after lowering started.
    for (size_t n = 1; n < compileReports_.size(); ++n)
      QTest::newRow(compileReports_[n - 1].what.c_str()) << int(n);
  }
  void cancellingStopsTheCompileAtTheNextStep() {
    QFETCH(int, cancelAfter);
    Recorder recorder{size_t(cancelAfter)};
    driver::CompileOptions options;
    options.progress = recorder.progress();
    options.cancelled = recorder.cancelled();
    auto compiled = driver::compileGraph(imported_, options);
    QVERIFY(!compiled.ok());
    QVERIFY2(driver::isCancellation(compiled.error()), compiled.error().toString().c_str());
    QVERIFY(QString::fromStdString(compiled.error().toString()).contains("cancelled"));
    // Nothing reported after the cancel: the next pass or kernel did not start.
    QVERIFY2(recorder.reports().size() == size_t(cancelAfter), qPrintable(recorder.listing()));
  }

  void passManagerAnnouncesSkippedPassesAndNamesWhereItStopped() {
    graph::PassManager passes = driver::standardPasses();
    graph::PassOptions options;
    options.optLevel = 0;  // Skips CSE, AlterLayout and FuseOps: they are announced all the same.
    std::vector<std::string> announced;
    graph::PassObserver observer;
    observer.starting = [&](size_t index, size_t count, const std::string& name) {
      QCOMPARE(index, announced.size());
      QCOMPARE(count, passes.passes().size());
      announced.push_back(name);
    };
    QVERIFY(passes.run(imported_, options, observer).ok());
    QCOMPARE(announced, passes.passNames());

    announced.clear();
    observer.cancelled = [&] { return announced.size() == 2; };
    auto stopped = passes.run(imported_, options, observer);
    QVERIFY(!stopped.ok());
    QCOMPARE(announced.size(), size_t(2));
    QVERIFY2(stopped.error().message.find(passes.passNames()[2]) != std::string::npos, stopped.error().message.c_str());
  }

  void realFailuresAreNotCancellations() {
    driver::CompileOptions options;
    options.passes.optLevel = 7;
    options.cancelled = [] { return false; };
    auto compiled = driver::compileGraph(imported_, options);
    QVERIFY(!compiled.ok());
    QVERIFY(!driver::isCancellation(compiled.error()));
  }

  void exportReportsEveryKernel() {
    Recorder recorder;
    ExportOptions options;
    options.progress = recorder.progress();
    QString directory = workspace_.filePath("reported");
    Status exported = driver::exportModel(*model_, directory.toStdString(), options);
    QVERIFY2(exported.ok(), exported.ok() ? "" : exported.error().toString().c_str());
    QVERIFY2(recorder.monotone(), qPrintable(recorder.listing()));
    QCOMPARE(recorder.reports().back().percent, 100);

    // "Compiling kernel i of n: name" once per kernel, i counting up, every kernel named.
    size_t count = model_->kernels.size();
    QStringList expectedNames, reportedNames;
    for (const auto& kernel : model_->kernels) expectedNames << QString::fromStdString(kernel.name);
    int counted = 0;
    for (const Report& report : recorder.reports()) {
      QString what = QString::fromStdString(report.what);
      if (!what.startsWith("Compiling kernel ")) continue;
      ++counted;
      QString prefix = QString("Compiling kernel %1 of %2: ").arg(counted).arg(count);
      QVERIFY2(what.startsWith(prefix), qPrintable(what));
      reportedNames << what.mid(prefix.size());
    }
    expectedNames.sort();
    reportedNames.sort();
    QCOMPARE(reportedNames, expectedNames);
    // Then the steps after code generation, in order.
    QStringList steps;
    for (const Report& report : recorder.reports())
      if (!QString::fromStdString(report.what).startsWith("Compiling kernel"))
        steps << QString::fromStdString(report.what).section(' ', 0, 1);
    QCOMPARE(steps, (QStringList{"Linking kernels.so", "Writing params.bin", "Writing graph.json", "Exported " +
                                                                                                   QString::number(count)}));
    // The staging directory is gone: only the module's files remain.
    QCOMPARE(QDir(directory).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name),
             (QStringList{"graph.json", "kernels.so", "params.bin"}));
    verifyModuleRuns(directory);
  }

  void cancelledExportKeepsThePreviousModule_data() {
    QTest::addColumn<int>("cancelAfter");
    size_t kernels = model_->kernels.size();
    QTest::newRow("after the first kernel") << 1;
    QTest::newRow("halfway through the kernels") << int(kernels / 2 + 1);
    QTest::newRow("while linking") << int(kernels + 1);
    QTest::newRow("before params.bin") << int(kernels + 2);
    QTest::newRow("before graph.json") << int(kernels + 3);
  }
  void cancelledExportKeepsThePreviousModule() {
    QFETCH(int, cancelAfter);
    QString directory = exportedModule(QString("cancelled_%1").arg(cancelAfter));
    auto before = directoryContents(directory);

    // A different module (other passes, so other files) over it, cancelled part way.
    driver::CompileOptions other;
    other.passes.optLevel = 0;
    auto unfused = driver::compileGraph(imported_, other);
    QVERIFY(unfused.ok());
    Recorder recorder{size_t(cancelAfter)};
    ExportOptions options;
    options.progress = recorder.progress();
    options.cancelled = recorder.cancelled();
    Status exported = driver::exportModel(*unfused, directory.toStdString(), options);
    QVERIFY(!exported.ok());
    QVERIFY2(driver::isCancellation(exported.error()), exported.error().toString().c_str());
    // Kernels identical but for their names compile together and are reported together when
    // their object file is done: past the cancel, the rest of the run that reached it and one
    // more run in flight on the other core may still report.
    std::vector<PrimFunc> functions;
    for (const auto& kernel : unfused->kernels) functions.push_back(kernel.function);
    size_t largestGroup = 1;
    for (const auto& group : groupIdenticalFunctions(functions)) largestGroup = std::max(largestGroup, group.size());
    QVERIFY2(recorder.reports().size() <= size_t(cancelAfter) + 2 * largestGroup - 1, qPrintable(recorder.listing()));
    QCOMPARE(recorder.reports().back().percent < 100, true);

    QCOMPARE(directoryContents(directory), before);
    verifyModuleRuns(directory);
  }

  void failedExportKeepsThePreviousModule() {
    QString directory = exportedModule("failed");
    auto before = directoryContents(directory);
    QTemporaryDir tools;
    ExportOptions options;
    options.compiler = testing::writeShellScript(tools.path(), "broken-cc", "echo 'cannot find -lm' >&2; exit 1").toStdString();
    Status exported = driver::exportModel(*model_, directory.toStdString(), options);
    QVERIFY(!exported.ok());
    QVERIFY(!driver::isCancellation(exported.error()));
    QVERIFY2(exported.error().message.find("cannot find -lm") != std::string::npos, exported.error().toString().c_str());
    QCOMPARE(directoryContents(directory), before);
    verifyModuleRuns(directory);
  }

  void cancellingKillsTheLinker() {
    QString directory = exportedModule("linker");
    auto before = directoryContents(directory);
    // A "C compiler" that never finishes; its pid (exec keeps it) tells whether it still runs.
    QTemporaryDir tools;
    QString pidFile = tools.filePath("linker.pid");
    ExportOptions options;
    options.compiler =
        testing::writeShellScript(tools.path(), "hanging-cc", QString("echo $$ > '%1.tmp'; mv '%1.tmp' '%1'; exec sleep 300").arg(pidFile))
            .toStdString();
    options.cancelled = [&] { return QFile::exists(pidFile); };
    Status exported = driver::exportModel(*model_, directory.toStdString(), options);
    QVERIFY(!exported.ok());
    QVERIFY2(driver::isCancellation(exported.error()), exported.error().toString().c_str());
    QFile pid(pidFile);
    QVERIFY(pid.open(QIODevice::ReadOnly));
    pid_t linker = pid_t(pid.readAll().trimmed().toLongLong());
    QVERIFY(linker > 0);
    QCOMPARE(::kill(linker, 0), -1);
    QCOMPARE(errno, ESRCH);
    QCOMPARE(directoryContents(directory), before);
  }

  void exportRemovesWhatAKilledExportLeft() {
    QString directory = exportedModule("abandoned");
    // A process that has ended, and one that runs (init): their staging directories.
    QProcess ended;
    ended.start("true");
    QVERIFY(ended.waitForStarted());
    qint64 endedId = ended.processId();
    QVERIFY(ended.waitForFinished() && endedId > 0);
    QString abandoned = QString(".export-%1-0").arg(endedId);
    QString inProgress = ".export-1-0";
    QVERIFY(QDir(directory).mkpath(abandoned + "/previous") && QDir(directory).mkdir(inProgress));
    exportedModule("abandoned");
    QVERIFY(!QFileInfo::exists(directory + "/" + abandoned));
    QVERIFY(QFileInfo::exists(directory + "/" + inProgress));
  }

  void exportIntoANewDirectoryLeavesNothingWhenCancelled() {
    QString directory = workspace_.filePath("never_made/module");
    ExportOptions options;
    options.cancelled = [] { return true; };
    Status exported = driver::exportModel(*model_, directory.toStdString(), options);
    QVERIFY(!exported.ok());
    QVERIFY(driver::isCancellation(exported.error()));
    QVERIFY(!QFile::exists(directory + "/graph.json"));
    QVERIFY(!QFile::exists(directory + "/kernels.so"));
  }
};

QTEST_GUILESS_MAIN(TestCompileProgress)
#include "test_compile_progress.moc"
