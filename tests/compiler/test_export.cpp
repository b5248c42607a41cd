// Exporting real Tessel kernels (matmul then relu) and running them with the runtime alone:
// GraphExecutor, the C API and tessel-deploy-run all reproduce a C++ reference; export
// failures are diagnostics; the deployable binaries link no compiler libraries.
#include <QtTest>

#include <cmath>
#include <functional>

#include "NDArrayTestSupport.h"
#include "compiler/export/ExportModule.h"
#include "compiler/lower/Lower.h"
#include "compiler/ops/Elementwise.h"
#include "compiler/ops/Matmul.h"
#include "core/ir/IRPrinter.h"
#include "runtime/CpuFeatures.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"
#include "runtime/tessel_runtime.h"

using namespace tessel;

using runtime::NDArray;
using testing::randomFloatArray;

namespace {

// Awkward sizes; kColumns spans several matmul column panels, so the kernel runs a parallel
// loop and kernels.so must call back into libtessel_runtime.
constexpr int64_t kRows = 9, kDepth = 7, kColumns = 70;

PrimFunc lowerWorkload(const Workload& workload, const Expected<Schedule>& schedule, const std::string& name) {
  if (!schedule) qFatal("%s", schedule.error().toString().c_str());
  auto lowered = lower(*schedule, workload.args(), name);
  if (!lowered) qFatal("%s", lowered.error().toString().c_str());
  return lowered->func;
}

/// y = relu(x * w) as two kernels. Activations share one storage: x at offset 0, the
/// intermediate t1 after it, and y reusing x's slot once the matmul has consumed x.
runtime::GraphPlan twoNodePlan() {
  auto bytes = [](int64_t rows, int64_t columns) { return rows * columns * int64_t(sizeof(float)); };
  int64_t firstSlot = runtime::alignGraphOffset(std::max(bytes(kRows, kDepth), bytes(kRows, kColumns)));
  runtime::GraphPlan plan;
  plan.storages = {{0, firstSlot + bytes(kRows, kColumns)}, {1, bytes(kDepth, kColumns)}};
  plan.tensors = {{"x", runtime::DataType::float32(), {kRows, kDepth}, 0, 0},
                  {"w", runtime::DataType::float32(), {kDepth, kColumns}, 1, 0},
                  {"t1", runtime::DataType::float32(), {kRows, kColumns}, 0, firstSlot},
                  {"y", runtime::DataType::float32(), {kRows, kColumns}, 0, 0}};
  plan.inputs = {"x"};
  plan.outputs = {"y"};
  plan.nodes = {{"matmul_0", "fused_matmul_0", {"x", "w", "t1"}}, {"relu_0", "fused_relu_0", {"t1", "y"}}};
  return plan;
}

std::vector<float> reference(const NDArray& x, const NDArray& w) {
  auto xs = x.toVector<float>(), ws = w.toVector<float>();
  std::vector<float> y(size_t(kRows * kColumns), 0.0f);
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kColumns; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < kDepth; ++p) sum += xs[i * kDepth + p] * ws[p * kColumns + j];
      y[i * kColumns + j] = std::max(sum, 0.0f);
    }
  return y;
}

bool closeTo(const std::vector<float>& got, const std::vector<float>& expected, QString& mismatch) {
  if (got.size() != expected.size()) return mismatch = "size differs", false;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - expected[i]) <= 1e-4f * (1 + std::fabs(expected[i]))))
      return mismatch = QString("element %1: got %2, expected %3").arg(i).arg(got[i]).arg(expected[i]), false;
  return true;
}

struct ProcessResult {
  int exitCode = -1;
  QString output;
};

ProcessResult runTool(const QStringList& arguments) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start(TESSEL_BINARY_DIR "/bin/tessel-deploy-run", arguments);
  ProcessResult result;
  if (!process.waitForFinished(60000)) return result;
  result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  result.output = QString::fromUtf8(process.readAll());
  return result;
}

}  // namespace

class TestExport : public QObject {
  Q_OBJECT
  QTemporaryDir workspace_;
  QString module_;
  std::vector<PrimFunc> kernels_;
  NDArray weights_;

  // A copy of the exported module named `name` whose graph.json is `edit` of the original.
  QString copyWithEditedGraph(const QString& name, const std::function<QByteArray(QByteArray)>& edit) {
    QString copy = workspace_.path() + "/" + name;
    if (!QDir().mkpath(copy)) qFatal("cannot create %s", qPrintable(copy));
    for (const char* file : {"kernels.so", "params.bin"}) QFile::copy(module_ + "/" + file, copy + "/" + file);
    QFile graph(module_ + "/graph.json");
    QFile edited(copy + "/graph.json");
    if (!graph.open(QIODevice::ReadOnly) || !edited.open(QIODevice::WriteOnly)) qFatal("cannot copy graph.json");
    edited.write(edit(graph.readAll()));
    return copy;
  }

private slots:
  void initTestCase() {
    Workload product = matmul(kRows, kColumns, kDepth);
    Workload relu = unaryElementwise(UnaryOp::Relu, {kRows, kColumns});
    kernels_ = {lowerWorkload(product, defaultMatmulSchedule(product), "fused_matmul_0"),
                lowerWorkload(relu, defaultElementwiseSchedule(relu), "fused_relu_0")};
    weights_ = randomFloatArray({kDepth, kColumns}, 11);
    module_ = workspace_.path() + "/model";
    Status exported = exportModule(module_.toStdString(), kernels_, twoNodePlan(), {{"w", weights_}});
    QVERIFY2(exported.ok(), exported.ok() ? "" : exported.error().toString().c_str());
  }

  void kernelsCallTheRuntimeThreadPool() {
    // Otherwise the tests below would not show that kernels.so resolves the C backend API.
    QVERIFY(QString::fromStdString(toString(kernels_[0])).contains("parallel for"));
  }

  void exportWritesExactlyTheThreeFiles() {
    QStringList files = QDir(module_).entryList(QDir::Files | QDir::Hidden, QDir::Name);
    QCOMPARE(files, (QStringList{"graph.json", "kernels.so", "params.bin"}));
  }

  void graphExecutorMatchesReference() {
    auto executor = runtime::GraphExecutor::load(module_.toStdString());
    QCOMPARE(executor->plan().params.size(), size_t(1));
    for (unsigned seed : {1u, 2u}) {  // a second run with other data: nothing stale survives
      NDArray x = randomFloatArray({kRows, kDepth}, seed);
      executor->setInput("x", x);
      executor->run();
      QString mismatch;
      QVERIFY2(closeTo(executor->getOutput("y").toVector<float>(), reference(x, weights_), mismatch), qPrintable(mismatch));
    }
    QCOMPARE(executor->nodeTimings().size(), size_t(2));
    QCOMPARE(executor->nodeTimings()[1].node, std::string("relu_0"));
    QCOMPARE(executor->nodeTimings()[1].kernel, std::string("fused_relu_0"));
  }

  void cApiMatchesReference() {
    TesselModule* module = nullptr;
    QCOMPARE(tessel_module_load(module_.toUtf8().constData(), &module), TESSEL_OK);
    NDArray x = randomFloatArray({kRows, kDepth}, 3);
    std::vector<float> input = x.toVector<float>(), output(size_t(kRows * kColumns));
    QCOMPARE(tessel_module_set_input(module, "x", input.data(), input.size() * sizeof(float)), TESSEL_OK);
    QCOMPARE(tessel_module_run(module), TESSEL_OK);
    QCOMPARE(tessel_module_get_output(module, "y", output.data(), output.size() * sizeof(float)), TESSEL_OK);
    QCOMPARE(tessel_module_get_output(module, "y", output.data(), 4), TESSEL_ERROR);
    tessel_module_free(module);
    QString mismatch;
    QVERIFY2(closeTo(output, reference(x, weights_), mismatch), qPrintable(mismatch));
  }

  void deployToolRunsOnNpyFiles() {
    QVERIFY2(QFile::exists(TESSEL_BINARY_DIR "/bin/tessel-deploy-run"), "build the tessel-deploy-run target first");
    NDArray x = randomFloatArray({kRows, kDepth}, 4);
    QString inputPath = workspace_.path() + "/x.npy";
    runtime::writeNpy(inputPath.toStdString(), x);
    QString outputDir = workspace_.path() + "/out";
    ProcessResult run = runTool({module_, "--input", "x=" + inputPath, "--output-dir", outputDir, "--profile"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    QVERIFY2(run.output.contains("relu_0"), qPrintable(run.output));  // the profile lists nodes
    NDArray y = runtime::readNpy((outputDir + "/y.npy").toStdString());
    QCOMPARE(y.shape(), (std::vector<int64_t>{kRows, kColumns}));
    QString mismatch;
    QVERIFY2(closeTo(y.toVector<float>(), reference(x, weights_), mismatch), qPrintable(mismatch));

    ProcessResult help = runTool({"--help"});
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.output.contains("--input NAME=FILE"));
    ProcessResult unknownFlag = runTool({module_, "--frobnicate"});
    QCOMPARE(unknownFlag.exitCode, 2);
    QVERIFY(unknownFlag.output.contains("--frobnicate"));
    ProcessResult missingInput = runTool({module_, "--output-dir", outputDir});
    QCOMPARE(missingInput.exitCode, 2);
    QVERIFY2(missingInput.output.contains("input 'x'"), qPrintable(missingInput.output));
    runtime::writeNpy(inputPath.toStdString(), randomFloatArray({kDepth, kRows}, 5));
    ProcessResult wrongShape = runTool({module_, "--input", "x=" + inputPath});
    QCOMPARE(wrongShape.exitCode, 2);
    QVERIFY2(wrongShape.output.contains(QString("float32[%1, %2]").arg(kRows).arg(kDepth)), qPrintable(wrongShape.output));
  }

  void deployableBinariesLinkNoCompilerLibraries_data() {
    QTest::addColumn<QString>("binary");
    QTest::newRow("libtessel_runtime") << TESSEL_BINARY_DIR "/lib/libtessel_runtime.so";
    QTest::newRow("tessel-deploy-run") << TESSEL_BINARY_DIR "/bin/tessel-deploy-run";
  }
  void deployableBinariesLinkNoCompilerLibraries() {
    QFETCH(QString, binary);
    QVERIFY2(QFile::exists(binary), qPrintable(binary + " is not built"));
    QProcess ldd;
    ldd.start("ldd", {binary});
    QVERIFY(ldd.waitForFinished(30000));
    QString libraries = QString::fromUtf8(ldd.readAllStandardOutput());
    QVERIFY(libraries.contains("libc.so"));
    for (const char* forbidden : {"LLVM", "Qt", "protobuf"})
      QVERIFY2(!libraries.contains(forbidden, Qt::CaseInsensitive), qPrintable(binary + " links " + forbidden + ":\n" + libraries));
  }

  void loadNamesAKernelTheLibraryLacks() {
    QString copy = copyWithEditedGraph("renamed", [](QByteArray text) {
      return text.replace("\"fused_relu_0\"", "\"fused_relu_9\"");
    });
    QString message;
    try {
      runtime::GraphExecutor::load(copy.toStdString());
    } catch (const runtime::Error& error) {
      message = error.what();
    }
    QVERIFY2(message.contains("nodes[1] 'relu_0'") && message.contains("fused_relu_9"), qPrintable(message));
  }

  void graphJsonRecordsTheTargetMachine() {
    runtime::GraphPlan plan = runtime::GraphExecutor::load(module_.toStdString())->plan();
    Target host = hostTarget();
    QCOMPARE(plan.target.triple, host.triple);
    QCOMPARE(plan.target.cpu, host.cpu);
    QVERIFY(!plan.target.features.empty());
    for (const std::string& feature : plan.target.features) {
      QVERIFY2(host.hasFeature(feature), feature.c_str());
      QVERIFY2(runtime::hostHasCpuFeature(feature), feature.c_str());
    }
  }

  void loadRefusesKernelsForAnotherCpu() {
    // Some checkable feature is always missing: the list holds both Intel-only and AMD-only ones.
    std::string absent;
    for (const std::string& feature : runtime::checkableCpuFeatures())
      if (!runtime::hostHasCpuFeature(feature)) absent = feature;
    QVERIFY2(!absent.empty(), "this x86 machine claims every checkable feature");
    QString copy = copyWithEditedGraph("other_cpu", [&](QByteArray text) {
      if (!text.contains("\"features\":[")) qFatal("graph.json lists no target features");
      return text.replace("\"features\":[", QByteArray("\"features\":[\"") + absent.c_str() + "\",");
    });
    QString message;
    try {
      runtime::GraphExecutor::load(copy.toStdString());
    } catch (const runtime::Error& error) {
      message = error.what();
    }
    QVERIFY2(message.contains("target") && message.contains(QString::fromStdString(absent)) &&
                 message.contains("tessel compile"),
             qPrintable(message));
  }

  void exportFailuresAreDiagnostics_data() {
    QTest::addColumn<QString>("failure");
    QTest::addColumn<QString>("expected");
    QTest::newRow("kernel not exported") << "kernel" << "not among the exported kernels";
    QTest::newRow("argument count") << "arguments" << "takes 3 buffers";
    QTest::newRow("argument size") << "argument size"
                                      << QString("needs float32 with %1").arg(kRows * kColumns);
    QTest::newRow("param shape") << "param" << "param 'w'";
    QTest::newRow("param of no tensor") << "param name" << "not a tensor of the plan";
    QTest::newRow("inconsistent plan") << "plan" << "unknown tensor 'nope'";
    QTest::newRow("no compiler") << "compiler" << "no C compiler found";
    QTest::newRow("unwritable directory") << "directory" << "cannot create the export directory";
  }
  void exportFailuresAreDiagnostics() {
    QFETCH(QString, failure);
    QFETCH(QString, expected);
    runtime::GraphPlan plan = twoNodePlan();
    std::map<std::string, NDArray> params = {{"w", weights_}};
    ExportOptions options;
    QTemporaryDir dir;
    QString target = dir.path() + "/module";
    if (failure == "kernel") plan.nodes[1].kernel = "fused_softmax_0";
    if (failure == "arguments") plan.nodes[0].args.pop_back();
    if (failure == "argument size") plan.tensors[2].shape = {kRows, kColumns - 1};
    if (failure == "param") params["w"] = randomFloatArray({kColumns, kDepth}, 6);
    if (failure == "param name") params["bias"] = weights_;
    if (failure == "plan") plan.outputs.push_back("nope");
    if (failure == "compiler") options.compiler = dir.path().toStdString() + "/no-such-cc";
    if (failure == "directory") {
      QFile blocker(dir.path() + "/file");
      QVERIFY(blocker.open(QIODevice::WriteOnly));
      target = blocker.fileName() + "/module";
    }
    Status status = exportModule(target.toStdString(), kernels_, plan, params, options);
    QVERIFY(!status.ok());
    QString message = QString::fromStdString(status.error().toString());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY(!QFile::exists(target + "/graph.json"));
  }
};

QTEST_GUILESS_MAIN(TestExport)
#include "test_export.moc"
