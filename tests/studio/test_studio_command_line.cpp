// The tessel-studio executable's command line, as documentation scripts and CI call it:
// --screenshot renders headless (no display needed) and exits 0; mistakes exit 2 with a
// message naming what was wrong.
#include <QImage>
#include <QProcess>
#include <QtTest>

#include "StudioTestSupport.h"

namespace {

const QString kStudio = QStringLiteral(TESSEL_BINARY_DIR "/bin/tessel-studio");

struct Run {
  int exitCode = -1;
  QString output;
};

/// Runs tessel-studio without a display, with settings in `home`.
Run runStudio(const QStringList& arguments, const QTemporaryDir& home) {
  QProcess process;
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.remove("DISPLAY");
  environment.remove("WAYLAND_DISPLAY");
  environment.remove("QT_QPA_PLATFORM");
  environment.insert("XDG_CONFIG_HOME", home.path());
  environment.insert("HOME", home.path());
  process.setProcessEnvironment(environment);
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start(kStudio, arguments);
  if (!process.waitForFinished(180000)) return {};
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAll())};
}

}  // namespace

class TestStudioCommandLine : public QObject {
  Q_OBJECT

  QTemporaryDir home_;

private slots:
  void initTestCase() {
    // The executable is built with the Studio (./run, ./test); this suite only drives it.
    QVERIFY2(QFileInfo::exists(kStudio), "tessel-studio is not built (the test target depends on it)");
  }

  void screenshotRendersHeadlessAtTheRequestedSize() {
    QTemporaryDir dir;
    QString png = dir.filePath("graph.png");
    Run run = runStudio({"--screenshot", png, "--view", "graph", "--size", "1000x640", "--theme", "dark",
                         tessel::studio::testing::example("tiny_resnet.tessel")},
                        home_);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    QImage image(png);
    QCOMPARE(image.size(), QSize(1000, 640));
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 5)
      for (int x = 0; x < image.width(); x += 5) colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 20);
  }

  void mistakesExitWithTwoAndSayWhat_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QString model = tessel::studio::testing::example("tiny_resnet.onnx");
    QTest::newRow("unknown view") << QStringList{"--screenshot", "x.png", "--view", "code", model} << "--view code";
    QTest::newRow("bad size") << QStringList{"--screenshot", "x.png", "--size", "huge", model} << "--size huge";
    QTest::newRow("bad theme") << QStringList{"--screenshot", "x.png", "--theme", "blue", model} << "--theme blue";
    QTest::newRow("no file") << QStringList{"--screenshot", "x.png"} << "needs a model";
    // The example has no module groups to open.
    QTest::newRow("group without modules") << QStringList{"--screenshot", "x.png", "--open-group", "/features", model}
                                           << "--open-group";
    QTest::newRow("missing model") << QStringList{"--screenshot", "x.png", "/nonexistent/model.onnx"}
                                   << "/nonexistent/model.onnx";
  }
  void mistakesExitWithTwoAndSayWhat() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    QTemporaryDir dir;
    arguments[1] = dir.filePath(arguments[1]);
    Run run = runStudio(arguments, home_);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.output.contains(named), qPrintable(run.output));
    QVERIFY(!QFile::exists(arguments[1]));
  }

  void withoutADisplayTheWindowExplainsHeadlessUse() {
    Run run = runStudio({tessel::studio::testing::example("tiny_resnet.onnx")}, home_);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.output.contains("--screenshot"), qPrintable(run.output));
    QVERIFY(run.output.contains("tessel project run"));
  }
};

QTEST_GUILESS_MAIN(TestStudioCommandLine)
#include "test_studio_command_line.moc"
