// Schedule primitives: legal ones reshape a stage's loops; illegal ones are refused with a
// diagnostic naming the line and the loop, and leave the schedule unchanged.
#include <QtTest>

#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/IROperators.h"

using namespace tessel;

namespace {
struct Matmul {
  te::Tensor A = te::placeholder({Expr(64), Expr(32)}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({Expr(32), Expr(48)}, DataType::float32(), "B");
  IterVar k = te::reduceAxis(Expr(32), "k");
  te::Tensor C = te::compute(
      {Expr(64), Expr(48)}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Tensor D = te::compute({Expr(64), Expr(48)}, [&](Var i, Var j) { return C(i, j) + 1.0f; }, "D");
  te::Tensor E = te::compute({Expr(64), Expr(48)}, [&](Var i, Var j) { return D(i, j) * 2.0f; }, "E");
};

std::vector<std::string> leaves(const Schedule& s, const std::string& stage) {
  std::vector<std::string> names;
  for (auto& iv : s.findStage(stage)->leafIterVars) names.push_back(iv.name());
  return names;
}

// Replays text on a fresh schedule; returns the failure (or an empty message on success).
Diagnostic replayText(const std::vector<te::Tensor>& outputs, const std::string& text) {
  auto trace = parseTraceText(text);
  if (!trace) return trace.error();
  auto schedule = Schedule::replay(outputs, *trace);
  if (!schedule) return schedule.error();
  return Diagnostic{};
}
}  // namespace

class TestSchedulePrimitives : public QObject {
  Q_OBJECT
private slots:
  void splitFuseReorderTileShapeTheLoops() {
    Matmul m;
    Schedule s({m.E});
    QVERIFY(s.split("C", "i", 8, "io", "ii").ok());
    QCOMPARE(leaves(s, "C"), (std::vector<std::string>{"io", "ii", "j", "k"}));
    QVERIFY(s.reorder("C", {"k", "io"}).ok());
    QCOMPARE(leaves(s, "C"), (std::vector<std::string>{"k", "ii", "j", "io"}));
    QVERIFY(s.tile("E", "i", "j", 4, 16, "io", "jo", "ii", "ji").ok());
    QCOMPARE(leaves(s, "E"), (std::vector<std::string>{"io", "jo", "ii", "ji"}));
    QVERIFY(s.fuse("E", {"io", "jo"}, "f").ok());
    QCOMPARE(leaves(s, "E"), (std::vector<std::string>{"f", "ii", "ji"}));
    QCOMPARE(int(s.trace().primitives.size()), 4);
    QCOMPARE(QString::fromStdString(printTraceText(s.trace())),
             QString("io, ii = split(C, i, factor=8)\n"
                     "reorder(C, k, io)\n"
                     "io, jo, ii, ji = tile(E, i, j, 4, 16)\n"
                     "f = fuse(E, io, jo)\n"));
  }

  void cacheStagesAreInsertedAndRewired() {
    Matmul m;
    Schedule s({m.E});
    QVERIFY(s.cacheWrite("C", "local", "C.local").ok());
    QVERIFY(s.cacheRead("A", "local", {"C.local"}, "A.local").ok());
    std::vector<std::string> names;
    for (auto& stage : s.stages()) names.push_back(stage.name);
    auto at = [&](const char* name) { return std::find(names.begin(), names.end(), name) - names.begin(); };
    QCOMPARE(int(names.size()), 7);
    // Each copy sits right after what it copies, and the cache right before its stage.
    QCOMPARE(at("A.local"), at("A") + 1);
    QCOMPARE(at("C.local") + 1, at("C"));
    QVERIFY(at("B") < at("C.local"));
    QVERIFY(at("C") < at("D") && at("D") < at("E"));
    // The cache holds the reduction; the stage itself became a copy without one.
    QCOMPARE(int(s.findStage("C.local")->rootIterVars.size()), 3);
    QCOMPARE(int(s.findStage("C")->rootIterVars.size()), 2);
    QCOMPARE(QString::fromStdString(s.findStage("C.local")->scope), QString("local"));
  }

  void illegalRequestsAreDiagnosed_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown stage") << "io, ii = split(Q, i, factor=2)" << 1 << "no stage named 'Q'";
    QTest::newRow("unknown loop") << "io, ii = split(C, q, factor=2)" << 1 << "C has no loop named 'q'";
    QTest::newRow("loop of another stage")
        << "io, ii = split(D, i, factor=2)\nreorder(C, j, io)" << 2 << "belongs to stage D, not C";
    QTest::newRow("split of a split loop")
        << "io, ii = split(C, i, factor=2)\na, b = split(C, i, factor=2)" << 2 << "was split into io and ii";
    QTest::newRow("split of a fused-away loop")
        << "f = fuse(C, i, j)\na, b = split(C, j, factor=2)" << 2 << "was fused into f";
    QTest::newRow("zero factor") << "io, ii = split(C, i, factor=0)" << 1 << "must be positive";
    QTest::newRow("name clash") << "j, ii = split(C, i, factor=2)" << 1 << "already has a loop named 'j'";
    QTest::newRow("fuse not adjacent") << "f = fuse(C, i, k)" << 1 << "not adjacent";
    QTest::newRow("fuse data with reduce") << "reorder(C, i, k, j)\nf = fuse(C, i, k)" << 2
                                           << "cannot fuse a reduction loop";
    QTest::newRow("reorder twice") << "reorder(C, i, i)" << 1 << "appears twice";
    QTest::newRow("parallel reduction") << "parallel(C, k)" << 1 << "is a reduction loop";
    QTest::newRow("vectorize reduction") << "vectorize(C, k)" << 1 << "is a reduction loop";
    QTest::newRow("compute_at into a loop not enclosing the consumer") << "compute_at(C, E, j)" << 1
                                                                     << "E does not read C";
    QTest::newRow("compute_at non-consumer") << "compute_at(A.copy, E, j)" << 1 << "no stage named 'A.copy'";
    QTest::newRow("compute_at into a non-reader") << "compute_at(D, C, j)" << 1 << "C does not read D";
    QTest::newRow("compute_at output") << "compute_at(E, D, j)" << 1 << "is an output";
    QTest::newRow("compute_at itself") << "compute_at(D, D, j)" << 1 << "inside its own loops";
    QTest::newRow("compute_at cycle") << "compute_at(D, E, j)\ncompute_at(E, D, j)" << 2 << "is an output";
    QTest::newRow("inline a reduction") << "compute_inline(C)" << 1 << "is a reduction";
    QTest::newRow("inline an output") << "compute_inline(E)" << 1 << "is an output";
    QTest::newRow("inline a placeholder") << "compute_inline(A)" << 1 << "is an input";
    QTest::newRow("cache_write after split")
        << "io, ii = split(C, i, factor=2)\nCC = cache_write(C, local)" << 2 << "must come before";
    QTest::newRow("cache_read wrong reader") << "AA = cache_read(A, local, [D])" << 1 << "D does not read A";
    QTest::newRow("cache stage name taken") << "C = cache_write(D, local)" << 1 << "already a stage named 'C'";
    QTest::newRow("storage_align bad axis") << "storage_align(C, k, 16, 1)" << 1 << "no dimension named 'k'";
    QTest::newRow("storage_align bad offset") << "storage_align(C, i, 16, 16)" << 1 << "0 <= offset < factor";
    QTest::newRow("bind bad tag") << "bind(C, i, warp.x)" << 1 << "not a thread tag";
    QTest::newRow("compute_root of an input") << "compute_root(A)" << 1 << "is an input";
    QTest::newRow("rfactor of a non-reduction") << "ER = rfactor(E, j, 4)" << 1 << "E is not a reduction";
    QTest::newRow("rfactor of a data loop") << "CR = rfactor(C, i, 4)" << 1 << "no reduction loop named 'i'";
    QTest::newRow("rfactor after split")
        << "io, ii = split(C, i, factor=2)\nCR = rfactor(C, k, 4)" << 2 << "must come before";
    QTest::newRow("rfactor factor of one") << "CR = rfactor(C, k, 1)" << 1 << "at least 2";
    QTest::newRow("rfactor stage name taken") << "D = rfactor(C, k, 4)" << 1 << "already a stage named 'D'";
    QTest::newRow("cache_write after storage_align")
        << "storage_align(C, i, 16, 1)\nCC = cache_write(C, local)" << 2 << "must come before";
  }
  void illegalRequestsAreDiagnosed() {
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(QString, message);
    Matmul m;
    Diagnostic d = replayText({m.E}, text.toStdString());
    QVERIFY2(!d.message.empty(), "the request was accepted");
    QCOMPARE(d.line, line);
    QVERIFY2(QString::fromStdString(d.message).contains(message), d.toString().c_str());
  }

  void duplicateOperationNamesAreAUserError() {
    te::Tensor A = te::placeholder({Expr(4)}, DataType::float32(), "A");
    te::Tensor B = te::compute({Expr(4)}, [&](Var i) { return A(i) + 1.0f; }, "A");
    bool reported = false;
    try {
      Schedule s({B});
    } catch (const UserError& error) {
      reported = QString::fromStdString(error.diagnostic.message).contains("two operations are named 'A'");
    }
    QVERIFY(reported);
  }

  void computeAtLooksThroughInlinedStages() {
    Matmul m;
    Schedule s({m.E});
    QVERIFY(s.computeInline("D").ok());
    Status status = s.computeAt("C", "E", "j");
    QVERIFY2(status.ok(), status.ok() ? "" : status.error().toString().c_str());
  }

  void failedPrimitiveLeavesScheduleUnchanged() {
    Matmul m;
    Schedule s({m.E});
    QVERIFY(s.split("E", "i", 4, "io", "ii").ok());
    // tile's second split fails on a name clash after the first could have applied.
    QVERIFY(!s.tile("E", "j", "ii", 4, 4, "a", "b", "io", "d").ok());
    QVERIFY(!s.tile("E", "j", "q", 4, 4, "a", "b", "c", "d").ok());
    QCOMPARE(leaves(s, "E"), (std::vector<std::string>{"io", "ii", "j"}));
    QCOMPARE(int(s.trace().primitives.size()), 1);
  }

  void replayReproducesTheSchedule() {
    Matmul m;
    Schedule s({m.E});
    QVERIFY(s.cacheWrite("C", "local", "CC").ok());
    QVERIFY(s.tile("C", "i", "j", 8, 16, "io", "jo", "ii", "ji").ok());
    QVERIFY(s.computeAt("CC", "C", "jo").ok());
    QVERIFY(s.vectorize("C", "ji").ok());
    QVERIFY(s.computeInline("D").ok());
    auto replayed = Schedule::replay({m.E}, s.trace());
    QVERIFY(replayed.ok());
    QCOMPARE(leaves(*replayed, "C"), leaves(s, "C"));
    QCOMPARE(replayed->findStage("CC")->attachStage, std::string("C"));
    QVERIFY(replayed->findStage("D")->attach == AttachKind::Inline);
  }
};

QTEST_GUILESS_MAIN(TestSchedulePrimitives)
#include "test_schedule_primitives.moc"
