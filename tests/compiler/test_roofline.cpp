// The roofline arithmetic behind `tessel bench --profile`'s roofline column: a kernel's bound
// from its flops and least bytes, its fraction of it, and the profile JSON that carries them
// (files saved before the roofline existed still read).
#include <QtTest>

#include "compiler/driver/Driver.h"
#include "compiler/driver/ModelProfile.h"
#include "compiler/driver/Roofline.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IR.h"
#include "runtime/PeakFlops.h"

using namespace tessel;
using driver::MachineRoof;
using driver::RooflineLimit;

namespace {

// 100 GFLOP/s and 10 GB/s: a kernel is compute-bound above 10 flops per byte.
const MachineRoof kRoof{100, 10};

PrimFunc functionOver(std::vector<Buffer> params) {
  return PrimFunc("f", std::move(params), EvaluateNode::make(Expr(0)));
}

driver::ProfiledNode profiledNode(const std::string& kernel, double milliseconds) {
  driver::ProfiledNode node;
  node.node = kernel + "_node";
  node.kernel = kernel;
  node.milliseconds = milliseconds;
  return node;
}

}  // namespace

class RooflineTest : public QObject {
  Q_OBJECT

private slots:
  void boundIsTheSlowerOfArithmeticAndTraffic_data() {
    QTest::addColumn<double>("flops");
    QTest::addColumn<double>("bytes");
    QTest::addColumn<QString>("limit");
    QTest::addColumn<double>("boundMs");
    QTest::addColumn<double>("measuredMs");
    QTest::addColumn<double>("fraction");
    // 1 GFLOP at 100 GFLOP/s: 10 ms; 1 GB at 10 GB/s: 100 ms.
    QTest::newRow("memory binds") << 1e9 << 1e9 << "memory" << 100.0 << 400.0 << 0.25;
    // 100 flops per byte: 10 GFLOP take 100 ms.
    QTest::newRow("compute binds") << 1e10 << 1e8 << "compute" << 100.0 << 100.0 << 1.0;
    // A copy does no arithmetic: its bytes alone bound it. Data served from caches beats the
    // memory roof, and the fraction says so rather than clipping.
    QTest::newRow("copy from cache") << 0.0 << 1e6 << "memory" << 0.1 << 0.05 << 2.0;
  }

  void boundIsTheSlowerOfArithmeticAndTraffic() {
    QFETCH(double, flops);
    QFETCH(double, bytes);
    QFETCH(QString, limit);
    QFETCH(double, boundMs);
    QFETCH(double, measuredMs);
    QFETCH(double, fraction);
    auto bound = driver::rooflineBound(flops, bytes, kRoof);
    QVERIFY(bound);
    QCOMPARE(QString(toString(bound->limit)), limit);
    QCOMPARE(bound->milliseconds, boundMs);
    QCOMPARE(*driver::rooflineFraction(*bound, measuredMs), fraction);
  }

  void unknownsGiveNoBound() {
    QVERIFY(!driver::rooflineBound(1e9, 1e9, MachineRoof{}));
    QVERIFY(!driver::rooflineBound(1e9, 1e9, MachineRoof{100, 0}));
    QVERIFY(!driver::rooflineBound(0, 0, kRoof));
    QVERIFY(!driver::rooflineBound(-1, 1e9, kRoof));
    QVERIFY(!driver::rooflineFraction(driver::RooflineBound{1.0, RooflineLimit::Memory}, 0.0));
    driver::ProfiledNode noFlops = profiledNode("k", 1.0);
    noFlops.bytes = 1e6;
    QVERIFY(!driver::rooflineBound(noFlops, kRoof));
    noFlops.flops = 0;
    QVERIFY(driver::rooflineBound(noFlops, kRoof));
  }

  void leastBytesAreEachParameterOnce() {
    Buffer input("x", DataType::float32(), {Expr(4), Expr(8)});
    Buffer indices("i", DataType::int64(), {Expr(3)});
    Buffer mask("m", DataType::boolean(), {Expr(5)});  // a byte per element in memory
    QCOMPARE(driver::leastBytesMoved(functionOver({input, indices, mask})), 4.0 * 8 * 4 + 3 * 8 + 5);
    Buffer symbolic("s", DataType::float32(), {Var("n")});
    QCOMPARE(driver::leastBytesMoved(functionOver({input, symbolic})), 0.0);
  }

  // addRooflines finds each node's kernel by name; a node whose kernel it was not given (a
  // module loaded without its compiler) stays unknown, and the JSON leaves its fields out.
  void profileCarriesTheRooflineThroughJson() {
    driver::CompiledKernel copy;
    copy.name = "copy_y";
    copy.function = functionOver({Buffer("in", DataType::float32(), {Expr(1000)}),
                                  Buffer("out", DataType::float32(), {Expr(1000)})});
    driver::ModelProfile profile;
    profile.model = "m.onnx";
    profile.runs = 3;
    profile.threads = 2;
    profile.nodes = {profiledNode("copy_y", 0.0006), profiledNode("elsewhere", 1.0)};
    profile.nodes[0].minMilliseconds = 0.0004;
    driver::addRooflines(profile, {copy}, kRoof);
    QCOMPARE(profile.roof.peakGflops, 100.0);
    const driver::ProfiledNode& copied = profile.nodes[0];
    QCOMPARE(copied.op, std::string("copy"));
    QCOMPARE(*copied.flops, 0.0);
    QCOMPARE(*copied.bytes, 8000.0);
    // 8000 bytes at 10 GB/s: 0.8 us, twice the fastest run (interference only slows a run down,
    // so the fastest is what the kernel itself can do, as the probes' fastest samples are).
    QCOMPARE(*copied.rooflineFraction, 2.0);
    const driver::ProfiledNode& unknown = profile.nodes[1];
    QVERIFY(unknown.op.empty() && !unknown.flops && !unknown.bytes && !unknown.rooflineFraction);

    std::string text = driver::modelProfileJson(profile);
    QVERIFY2(text.find("\"bandwidth_gbps\": 10") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\"bound\":\"memory\"") != std::string::npos, text.c_str());
    auto back = driver::parseModelProfile(text, "p.json");
    QVERIFY2(back, back ? "" : back.error().toString().c_str());
    QCOMPARE(back->roof.peakGflops, 100.0);
    QCOMPARE(back->roof.bandwidthGBps, 10.0);
    QCOMPARE(back->nodes[0].op, std::string("copy"));
    QCOMPARE(*back->nodes[0].bytes, 8000.0);
    QCOMPARE(*back->nodes[0].flops, 0.0);
    QCOMPARE(*back->nodes[0].rooflineFraction, 2.0);
    QCOMPARE(*back->nodes[0].minMilliseconds, 0.0004);
    QVERIFY(!back->nodes[1].flops && !back->nodes[1].bytes && !back->nodes[1].rooflineFraction);
    QVERIFY(!back->nodes[1].minMilliseconds);
    QCOMPARE(driver::rooflineBound(back->nodes[0], back->roof)->limit, RooflineLimit::Memory);
  }

  // A kernel of int8 dot products is bounded by the int8 peak, which the profile keeps.
  void int8KernelsCountAgainstTheInt8Peak() {
    Buffer acc("acc", DataType::int32(), {Expr(16)}), a("a", DataType::int32(), {Expr(16)});
    Expr lanes = RampNode::make(Expr(int64_t(0)), Expr(int64_t(1)), 16);
    Expr accumulated = BufferLoadNode::make(acc, {lanes}), operand = BufferLoadNode::make(a, {lanes});
    Stmt dot = BufferStoreNode::make(
        acc, CallNode::make(DataType::int32(16), Intrinsic::DotU8I8, {accumulated, operand, operand}), {lanes});
    driver::CompiledKernel kernel;
    kernel.name = "qconv";
    kernel.flops = 4e6;
    kernel.function = PrimFunc("qconv", {acc, a}, dot);
    QVERIFY(driver::usesIntegerDot(kernel.function));
    QVERIFY(!driver::usesIntegerDot(functionOver({Buffer("x", DataType::float32(), {Expr(4)})})));

    driver::ModelProfile profile;
    profile.nodes = {profiledNode("qconv", 0.02)};
    driver::MachineRoof roof = kRoof;
    roof.int8PeakGops = 400;
    driver::addRooflines(profile, {kernel}, roof);
    QVERIFY(profile.nodes[0].integerDot);
    // 4 MOP at 400 GOP/s: 10 us, half the 20 us run (at the float peak of 100 it would be 2.0).
    QCOMPARE(*profile.nodes[0].rooflineFraction, 0.5);
    auto back = driver::parseModelProfile(driver::modelProfileJson(profile), "p.json");
    QVERIFY2(back, back ? "" : back.error().toString().c_str());
    QCOMPARE(back->roof.int8PeakGops, 400.0);
    QVERIFY(back->nodes[0].integerDot);
    QCOMPARE(driver::rooflineBound(back->nodes[0], back->roof)->milliseconds, 0.01);
  }

  // A kernel on AMX tiles is bounded by the tdpbusd peak (where this CPU lets Tessel use its
  // tiles; elsewhere the nest runs as loops and counts against the float peak).
  void tileKernelsCountAgainstTheTilePeak() {
    Buffer acc("acc", DataType::int32(), {Expr(16)}), a("a", DataType::int32(), {Expr(16)});
    Stmt nest = AttrStmtNode::make(kTileDotAttr, Expr(int64_t(0)),
                                   BufferStoreNode::make(acc, BufferLoadNode::make(a, {Expr(int64_t(0))}), {Expr(int64_t(0))}));
    driver::CompiledKernel kernel;
    kernel.name = "tconv";
    kernel.flops = 4e6;
    kernel.function = PrimFunc("tconv", {acc, a}, nest);
    const bool amx = runtime::supportsFmaKernel(runtime::FmaKernel::Int8Tile);
    QCOMPARE(driver::usesIntegerTiles(kernel.function), amx);
    QVERIFY(!driver::usesIntegerDot(kernel.function));

    driver::ModelProfile profile;
    profile.nodes = {profiledNode("tconv", 0.02)};
    driver::MachineRoof roof = kRoof;
    roof.int8PeakGops = 400;
    roof.int8TilePeakGops = 800;
    driver::addRooflines(profile, {kernel}, roof);
    QCOMPARE(profile.nodes[0].integerTiles, amx);
    // 4 MOP at 800 GOP/s: 5 us of the 20 us run; at the float peak of 100, 40 us.
    QCOMPARE(*profile.nodes[0].rooflineFraction, amx ? 0.25 : 2.0);
    auto back = driver::parseModelProfile(driver::modelProfileJson(profile), "p.json");
    QVERIFY2(back, back ? "" : back.error().toString().c_str());
    QCOMPARE(back->roof.int8TilePeakGops, 800.0);
    QCOMPARE(back->nodes[0].integerTiles, amx);
  }

  void profileSavedBeforeTheRooflineStillReads() {
    const std::string old = R"({"format": "tessel-profile", "version": 1, "model": "m.onnx", "runs": 2,
        "threads": 1, "latency_ms": 1.5, "min_ms": 1.4, "tuned_kernels": 0,
        "nodes": [{"node": "a", "kernel": "k", "ms": 1.25}]})";
    auto read = driver::parseModelProfile(old, "old.json");
    QVERIFY2(read, read ? "" : read.error().toString().c_str());
    QVERIFY(!read->roof.known());
    QCOMPARE(read->nodes.size(), size_t(1));
    QCOMPARE(read->nodes[0].milliseconds, 1.25);
    QVERIFY(read->nodes[0].op.empty() && !read->nodes[0].flops && !read->nodes[0].rooflineFraction);
    QVERIFY(!read->nodes[0].minMilliseconds);
    QVERIFY(!driver::rooflineBound(read->nodes[0], read->roof));
  }

  void damagedRooflineFieldsAreDiagnostics() {
    const std::string header = R"({"format": "tessel-profile", "version": 1, "runs": 1, "threads": 1,
        "latency_ms": 1, "min_ms": 1, "tuned_kernels": 0, )";
    const std::vector<std::pair<std::string, std::string>> damaged = {
        {R"("peak_gflops": "fast", "nodes": []})", "\"peak_gflops\""},
        {R"("nodes": [{"node": "a", "kernel": "k", "ms": 1, "bytes": -5}]})", "node 1: \"bytes\""},
        {R"("nodes": [{"node": "a", "kernel": "k", "ms": 1, "roofline_fraction": null}]})", "\"roofline_fraction\""},
        {R"("nodes": [{"node": "a", "kernel": "k", "ms": 1, "op": 3}]})", "\"op\""},
    };
    for (const auto& [tail, expected] : damaged) {
      auto read = driver::parseModelProfile(header + tail, "p.json");
      QVERIFY2(!read, tail.c_str());
      QVERIFY2(read.error().message.find(expected) != std::string::npos, read.error().toString().c_str());
    }
  }
};

QTEST_GUILESS_MAIN(RooflineTest)
#include "test_roofline.moc"
