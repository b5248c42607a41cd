// Loop-nest features for the cost model: fixed length, deterministic, finite, and moving
// the way a person expects when a schedule vectorizes, parallelizes, unrolls or tiles.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "compiler/lower/Lower.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Elementwise.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/Pooling.h"
#include "compiler/ops/Reduction.h"
#include "compiler/ops/Softmax.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"
#include "tuner/features/LoopFeatures.h"

using namespace tessel;

namespace {

// Fixed, not the host's, so that the lowered IR is the same on every machine.
// (16 float32 lanes, 8 cores.)
const Target kTarget = [] {
  Target target;
  target.vectorBits = 512;
  target.cores = 8;
  return target;
}();

PrimFunc lowerOrFail(const Schedule& schedule, const std::vector<te::Tensor>& args, const std::string& name) {
  auto lowered = lower(schedule, args, name);
  if (!lowered) qFatal("%s", lowered.error().toString().c_str());
  return lowered->func;
}

PrimFunc lowerWorkload(const Workload& w, const Expected<Schedule>& schedule) {
  if (!schedule) qFatal("%s", schedule.error().toString().c_str());
  return lowerOrFail(*schedule, w.args(), w.name);
}

std::map<std::string, float> byName(const std::vector<float>& values) {
  std::map<std::string, float> named;
  for (size_t i = 0; i < values.size(); ++i) named[loopFeatureNames()[i]] = values[i];
  return named;
}

std::map<std::string, float> featuresOf(const PrimFunc& f, const LoopFeatureTarget& target = {}) {
  return byName(extractLoopFeatures(f, target));
}

// Set TESSEL_FEATURES_DUMP=1 to see the IR and the non-zero features of each op family.
void dump(const PrimFunc& f) {
  if (!qEnvironmentVariableIsSet("TESSEL_FEATURES_DUMP")) return;
  qInfo().noquote() << QString::fromStdString(toString(f));
  for (const auto& [name, value] : featuresOf(f))
    if (value != 0) qInfo().noquote() << QString::fromStdString(name) << value;
}

// B[i, j] = A[i, j] * 2 + 1: the smallest schedule playground.
struct ScaleOp {
  te::Tensor A = te::placeholder({Expr(64), Expr(256)}, DataType::float32(), "A");
  te::Tensor B = te::compute({Expr(64), Expr(256)}, [&](Var i, Var j) { return A(i, j) * 2.0f + 1.0f; }, "B");
  Schedule schedule{{B}};
  PrimFunc lowered() { return lowerOrFail(schedule, {A, B}, "scale"); }
};

// C = A * B written plainly: i, j, k loops, no blocking.
struct NaiveMatmul {
  te::Tensor A, B, C;
  NaiveMatmul(int64_t m, int64_t n, int64_t k) {
    A = te::placeholder({Expr(m), Expr(k)}, DataType::float32(), "A");
    B = te::placeholder({Expr(k), Expr(n)}, DataType::float32(), "B");
    IterVar r = te::reduceAxis(Expr(k), "k");
    C = te::compute({Expr(m), Expr(n)}, [&](Var i, Var j) { return te::sum(A(i, r) * B(r, j), {r}); }, "C");
  }
  PrimFunc lowered(const Schedule& s) { return lowerOrFail(s, {A, B, C}, "matmul"); }
};

Conv2dParams resnetConv() {
  Conv2dParams p;
  p.channels = 64, p.height = 56, p.width = 56, p.filters = 64, p.kernelH = 3, p.kernelW = 3, p.pad = 1;
  return p;
}

PrimFunc loweredOp(const QString& op) {
  if (op == "matmul") {
    Workload w = matmul(64, 64, 64, DataType::float32(), kTarget);
    return lowerWorkload(w, defaultMatmulSchedule(w, kTarget));
  }
  if (op == "conv2d") {
    Workload w = conv2d(resnetConv(), DataType::float32(), kTarget);
    return lowerWorkload(w, defaultConv2dSchedule(w, resnetConv(), kTarget));
  }
  if (op == "depthwise") {
    Conv2dParams p = resnetConv();
    p.groups = 64, p.stride = 2;
    Workload w = conv2d(p, DataType::float32(), kTarget);
    return lowerWorkload(w, defaultConv2dSchedule(w, p, kTarget));
  }
  if (op == "exp") {
    Workload w = unaryElementwise(UnaryOp::Exp, {8, 1000});
    return lowerWorkload(w, defaultElementwiseSchedule(w, kTarget));
  }
  if (op == "add") {
    Workload w = *binaryElementwise(BinaryOp::Add, {4, 30, 17}, {30, 1});
    return lowerWorkload(w, defaultElementwiseSchedule(w, kTarget));
  }
  if (op == "softmax") {
    SoftmaxParams p{{32, 1000}};
    Workload w = *softmax(p);
    return lowerWorkload(w, defaultSoftmaxSchedule(w, p, kTarget));
  }
  if (op == "maxpool") {
    PoolParams p;
    p.inputShape = {1, 64, 56, 56}, p.kernel = {3, 3}, p.strides = {2, 2}, p.padsBegin = {1, 1}, p.padsEnd = {1, 1};
    Workload w = *pool(p);
    return lowerWorkload(w, defaultPoolSchedule(w, kTarget));
  }
  if (op == "reduce") {
    ReduceParams p;
    p.shape = {16, 300, 7};
    p.axes = {1};
    Workload w = *reduce(p);
    return lowerWorkload(w, defaultReduceSchedule(w, p, kTarget));
  }
  qFatal("unknown op");
}

bool allFinite(const std::vector<float>& values) {
  return std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); });
}

bool bitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

class TestFeatures : public QObject {
  Q_OBJECT
private slots:
  void namesMatchTheVector() {
    const auto& names = loopFeatureNames();
    QCOMPARE(names.size(), loopFeatureCount());
    QVERIFY(loopFeatureCount() > 100);
    std::set<std::string> unique(names.begin(), names.end());
    QCOMPARE(unique.size(), names.size());
    QCOMPARE(extractLoopFeatures(loweredOp("matmul")).size(), loopFeatureCount());
  }

  void everyFeatureIsDocumented() {
    QFile file(TESSEL_SOURCE_DIR "/tuner/features/Features.md");
    QVERIFY(file.open(QIODevice::ReadOnly));
    QString doc = QString::fromUtf8(file.readAll());
    for (const std::string& name : loopFeatureNames()) {
      QString documented = QString::fromStdString(name);
      documented.replace(QRegularExpression("^buf\\d"), "buf<i>").replace(QRegularExpression("level\\d"), "level<k>");
      QVERIFY2(doc.contains("`" + documented + "`"), qPrintable(documented));
    }
  }

  void emptyFunctionGivesZeros() {
    for (const PrimFunc& f : {PrimFunc(), PrimFunc("nothing", {}, EvaluateNode::make(Expr(0)))}) {
      std::vector<float> values = extractLoopFeatures(f, {8, 32, 16});
      QCOMPARE(values.size(), loopFeatureCount());
      QVERIFY(std::all_of(values.begin(), values.end(), [](float v) { return v == 0; }));
    }
  }

  void everyOpFamily_data() {
    QTest::addColumn<QString>("op");
    for (const char* op : {"matmul", "conv2d", "depthwise", "exp", "add", "softmax", "maxpool", "reduce"})
      QTest::newRow(op) << QString(op);
  }
  void everyOpFamily() {
    QFETCH(QString, op);
    PrimFunc f = loweredOp(op);
    dump(f);
    std::vector<float> first = extractLoopFeatures(f, {8, 64, 32});
    QCOMPARE(first.size(), loopFeatureCount());
    QVERIFY(allFinite(first));
    QVERIFY(bitIdentical(first, extractLoopFeatures(f, {8, 64, 32})));
    // Lowered again from scratch: new nodes at new addresses, the same features.
    QVERIFY(bitIdentical(first, extractLoopFeatures(loweredOp(op), {8, 64, 32})));
    auto named = byName(first);
    QVERIFY(named["func.store_statements"] > 0);
    QVERIFY(named["main.trip_count"] > 0);
    QVERIFY(named["buf0.bytes"] > 0);
  }

  void flopsMatchTheWorkload_data() {
    QTest::addColumn<QString>("op");
    QTest::newRow("matmul 512^3") << "matmul";
    QTest::newRow("resnet conv") << "conv2d";
  }
  void flopsMatchTheWorkload() {
    QFETCH(QString, op);
    Workload w = op == "matmul" ? matmul(512, 512, 512, DataType::float32(), kTarget)
                                : conv2d(resnetConv(), DataType::float32(), kTarget);
    PrimFunc f = op == "matmul" ? lowerWorkload(w, defaultMatmulSchedule(w, kTarget))
                                : lowerWorkload(w, defaultConv2dSchedule(w, resnetConv(), kTarget));
    if (op == "matmul") QCOMPARE(w.flops, 2.0 * 512 * 512 * 512);
    auto features = featuresOf(f);
    QVERIFY(std::abs(features["func.flops"] - std::log2(1 + w.flops)) < 1e-4);
    // The multiply-adds are the whole work, and all of it is in the main statement.
    QVERIFY(std::abs(features["func.fma_shaped"] - std::log2(1 + w.flops / 2)) < 1e-4);
    QCOMPARE(features["main.flops_share"], 1.0f);
  }

  void vectorizingSetsVectorFeatures() {
    ScaleOp plain, vectorized;
    QVERIFY(plain.schedule.split("B", "j", 16, "jo", "ji").ok());
    QVERIFY(vectorized.schedule.split("B", "j", 16, "jo", "ji").ok());
    QVERIFY(vectorized.schedule.vectorize("B", "ji").ok());
    auto before = featuresOf(plain.lowered()), after = featuresOf(vectorized.lowered());
    QCOMPARE(before["main.vector_lanes"], 1.0f);
    QCOMPARE(after["main.vector_lanes"], 16.0f);
    QCOMPARE(before["main.innermost_vectorized"], 0.0f);
    QCOMPARE(after["main.innermost_vectorized"], 1.0f);
    QCOMPARE(before["func.vector_flops_fraction"], 0.0f);
    QCOMPARE(after["func.vector_flops_fraction"], 1.0f);
    QCOMPARE(after["main.vector_width_fraction"], 1.0f);  // 16 floats: one AVX-512 register
    // The same work and the same bytes, in 16 times fewer store executions.
    QCOMPARE(after["func.flops"], before["func.flops"]);
    QCOMPARE(after["func.bytes_accessed"], before["func.bytes_accessed"]);
    QCOMPARE(after["main.trip_count"], float(std::log2(1 + 64.0 * 16)));
    // Both buffers are read and written contiguously along the lanes.
    QCOMPARE(after["buf0.innermost_stride"], 1.0f);
    QCOMPARE(after["buf1.innermost_stride"], 1.0f);
  }

  void parallelizingSetsParallelFeatures() {
    ScaleOp serial, parallel;
    QVERIFY(parallel.schedule.parallel("B", "i").ok());
    auto before = featuresOf(serial.lowered(), {8}), after = featuresOf(parallel.lowered(), {8});
    QCOMPARE(before["main.parallel_loops"], 0.0f);
    QCOMPARE(after["main.parallel_loops"], 1.0f);
    QCOMPARE(after["main.parallel_position"], 1.0f);  // the outermost loop
    QCOMPARE(after["main.parallel_extent"], float(std::log2(1 + 64.0)));
    QCOMPARE(after["main.parallel_per_core"], float(std::log2(1 + 64.0 / 8)));
    QCOMPARE(before["func.parallel_flops_fraction"], 0.0f);
    QCOMPARE(after["func.parallel_flops_fraction"], 1.0f);
    // 64 rows keep 8 cores busy; on 48 cores the second wave runs 16 rows.
    QCOMPARE(before["main.parallel_utilization"], 1.0f / 8);
    QCOMPARE(after["main.parallel_utilization"], 1.0f);
    QCOMPARE(featuresOf(parallel.lowered(), {48})["main.parallel_utilization"], float(64.0 / 96));
  }

  void unrollingSetsUnrollFeatures() {
    ScaleOp rolled, unrolled;
    QVERIFY(rolled.schedule.split("B", "j", 4, "jo", "ji").ok());
    QVERIFY(unrolled.schedule.split("B", "j", 4, "jo", "ji").ok());
    QVERIFY(unrolled.schedule.unroll("B", "ji").ok());
    auto before = featuresOf(rolled.lowered()), after = featuresOf(unrolled.lowered());
    QCOMPARE(before["main.statements"], 1.0f);  // log2(1 + 1)
    QCOMPARE(after["main.statements"], float(std::log2(1 + 4.0)));
    QCOMPARE(before["main.innermost_unrolled"], 0.0f);
    QCOMPARE(after["main.innermost_unrolled"], 1.0f);
    QCOMPARE(after["main.depth"], before["main.depth"] - 1);
    QCOMPARE(after["func.flops"], before["func.flops"]);
    // The four unrolled copies touch neighbouring elements, as the rolled loop did.
    QCOMPARE(after["buf0.unique_bytes"], before["buf0.unique_bytes"]);
    QCOMPARE(after["buf0.touching_stride"], 1.0f);
  }

  void naiveMatmulAccessPattern() {
    NaiveMatmul op(128, 128, 128);
    auto f = featuresOf(op.lowered(Schedule({op.C})));
    // C is read and written in every k step (the most bytes), then A and B (tie: by name).
    QCOMPARE(f["buf0.is_written"], 1.0f);
    QCOMPARE(f["buf0.innermost_stride"], 0.0f);  // the same element for every k
    QCOMPARE(f["buf0.reuse_loop"], 1.0f);
    QCOMPARE(f["buf0.reuse_count"], float(std::log2(1 + 128.0)));
    QCOMPARE(f["buf1.innermost_stride"], 1.0f);                            // A[i, k]: contiguous
    QCOMPARE(f["buf2.innermost_stride"], float(std::log2(1 + 128.0)));     // B[k, j]: a row apart
    QCOMPARE(f["buf1.unique_bytes"], float(std::log2(1 + 128.0 * 128 * 4)));
    QCOMPARE(f["buf2.unique_lines"], float(std::log2(1 + 128.0 * 128 * 4 / 64)));
    QCOMPARE(f["buf1.reuse_loop"], 1.0f);  // A[i, k] does not change with j
    QCOMPARE(f["buf1.reuse_distance_iterations"], float(std::log2(1 + 128.0)));
  }

  void tilingRaisesReuse() {
    NaiveMatmul op(256, 256, 256);
    Schedule naive({op.C});
    Schedule tiled({op.C});
    QVERIFY(tiled.cacheWrite("C", "local", "CC").ok());
    QVERIFY(tiled.tile("C", "i", "j", 4, 16, "io", "jo", "ii", "ji").ok());
    QVERIFY(tiled.computeAt("CC", "C", "jo").ok());
    QVERIFY(tiled.reorder("CC", {"k", "i", "j"}).ok());
    QVERIFY(tiled.unroll("CC", "i").ok());
    QVERIFY(tiled.vectorize("CC", "j").ok());
    auto before = featuresOf(op.lowered(naive)), after = featuresOf(op.lowered(tiled));
    QCOMPARE(after["func.flops"], before["func.flops"]);
    QVERIFY(std::abs(before["func.flops"] - std::log2(1 + 2.0 * 256 * 256 * 256)) < 1e-4);
    // Flops per distinct byte in the innermost levels: the register tile reuses each
    // loaded element of A 16 times and of B 4 times.
    for (const char* level : {"main.level0.intensity", "main.level1.intensity", "main.level2.intensity"})
      QVERIFY2(after[level] > 2 * before[level], level);
    QVERIFY(after["func.bytes_accessed"] < before["func.bytes_accessed"]);
    QCOMPARE(after["alloc.local_count"], 1.0f);
    QCOMPARE(after["alloc.local_fits_registers"], 1.0f);
    QCOMPARE(before["alloc.local_count"], 0.0f);
  }

  void registerFitDependsOnTheTarget() {
    PrimFunc f = loweredOp("matmul");  // a 256-float accumulator tile
    QCOMPARE(featuresOf(f, {8, 64, 32})["alloc.local_fits_registers"], 1.0f);
    QCOMPARE(featuresOf(f, {8, 32, 16})["alloc.local_fits_registers"], 0.0f);
    QCOMPARE(featuresOf(f, {8, 32, 16})["alloc.local_register_ratio"], 2.0f);
  }

  // Hand-written IR that lowering never produces: a gather, an extent that is not a
  // constant, a guard, a let and a loop still marked vectorized.
  void irregularIRGivesFiniteFeatures() {
    Var n("n"), i("i"), j("j"), t("t");
    Buffer A("A", DataType::float32(), {Expr(1000)}), index("index", DataType::int32(), {Expr(64)});
    Buffer B("B", DataType::float32(), {n});
    Expr gathered = BufferLoadNode::make(A, {cast(DataType::index(), BufferLoadNode::make(index, {i}))});
    Stmt store = BufferStoreNode::make(B, exp(gathered) + cast(DataType::float32(), t), {Expr(i * 8) + j});
    Stmt inner = ForNode::make(j, Expr(0), min(Expr(8), n - i * 8), ForKind::Vectorized,
                               LetStmtNode::make(t, i * j, IfThenElseNode::make(j < n, store)));
    PrimFunc f("irregular", {A, index, B}, ForNode::make(i, Expr(0), n, ForKind::Parallel, inner));
    std::vector<float> values = extractLoopFeatures(f, {4});
    QCOMPARE(values.size(), loopFeatureCount());
    QVERIFY(allFinite(values));
    QVERIFY(bitIdentical(values, extractLoopFeatures(f, {4})));
    auto named = byName(values);
    QCOMPARE(named["main.guarded"], 1.0f);
    QVERIFY(named["main.math_calls"] > 0);
    QCOMPARE(named["main.vectorized_loops"], 1.0f);
  }

  void extractionTime_data() {
    QTest::addColumn<QString>("op");
    QTest::newRow("resnet conv 3x3x64") << "conv2d";
    QTest::newRow("matmul 512^3") << "matmul512";
  }
  void extractionTime() {
    QFETCH(QString, op);
    PrimFunc f;
    if (op == "matmul512") {
      Workload w = matmul(512, 512, 512, DataType::float32(), kTarget);
      f = lowerWorkload(w, defaultMatmulSchedule(w, kTarget));
    } else {
      f = loweredOp(op);
    }
    const int runs = 200;
    auto start = std::chrono::steady_clock::now();
    size_t checksum = 0;
    for (int i = 0; i < runs; ++i) checksum += extractLoopFeatures(f).size();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / runs;
    QCOMPARE(checksum, runs * loopFeatureCount());
    qInfo("%s: %.3f ms per extraction", qPrintable(op), ms);
    QVERIFY2(ms < 5, qPrintable(QString("%1 ms").arg(ms)));
  }
};

QTEST_APPLESS_MAIN(TestFeatures)
#include "test_features.moc"
