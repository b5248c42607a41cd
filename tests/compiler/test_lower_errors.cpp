// User-facing diagnostics of the schedule -> lower -> build pipeline: each mistake comes back
// as a Diagnostic with its message, hint and schedule line, nothing throws, and a refused
// primitive leaves the schedule exactly as it was.
#include <QtTest>

#include <functional>
#include <sstream>

#include "LoweringWorkloads.h"
#include "compiler/lower/Build.h"
#include "compiler/schedule/TraceText.h"

using namespace tessel;

namespace {

/// Outputs and arguments of a small pipeline, by name:
///   matmul  C[8, 8] = A[8, 4] x B[4, 8]
///   chain   B = A + 1, C reads B and its right neighbour (6 x 8)
///   diamond B = A + 1, C = B * 2, D = B + C: B has two readers
///   deep    A -> B -> C -> D, elementwise
///   symbolic  A[n, 8] -> B -> C with a symbolic row count n
///   wide    B[2, 600] = A * 2
struct Pipeline {
  std::vector<te::Tensor> outputs, args;
};

Pipeline pipeline(const std::string& name) {
  Pipeline p;
  if (name == "matmul" || name == "chain") {
    auto w = name == "matmul" ? testing::matmulWorkload(8, 8, 4) : testing::chainWorkload(6, 8);
    p.outputs = w.outputs;
    p.args = w.args();
  } else if (name == "diamond") {
    te::Tensor A = te::placeholder({Expr(6), Expr(8)}, DataType::float32(), "A");
    te::Tensor B = te::compute({Expr(6), Expr(8)}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    te::Tensor C = te::compute({Expr(6), Expr(8)}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    te::Tensor D = te::compute({Expr(6), Expr(8)}, [&](Var i, Var j) { return B(i, j) + C(i, j); }, "D");
    p.outputs = {D};
    p.args = {A, D};
  } else if (name == "deep") {
    te::Tensor A = te::placeholder({Expr(6), Expr(8)}, DataType::float32(), "A");
    te::Tensor B = te::compute({Expr(6), Expr(8)}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    te::Tensor C = te::compute({Expr(6), Expr(8)}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    te::Tensor D = te::compute({Expr(6), Expr(8)}, [&](Var i, Var j) { return C(i, j) - 3.0f; }, "D");
    p.outputs = {D};
    p.args = {A, D};
  } else if (name == "symbolic") {
    Var n("n");
    te::Tensor A = te::placeholder({n, Expr(8)}, DataType::float32(), "A");
    te::Tensor B = te::compute({n, Expr(8)}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    te::Tensor C = te::compute({n, Expr(8)}, [&](Var i, Var j) { return B(i, j) + 1.0f; }, "C");
    p.outputs = {C};
    p.args = {A, C};
  } else if (name == "wide") {
    auto w = testing::scaleWorkload(2, 600);
    p.outputs = w.outputs;
    p.args = w.args();
  }
  return p;
}

/// Where a pipeline run stopped.
struct Outcome {
  enum class Stage { Parse, Replay, Lower, Build, Done } stage = Stage::Done;
  Diagnostic diagnostic;
  std::string exception;  // set when something threw: always a bug
};

/// Parses `text`, replays it on `p`, lowers and builds; stops at the first diagnostic.
Outcome runPipeline(const Pipeline& p, const std::string& text, const std::string& name = "f") {
  Outcome outcome;
  try {
    auto trace = parseTraceText(text);
    if (!trace) return {Outcome::Stage::Parse, trace.error(), ""};
    auto schedule = Schedule::replay(p.outputs, *trace);
    if (!schedule) return {Outcome::Stage::Replay, schedule.error(), ""};
    auto lowered = lower(*schedule, p.args, name);
    if (!lowered) return {Outcome::Stage::Lower, lowered.error(), ""};
    auto built = build(*schedule, p.args, name);
    if (!built) return {Outcome::Stage::Build, built.error(), ""};
  } catch (const std::exception& error) {
    outcome.exception = error.what();
  }
  return outcome;
}

const char* stageName(Outcome::Stage stage) {
  switch (stage) {
    case Outcome::Stage::Parse: return "parse";
    case Outcome::Stage::Replay: return "replay";
    case Outcome::Stage::Lower: return "lower";
    case Outcome::Stage::Build: return "build";
    case Outcome::Stage::Done: return "done";
  }
  return "?";
}

/// Everything a primitive can change, as text: stages with their loops, relations,
/// annotations, placement, storage, and the trace.
std::string describe(const Schedule& schedule) {
  std::ostringstream out;
  for (auto& stage : schedule.stages()) {
    out << stage.name << " op=" << stage.op.get() << " output=" << stage.isOutput << " scope=" << stage.scope
        << " attach=" << int(stage.attach) << ":" << stage.attachStage << ":"
        << (stage.attachIterVar.defined() ? stage.attachIterVar.name() : "") << "\n  leaves:";
    for (auto& iv : stage.leafIterVars) out << " " << iv.name();
    out << "\n  all:";
    for (auto& iv : stage.allIterVars) out << " " << iv.name();
    out << "\n  relations: " << stage.relations.size() << "\n  attrs:";
    for (auto& iv : stage.allIterVars)
      if (const IterVarAttr* attr = stage.attr(iv)) {
        out << " " << iv.name() << "=" << forKindName(attr->forKind) << "/" << attr->threadTag;
        for (auto& [key, value] : attr->pragmas) out << "/" << key;
      }
    out << "\n  alignments:";
    for (auto& alignment : stage.alignments)
      out << " " << alignment.dimension << "/" << alignment.factor << "/" << alignment.offset;
    out << "\n";
  }
  out << "trace:\n" << printTraceText(schedule.trace());
  return out.str();
}

}  // namespace

class TestLowerErrors : public QObject {
  Q_OBJECT
private slots:
  // Mistakes only lowering can see (loop extents are known after bound inference), written
  // as schedule text: the diagnostic points at the primitive's line and column.
  void loweringDiagnosticsNameTheLine_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("hint");
    QTest::newRow("vectorize a symbolic extent")
        << "symbolic" << "compute_inline(B)\n\n  vectorize(C, i)" << 3 << 3
        << "vectorize: loop 'i' of C has extent n, which is not a constant"
        << "split it by a constant factor and vectorize the inner loop";
    QTest::newRow("unroll a symbolic extent") << "symbolic" << "unroll(B, i)" << 1 << 1
                                              << "unroll: loop 'i' of B has extent n, which is not a constant"
                                              << "split it by a constant factor and unroll the inner loop";
    QTest::newRow("vectorize a symbolic split outer")
        << "symbolic" << "io, ii = split(C, i, factor=4)\nvectorize(C, io)" << 2 << 1
        << "vectorize: loop 'io' of C has extent" << "split it by a constant factor";
    QTest::newRow("vectorize more than 64 lanes") << "wide" << "# wide rows\njo, ji = split(B, j, factor=65)\nvectorize(B, ji)"
                                                  << 3 << 1 << "vectorize: loop 'ji' of B has 65 iterations, more than 64"
                                                  << "split it and vectorize the inner loop";
    QTest::newRow("vectorize a whole wide axis") << "wide" << "vectorize(B, j)" << 1 << 1
                                                 << "vectorize: loop 'j' of B has 600 iterations, more than 64" << "split it";
    QTest::newRow("unroll more than 512") << "wide" << "reorder(B, j, i)\nunroll(B, j)" << 2 << 1
                                          << "unroll: loop 'j' of B has 600 iterations, more than 512"
                                          << "split it and unroll the inner loop";
    QTest::newRow("unroll a fused loop over 512") << "wide" << "f = fuse(B, i, j)\n    unroll(B, f)" << 2 << 5
                                                  << "unroll: loop 'f' of B has 1200 iterations, more than 512" << "split it";
    QTest::newRow("storage_align a symbolic region") << "symbolic" << "parallel(C, i)\nstorage_align(B, i, 16, 1)" << 2
                                                     << 1 << "storage_align: the region of B has a non-constant extent n"
                                                     << "storage_align needs constant-size buffers";
  }
  void loweringDiagnosticsNameTheLine() {
    QFETCH(QString, pipeline);
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, message);
    QFETCH(QString, hint);
    Pipeline p = ::pipeline(pipeline.toStdString());
    Outcome outcome = runPipeline(p, text.toStdString());
    QVERIFY2(outcome.exception.empty(), outcome.exception.c_str());
    QCOMPARE(stageName(outcome.stage), "lower");
    const Diagnostic& d = outcome.diagnostic;
    QVERIFY2(QString::fromStdString(d.message).startsWith(message), d.toString().c_str());
    QVERIFY2(QString::fromStdString(d.hint).contains(hint), d.toString().c_str());
    QCOMPARE(d.line, line);
    QCOMPARE(d.column, column);
    QVERIFY(QString::fromStdString(d.toString()).startsWith(QString("schedule:%1:%2: error:").arg(line).arg(column)));
  }

  void loopsAtTheLimitsAreAccepted_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("64 lanes") << "jo, ji = split(B, j, factor=64)\nvectorize(B, ji)";
    QTest::newRow("512 unrolled iterations") << "jo, ji = split(B, j, factor=512)\nunroll(B, ji)";
  }
  void loopsAtTheLimitsAreAccepted() {
    QFETCH(QString, text);
    Outcome outcome = runPipeline(pipeline("wide"), text.toStdString());
    QVERIFY2(outcome.exception.empty(), outcome.exception.c_str());
    QVERIFY2(outcome.stage == Outcome::Stage::Done, outcome.diagnostic.toString().c_str());
  }

  // Argument lists: every input read and every output must be passed, and nothing else.
  void argumentListDiagnostics_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("args");  // tensor names; "other" is a placeholder of another pipeline
    QTest::addColumn<QString>("stage");  // where it is refused: lower or build
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("hint");
    QTest::newRow("missing input") << "matmul" << "A C" << "lower" << "input B is read but is not in the argument list"
                                   << "add B to the function's arguments";
    QTest::newRow("no arguments") << "matmul" << "" << "lower" << "is read but is not in the argument list"
                                  << "to the function's arguments";
    QTest::newRow("missing output") << "matmul" << "A B" << "lower" << "output C is not in the argument list"
                                    << "add C to the function's arguments";
    QTest::newRow("intermediate stage") << "chain" << "A B C" << "lower"
                                        << "argument B is neither an input nor an output of the schedule"
                                        << "pass the placeholders the outputs read and the outputs themselves";
    QTest::newRow("tensor of another pipeline") << "chain" << "A other C" << "lower"
                                                << "argument other is neither an input nor an output"
                                                << "pass the placeholders";
    QTest::newRow("input passed twice") << "matmul" << "A B A C" << "build"
                                        << "parameter 'A' shares its memory with an earlier parameter"
                                        << "pass each buffer once";
    QTest::newRow("output passed twice") << "matmul" << "A B C C" << "build"
                                         << "parameter 'C' shares its memory with an earlier parameter"
                                         << "pass each buffer once";
  }
  void argumentListDiagnostics() {
    QFETCH(QString, pipeline);
    QFETCH(QString, args);
    QFETCH(QString, stage);
    QFETCH(QString, message);
    QFETCH(QString, hint);
    Pipeline p = ::pipeline(pipeline.toStdString());
    Schedule schedule(p.outputs);
    te::Tensor other = te::placeholder({Expr(6), Expr(8)}, DataType::float32(), "other");
    std::vector<te::Tensor> chosen;
    for (auto& name : args.split(' ', Qt::SkipEmptyParts)) {
      if (name == "other") {
        chosen.push_back(other);
        continue;
      }
      const Stage* s = schedule.findStage(name.toStdString());
      QVERIFY(s);
      chosen.push_back(te::Tensor(s->op));
    }
    try {
      auto lowered = lower(schedule, chosen, "kernel");
      auto built = build(schedule, chosen, "kernel");
      QVERIFY(!built.ok());
      QCOMPARE(lowered.ok(), stage == "build");
      const Diagnostic& d = built.error();
      QVERIFY2(QString::fromStdString(d.message).contains(message), d.toString().c_str());
      QVERIFY2(QString::fromStdString(d.hint).contains(hint), d.toString().c_str());
      // Not a schedule line: the diagnostic names the function being built.
      QCOMPARE(d.line, 0);
      QVERIFY2(QString::fromStdString(d.location).contains("kernel"), d.toString().c_str());
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
  }

  // Schedules that lower but that the CPU backend cannot compile, and names it cannot export.
  void codegenDiagnostics_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("hint");
    QTest::newRow("bind on the CPU") << "matmul" << "io, ii = split(C, i, factor=4)\nbind(C, io, blockIdx.x)" << "f"
                                     << "bind() needs a GPU target: loop 'io' is bound to blockIdx.x"
                                     << "parallel/vectorize for the CPU";
    QTest::newRow("bind of a thread index") << "chain" << "bind(C, j, threadIdx.x)" << "f"
                                            << "loop 'j' is bound to threadIdx.x" << "compile for CUDA";
    QTest::newRow("function name with a space") << "matmul" << "" << "my kernel"
                                                << "cannot export a kernel named 'my kernel': the name must be a C "
                                                   "identifier"
                                                << "rename the function";
    QTest::newRow("function name of the C library") << "matmul" << "" << "malloc"
                                                    << "the name belongs to the runtime or the C library"
                                                    << "rename the function";
    QTest::newRow("symbolic shape") << "symbolic" << "" << "f"
                                    << "argument A has a symbolic shape; only constant shapes can be compiled"
                                    << "give every extent of A a constant value";
  }
  void codegenDiagnostics() {
    QFETCH(QString, pipeline);
    QFETCH(QString, text);
    QFETCH(QString, name);
    QFETCH(QString, message);
    QFETCH(QString, hint);
    Outcome outcome = runPipeline(::pipeline(pipeline.toStdString()), text.toStdString(), name.toStdString());
    QVERIFY2(outcome.exception.empty(), outcome.exception.c_str());
    QCOMPARE(stageName(outcome.stage), "build");
    const Diagnostic& d = outcome.diagnostic;
    QVERIFY2(QString::fromStdString(d.message).contains(message), d.toString().c_str());
    QVERIFY2(QString::fromStdString(d.hint).contains(hint), d.toString().c_str());
    QCOMPARE(d.line, 0);
    QCOMPARE(QString::fromStdString(d.location), "function " + name);
  }

  void symbolicShapeReadOnlyInPartIsADiagnostic() {
    // The loops never mention n, so code generation succeeds; the runtime wrapper still
    // needs a constant shape to check arrays against.
    Var n("n");
    te::Tensor A = te::placeholder({n, Expr(8)}, DataType::float32(), "A");
    te::Tensor B = te::compute({Expr(4), Expr(8)}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    try {
      auto built = build(Schedule({B}), {A, B}, "f");
      QVERIFY(!built.ok());
      QVERIFY2(QString::fromStdString(built.error().message).contains("argument A has a symbolic shape"),
               built.error().toString().c_str());
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
  }

  // Schedule text that parses but that replay refuses. Unknown stage and loop names and
  // the cases in test_schedule_primitives.cpp are not repeated here.
  void replayDiagnostics_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("hint");
    QTest::newRow("nparts zero") << "matmul" << "io, ii = split(C, i, nparts=0)" << 1 << 10
                                 << "split: nparts must be positive, got 0" << "";
    QTest::newRow("negative factor") << "matmul" << "vectorize(C, j)\n  io, ii = split(C, i, factor=-3)" << 2 << 12
                                     << "split: factor must be positive, got -3" << "";
    QTest::newRow("split results share a name") << "matmul" << "a, a = split(C, i, factor=2)" << 1 << 8
                                                << "split: stage C already has a loop named 'a'" << "choose a new name";
    QTest::newRow("tile of one loop twice") << "matmul" << "io, jo, ii, ji = tile(C, i, i, 2, 2)" << 1 << 18
                                            << "tile: the two loops must differ" << "";
    QTest::newRow("tile factor zero") << "matmul" << "io, jo, ii, ji = tile(C, i, j, 2, 0)" << 1 << 18
                                      << "tile: factors must be positive, got 0" << "";
    QTest::newRow("compute_at an input") << "matmul" << "compute_at(A, C, i)" << 1 << 1
                                         << "compute_at: A is an input; it is not computed" << "";
    QTest::newRow("compute_at with a second reader") << "diamond" << "compute_at(B, C, i)" << 1 << 1
                                                     << "compute_at: B is also read by D, which is outside loop i of C"
                                                     << "compute D at C, i (or a loop inside it) first";
    QTest::newRow("inline a stage something is computed in")
        << "deep" << "compute_at(B, C, i)\ncompute_inline(C)" << 2 << 1
        << "compute_inline: B is computed inside C, which would have no loops left" << "move B first";
    QTest::newRow("split the loop a stage is computed at")
        << "chain" << "compute_at(B, C, j)\njo, ji = split(C, j, factor=4)" << 2 << 10
        << "split: B is computed at loop 'j' of C, so that loop cannot be split" << "split before compute_at(B, ...)";
    QTest::newRow("tile the loop a stage is computed at")
        << "chain" << "compute_at(B, C, j)\nio, jo, ii, ji = tile(C, i, j, 2, 2)" << 2 << 18
        << "tile: B is computed at loop 'j' of C, so that loop cannot be split"
        << "tile before compute_at(B, ...), or compute B at another loop first";
    QTest::newRow("fuse the loop a stage is computed at")
        << "chain" << "compute_at(B, C, i)\nf = fuse(C, i, j)" << 2 << 5
        << "fuse: B is computed at loop 'i' of C, so that loop cannot be fused" << "fuse before compute_at(B, ...)";
    QTest::newRow("cache_write of an input") << "matmul" << "AA = cache_write(A, local)" << 1 << 6
                                             << "cache_write: A is an input; only computed stages can be cached" << "";
    QTest::newRow("cache_write after an annotation") << "matmul" << "parallel(C, i)\nCC = cache_write(C, local)" << 2
                                                     << 6 << "cache_write: cache_write(C) must come before the loops"
                                                     << "move this line above";
    QTest::newRow("cache_write of a placed stage") << "chain" << "compute_at(B, C, i)\nBB = cache_write(B, local)" << 2
                                                   << 6 << "cache_write: cache_write(B) must come before B is placed"
                                                   << "move this line above";
    QTest::newRow("cache_write of a stage others are computed in")
        << "chain" << "compute_at(B, C, i)\nCC = cache_write(C, local)" << 2 << 6
        << "cache_write: cache_write(C) must come before stages are computed at its loops (B is)"
        << "move this line above compute_at(B, C, ...)";
    QTest::newRow("cache_read of a placed stage") << "chain" << "compute_at(B, C, j)\nBB = cache_read(B, local, [C])" << 2
                                                  << 6 << "cache_read: cache_read(B) must come before B is placed with compute_at"
                                                  << "move this line above compute_at(B, ...)";
    QTest::newRow("storage_align of an input") << "matmul" << "storage_align(A, i, 4, 0)" << 1 << 1
                                               << "storage_align: A is an input; its storage is given" << "";
  }
  void replayDiagnostics() {
    QFETCH(QString, pipeline);
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, message);
    QFETCH(QString, hint);
    Outcome outcome = runPipeline(::pipeline(pipeline.toStdString()), text.toStdString());
    QVERIFY2(outcome.exception.empty(), outcome.exception.c_str());
    QCOMPARE(stageName(outcome.stage), "replay");
    const Diagnostic& d = outcome.diagnostic;
    QVERIFY2(QString::fromStdString(d.message).startsWith(message), d.toString().c_str());
    QVERIFY2(QString::fromStdString(d.hint).contains(hint), d.toString().c_str());
    QCOMPARE(d.line, line);
    QCOMPARE(d.column, column);
    QCOMPARE(QString::fromStdString(d.location), QString("schedule"));
  }

  // A refused primitive of every kind changes neither the stages nor the trace, even after
  // a schedule that already split, attached, cached and annotated things.
  void failedApplyLeavesScheduleUnchanged_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("failing");  // one primitive, as text
    const char* matmulSetup =
        "CC = cache_write(C, local)\nio, jo, ii, ji = tile(C, i, j, 4, 4)\ncompute_at(CC, C, jo)\n"
        "AA = cache_read(A, local, [CC])\ncompute_at(AA, CC, i)\nvectorize(C, ji)\npragma(C, io, auto_unroll_max_step, 8)\n"
        "storage_align(AA, ax0, 8, 1)";
    const char* chainSetup = "compute_at(B, C, j)\nparallel(C, i)";
    QTest::newRow("split") << "matmul" << matmulSetup << "a, b = split(C, ii, factor=0)";
    QTest::newRow("split of an attach loop") << "matmul" << matmulSetup << "a, b = split(C, jo, factor=2)";
    QTest::newRow("fuse") << "matmul" << matmulSetup << "f = fuse(C, io, ii)";
    QTest::newRow("fuse over an attach loop") << "chain" << chainSetup << "f = fuse(C, i, j)";
    QTest::newRow("reorder") << "matmul" << matmulSetup << "reorder(C, ii, ji, ii)";
    QTest::newRow("tile of an attach loop") << "chain" << chainSetup << "a, b, c, d = tile(C, i, j, 2, 2)";
    QTest::newRow("tile name clash") << "matmul" << matmulSetup << "x, y, k, z = tile(CC, i, j, 2, 2)";
    QTest::newRow("vectorize") << "matmul" << matmulSetup << "vectorize(CC, k)";
    QTest::newRow("unroll") << "matmul" << matmulSetup << "unroll(C, i)";
    QTest::newRow("parallel") << "matmul" << matmulSetup << "parallel(CC, k)";
    QTest::newRow("compute_at") << "matmul" << matmulSetup << "compute_at(C, CC, i)";
    QTest::newRow("compute_inline") << "matmul" << matmulSetup << "compute_inline(CC)";
    QTest::newRow("compute_root of a missing stage") << "matmul" << matmulSetup << "compute_root(Q)";
    QTest::newRow("cache_read") << "matmul" << matmulSetup << "BB = cache_read(B, local, [C])";
    QTest::newRow("cache_read of a placed stage") << "matmul" << matmulSetup << "AA2 = cache_read(AA, local, [CC])";
    QTest::newRow("cache_write") << "matmul" << matmulSetup << "C2 = cache_write(C, local)";
    QTest::newRow("cache_write of a placed stage") << "chain" << chainSetup << "B2 = cache_write(B, local)";
    QTest::newRow("storage_align") << "matmul" << matmulSetup << "storage_align(AA, ax1, 4, 4)";
    QTest::newRow("pragma") << "matmul" << matmulSetup << "pragma(C, i, unroll_explicit)";
    QTest::newRow("bind") << "matmul" << matmulSetup << "bind(C, io, warp.x)";
  }
  void failedApplyLeavesScheduleUnchanged() {
    QFETCH(QString, pipeline);
    QFETCH(QString, setup);
    QFETCH(QString, failing);
    Pipeline p = ::pipeline(pipeline.toStdString());
    auto setupTrace = parseTraceText(setup.toStdString());
    QVERIFY2(setupTrace.ok(), setupTrace.ok() ? "" : setupTrace.error().toString().c_str());
    auto schedule = Schedule::replay(p.outputs, *setupTrace);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto failingTrace = parseTraceText(failing.toStdString());
    QVERIFY(failingTrace.ok() && failingTrace->primitives.size() == 1);
    std::string before = describe(*schedule);
    try {
      Status status = schedule->apply(failingTrace->primitives[0]);
      QVERIFY2(!status.ok(), "the primitive was accepted");
      QVERIFY2(QString::fromStdString(status.error().message)
                   .startsWith(primitiveName(failingTrace->primitives[0].kind) + QString(":")),
               status.error().toString().c_str());
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
    QCOMPARE(QString::fromStdString(describe(*schedule)), QString::fromStdString(before));
    // The schedule is still usable.
    auto lowered = lower(*schedule, p.args, "f");
    QVERIFY2(lowered.ok(), lowered.ok() ? "" : lowered.error().toString().c_str());
  }

  void computeRootWithExtraArgumentsIsRefused() {
    // Text cannot express it, but a Primitive built in code can.
    Pipeline p = pipeline("chain");
    Schedule schedule(p.outputs);
    QVERIFY(schedule.computeAt("B", "C", "i").ok());
    std::string before = describe(schedule);
    Primitive extra;
    extra.kind = PrimitiveKind::ComputeRoot;
    extra.stage = "B";
    extra.axes = {"i"};
    Status status = schedule.apply(extra);
    QVERIFY(!status.ok());
    QVERIFY2(QString::fromStdString(status.error().message).contains("compute_root: takes only a stage name"),
             status.error().toString().c_str());
    QCOMPARE(QString::fromStdString(describe(schedule)), QString::fromStdString(before));
  }
};

QTEST_GUILESS_MAIN(TestLowerErrors)
#include "test_lower_errors.moc"
