// The model commands of the tessel tool as a user meets them (compile, run, bench MODEL,
// inspect, ops), on small models from the ONNX backend node tests.
#include <QtTest>

#include <cmath>

#include "CliTestSupport.h"
#include "tests/compiler/UnsupportedOperatorsModel.h"

#include "compiler/driver/Driver.h"
#include "compiler/driver/ModelProfile.h"
#include "compiler/driver/RunModel.h"
#include "compiler/lower/Lower.h"
#include "compiler/opdefs/OpRegistry.h"
#include "runtime/Npy.h"

namespace {

using testing::describe;
using testing::keyValues;
using testing::Run;
using testing::kTessel;
using testing::runTessel;

const QString kNodeTests = QStringLiteral("/usr/share/libonnx-testdata/data/node");

// The last pass of the standard pipeline (the names come from the driver, not from here).
QString lastPassName() { return QString::fromStdString(tessel::driver::standardPasses().passNames().back()); }

QString model(const QString& test) { return kNodeTests + "/" + test + "/model.onnx"; }
// A small residual CNN with constant weights (convolutions AlterLayout rewrites), checked in.
const QString kTinyResNet = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
const QString kTinyResNetData = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet/test_data_set_0");
QString dataSet(const QString& test) { return kNodeTests + "/" + test + "/test_data_set_0"; }

// A float32 array whose element i is f(i).
template <class F>
tessel::runtime::NDArray makeArray(std::vector<int64_t> shape, F f) {
  auto array = tessel::runtime::NDArray::empty(std::move(shape), tessel::runtime::DataType::float32());
  auto values = array.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = f(float(i));
  return array;
}

}  // namespace

class TestCliModels : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(kTessel).isExecutable(), qPrintable(kTessel + " is not built"));
    if (!QFileInfo(model("test_add")).exists())
      QSKIP("the ONNX node tests are not installed (Debian package libonnx-testdata)");
  }

  void helpListsEveryFlag_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("tessel --help") << QStringList{"--help"} << QStringList{"compile", "run", "bench", "inspect", "ops"};
    QTest::newRow("compile") << QStringList{"compile", "--help"}
                             << QStringList{"-o", "--input-shape", "--opt-level", "--disable-pass", "--threads"};
    QTest::newRow("run") << QStringList{"run", "--help"}
                         << QStringList{"--input", "--inputs-dir", "--output-dir", "--expect-dir", "--rtol", "--atol",
                                        "--input-shape"};
    QTest::newRow("bench MODEL") << QStringList{"bench", model("test_add"), "--help"}
                                 << QStringList{"--threads", "--repeat", "--profile", "latency_ms="};
    QTest::newRow("inspect") << QStringList{"inspect", "--help"}
                             << QStringList{"--print-after", "--disable-pass", "--input-shape"};
    QTest::newRow("ops") << QStringList{"ops", "--help"} << QStringList{"pattern"};
    QTest::newRow("inspect lists the pass options")
        << QStringList{"inspect", "--help"}
        << QStringList{"--pass-config", "AlterLayout.blocked_activations=true|false", "AlterLayout.pack_weights"};
  }
  void helpListsEveryFlag() {
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, mentions);
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    for (const QString& mention : mentions)
      QVERIFY2(run.out.contains(mention), qPrintable(mention + " missing from\n" + describe(arguments, run)));
  }

  // The ONNX test layout: inputs and expected outputs as TensorProto files.
  void runMatchingOutputsExitsZero() {
    QStringList arguments{"run", model("test_add"), "--inputs-dir", dataSet("test_add"), "--expect-dir",
                          dataSet("test_add")};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.contains("output 'sum' matches"), qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("result"), QString("match"));
  }

  // Sub's expected output is not what Add computes: exit 3 and the worst element shown.
  void runMismatchExitsThreeAndShowsTheWorstElement() {
    QStringList arguments{"run", model("test_add"), "--inputs-dir", dataSet("test_add"), "--expect-dir",
                          dataSet("test_sub")};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 3, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("result"), QString("mismatch"));
    QRegularExpression worst(R"(output 'sum': \d+ elements differ; worst at \[\d+, \d+, \d+\]: got \S+, expected \S+ )"
                             R"(\(tolerance \S+\))");
    QVERIFY2(worst.match(run.out).hasMatch(), qPrintable(describe(arguments, run)));
  }

  // A tolerance wide enough for any difference turns the same mismatch into a match.
  void runToleranceFlagsAreApplied() {
    QStringList arguments{"run", model("test_add"), "--inputs-dir", dataSet("test_add"), "--expect-dir",
                          dataSet("test_sub"), "--atol", "1e9"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
  }

  void runReadsAndWritesNpy() {
    QTemporaryDir directory;
    QVERIFY(directory.isValid());
    auto x = makeArray({3, 4, 5}, [](float i) { return i * 0.5f; });
    auto y = makeArray({3, 4, 5}, [](float i) { return 1.0f - i; });
    std::string xPath = directory.filePath("x.npy").toStdString(), yPath = directory.filePath("y.npy").toStdString();
    tessel::runtime::writeNpy(xPath, x);
    tessel::runtime::writeNpy(yPath, y);
    QString outputs = directory.filePath("outputs");
    QStringList arguments{"run", model("test_add"), "--input", QString::fromStdString("x=" + xPath),
                          "--input", QString::fromStdString("y=" + yPath), "--output-dir", outputs};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    // The output is written under the model's name for it.
    QString sumPath = outputs + "/sum.npy";
    QVERIFY2(QFileInfo(sumPath).exists(), qPrintable(describe(arguments, run)));
    auto sum = tessel::runtime::readNpy(sumPath.toStdString());
    QCOMPARE(sum.shape(), x.shape());
    auto got = sum.toVector<float>(), a = x.toVector<float>(), b = y.toVector<float>();
    for (size_t i = 0; i < got.size(); ++i) QCOMPARE(got[i], a[i] + b[i]);
  }

  void runErrorsExitTwoWithAMessage_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("messageMentions");
    QTest::newRow("missing model") << QStringList{"run", "no-such-model.onnx"} << QStringList{"no-such-model.onnx"};
    QTest::newRow("input without a value")
        << QStringList{"run", model("test_add"), "--input", dataSet("test_add") + "/input_0.pb"}
        << QStringList{"--input", "NAME=FILE"};
    QTest::newRow("missing input") << QStringList{"run", model("test_add"), "--input",
                                                  "x=" + dataSet("test_add") + "/input_0.pb"}
                                   << QStringList{"'y'", "no value"};
    QTest::newRow("unknown input name") << QStringList{"run", model("test_add"), "--input",
                                                       "z=" + dataSet("test_add") + "/input_0.pb"}
                                        << QStringList{"'z'", "x", "y"};
    QTest::newRow("wrong input shape") << QStringList{"run", model("test_add"), "--input",
                                                      "x=" + dataSet("test_relu") + "/input_0.pb", "--input",
                                                      "y=" + dataSet("test_conv_with_strides_padding") + "/input_0.pb"}
                                       << QStringList{"y"};
    QTest::newRow("unknown tensor file type") << QStringList{"run", model("test_add"), "--input",
                                                             "x=" + model("test_add")}
                                              << QStringList{"model.onnx", ".npy"};
    QTest::newRow("missing expect dir") << QStringList{"run", model("test_add"), "--inputs-dir", dataSet("test_add"),
                                                       "--expect-dir", "/no/such/directory"}
                                        << QStringList{"/no/such/directory"};
    QTest::newRow("malformed input shape") << QStringList{"run", model("test_add"), "--input-shape", "x:3,a"}
                                           << QStringList{"--input-shape", "x:3,a"};
    QTest::newRow("bad tolerance") << QStringList{"run", model("test_add"), "--rtol", "-1"} << QStringList{"--rtol"};
    QTest::newRow("unknown pass") << QStringList{"run", model("test_add"), "--disable-pass", "NoSuchPass"}
                                  << QStringList{"NoSuchPass", lastPassName()};
    QTest::newRow("unknown pass option")
        << QStringList{"run", model("test_add"), "--pass-config", "AlterLayout.blocked=false"}
        << QStringList{"AlterLayout.blocked", "AlterLayout.blocked_activations"};
    QTest::newRow("bad pass option value")
        << QStringList{"run", model("test_add"), "--pass-config", "AlterLayout.blocked_activations=off"}
        << QStringList{"'off'", "true or false"};
    QTest::newRow("pass option without a value")
        << QStringList{"run", model("test_add"), "--pass-config", "AlterLayout.blocked_activations"}
        << QStringList{"--pass-config", "KEY=VALUE"};
  }
  void runErrorsExitTwoWithAMessage() {
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, messageMentions);
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    for (const QString& mention : messageMentions)
      QVERIFY2(run.err.contains(mention), qPrintable(mention + " missing from the message\n" + describe(arguments, run)));
    QVERIFY2(!run.out.contains("result="), qPrintable(describe(arguments, run)));
  }

  // Not a model at all: every command that reads a model says which file and exits 2.
  void badModelFileIsAnError_data() {
    QTest::addColumn<QString>("command");
    for (const char* command : {"run", "compile", "bench", "inspect"}) QTest::newRow(command) << QString(command);
  }
  void badModelFileIsAnError() {
    QFETCH(QString, command);
    QTemporaryDir directory;
    QString path = directory.filePath("garbage.onnx");
    QVERIFY(testing::writeTextFile(path, "this is not a protobuf model\n"));
    QStringList arguments{command, path};
    if (command == "compile") arguments << "-o" << directory.filePath("module");
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains(path), qPrintable(describe(arguments, run)));
    QVERIFY2(!QFileInfo(directory.filePath("module")).exists(), qPrintable(describe(arguments, run)));
  }

  // A model using operators Tessel does not implement: every command that loads it exits 2 and
  // names every such node at once, grouped by operator, not only the first.
  void unsupportedOperatorsAreAllNamed_data() {
    QTest::addColumn<QString>("command");
    for (const char* command : {"run", "compile", "inspect"}) QTest::newRow(command) << command;
  }
  void unsupportedOperatorsAreAllNamed() {
    QFETCH(QString, command);
    QTemporaryDir directory;
    QString path = directory.filePath("unsupported.onnx");
    QVERIFY(testing::writeUnsupportedOperatorsModel(path.toStdString()));
    QStringList arguments{command, path};
    if (command == "compile") arguments << "-o" << directory.filePath("module");
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains(path + ": error: uses 3 unsupported operators in 4 nodes: "), qPrintable(describe(arguments, run)));
    for (const testing::UnsupportedNode& node : testing::kUnsupportedNodes) {
      QString op = QString::fromStdString(node.opType), name = QString::fromStdString(node.name);
      QVERIFY2(run.err.contains(op) && run.err.contains("'" + name + "'"), qPrintable(name + "\n" + describe(arguments, run)));
    }
    QVERIFY2(run.err.contains("from domain 'com.example'"), qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("`tessel ops`"), qPrintable(describe(arguments, run)));
    // One diagnostic, not one per node.
    QCOMPARE(run.err.count("error:"), 1);
    QVERIFY2(!QFileInfo::exists(directory.filePath("module")), qPrintable(describe(arguments, run)));
  }

  // compile -o DIR writes a module that `run DIR` loads with the runtime alone.
  void compiledModuleRunsFromItsDirectory() {
    QTemporaryDir directory;
    QString module = directory.filePath("conv");
    QString test = "test_conv_with_strides_padding";
    QStringList compile{"compile", model(test), "-o", module};
    Run compiled = runTessel(compile);
    QVERIFY2(compiled.finished && compiled.exitCode == 0, qPrintable(describe(compile, compiled)));
    for (const char* file : {"graph.json", "params.bin"})
      QVERIFY2(QFileInfo(module + "/" + file).exists(), qPrintable(file + describe(compile, compiled)));
    auto summary = keyValues(compiled.out);
    QVERIFY2(summary.value("kernels").toInt() >= 1, qPrintable(compiled.out));
    for (const char* key : {"fused_ops", "planned_memory_bytes", "naive_memory_bytes", "compile_seconds"})
      QVERIFY2(summary.contains(key), qPrintable(QString(key) + " missing from\n" + compiled.out));
    QVERIFY2(summary.value("planned_memory_bytes").toLongLong() <= summary.value("naive_memory_bytes").toLongLong(),
             qPrintable(compiled.out));

    QStringList run{"run", module, "--inputs-dir", dataSet(test), "--expect-dir", dataSet(test)};
    Run ran = runTessel(run);
    QVERIFY2(ran.finished && ran.exitCode == 0, qPrintable(describe(run, ran)));
    QCOMPARE(keyValues(ran.out).value("result"), QString("match"));
  }

  // --time-report names every phase a user would look for, with times that add up: each
  // pass and lowering step of the pipeline, code generation's three parts, and the slowest
  // kernels, which are kernels of this module.
  void compileTimeReportNamesEveryPhase() {
    QTemporaryDir directory;
    QStringList arguments{"compile", kTinyResNet, "-o", directory.filePath("module"), "--time-report"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    // "  name   1.234 s  note": the seconds of the first line naming `phase`.
    auto secondsOf = [&](const QString& phase) {
      QRegularExpression line("^\\s+" + QRegularExpression::escape(phase) + "\\s+([0-9.]+) s",
                              QRegularExpression::MultilineOption);
      auto match = line.match(run.out);
      return match.hasMatch() ? match.captured(1).toDouble() : -1.0;
    };
    QStringList phases{"load", "import", "type inference", "passes", "code generation", "LLVM IR emission",
                       "LLVM optimizer (O3)", "machine code", "link kernels.so", "total"};
    for (auto& name : tessel::driver::standardPasses().passNames()) phases << QString::fromStdString(name);
    for (auto& name : tessel::loweringStepNames()) phases << QString::fromStdString(name);
    for (const QString& phase : phases)
      QVERIFY2(secondsOf(phase) >= 0, qPrintable(phase + " missing from\n" + run.out));
    double total = secondsOf("total");
    QVERIFY2(total > 0, qPrintable(run.out));
    double parts = secondsOf("load") + secondsOf("passes") + secondsOf("code generation");
    QVERIFY2(parts <= total * 1.01 + 0.002, qPrintable(run.out));
    QVERIFY2(std::abs(secondsOf("import") + secondsOf("type inference") - secondsOf("load")) < 0.002, qPrintable(run.out));
    // Code generation is most of a compile; the kernels' CPU time is in its three parts.
    QVERIFY2(secondsOf("LLVM optimizer (O3)") > 0, qPrintable(run.out));
    int kernels = keyValues(run.out).value("kernels").toInt();
    QRegularExpression slowest("^  (\\d+)\\. (\\S+)$", QRegularExpression::MultilineOption);
    int listed = 0;
    for (auto it = slowest.globalMatch(run.out); it.hasNext();) {
      auto match = it.next();
      QCOMPARE(match.captured(1).toInt(), ++listed);
    }
    QCOMPARE(listed, std::min(kernels, 5));
  }

  void compileWithoutOutputIsAnError() {
    QStringList arguments{"compile", model("test_add")};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("-o"), qPrintable(describe(arguments, run)));
  }

  // Every pass of the standard pipeline appears, in order, with the graph after it.
  void inspectShowsTheGraphAfterEveryPass() {
    QStringList arguments{"inspect", model("test_conv_with_strides_padding"), "--print-after", "all"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QStringList printed;
    QRegularExpression header(R"(^// ---- after (\S+) \()", QRegularExpression::MultilineOption);
    for (auto it = header.globalMatch(run.out); it.hasNext();) printed << it.next().captured(1);
    QStringList expected;
    for (auto& name : tessel::driver::standardPasses().passNames()) expected << QString::fromStdString(name);
    QCOMPARE(printed, expected);
    QVERIFY2(run.out.contains("Conv"), qPrintable(run.out));
  }

  void inspectPrintsOnePassAndHonoursDisabledPasses() {
    QString pass = lastPassName();
    QStringList arguments{"inspect", model("test_add"), "--print-after", pass, "--disable-pass", pass};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(run.out.count("// ---- after "), 1);
    QVERIFY2(run.out.contains("// ---- after " + pass + " (skipped)"), qPrintable(run.out));
    QVERIFY2(QRegularExpression("^" + pass + R"(\s+skipped)", QRegularExpression::MultilineOption).match(run.out).hasMatch(),
             qPrintable(run.out));
  }

  // --pass-config reaches the pass: with blocked activations off no tensor is channel-blocked,
  // and the model still computes its expected output.
  void passConfigTurnsBlockedActivationsOff() {
    if (!QFileInfo(kTinyResNet).exists()) QSKIP("resources/examples/tiny_resnet.onnx is missing");
    QStringList standard{"inspect", kTinyResNet, "--print-after", "AlterLayout"};
    Run blocked = runTessel(standard);
    QVERIFY2(blocked.finished && blocked.exitCode == 0, qPrintable(describe(standard, blocked)));
    QVERIFY2(blocked.out.contains("@NCHW"), qPrintable(blocked.out));
    QStringList off = standard + QStringList{"--pass-config", "AlterLayout.blocked_activations=false"};
    Run unblocked = runTessel(off);
    QVERIFY2(unblocked.finished && unblocked.exitCode == 0, qPrintable(describe(off, unblocked)));
    QVERIFY2(unblocked.out.contains("ConvPrepacked") && !unblocked.out.contains("NCHW") &&
                 !unblocked.out.contains("LayoutTransform"),
             qPrintable(unblocked.out));
    QStringList run{"run", kTinyResNet, "--inputs-dir", kTinyResNetData, "--expect-dir", kTinyResNetData,
                    "--pass-config", "AlterLayout.blocked_activations=false"};
    Run ran = runTessel(run);
    QVERIFY2(ran.finished && ran.exitCode == 0, qPrintable(describe(run, ran)));
    QCOMPARE(keyValues(ran.out).value("result"), QString("match"));
  }

  // A model of opset 6 (PyTorch's old exporter) is converted before it is imported: inspect
  // shows that step and its time before the imported graph, and `run` gets the expected output.
  void inspectShowsTheOpsetConversion() {
    const QString test = "/usr/share/libonnx-testdata/data/pytorch-operator/test_operator_add_broadcast";
    if (!QFileInfo(test + "/model.onnx").exists()) QSKIP("libonnx-testdata's pytorch-operator tests are not installed");
    QStringList arguments{"inspect", test + "/model.onnx"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QRegularExpression step(R"(^ConvertOpset 6→7\s+(\d+\.\d{3})\n\(imported\))", QRegularExpression::MultilineOption);
    QVERIFY2(step.match(run.out).hasMatch(), qPrintable(run.out));
    QVERIFY2(step.match(run.out).captured(1).toDouble() > 0, qPrintable(run.out));
    QStringList runArguments{"run", test + "/model.onnx", "--inputs-dir", test + "/test_data_set_0", "--expect-dir",
                             test + "/test_data_set_0"};
    Run ran = runTessel(runArguments);
    QVERIFY2(ran.finished && ran.exitCode == 0, qPrintable(describe(runArguments, ran)));
    QCOMPARE(keyValues(ran.out).value("result"), QString("match"));
    // A model of a supported opset takes no such step.
    QStringList current{"inspect", model("test_add")};
    Run plain = runTessel(current);
    QVERIFY2(plain.finished && plain.exitCode == 0 && !plain.out.contains("ConvertOpset"), qPrintable(plain.out));
  }

  void inspectUnknownPassIsAnError() {
    QStringList arguments{"inspect", model("test_add"), "--print-after", "NoSuchPass"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("NoSuchPass") && run.err.contains(lastPassName()), qPrintable(describe(arguments, run)));
  }

  void benchModelPrintsLatency() {
    QStringList arguments{"bench", model("test_conv_with_strides_padding"), "--repeat", "3", "--threads", "2",
                          "--profile"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    bool ok = false;
    double latency = keyValues(run.out).value("latency_ms").toDouble(&ok);
    QVERIFY2(ok && latency > 0 && std::isfinite(latency), qPrintable(run.out));
    QCOMPARE(keyValues(run.out).value("threads"), QString("2"));
    // The profile lists operators with their share of the total, slowest first.
    QRegularExpression row(R"(^\s*(\d+\.\d+)\s+(\d+\.\d)%)", QRegularExpression::MultilineOption);
    QList<double> times;
    for (auto it = row.globalMatch(run.out); it.hasNext();) times << it.next().captured(1).toDouble();
    QVERIFY2(!times.isEmpty(), qPrintable(run.out));
    for (qsizetype i = 1; i < times.size(); ++i) QVERIFY2(times[i - 1] >= times[i], qPrintable(run.out));
  }

  // --save-profile writes the same per-operator medians as JSON, which reads back (the Studio's
  // Share column and time colouring use it); a folder that cannot be written is an error.
  void benchSavesTheProfile() {
    QTemporaryDir dir;
    QString file = dir.filePath("conv.profile.json");
    QStringList arguments{"bench", model("test_conv_with_strides_padding"), "--repeat", "4", "--save-profile", file};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("profile_file"), file);
    auto profile = tessel::driver::readModelProfile(file.toStdString());
    QVERIFY2(profile, profile ? "" : profile.error().toString().c_str());
    QCOMPARE(profile->runs, 4);
    QCOMPARE(QString::number(profile->latencyMs, 'f', 4), keyValues(run.out).value("latency_ms"));
    QVERIFY(!profile->nodes.empty());
    for (const tessel::driver::ProfiledNode& node : profile->nodes)
      QVERIFY(!node.kernel.empty() && node.milliseconds >= 0);
    QStringList unwritable{"bench", model("test_conv_with_strides_padding"), "--repeat", "1", "--save-profile",
                           dir.filePath("no/such/folder/p.json")};
    Run refused = runTessel(unwritable);
    QVERIFY2(refused.finished && refused.exitCode == 2 && refused.err.contains("no/such/folder"),
             qPrintable(describe(unwritable, refused)));
  }

  // --profile states every kernel against its roofline bound (its flops at the measured FMA peak
  // or its least bytes at the measured memory bandwidth, whichever takes longer), in the table
  // and in the saved JSON. The machine may be shared, so 100% is no ceiling here (data in cache
  // beats the memory roof; a busy moment lowers the probes): every kernel has a fraction above
  // 0 and below what only a slip of units would give.
  void benchProfileStatesEachKernelsRoofline() {
    QTemporaryDir dir;
    QString file = dir.filePath("tiny.profile.json");
    QStringList arguments{"bench", kTinyResNet, "--repeat", "3", "--threads", "2", "--profile", "--save-profile", file};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    bool peakOk = false, bandwidthOk = false;
    double peak = keyValues(run.out).value("peak_gflops").toDouble(&peakOk);
    double bandwidth = keyValues(run.out).value("bandwidth_gbps").toDouble(&bandwidthOk);
    QVERIFY2(peakOk && peak > 0 && bandwidthOk && bandwidth > 0, qPrintable(run.out));
    QRegularExpression anyRow(R"(^\s*\d+\.\d+\s+\d+\.\d%)", QRegularExpression::MultilineOption);
    QRegularExpression roofRow(R"(^\s*\d+\.\d+\s+\d+\.\d%\s+(compute|memory)\s+\d+\.\d%\s)",
                               QRegularExpression::MultilineOption);
    qsizetype rows = run.out.count(anyRow);
    QVERIFY2(rows > 1 && run.out.count(roofRow) == rows, qPrintable(run.out));

    auto profile = tessel::driver::readModelProfile(file.toStdString());
    QVERIFY2(profile, profile ? "" : profile.error().toString().c_str());
    QCOMPARE(profile->roof.peakGflops > 0 && profile->roof.bandwidthGBps > 0, true);
    for (const tessel::driver::ProfiledNode& node : profile->nodes) {
      QVERIFY2(!node.op.empty() && node.flops && node.bytes && *node.bytes > 0 && node.rooflineFraction,
               node.kernel.c_str());
      QVERIFY2(*node.rooflineFraction > 0 && *node.rooflineFraction < 50,
               qPrintable(QString("%1: %2").arg(node.kernel.c_str()).arg(*node.rooflineFraction)));
    }

    // A module compiled elsewhere does not say how many flops its kernels do: '-', not a guess.
    QString module = dir.filePath("module");
    Run compiled = runTessel({"compile", kTinyResNet, "-o", module});
    QVERIFY2(compiled.finished && compiled.exitCode == 0, qPrintable(compiled.err));
    QStringList onModule{"bench", module, "--repeat", "2", "--threads", "2", "--profile"};
    Run unknown = runTessel(onModule);
    QVERIFY2(unknown.finished && unknown.exitCode == 0, qPrintable(describe(onModule, unknown)));
    QRegularExpression unknownRow(R"(^\s*\d+\.\d+\s+\d+\.\d%\s+-\s+-\s)", QRegularExpression::MultilineOption);
    QVERIFY2(unknown.out.count(unknownRow) == rows, qPrintable(unknown.out));
  }

  // A model that needs an input's value while compiling (here Reshape's shape) cannot be timed
  // on made-up inputs; given the values, it is.
  void benchTakesInputValues() {
    const QString test = "test_reshape_reordered_all_dims";
    QStringList madeUp{"bench", model(test), "--repeat", "3"};
    Run refused = runTessel(madeUp);
    QVERIFY2(refused.finished && refused.exitCode == 2, qPrintable(describe(madeUp, refused)));
    QVERIFY2(refused.err.contains("Reshape") && refused.err.contains("shape"), qPrintable(describe(madeUp, refused)));
    QStringList given{"bench", model(test), "--repeat", "3", "--inputs-dir", dataSet(test)};
    Run run = runTessel(given);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(given, run)));
    QVERIFY2(keyValues(run.out).contains("latency_ms"), qPrintable(run.out));
    QStringList missingFile{"bench", model(test), "--input", "shape=no_such_file.pb"};
    Run unreadable = runTessel(missingFile);
    QVERIFY2(unreadable.finished && unreadable.exitCode == 2 && unreadable.err.contains("no_such_file.pb"),
             qPrintable(describe(missingFile, unreadable)));
  }

  // An argument that looks like a model but is missing is reported as a file, not an operator.
  void benchMissingModelNamesTheFile() {
    QStringList arguments{"bench", "missing.onnx"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("missing.onnx"), qPrintable(describe(arguments, run)));
  }

  // The comparison `tessel run --expect-dir` and the conformance suite make, element by element.
  void comparisonFollowsTheOnnxRule() {
    using tessel::runtime::DataType;
    using tessel::runtime::NDArray;
    auto array = [](DataType type, std::vector<int64_t> shape, const std::vector<double>& values) {
      auto result = NDArray::empty(std::move(shape), type);
      for (size_t i = 0; i < values.size(); ++i) {
        if (type == DataType::float32()) result.values<float>()[i] = float(values[i]);
        else if (type == DataType::int64()) result.values<int64_t>()[i] = int64_t(values[i]);
        else result.values<bool>()[i] = values[i] != 0;
      }
      return result;
    };
    tessel::driver::Tolerance tolerance;  // rtol 1e-3, atol 1e-7
    const double nan = std::nan("");
    auto compare = [&](const NDArray& got, const NDArray& expected) {
      return tessel::driver::compareOutput("y", got, expected, tolerance);
    };
    auto f32 = DataType::float32();
    // Within atol + rtol * |expected| on every element, NaN where NaN is expected.
    QVERIFY(compare(array(f32, {3}, {1.0009, nan, 0}), array(f32, {3}, {1.0, nan, 0})).matches);
    // Outside it: the worst element is the one furthest beyond its tolerance.
    auto off = compare(array(f32, {2, 2}, {1.0, 2.01, 3.5, 4.0}), array(f32, {2, 2}, {1.0, 2.0, 3.0, 4.0}));
    QVERIFY(!off.matches);
    QCOMPARE(off.mismatchedElements, int64_t(2));
    QCOMPARE(off.worstIndex, (std::vector<int64_t>{1, 0}));
    QCOMPARE(off.got, 3.5);
    QCOMPARE(off.expected, 3.0);
    QVERIFY(qFuzzyCompare(off.allowed, tolerance.atol + tolerance.rtol * 3.0));
    QVERIFY2(QString::fromStdString(off.describe()).contains("[1, 0]"), off.describe().c_str());
    // NaN where a number is expected, and a number where NaN is expected, both differ.
    QVERIFY(!compare(array(f32, {1}, {nan}), array(f32, {1}, {1.0})).matches);
    QVERIFY(!compare(array(f32, {1}, {1.0}), array(f32, {1}, {nan})).matches);
    // Integers and booleans exactly, whatever the tolerance.
    tolerance.atol = 10;
    QVERIFY(!compare(array(DataType::int64(), {2}, {5, 7}), array(DataType::int64(), {2}, {5, 8})).matches);
    QVERIFY(compare(array(DataType::boolean(), {2}, {1, 0}), array(DataType::boolean(), {2}, {1, 0})).matches);
    // Shapes and types must agree before any element is looked at.
    auto shape = compare(array(f32, {2, 1}, {1, 2}), array(f32, {1, 2}, {1, 2}));
    QVERIFY(!shape.matches && QString::fromStdString(shape.mismatchReason).contains("shape"));
    auto type = compare(array(DataType::int64(), {2}, {1, 2}), array(f32, {2}, {1, 2}));
    QVERIFY(!type.matches && QString::fromStdString(type.mismatchReason).contains("int64"));
  }

  void opsListsTheRegisteredOperators() {
    Run run = runTessel({"ops"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe({"ops"}, run)));
    const auto& registry = tessel::graph::OpRegistry::global();
    for (auto& name : registry.names()) {
      QString pattern = tessel::graph::opPatternName(registry.find(name)->pattern);
      QRegularExpression line("^" + QRegularExpression::escape(QString::fromStdString(name)) + R"(\s+)" +
                                  QRegularExpression::escape(pattern) + R"(\s)",
                              QRegularExpression::MultilineOption);
      QVERIFY2(line.match(run.out).hasMatch(), qPrintable(QString::fromStdString(name) + " missing from\n" + run.out));
    }
    QVERIFY2(run.out.contains(QString("%1 operators").arg(registry.names().size())), qPrintable(run.out));
  }
};

QTEST_GUILESS_MAIN(TestCliModels)
#include "test_cli_models.moc"
