// `tessel quantize` as a user runs it on the example tiny ResNet: a QDQ model that Tessel runs
// with int8 convolutions (also made in memory by `tessel compile --quantize int8`), a report
// whose figures say the quantized model kept the signal, and
// clear refusals (exit 2, the input model untouched) for calibration data of the wrong shape,
// an output path that is the input, an unknown layer to skip and a missing flag.
#include <QtTest>

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <random>

#include "CliTestSupport.h"
#include "runtime/Npy.h"

using namespace tessel;
using testing::describe;
using testing::Run;
using testing::runTessel;

namespace {

const QString kModel = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
const char* const kData = TESSEL_SOURCE_DIR "/tests/app/data/";

QByteArray fileHash(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256);
}

// `count` samples of the model's [1, 3, 32, 32] input, stacked along the first axis.
QString writeCalibration(const QTemporaryDir& directory, std::vector<int64_t> shape,
                         const QString& name = "calibration.npy") {
  auto array = runtime::NDArray::empty(shape, runtime::DataType::float32());
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : array.values<float>()) v = normal(rng);
  QString path = directory.filePath(name);
  runtime::writeNpy(path.toStdString(), array);
  return path;
}

QJsonObject readJson(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

}  // namespace

class TestQuantizeCli : public QObject {
  Q_OBJECT
private slots:
  void quantizesTheExampleModel() {
    QTemporaryDir directory;
    QString calibration = writeCalibration(directory, {8, 3, 32, 32});
    QString output = directory.filePath("tiny_resnet.int8.onnx"), report = directory.filePath("report.json");
    QByteArray before = fileHash(kModel);
    QStringList args = {"quantize", kModel, "--calibration", calibration, "-o", output, "--per-channel",
                        "--report", report};
    Run run = runTessel(args);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(args, run)));
    QCOMPARE(fileHash(kModel), before);
    QVERIFY2(run.out.contains("SQNR") && run.out.contains("top-1 agreement"), qPrintable(run.out));

    QJsonObject json = readJson(report);
    QCOMPARE(json["method"].toString(), QString("minmax"));
    QCOMPARE(json["calibration_samples"].toInt(), 8);
    QJsonArray layers = json["layers"].toArray();
    QCOMPARE(layers.size(), 4);  // the stem, the block's two convolutions and the head's Gemm
    for (const auto& layer : layers) {
      QJsonObject l = layer.toObject();
      QVERIFY2(l["sqnr_db"].toDouble() > 20, qPrintable(QJsonDocument(l).toJson()));
      QVERIFY(l["input"].toObject()["scale"].toDouble() > 0);
    }
    QCOMPARE(layers[0].toObject()["relu"].toString(), QString("/stem/stem.2/Relu"));
    QCOMPARE(layers[3].toObject()["op"].toString(), QString("Gemm"));
    // The block reads the stem's max pool, which passes the stem's int8 values through: its
    // input takes the stem output's scale.
    QCOMPARE(layers[1].toObject()["input"].toObject()["scale"].toDouble(),
             layers[0].toObject()["output"].toObject()["scale"].toDouble());
    // Its logits feed a Softmax, so they are quantized too.
    QVERIFY(layers[3].toObject()["output"].toObject()["quantized"].toBool());
    double outputSqnr = json["outputs"].toArray()[0].toObject()["sqnr_db"].toDouble();
    QVERIFY2(outputSqnr > 25, qPrintable(QString::number(outputSqnr)));

    // Tessel runs the written model's convolutions and its dense head in int8.
    QStringList inspect = {"inspect", output};
    Run inspected = runTessel(inspect);
    QVERIFY2(inspected.exitCode == 0, qPrintable(describe(inspect, inspected)));
    QVERIFY2(inspected.out.contains("QLinearConv") && inspected.out.contains("QDensePrepacked") &&
                 inspected.out.contains(QRegularExpression("= MaxPool\\([^\\n]*: uint8")),
             qPrintable(inspected.out));

    // Entropy calibration clips: some tensor's range ends below the largest value seen.
    QStringList entropy = {"quantize", kModel, "--calibration", calibration, "-o", output, "--method", "entropy",
                           "--report", report};
    Run clipped = runTessel(entropy);
    QVERIFY2(clipped.exitCode == 0, qPrintable(describe(entropy, clipped)));
    bool clips = false;
    for (const auto& layer : readJson(report)["layers"].toArray()) {
      QJsonObject out = layer.toObject()["output"].toObject();
      clips = clips || out["clip"].toArray()[1].toDouble() < out["max"].toDouble();
    }
    QVERIFY(clips);

    // A skipped layer stays float and leaves the report.
    QStringList skipping = {"quantize", kModel, "--calibration", calibration, "-o", output, "--skip",
                            "/block/block.3/Conv", "--report", report};
    Run skipped = runTessel(skipping);
    QVERIFY2(skipped.exitCode == 0, qPrintable(describe(skipping, skipped)));
    QCOMPARE(readJson(report)["layers"].toArray().size(), 3);
  }

  // A depthwise convolution (MobileNet's) is a quantized layer too, and runs on the int8
  // depthwise kernel between the two 1x1 int8 convolutions.
  void quantizesDepthwiseConvolutions() {
    QTemporaryDir directory;
    const QString model = QString(kData) + "depthwise.onnx";
    QString calibration = writeCalibration(directory, {4, 16, 12, 12});
    QString output = directory.filePath("depthwise.int8.onnx"), report = directory.filePath("report.json");
    QStringList args = {"quantize", model, "--calibration", calibration, "-o", output, "--per-channel",
                        "--report", report};
    Run run = runTessel(args);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(args, run)));
    QJsonArray layers = readJson(report)["layers"].toArray();
    QStringList names;
    for (const auto& layer : layers) names << layer.toObject()["node"].toString();
    QVERIFY2(names == QStringList({"expand", "depthwise", "project"}), qPrintable(names.join(", ")));
    for (const auto& layer : layers)
      QVERIFY2(layer.toObject()["sqnr_db"].toDouble() > 25, qPrintable(QJsonDocument(layer.toObject()).toJson()));
    QStringList inspect = {"inspect", output};
    Run inspected = runTessel(inspect);
    QVERIFY2(inspected.exitCode == 0 && inspected.out.contains("QLinearDepthwiseConvPrepacked") &&
                 inspected.out.count("QLinearConvPrepacked") == 2,
             qPrintable(describe(inspect, inspected)));
  }

  // `tessel compile --quantize int8` quantizes in memory exactly as `tessel quantize` writes:
  // the module it exports computes what the written QDQ model computes, in int8 kernels.
  void compileQuantizesInMemory() {
    QTemporaryDir directory;
    QString calibration = writeCalibration(directory, {4, 3, 32, 32});
    QString qdq = directory.filePath("tiny_resnet.int8.onnx"), module = directory.filePath("module");
    QStringList quantize = {"quantize", kModel, "--calibration", calibration, "-o", qdq, "--per-channel"};
    Run quantized = runTessel(quantize);
    QVERIFY2(quantized.exitCode == 0, qPrintable(describe(quantize, quantized)));
    QByteArray before = fileHash(kModel);
    QStringList compile = {"compile", kModel, "-o", module, "--quantize", "int8", "--calibration", calibration,
                           "--per-channel"};
    Run compiled = runTessel(compile);
    QVERIFY2(compiled.exitCode == 0, qPrintable(describe(compile, compiled)));
    QVERIFY2(compiled.out.contains("quantized_layers=4"), qPrintable(compiled.out));
    QCOMPARE(fileHash(kModel), before);
    QFile graph(module + "/graph.json");
    QVERIFY(graph.open(QIODevice::ReadOnly));
    QVERIFY(graph.readAll().contains("QLinearConv"));

    QString image = writeCalibration(directory, {1, 3, 32, 32}, "image.npy");
    auto outputOf = [&](const QString& model, const QString& name) -> QByteArray {
      QString outputs = directory.filePath(name);
      QStringList run = {"run", model, "--input", "image=" + image, "--output-dir", outputs};
      Run ran = runTessel(run);
      if (ran.exitCode != 0) qWarning("%s", qPrintable(describe(run, ran)));
      QFile file(outputs + "/probabilities.npy");
      return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    };
    // `tessel measure` holds an int8 kernel to the int8 ceiling, a float one to the FMA one:
    // on a CPU with VNNI the first is about four times the second.
    auto measuredPeak = [&](const QString& task) {
      QStringList args = {"measure", qdq, "--task", task, "--threads", "1", "--min-seconds", "0.02"};
      Run run = runTessel(args);
      for (const QString& line : run.out.split('\n'))
        if (line.startsWith("peak_gflops=")) return line.mid(12).toDouble();
      qWarning("%s", qPrintable(describe(args, run)));
      return 0.0;
    };
    QStringList listing = {"measure", "--list-tasks", qdq};
    Run tasks = runTessel(listing);
    QString integerTask, floatTask;
    for (const QString& task : tasks.out.split('\n', Qt::SkipEmptyParts)) {
      if (task.startsWith("QLinearConvPrepacked") && integerTask.isEmpty()) integerTask = task;
      if (task.contains("Softmax") && floatTask.isEmpty()) floatTask = task;
    }
    QVERIFY2(!integerTask.isEmpty() && !floatTask.isEmpty(), qPrintable(tasks.out));
    double integerPeak = measuredPeak(integerTask), floatPeak = measuredPeak(floatTask);
    QVERIFY(integerPeak > 0 && floatPeak > 0);
    QFile cpuinfo("/proc/cpuinfo");
    bool vnni = cpuinfo.open(QIODevice::ReadOnly) && cpuinfo.readAll().contains("avx512_vnni");
    if (vnni) QVERIFY2(integerPeak > 2 * floatPeak, qPrintable(QString("%1 against %2").arg(integerPeak).arg(floatPeak)));

    QByteArray fromModule = outputOf(module, "module-out"), fromFile = outputOf(qdq, "file-out");
    QVERIFY(!fromModule.isEmpty());
    QCOMPARE(fromModule, fromFile);

    // The quantization flags mean nothing without --quantize, and --quantize needs data.
    for (const QStringList& args : {QStringList{"compile", kModel, "-o", module, "--per-channel"},
                                    QStringList{"compile", kModel, "-o", module, "--quantize", "int8"},
                                    QStringList{"compile", kModel, "-o", module, "--quantize", "fp16", "--calibration",
                                                calibration}}) {
      Run refused = runTessel(args);
      QVERIFY2(refused.exitCode == 2 && refused.err.contains("--"), qPrintable(describe(args, refused)));
    }
  }

  // --dynamic needs no calibration: the dense head becomes DynamicQuantizeLinear ->
  // MatMulInteger -> Cast -> Mul, which Tessel runs as its int8 dense kernel; calibration
  // data, when given, only adds the output's SQNR. Ranges cannot be chosen for it.
  void quantizesDenseLayersDynamically() {
    QTemporaryDir directory;
    QString output = directory.filePath("dynamic.onnx"), report = directory.filePath("report.json");
    QStringList args = {"quantize", kModel, "--dynamic", "-o", output, "--report", report};
    Run run = runTessel(args);
    QVERIFY2(run.exitCode == 0 && run.out.contains("/head/Gemm") && run.out.contains("dynamic"),
             qPrintable(describe(args, run)));
    // Without calibration the report still lists the layers, marked dynamic.
    QJsonArray dynamicLayers = readJson(report)["layers"].toArray();
    QCOMPARE(dynamicLayers.size(), 1);
    QVERIFY(dynamicLayers[0].toObject()["dynamic"].toBool());
    QStringList inspect = {"inspect", output};
    Run inspected = runTessel(inspect);
    QVERIFY2(inspected.exitCode == 0 && inspected.out.contains("DynamicQuantizeLinear") &&
                 inspected.out.contains("QDensePrepacked") && !inspected.out.contains("QLinearConv"),
             qPrintable(inspected.out));

    QString calibration = writeCalibration(directory, {4, 3, 32, 32});
    QStringList reported = {"quantize", kModel, "--dynamic", "-o", output, "--calibration", calibration, "--report",
                            report};
    Run withReport = runTessel(reported);
    QVERIFY2(withReport.exitCode == 0, qPrintable(describe(reported, withReport)));
    QJsonObject json = readJson(report);
    QCOMPARE(json["method"].toString(), QString("dynamic"));
    double sqnr = json["outputs"].toArray()[0].toObject()["sqnr_db"].toDouble();
    QVERIFY2(sqnr > 30, qPrintable(QString::number(sqnr)));

    QStringList withMethod = {"quantize", kModel, "--dynamic", "-o", output, "--method", "entropy"};
    Run refused = runTessel(withMethod);
    QVERIFY2(refused.exitCode == 2 && refused.err.contains("computed at run time"), qPrintable(describe(withMethod, refused)));

    QStringList compile = {"compile", kModel, "-o", directory.filePath("module"), "--quantize", "int8", "--dynamic"};
    Run compiled = runTessel(compile);
    QVERIFY2(compiled.exitCode == 0 && compiled.out.contains("quantized_layers=1"), qPrintable(describe(compile, compiled)));
  }

  // numpy.savez's archive (two arrays of one sample) and savez_compressed's (one deflated
  // array of both samples) calibrate alike: the same model bytes.
  void readsNpzArchives() {
    QTemporaryDir directory;
    QByteArray written[2];
    int i = 0;
    for (QString archive : {"calibration_savez.npz", "calibration_savez_compressed.npz"}) {
      QString output = directory.filePath(archive + ".onnx"), report = directory.filePath("report.json");
      QStringList args = {"quantize", kModel, "--calibration", QString(kData) + archive, "-o", output, "--report",
                          report};
      Run run = runTessel(args);
      QVERIFY2(run.exitCode == 0, qPrintable(describe(args, run)));
      QCOMPARE(readJson(report)["calibration_samples"].toInt(), 2);
      written[i++] = fileHash(output);
    }
    QVERIFY(!written[0].isEmpty());
    QCOMPARE(written[0], written[1]);

    // A cut-off archive is refused, naming it.
    QFile whole(QString(kData) + "calibration_savez.npz");
    QVERIFY(whole.open(QIODevice::ReadOnly));
    QString truncated = directory.filePath("truncated.npz");
    QFile cut(truncated);
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(whole.readAll().left(20000));
    cut.close();
    QStringList args = {"quantize", kModel, "--calibration", truncated, "-o", directory.filePath("out.onnx")};
    Run refused = runTessel(args);
    QVERIFY2(refused.exitCode == 2 && refused.err.contains("truncated.npz") && refused.err.contains("zip"),
             qPrintable(describe(args, refused)));
  }

  // A model of two inputs calibrates from an .npz whose arrays are named after them (three
  // stacked samples each); its convolutions of 8 and 4 filters (fewer than the int8 kernel's
  // 16 lanes) run on the reference kernel. Arrays not named after the inputs are refused.
  void calibratesAModelWithTwoInputs() {
    QTemporaryDir directory;
    QString model = QString(kData) + "two_inputs.onnx", output = directory.filePath("two.int8.onnx");
    QString report = directory.filePath("report.json");
    QStringList args = {"quantize", model, "--calibration", QString(kData) + "two_inputs_calibration.npz", "-o", output,
                        "--report", report};
    Run run = runTessel(args);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(args, run)));
    QJsonObject json = readJson(report);
    QCOMPARE(json["calibration_samples"].toInt(), 3);
    QCOMPARE(json["layers"].toArray().size(), 2);
    QVERIFY(json["outputs"].toArray()[0].toObject()["sqnr_db"].toDouble() > 25);

    QStringList unnamed = {"quantize", model, "--calibration", QString(kData) + "calibration_savez.npz", "-o", output};
    Run refused = runTessel(unnamed);
    QVERIFY2(refused.exitCode == 2 && refused.err.contains("'arr_0', which is not an input") &&
                 refused.err.contains("image, overlay"),
             qPrintable(describe(unnamed, refused)));
    QStringList single = {"quantize", model, "--calibration", writeCalibration(directory, {2, 3, 16, 16}), "-o", output};
    Run npy = runTessel(single);
    QVERIFY2(npy.exitCode == 2 && npy.err.contains("one array per input"), qPrintable(describe(single, npy)));
  }

  void refusesBadInput_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<QString>("message");
    QTest::newRow("wrong shape") << "shape" << "does not fit input";
    QTest::newRow("no samples") << "empty" << "holds no samples";
    QTest::newRow("output is the input") << "overwrite" << "names the input model";
    QTest::newRow("unknown layer") << "skip" << "no quantizable layer of that name";
    QTest::newRow("no calibration") << "missing" << "--calibration DATA is required";
    QTest::newRow("unknown method") << "method" << "--method must be minmax, percentile or entropy";
  }
  void refusesBadInput() {
    QFETCH(QString, problem);
    QFETCH(QString, message);
    QTemporaryDir directory;
    QString calibration = writeCalibration(directory, problem == "shape"   ? std::vector<int64_t>{4, 3, 16, 16}
                                                      : problem == "empty" ? std::vector<int64_t>{0, 3, 32, 32}
                                                                           : std::vector<int64_t>{2, 3, 32, 32});
    QString output = problem == "overwrite" ? kModel : directory.filePath("out.onnx");
    QStringList args = {"quantize", kModel, "-o", output};
    if (problem != "missing") args << "--calibration" << calibration;
    if (problem == "skip") args << "--skip" << "/no/such/Conv";
    if (problem == "method") args << "--method" << "mse";
    QByteArray before = fileHash(kModel);
    Run run = runTessel(args);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(args, run)));
    QVERIFY2(run.err.contains(message), qPrintable(describe(args, run)));
    QCOMPARE(fileHash(kModel), before);
    if (problem != "overwrite") QVERIFY(!QFile::exists(output));
  }
};

QTEST_GUILESS_MAIN(TestQuantizeCli)
#include "test_quantize_cli.moc"
