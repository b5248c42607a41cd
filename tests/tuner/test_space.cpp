// Search spaces generated from tensor expressions: the default schedule is a point of its
// space, and sampled candidates of every op family replay, lower and compute what the default
// computes.
#include <QtTest>

#include <cmath>
#include <random>
#include <set>

#include "compiler/driver/MeasureKernel.h"
#include "compiler/lower/Build.h"
#include "compiler/lower/Lower.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Elementwise.h"
#include "compiler/ops/GpuSchedules.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/WinogradConv2d.h"
#include "compiler/schedule/TraceText.h"
#include "tests/GpuTestSupport.h"
#include "tuner/space/SearchSpace.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

std::vector<int64_t> shapeOf(const te::Tensor& tensor) {
  std::vector<int64_t> shape;
  for (const Expr& extent : tensor.shape()) shape.push_back(*asConstInt(extent));
  return shape;
}

// Runs `trace` on `workload` with inputs drawn from `seed`; the first output's values.
Expected<std::vector<float>> runTrace(const Workload& workload, const Trace& trace, unsigned seed) {
  auto schedule = Schedule::replay(workload.outputs, trace);
  if (!schedule) return schedule.error();
  auto built = build(*schedule, workload.args(), "candidate");
  if (!built) return built.error();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<runtime::Value> arguments;
  for (const te::Tensor& input : workload.inputs) {
    auto array = runtime::NDArray::empty(shapeOf(input), runtime::DataType::float32());
    for (float& v : array.values<float>()) v = uniform(rng);
    arguments.push_back(array);
  }
  auto output = runtime::NDArray::empty(shapeOf(workload.outputs[0]), runtime::DataType::float32());
  for (float& v : output.values<float>()) v = std::nanf("");
  arguments.push_back(output);
  built->function.callPacked(arguments);
  return output.toVector<float>();
}

struct Family {
  Workload workload;
  Trace defaultTrace;
};

Family family(const QString& name) {
  Target target = hostTarget();
  if (name == "matmul") {
    Workload w = matmul(48, 64, 40, DataType::float32(), target);
    return {w, defaultMatmulSchedule(w, target)->trace()};
  }
  if (name == "dense") {
    Workload w = dense(1, 96, 64, DataType::float32(), target);
    return {w, defaultMatmulSchedule(w, target)->trace()};
  }
  if (name == "conv2d" || name == "conv2d ragged") {
    Conv2dParams p;
    p.channels = 8, p.height = 10, p.width = 10, p.filters = 16, p.kernelH = 3, p.kernelW = 3, p.pad = 1;
    // 20 filters: the last block of 8 or 16 filters is partial (MobileNetV2's 24-filter
    // projections in blocks of 16).
    if (name == "conv2d ragged") p.filters = 20, p.kernelH = 1, p.kernelW = 1, p.pad = 0;
    Workload w = conv2d(p, DataType::float32(), target);
    return {w, defaultConv2dSchedule(w, p, target)->trace()};
  }
  if (name == "conv2d winograd") {
    // F(4x4, 3x3) over blocked activations: 3 x 3 tiles of a 12x12 output, bias.
    Conv2dParams p;
    p.channels = 32, p.height = 12, p.width = 12, p.filters = 32, p.kernelH = 3, p.kernelW = 3, p.pad = 1;
    p.bias = true, p.winogradTile = 4;
    Conv2dActivationLayout layout{target.vectorLanes(), true};
    Workload w = conv2d(p, Conv2dWeightLayout::Packed, layout, DataType::float32(), target);
    return {w, defaultConv2dSchedule(w, p, layout, target)->trace()};
  }
  Workload w = unaryElementwise(UnaryOp::Relu, {3, 20, 37});
  return {w, defaultElementwiseSchedule(w, target)->trace()};
}

void addFamilies(std::initializer_list<const char*> names) {
  QTest::addColumn<QString>("name");
  for (const char* name : names) QTest::newRow(name) << name;
}

bool close(float got, float want) { return std::fabs(got - want) <= 1e-4f + 1e-4f * std::fabs(want); }

}  // namespace

class TestSpace : public QObject {
  Q_OBJECT
private slots:
  void defaultScheduleIsAPointOfItsSpace_data() { addFamilies({"matmul", "dense", "conv2d", "relu"}); }
  void defaultScheduleIsAPointOfItsSpace() {
    QFETCH(QString, name);
    Family f = family(name);
    SearchSpace space = SearchSpace::generate(f.workload, f.defaultTrace, hostTarget());
    QVERIFY(!space.empty());
    QVERIFY(space.hasDefault());
    QCOMPARE(QString::fromStdString(printTraceText(space.instantiate(space.defaultCandidate()))),
             QString::fromStdString(printTraceText(f.defaultTrace)));
    QVERIFY2(space.size() > 10, "a space worth searching");
  }

  void sampledCandidatesComputeWhatTheDefaultComputes_data() {
    addFamilies({"matmul", "dense", "conv2d", "conv2d ragged", "conv2d winograd", "relu"});
  }
  void sampledCandidatesComputeWhatTheDefaultComputes() {
    QFETCH(QString, name);
    Family f = family(name);
    SearchSpace space = SearchSpace::generate(f.workload, f.defaultTrace, hostTarget());
    auto expected = runTrace(f.workload, f.defaultTrace, 7);
    QVERIFY2(expected, expected ? "" : expected.error().toString().c_str());
    std::mt19937_64 rng(1);
    int lowered = 0, tried = 0;
    for (int i = 0; i < 24; ++i) {
      Candidate candidate = space.random(rng);
      Trace trace = space.instantiate(candidate);
      ++tried;
      auto got = runTrace(f.workload, trace, 7);
      if (!got) continue;  // a point that does not lower is an error record for the tuner, not a wrong result
      ++lowered;
      QCOMPARE(got->size(), expected->size());
      for (size_t e = 0; e < got->size(); ++e)
        if (!close((*got)[e], (*expected)[e]))
          QFAIL(qPrintable(QString("%1, point %2, element %3: %4 instead of %5\n%6")
                               .arg(name, QString::fromStdString(SearchSpace::pointKey(candidate)))
                               .arg(e).arg((*got)[e]).arg((*expected)[e])
                               .arg(QString::fromStdString(printTraceText(trace)))));
    }
    // Most points lower: a space mostly of broken schedules would waste the tuner's trials.
    QVERIFY2(lowered * 4 >= tried * 3, qPrintable(QString("%1 of %2 lowered").arg(lowered).arg(tried)));
  }

  // A GPU target: no CPU sketch (parallel loops, vectors) is generated. A product and a
  // convolution get a GPU tiling sketch whose coupled decisions keep the block's threads and
  // the shared copies in step, the default being a point of its own; sampled candidates that
  // lower for the GPU compute what the default computes, run through PoCL.
  void gpuSpacesTileForTheBlock_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("sketch");
    QTest::newRow("matmul") << "matmul" << "gpu multi-level tiling";
    QTest::newRow("dense") << "dense" << "gpu multi-level tiling";
    QTest::newRow("conv2d") << "conv2d" << "gpu convolution tiling";
  }
  void gpuSpacesTileForTheBlock() {
    QFETCH(QString, name);
    QFETCH(QString, sketch);
    Target target = *Target::parse("opencl");
    Workload w;
    Expected<Schedule> defaults = Diagnostic{"", "", 0, 0, ""};
    if (name == "conv2d") {
      Conv2dParams p;
      p.channels = 8, p.height = 10, p.width = 12, p.filters = 16, p.kernelH = 3, p.kernelW = 3, p.pad = 1;
      w = conv2d(p, DataType::float32(), target);
      defaults = defaultConv2dSchedule(w, p, target);
    } else {
      w = name == "matmul" ? matmul(48, 64, 40, DataType::float32(), target) : dense(33, 96, 64, DataType::float32(), target);
      defaults = defaultMatmulSchedule(w, target);
    }
    QVERIFY2(defaults, defaults ? "" : defaults.error().toString().c_str());
    SearchSpace space = SearchSpace::generate(w, defaults->trace(), target);
    QCOMPARE(int(space.sketches().size()), 2);
    QVERIFY2(space.sketches()[0].decisions.empty(), "the default is one point");
    QCOMPARE(QString::fromStdString(space.sketches()[1].name), sketch);
    QVERIFY(space.hasDefault());
    QCOMPARE(QString::fromStdString(printTraceText(space.instantiate(space.defaultCandidate()))),
             QString::fromStdString(printTraceText(defaults->trace())));
    QVERIFY2(space.sketches()[1].decisions.size() >= 2, "tiles and the reduction step are open");
    QVERIFY2(space.size() > 50, "a space worth searching");

    SKIP_WITHOUT_OPENCL();
    auto defaultModule = driver::buildGpuModule(w, *defaults, target);
    QVERIFY2(defaultModule, defaultModule ? "" : defaultModule.error().toString().c_str());
    auto expected = driver::runGpuModuleOnce(w, *defaultModule, target, 7);
    QVERIFY2(expected, expected ? "" : expected.error().toString().c_str());
    std::mt19937_64 rng(3);
    int lowered = 0, tried = 0;
    for (int i = 0; i < 10; ++i) {
      Candidate candidate = space.random(rng);
      if (candidate.sketch != 1) continue;
      ++tried;
      auto schedule = Schedule::replay(w.outputs, space.instantiate(candidate));
      QVERIFY2(schedule, schedule ? "" : schedule.error().toString().c_str());
      auto module = driver::buildGpuModule(w, *schedule, target);
      if (!module) continue;  // over a block's limits: an error record for the tuner
      ++lowered;
      auto got = driver::runGpuModuleOnce(w, *module, target, 7);
      QVERIFY2(got, got ? "" : got.error().toString().c_str());
      const runtime::NDArray& a = got->front();
      const runtime::NDArray& b = expected->front();
      QCOMPARE(a.numElements(), b.numElements());
      for (int64_t e = 0; e < a.numElements(); ++e)
        if (!close(a.dataAs<float>()[e], b.dataAs<float>()[e]))
          QFAIL(qPrintable(QString("point %1, element %2: %3 instead of %4")
                               .arg(QString::fromStdString(SearchSpace::pointKey(candidate)))
                               .arg(e).arg(a.dataAs<float>()[e]).arg(b.dataAs<float>()[e])));
    }
    QVERIFY2(tried >= 4, "most random points come from the tiling sketch");
    QVERIFY2(lowered * 4 >= tried * 3, qPrintable(QString("%1 of %2 lowered").arg(lowered).arg(tried)));
  }

  void aFixedStructureOpensOnlyItsProductTiles() {
    // Winograd's transforms are its structure: generated sketches would inline them into the
    // products (recomputing each tile's transform per filter block), and a dropped unroll
    // leaves their constant matrices as selects. Only the products' register tile is tuned.
    Family f = family("conv2d winograd");
    QVERIFY(f.workload.fixedStructure);
    SearchSpace space = SearchSpace::generate(f.workload, f.defaultTrace, hostTarget());
    QCOMPARE(space.sketches().size(), size_t(1));
    QVERIFY(space.hasDefault());
    QVERIFY(!space.sketches()[0].decisions.empty());
    for (const Decision& decision : space.sketches()[0].decisions)
      QVERIFY2(QString::fromStdString(decision.name).contains("winograd.product"), decision.name.c_str());
  }

  void generatedSketchesStandWithoutTheDefaults_data() { addFamilies({"matmul", "conv2d", "conv2d ragged", "relu"}); }
  void generatedSketchesStandWithoutTheDefaults() {
    QFETCH(QString, name);
    Family f = family(name);
    SpaceOptions options;
    options.includeDefaultSketch = false;
    SearchSpace space = SearchSpace::generate(f.workload, f.defaultTrace, hostTarget(), options);
    QVERIFY(!space.hasDefault());
    QVERIFY(!space.empty());
    for (const Sketch& sketch : space.sketches()) QVERIFY(sketch.name != "default");
    // A reduction gets its loops tiled; loops without one get vectors and threads.
    QCOMPARE(QString::fromStdString(space.sketches()[0].name),
             QString(name == "relu" ? "vectorized parallel loops" : "multi-level tiling"));
    // The generated sketch's first point replays and computes the right numbers.
    auto expected = runTrace(f.workload, f.defaultTrace, 3);
    Trace first = space.instantiate(space.defaultCandidate());
    auto got = runTrace(f.workload, first, 3);
    QVERIFY2(got, got ? "" : (got.error().toString() + "\n" + printTraceText(first)).c_str());
    for (size_t e = 0; e < got->size(); ++e) QVERIFY(close((*got)[e], (*expected)[e]));
    // A convolution computed in filter blocks and written out as NCHW is tiled on its output,
    // whole blocks per tile, with the blocked reduction computed inside each tile: no second
    // pass over the whole output just to change its layout. Also when the last block is
    // partial (without this, MobileNetV2's 24-filter projections tuned from scratch took 7x
    // the default's time).
    if (name.startsWith("conv2d")) {
      std::string text = printTraceText(first);
      QVERIFY2(text.find("k_blk, k_lane = split(conv, k, factor=") != std::string::npos, text.c_str());
      QVERIFY2(text.find("compute_at(conv.blocked, conv, ") != std::string::npos, text.c_str());
    }
  }

  // A dense layer of one row reads its weights along the reduction: its space has an rfactor
  // sketch (partial sums as vector lanes), whose points compute the product; matmul reads B
  // across the reduction and gets none.
  void aRowReductionGetsAnRfactorSketch() {
    auto sketchNames = [](const SearchSpace& space) {
      QStringList names;
      for (const Sketch& sketch : space.sketches()) names << QString::fromStdString(sketch.name);
      return names;
    };
    Family matmulFamily = family("matmul");
    QVERIFY(!sketchNames(SearchSpace::generate(matmulFamily.workload, matmulFamily.defaultTrace, hostTarget()))
                 .contains("row reduction (rfactor)"));
    Family f = family("dense");
    SpaceOptions fromScratch;
    fromScratch.includeDefaultSketch = false;
    SearchSpace space = SearchSpace::generate(f.workload, f.defaultTrace, hostTarget(), fromScratch);
    int row = int(sketchNames(space).indexOf("row reduction (rfactor)"));
    QVERIFY2(row >= 0, qPrintable(sketchNames(space).join(", ")));
    auto expected = runTrace(f.workload, f.defaultTrace, 11);
    QVERIFY(expected);
    std::mt19937_64 rng(3);
    std::set<std::string> seen;
    for (int i = 0; i < 16; ++i) {
      Candidate candidate = space.random(rng);
      candidate.sketch = row;
      candidate.choices.assign(space.sketches()[size_t(row)].decisions.size(), 0);
      for (size_t d = 0; d < candidate.choices.size(); ++d)
        candidate.choices[d] = int(rng() % space.sketches()[size_t(row)].decisions[d].choices.size());
      Trace trace = space.instantiate(candidate);
      seen.insert(SearchSpace::pointKey(candidate));
      QVERIFY(printTraceText(trace).find("rfactor(C, k, ") != std::string::npos);
      auto got = runTrace(f.workload, trace, 11);
      QVERIFY2(got, got ? "" : (got.error().toString() + "\n" + printTraceText(trace)).c_str());
      for (size_t e = 0; e < got->size(); ++e)
        QVERIFY2(close((*got)[e], (*expected)[e]), printTraceText(trace).c_str());
    }
    QVERIFY2(seen.size() > 4, "the sketch has choices to make");
  }

  // On a machine with 16-lane vectors eight vectors are 128 lanes, past what vectorize
  // accepts: every such choice used to fail to lower (385 of a dense layer's 858 trials on an
  // AVX-512 machine). Each choice of each decision, the others at their first, lowers for
  // AVX-512 and AVX2 targets alike (lowered only: this machine may not run AVX-512 code).
  void everyChoiceLowersForWideVectors_data() {
    QTest::addColumn<QString>("target");
    QTest::newRow("avx512") << "llvm -mcpu=skylake-avx512 -mattr=+avx512f,+avx2,+fma -vector-bits=512 -cores=2";
    QTest::newRow("avx2") << "llvm -mcpu=haswell -mattr=+avx2,+fma -vector-bits=256 -cores=2";
  }
  void everyChoiceLowersForWideVectors() {
    QFETCH(QString, target);
    auto parsed = Target::parse(target.toStdString());
    QVERIFY2(parsed, parsed ? "" : parsed.error().toString().c_str());
    Conv2dParams p;
    p.channels = 64, p.height = 14, p.width = 14, p.filters = 128, p.kernelH = 3, p.kernelW = 3, p.pad = 1;
    std::vector<std::pair<std::string, Workload>> workloads = {
        {"dense 1x1024x1024", dense(1, 1024, 1024, DataType::float32(), *parsed)},
        {"matmul 256x512x128", matmul(256, 512, 128, DataType::float32(), *parsed)},
        {"conv2d 64->128 14x14", conv2d(p, DataType::float32(), *parsed)},
        {"relu 8x56x56", unaryElementwise(UnaryOp::Relu, {8, 56, 56})}};
    for (const auto& [what, workload] : workloads) {
      auto defaultSchedule = what.rfind("conv2d", 0) == 0 ? defaultConv2dSchedule(workload, p, *parsed)
                             : what.rfind("relu", 0) == 0   ? defaultElementwiseSchedule(workload, *parsed)
                                                            : defaultMatmulSchedule(workload, *parsed);
      QVERIFY(defaultSchedule);
      SearchSpace space = SearchSpace::generate(workload, defaultSchedule->trace(), *parsed);
      int checked = 0;
      for (size_t s = 0; s < space.sketches().size(); ++s) {
        const Sketch& sketch = space.sketches()[s];
        for (size_t d = 0; d < sketch.decisions.size(); ++d) {
          for (size_t c = 0; c < sketch.decisions[d].choices.size(); ++c) {
            Candidate candidate{int(s), std::vector<int>(sketch.decisions.size(), 0)};
            candidate.choices[d] = int(c);
            Trace trace = space.instantiate(candidate);
            auto schedule = Schedule::replay(workload.outputs, trace);
            auto lowered = schedule ? lower(*schedule, workload.args(), "candidate")
                                    : Expected<LoweredFunction>(schedule.error());
            if (!lowered)
              QFAIL(qPrintable(QString::fromStdString(what + ", sketch '" + sketch.name + "', " +
                                                      sketch.decisions[d].name + ": " + lowered.error().toString() +
                                                      "\n" + printTraceText(trace))));
            ++checked;
          }
        }
      }
      QVERIFY2(checked > 5, what.c_str());
    }
  }

  // Whether a loop runs on several threads is measured only where one thread might win: a
  // kernel too small to repay waking a second thread. Short rows also get a flat loop whose
  // vectors run across rows.
  void aSmallKernelMayRunOnOneThread() {
    auto decisionNames = [](const SearchSpace& space) {
      QStringList names;
      for (const Sketch& sketch : space.sketches())
        for (const Decision& decision : sketch.decisions) names << QString::fromStdString(decision.name);
      return names;
    };
    Target target = hostTarget();
    target.cores = 2;
    Workload small = unaryElementwise(UnaryOp::Relu, {3, 20, 37});
    SearchSpace smallSpace = SearchSpace::generate(small, defaultElementwiseSchedule(small, target)->trace(), target);
    QVERIFY2(decisionNames(smallSpace).filter(QRegularExpression("^parallel ")).size() >= 1,
             qPrintable(decisionNames(smallSpace).join(", ")));
    bool flat = false;
    for (const Sketch& sketch : smallSpace.sketches()) flat = flat || sketch.name == "vectorized flat loop";
    QVERIFY(flat);
    Workload large = unaryElementwise(UnaryOp::Relu, {64, 56, 56});
    SearchSpace largeSpace = SearchSpace::generate(large, defaultElementwiseSchedule(large, target)->trace(), target);
    QVERIFY2(decisionNames(largeSpace).filter(QRegularExpression("^parallel ")).isEmpty(),
             qPrintable(decisionNames(largeSpace).join(", ")));
  }

  void mutationsAndCrossoversStayInTheSpace() {
    Family f = family("conv2d");
    SearchSpace space = SearchSpace::generate(f.workload, f.defaultTrace, hostTarget());
    std::mt19937_64 rng(5);
    for (int i = 0; i < 200; ++i) {
      Candidate a = space.random(rng), b = space.random(rng);
      for (const Candidate& c : {space.mutate(a, rng), space.crossover(a, b, rng)}) {
        const Sketch& sketch = space.sketches()[size_t(c.sketch)];
        QCOMPARE(c.choices.size(), sketch.decisions.size());
        for (size_t d = 0; d < c.choices.size(); ++d)
          QVERIFY(c.choices[d] >= 0 && size_t(c.choices[d]) < sketch.decisions[d].choices.size());
      }
    }
    QCOMPARE(QString::fromStdString(SearchSpace::pointKey({1, {3, 0, 2}})), QString("1:3,0,2"));
  }

  // The point as the cost model sees it: sketch, then one choice index per decision, -1 where
  // the sketch has no such decision or the trace has no point; always the same length.
  void decisionFeaturesDescribeThePoint() {
    const size_t width = kDecisionFeatureSlots + 1;
    QCOMPARE(decisionFeatureNames().size(), width);
    QCOMPARE(QString::fromStdString(decisionFeatureNames()[0]), QString("decision.sketch"));
    Candidate point{1, {3, 0, 2}};
    std::vector<float> features = decisionFeatures(&point);
    QCOMPARE(features.size(), width);
    QCOMPARE(std::vector<float>(features.begin(), features.begin() + 5), (std::vector<float>{1, 3, 0, 2, -1}));
    QCOMPARE(decisionFeatures(nullptr), std::vector<float>(width, -1.0f));
    Candidate wide{0, std::vector<int>(kDecisionFeatureSlots + 4, 7)};
    QCOMPARE(decisionFeatures(&wide).size(), width);
    QCOMPARE(decisionFeatures(&wide).back(), 7.0f);
  }

  void divisors() {
    QCOMPARE(divisorsOf(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
    QCOMPARE(divisorsOf(1), (std::vector<int64_t>{1}));
    QCOMPARE(divisorsOf(49), (std::vector<int64_t>{1, 7, 49}));
  }
};

QTEST_GUILESS_MAIN(TestSpace)
#include "test_space.moc"
