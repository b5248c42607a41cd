// Schedule traces: text and JSON forms round-trip, and bad text is reported at its line and column.
#include <QtTest>

#include "compiler/schedule/TraceJson.h"
#include "compiler/schedule/TraceText.h"

using namespace tessel;

namespace {
const char* kEveryPrimitive =
    "CC = cache_write(C, local)\n"
    "AA = cache_read(A, local, [CC])\n"
    "io, ii = split(C, i, factor=32)\n"
    "jo, ji = split(C, j, nparts=4)\n"
    "reorder(C, io, jo, ii, ji)\n"
    "f = fuse(C, io, jo)\n"
    "xo, yo, xi, yi = tile(CC, i, j, 8, 16)\n"
    "vectorize(C, ji)\n"
    "unroll(C, ii)\n"
    "parallel(C, f)\n"
    "compute_at(CC, C, f)\n"
    "compute_inline(B)\n"
    "compute_root(B)\n"
    "storage_align(AA, ax0, 16, 1)\n"
    "pragma(C, f, auto_unroll_max_step, 16)\n"
    "bind(C, f, blockIdx.x)\n"
    "C.rf = rfactor(C, k, 8)\n";
}  // namespace

class TestScheduleTrace : public QObject {
  Q_OBJECT
private slots:
  void textRoundTripsEveryPrimitive() {
    auto trace = parseTraceText(kEveryPrimitive);
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.error().toString().c_str());
    QCOMPARE(int(trace->primitives.size()), 17);
    QCOMPARE(QString::fromStdString(printTraceText(*trace)), QString(kEveryPrimitive));
    auto again = parseTraceText(printTraceText(*trace));
    QVERIFY(again.ok());
    QVERIFY(*again == *trace);
  }

  void jsonRoundTripsEveryPrimitive() {
    auto trace = parseTraceText(kEveryPrimitive);
    QVERIFY(trace.ok());
    auto fromJson = parseTraceJson(printTraceJson(*trace));
    QVERIFY2(fromJson.ok(), fromJson.ok() ? "" : fromJson.error().toString().c_str());
    QVERIFY(*fromJson == *trace);
    QCOMPARE(QString::fromStdString(printTraceText(*fromJson)), QString(kEveryPrimitive));
  }

  void acceptsCommentsBlankLinesAndAlternateSpellings() {
    auto trace = parseTraceText(
        "# blocked matmul\n"
        "\n"
        "   io , ii=split( C , i , 32 )   # positional factor\n"
        "storage_align(AA, ax0, factor=16, offset=1)\n"
        "AA = cache_read(A, \"local\", readers=[C, D])\n");
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.error().toString().c_str());
    QCOMPARE(int(trace->primitives.size()), 3);
    const Primitive& split = trace->primitives[0];
    QCOMPARE(split.location.line, 3);
    QCOMPARE(split.values, std::vector<int64_t>{32});
    QVERIFY(!split.byParts);
    QCOMPARE(trace->primitives[2].readers, (std::vector<std::string>{"C", "D"}));
    QCOMPARE(trace->primitives[2].target, std::string("local"));
  }

  void reportsErrorsWithLineAndColumn_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown primitive") << "\nsplitt(C, i, factor=4)" << 2 << 1 << "unknown primitive 'splitt'";
    QTest::newRow("missing results") << "split(C, i, factor=4)" << 1 << 1 << "creates 2 names";
    QTest::newRow("missing factor") << "a, b = split(C, i)" << 1 << 18 << "needs factor=N or nparts=N";
    QTest::newRow("bad factor") << "a, b = split(C, i, factor=x)" << 1 << 20 << "factor must be an integer";
    QTest::newRow("both factor and nparts") << "a, b = split(C, i, factor=2, nparts=3)" << 1 << 30 << "not both";
    QTest::newRow("unknown keyword") << "a, b = split(C, i, size=2)" << 1 << 20 << "no argument named 'size'";
    QTest::newRow("unclosed call") << "vectorize(C, j" << 1 << 15 << "expected ',' or ')'";
    QTest::newRow("two per line") << "vectorize(C, j) unroll(C, i)" << 1 << 17 << "one primitive per line";
    QTest::newRow("bad character") << "vectorize(C; j)" << 1 << 12 << "unexpected character ';'";
    QTest::newRow("names on a primitive without results") << "x = vectorize(C, j)" << 1 << 5 << "creates nothing";
    QTest::newRow("cache_read without readers") << "AA = cache_read(A, local)" << 1 << 25 << "list of stages";
    QTest::newRow("fuse of one loop") << "f = fuse(C, i)" << 1 << 14 << "at least two loops";
    QTest::newRow("unterminated string") << "CC = cache_write(C, \"local)" << 1 << 21 << "unterminated string";
  }
  void reportsErrorsWithLineAndColumn() {
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, message);
    auto trace = parseTraceText(text.toStdString());
    QVERIFY(!trace.ok());
    QCOMPARE(trace.error().line, line);
    QCOMPARE(trace.error().column, column);
    QVERIFY2(QString::fromStdString(trace.error().toString()).contains(message), trace.error().toString().c_str());
    // The rendered diagnostic carries the position an editor jumps to.
    QVERIFY(QString::fromStdString(trace.error().toString())
                .startsWith(QString("schedule:%1:%2: error:").arg(line).arg(column)));
  }

  void rejectsMalformedJson_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("not json") << "{oops" << "not valid JSON";
    QTest::newRow("no list") << R"({"version": 1})" << "\"primitives\" list";
    QTest::newRow("newer version") << R"({"version": 99, "primitives": []})" << "newer than this Tessel";
    QTest::newRow("unknown kind") << R"({"version": 1, "primitives": [{"kind": "twist", "stage": "C"}]})"
                                  << "primitives[0].kind 'twist'";
    QTest::newRow("axes not names") << R"({"version": 1, "primitives": [{"kind": "vectorize", "stage": "C", "axes": [3]}]})"
                                    << "primitives[0].axes must be a list of names";
    QTest::newRow("no stage") << R"({"version": 1, "primitives": [{"kind": "vectorize"}]})" << "has no \"stage\"";
  }
  void rejectsMalformedJson() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    auto trace = parseTraceJson(json.toStdString());
    QVERIFY(!trace.ok());
    QVERIFY2(QString::fromStdString(trace.error().message).contains(message), trace.error().toString().c_str());
  }
};

QTEST_GUILESS_MAIN(TestScheduleTrace)
#include "test_schedule_trace.moc"
