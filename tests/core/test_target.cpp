// The Target value: its string form read back exactly, and clear errors for bad strings.
#include <QtTest>

#include "core/target/Target.h"

using namespace tessel;

class TestTarget : public QObject {
  Q_OBJECT
private slots:
  void stringFormRoundTrips_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("avx-512 cpu") << "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=sapphirerapids -mattr=+avx,+avx2,+avx512f,+fma "
                                    "-vector-bits=512 -cores=2 -l1=49152 -l2=2097152 -l3=110100480";
    QTest::newRow("avx2 cpu, no l3") << "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3 -mattr=+avx,+avx2,+fma "
                                        "-vector-bits=256 -cores=1 -l1=32768 -l2=524288";
    QTest::newRow("generic") << "llvm -vector-bits=128 -cores=4 -l1=32768 -l2=1048576";
    QTest::newRow("cuda") << "cuda -arch=sm_80";
    QTest::newRow("opencl") << "opencl";
  }
  void stringFormRoundTrips() {
    QFETCH(QString, text);
    auto target = Target::parse(text.toStdString());
    QVERIFY2(target, target ? "" : target.error().toString().c_str());
    QCOMPARE(QString::fromStdString(target->toString()), text);
    auto again = Target::parse(target->toString());
    QVERIFY(again && *again == *target);
  }

  void partsAreReadIntoFields() {
    auto target = Target::parse("llvm -mcpu=znver4 -mattr=+fma,+avx512f,+avx2,-avx512fp16,+avx -cores=2");
    QVERIFY(target);
    QCOMPARE(target->kind, TargetKind::Cpu);
    QCOMPARE(QString::fromStdString(target->cpu), QString("znver4"));
    QCOMPARE(target->features, (std::vector<std::string>{"avx", "avx2", "avx512f", "fma"}));  // sorted, '-' dropped
    QVERIFY(target->hasFeature("avx512f"));
    QVERIFY(!target->hasFeature("avx512fp16"));
    QCOMPARE(target->vectorBits, 512);  // follows the features when not given
    QCOMPARE(target->vectorLanes(), 16);
    QCOMPARE(target->vectorLanes(64), 8);
    QCOMPARE(target->cores, 2);
  }

  void llvmFeaturesExcludeWhatIsNotListedBeforeEnablingWhatIs() {
    Target target;
    target.triple = "x86_64-pc-linux-gnu";
    target.features = {"avx", "avx2", "fma"};
    QString features = QString::fromStdString(target.llvmFeatureString());
    QVERIFY(features.contains("-avx512f"));
    QVERIFY(!features.contains("-avx2"));
    // '-sse3' would take avx2 with it if it came later: exclusions first, enabled features last.
    QVERIFY(features.indexOf("-sse3") < features.indexOf("+avx2"));
    QVERIFY(features.endsWith("+avx,+avx2,+fma"));
  }

  void badStringsAreExplained_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty") << "" << "empty";
    QTest::newRow("kind") << "arm -cores=2" << "unknown target kind 'arm'";
    QTest::newRow("option") << "llvm -threads=2" << "unknown target option '-threads'";
    QTest::newRow("number") << "llvm -cores=two" << "-cores needs a whole number, not 'two'";
    QTest::newRow("zero cores") << "llvm -cores=0" << "-cores must be at least 1";
    QTest::newRow("no value") << "llvm -mcpu=" << "is not an option of the form -name=value";
    QTest::newRow("negative") << "llvm -l2=-5" << "-l2 needs a whole number";
  }
  void badStringsAreExplained() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    auto target = Target::parse(text.toStdString());
    QVERIFY(!target);
    QString message = QString::fromStdString(target.error().toString());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(!target.error().hint.empty(), "the hint shows the form to write");
  }
};

QTEST_GUILESS_MAIN(TestTarget)
#include "test_target.moc"
