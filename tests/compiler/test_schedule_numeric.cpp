// Numeric correctness of schedules: every primitive, random compositions of them, and the
// default matmul/conv2d schedules, JIT-built and compared with plain C++ loops.
#include <QtTest>

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "LoweringWorkloads.h"
#include "compiler/lower/Build.h"
#include "compiler/lower/Lower.h"
#include "core/ir/IRPrinter.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"
#include "runtime/ThreadPool.h"

using namespace tessel;

namespace {

std::vector<int64_t> shapeOf(const te::Tensor& tensor) {
  std::vector<int64_t> shape;
  for (auto& extent : tensor.shape()) shape.push_back(*asConstInt(extent));
  return shape;
}


std::vector<float> randomValues(int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = uniform(rng);
  return values;
}

/// Runs a built function on float32 inputs; the output starts as NaN so that elements the
/// kernel never writes are caught.
std::vector<float> runFloat32(const BuiltFunction& built, const std::vector<te::Tensor>& inputs,
                              const te::Tensor& output, const std::vector<std::vector<float>>& data) {
  std::vector<runtime::Value> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto array = runtime::NDArray::empty(shapeOf(inputs[i]), runtime::DataType::float32());
    array.copyFrom(data[i]);
    arguments.push_back(array);
  }
  auto result = runtime::NDArray::empty(shapeOf(output), runtime::DataType::float32());
  for (float& v : result.values<float>()) v = std::numeric_limits<float>::quiet_NaN();
  arguments.push_back(result);
  built.function.callPacked(arguments);
  return result.toVector<float>();
}

/// Compares float32 results with a reference. `magnitude[i]` bounds the sum of absolute
/// values of the terms that make up element i, and `terms` their number: reordering a
/// float32 sum of n terms moves it by at most about n * FLT_EPSILON * magnitude.
/// Returns an empty string when every element is within tolerance.
std::string compareResults(const std::vector<float>& got, const std::vector<double>& want,
                           const std::vector<double>& magnitude, int64_t terms) {
  if (got.size() != want.size()) return "the output has the wrong number of elements";
  for (size_t i = 0; i < got.size(); ++i) {
    double tolerance = 4.0 * double(terms + 2) * FLT_EPSILON * magnitude[i] + FLT_MIN;
    if (!std::isfinite(got[i]) || std::abs(double(got[i]) - want[i]) > tolerance) {
      std::ostringstream out;
      out << "element " << i << " is " << got[i] << ", expected " << want[i] << " (tolerance " << tolerance << ")";
      return out.str();
    }
  }
  return "";
}

/// Builds `schedule` of `workload`, runs it on random inputs and compares with the
/// workload's reference. Returns an empty string on success, else what went wrong.
std::string checkWorkload(const testing::TestWorkload& workload, const Schedule& schedule, std::mt19937& rng) {
  auto built = build(schedule, workload.args(), "f");
  if (!built) return "build failed: " + built.error().toString();
  std::vector<std::vector<float>> inputs, absoluteInputs;
  int64_t terms = 1;
  for (auto& input : workload.inputs) {
    auto shape = shapeOf(input);
    for (int64_t extent : shape) terms = std::max(terms, extent);
    inputs.push_back(randomValues(elementCount(shape), rng));
    absoluteInputs.push_back(inputs.back());
    for (float& v : absoluteInputs.back()) v = std::abs(v);
  }
  const te::Tensor& output = workload.outputs.back();
  std::vector<float> got;
  try {
    got = runFloat32(*built, workload.inputs, output, inputs);
  } catch (const std::exception& error) {
    return std::string("running failed: ") + error.what();
  }
  // The workloads are monotone in |inputs|, so the reference on absolute values bounds the
  // magnitude of every term.
  std::vector<float> want(size_t(elementCount(shapeOf(output)))), magnitude(want.size());
  workload.reference(inputs, want);
  workload.reference(absoluteInputs, magnitude);
  std::vector<double> wantD(want.begin(), want.end()), magnitudeD(magnitude.size());
  for (size_t i = 0; i < magnitude.size(); ++i) magnitudeD[i] = std::abs(double(magnitude[i])) + 1.0;
  return compareResults(got, wantD, magnitudeD, terms);
}

std::string dimsText(const std::vector<int64_t>& dims) {
  std::string text;
  for (int64_t d : dims) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

std::vector<int64_t> parseDims(const QString& text) {
  std::vector<int64_t> dims;
  for (auto& part : text.split('x')) dims.push_back(part.toLongLong());
  return dims;
}

// --- random traces -----------------------------------------------------------------------

/// Builds random schedules one primitive at a time, keeping only primitives the schedule
/// accepts and that still lower; what it keeps is a valid trace a person could have written.
class RandomTraceGenerator {
public:
  RandomTraceGenerator(testing::TestWorkload workload, std::mt19937& rng) : workload_(std::move(workload)), rng_(rng) {}

  /// A schedule with up to `attempts` random primitives applied.
  Schedule generate(int attempts) {
    Schedule schedule(workload_.outputs);
    for (int attempt = 0; attempt < attempts; ++attempt) {
      Primitive p = randomPrimitive(schedule);
      Schedule candidate = schedule;
      if (!candidate.apply(p)) continue;
      auto lowered = lower(candidate, workload_.args(), "f");
      // Loop extents are only known after bound inference, so some vectorize, unroll and
      // storage_align requests are refused at lowering; anything else refused there is a bug.
      if (!lowered) {
        const std::string& message = lowered.error().message;
        bool extentRefusal = message.rfind("vectorize:", 0) == 0 || message.rfind("unroll:", 0) == 0 ||
                             message.rfind("storage_align:", 0) == 0;
        if (!extentRefusal) unexpectedRefusals_.push_back(printTraceText(candidate.trace()) + "-> " + message);
        continue;
      }
      schedule = candidate;
      kindsUsed_.insert(p.kind);
    }
    return schedule;
  }

  const std::set<PrimitiveKind>& kindsUsed() const { return kindsUsed_; }
  const std::vector<std::string>& unexpectedRefusals() const { return unexpectedRefusals_; }

private:
  int64_t uniform(int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(rng_); }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[size_t(uniform(0, int64_t(items.size()) - 1))];
  }
  std::string freshName(const char* prefix) { return prefix + std::to_string(counter_++); }

  static std::vector<std::string> leafNames(const Stage& stage) {
    std::vector<std::string> names;
    for (auto& iv : stage.leafIterVars) names.push_back(iv.name());
    return names;
  }

  Primitive randomPrimitive(const Schedule& schedule) {
    std::vector<const Stage*> computed;
    for (auto& stage : schedule.stages())
      if (te::asCompute(stage.op)) computed.push_back(&stage);
    const Stage& stage = *pick(computed);
    auto leaves = leafNames(stage);
    Primitive p;
    p.stage = stage.name;
    static const std::vector<PrimitiveKind> kinds = {
        PrimitiveKind::Split,        PrimitiveKind::Split,        PrimitiveKind::Split,
        PrimitiveKind::Fuse,         PrimitiveKind::Reorder,      PrimitiveKind::Reorder,
        PrimitiveKind::Tile,         PrimitiveKind::Vectorize,    PrimitiveKind::Vectorize,
        PrimitiveKind::Unroll,       PrimitiveKind::Parallel,     PrimitiveKind::Parallel,
        PrimitiveKind::ComputeAt,    PrimitiveKind::ComputeAt,    PrimitiveKind::ComputeAt,
        PrimitiveKind::ComputeInline, PrimitiveKind::ComputeRoot, PrimitiveKind::CacheRead,
        PrimitiveKind::CacheWrite,   PrimitiveKind::StorageAlign, PrimitiveKind::Pragma,
        PrimitiveKind::Rfactor};
    p.kind = pick(kinds);
    switch (p.kind) {
      case PrimitiveKind::Split:
        p.axes = {pick(leaves)};
        p.byParts = uniform(0, 3) == 0;
        p.values = {p.byParts ? uniform(1, 5) : uniform(1, 9)};
        p.results = {freshName("o"), freshName("i")};
        break;
      case PrimitiveKind::Fuse: {
        if (leaves.size() < 2) break;
        size_t first = size_t(uniform(0, int64_t(leaves.size()) - 2));
        size_t count = size_t(uniform(2, std::min<int64_t>(3, int64_t(leaves.size() - first))));
        p.axes.assign(leaves.begin() + first, leaves.begin() + first + count);
        p.results = {freshName("f")};
        break;
      }
      case PrimitiveKind::Reorder: {
        auto order = leaves;
        std::shuffle(order.begin(), order.end(), rng_);
        order.resize(size_t(uniform(std::min<int64_t>(2, int64_t(order.size())), int64_t(order.size()))));
        p.axes = order;
        break;
      }
      case PrimitiveKind::Tile:
        if (leaves.size() < 2) break;
        p.axes = {pick(leaves), pick(leaves)};
        p.values = {uniform(1, 8), uniform(1, 8)};
        p.results = {freshName("xo"), freshName("yo"), freshName("xi"), freshName("yi")};
        break;
      case PrimitiveKind::Vectorize:
      case PrimitiveKind::Unroll:
      case PrimitiveKind::Parallel:
        // Mostly the innermost loop for vectorize, any loop otherwise.
        p.axes = {p.kind == PrimitiveKind::Vectorize && uniform(0, 2) > 0 ? leaves.back() : pick(leaves)};
        break;
      case PrimitiveKind::ComputeAt: {
        const Stage* target = pick(computed);
        p.target = target->name;
        p.axes = {pick(leafNames(*target))};
        break;
      }
      case PrimitiveKind::ComputeInline:
      case PrimitiveKind::ComputeRoot: break;
      case PrimitiveKind::CacheRead: {
        std::vector<const Stage*> sources;
        for (auto& source : schedule.stages())
          if (!schedule.consumersOf(source).empty()) sources.push_back(&source);
        const Stage* source = pick(sources);
        p.stage = source->name;
        p.target = "local";
        for (const Stage* reader : schedule.consumersOf(*source))
          if (p.readers.empty() || uniform(0, 1) == 0) p.readers.push_back(reader->name);
        p.results = {freshName("R")};
        break;
      }
      case PrimitiveKind::CacheWrite:
        p.target = "local";
        p.results = {freshName("W")};
        break;
      case PrimitiveKind::Rfactor: {
        auto* reduce = te::asCompute(stage.op)->body.as<ReduceNode>();
        p.axes = {reduce ? pick(reduce->axes).name() : leaves.front()};
        p.values = {uniform(2, 8)};
        p.results = {freshName("P")};
        break;
      }
      case PrimitiveKind::StorageAlign: {
        auto* compute = te::asCompute(stage.op);
        p.axes = {pick(compute->axes).name()};
        int64_t factor = uniform(1, 8);
        p.values = {factor, uniform(0, factor - 1)};
        break;
      }
      case PrimitiveKind::Pragma:
        p.axes = {pick(leaves)};
        if (uniform(0, 1) == 0) {
          p.target = "auto_unroll_max_step";
          p.values = {16};
        } else {
          p.target = "unroll_explicit";
        }
        break;
      case PrimitiveKind::Bind:
      case PrimitiveKind::Tensorize: break;
    }
    return p;
  }

  testing::TestWorkload workload_;
  std::mt19937& rng_;
  int counter_ = 0;
  std::set<PrimitiveKind> kindsUsed_;
  std::vector<std::string> unexpectedRefusals_;
};

// --- references for the operators ----------------------------------------------------------

struct Reference {
  std::vector<double> values, magnitude;
};

Reference matmulReference(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t n,
                          int64_t k) {
  Reference r{std::vector<double>(size_t(m * n)), std::vector<double>(size_t(m * n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        double term = double(a[size_t(i * k + p)]) * double(b[size_t(p * n + j)]);
        sum += term;
        magnitude += std::abs(term);
      }
      r.values[size_t(i * n + j)] = sum;
      r.magnitude[size_t(i * n + j)] = magnitude;
    }
  return r;
}

Reference conv2dReference(const std::vector<float>& data, const std::vector<float>& weight, const Conv2dParams& p) {
  int64_t oh = p.outHeight(), ow = p.outWidth();
  size_t count = size_t(p.batch * p.filters * oh * ow);
  Reference r{std::vector<double>(count), std::vector<double>(count)};
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t f = 0; f < p.filters; ++f)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double sum = 0, magnitude = 0;
          for (int64_t c = 0; c < p.channels; ++c)
            for (int64_t ry = 0; ry < p.kernelH; ++ry)
              for (int64_t rx = 0; rx < p.kernelW; ++rx) {
                int64_t iy = y * p.stride + ry - p.pad, ix = x * p.stride + rx - p.pad;
                if (iy < 0 || iy >= p.height || ix < 0 || ix >= p.width) continue;
                double term = double(data[size_t(((n * p.channels + c) * p.height + iy) * p.width + ix)]) *
                              double(weight[size_t(((f * p.channels + c) * p.kernelH + ry) * p.kernelW + rx)]);
                sum += term;
                magnitude += std::abs(term);
              }
          size_t at = size_t(((n * p.filters + f) * oh + y) * ow + x);
          r.values[at] = sum;
          r.magnitude[at] = magnitude;
        }
  return r;
}

Target scheduleTarget(int lanes) {
  if (lanes == 0) return hostTarget();
  Target target;
  target.vectorBits = 32 * lanes;
  target.cores = 2;
  return target;
}

}  // namespace

class TestScheduleNumeric : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    // Two workers even on one core, so parallel loops really run on several threads.
    runtime::ThreadPool::global().setNumThreads(2);
  }

  // Each schedule runs on shapes drawn from a fixed-seed generator: every extent smaller
  // than the row's factor, every extent leaving a tail, and every extent a multiple.
  void primitiveMatchesReference_data() {
    QTest::addColumn<QString>("workload");
    QTest::addColumn<QString>("dims");
    QTest::addColumn<QString>("schedule");
    struct Row {
      const char* name;
      const char* workload;
      int factor;  // the largest split/tile factor the schedule uses
      const char* schedule;
    };
    const Row rows[] = {
        {"split factor", "scale", 4, "jo, ji = split(B, j, factor=4)"},
        {"split factor of a reduction", "matmul", 4, "ko, ki = split(C, k, factor=4)"},
        {"split nparts", "scale", 3, "io, ii = split(B, i, nparts=3)"},
        {"split nparts of a reduction", "matmul", 3, "ko, ki = split(C, k, nparts=3)"},
        {"split of a split", "matmul", 6, "io, ii = split(C, i, factor=6)\niio, iii = split(C, ii, factor=4)"},
        {"nparts of a split's outer", "scale", 5, "jo, ji = split(B, j, factor=5)\na, b = split(B, jo, nparts=2)"},
        {"fuse", "matmul", 1, "f = fuse(C, i, j)"},
        {"fuse after a tail split", "scale", 4, "jo, ji = split(B, j, factor=4)\nf = fuse(B, i, jo)"},
        {"fuse three", "matmul", 3, "io, ii = split(C, i, factor=3)\nf = fuse(C, io, ii, j)"},
        {"fuse reductions", "matmul", 3, "ko, ki = split(C, k, factor=3)\nkf = fuse(C, ko, ki)"},
        {"fuse then split", "chain", 5, "f = fuse(C, i, j)\nfo, fi = split(C, f, factor=5)"},
        {"reorder", "matmul", 1, "reorder(C, k, j, i)"},
        {"reorder split loops", "matmul", 4, "io, ii = split(C, i, factor=4)\nreorder(C, ii, k, io)"},
        {"reorder reduction inside", "matmul", 3, "ko, ki = split(C, k, factor=3)\nreorder(C, ki, i, ko, j)"},
        {"tile", "matmul", 8, "io, jo, ii, ji = tile(C, i, j, 4, 8)"},
        {"tile swapped axes", "scale", 5, "jo, io, ji, ii = tile(B, j, i, 3, 5)"},
        {"tile then fuse outer", "chain", 4, "io, jo, ii, ji = tile(C, i, j, 2, 4)\nf = fuse(C, io, jo)"},
        {"vectorize split inner", "scale", 8, "jo, ji = split(B, j, factor=8)\nvectorize(B, ji)"},
        {"vectorize whole axis", "scale", 8, "vectorize(B, j)"},
        {"vectorize over a reduction", "matmul", 4,
         "jo, ji = split(C, j, factor=4)\nreorder(C, i, jo, k, ji)\nvectorize(C, ji)"},
        {"vectorize a clamped gather", "chain", 8, "vectorize(C, j)"},
        {"unroll split inner", "scale", 4, "jo, ji = split(B, j, factor=4)\nunroll(B, ji)"},
        {"unroll a reduction", "matmul", 4, "unroll(C, k)"},
        {"unroll and vectorize a tile", "matmul", 4,
         "io, jo, ii, ji = tile(C, i, j, 3, 4)\nunroll(C, ii)\nvectorize(C, ji)"},
        {"parallel", "scale", 1, "parallel(B, i)"},
        {"parallel fused", "matmul", 1, "f = fuse(C, i, j)\nparallel(C, f)"},
        {"parallel nparts", "matmul", 2, "io, ii = split(C, i, nparts=2)\nparallel(C, io)"},
        {"parallel inside a reduction", "matmul", 1, "reorder(C, k, i)\nparallel(C, i)"},
        {"parallel around an attached stage", "chain", 1, "parallel(C, i)\ncompute_at(B, C, i)"},
        {"compute_at row", "chain", 1, "compute_at(B, C, i)"},
        {"compute_at element", "chain", 1, "compute_at(B, C, j)"},
        {"compute_at tile outer", "chain", 4, "io, jo, ii, ji = tile(C, i, j, 3, 4)\ncompute_at(B, C, jo)"},
        {"compute_at tile row outer", "chain", 4, "io, jo, ii, ji = tile(C, i, j, 3, 4)\ncompute_at(B, C, io)"},
        {"compute_at tile inner", "chain", 4, "io, jo, ii, ji = tile(C, i, j, 3, 4)\ncompute_at(B, C, ii)"},
        {"compute_at tile innermost", "chain", 4, "io, jo, ii, ji = tile(C, i, j, 3, 4)\ncompute_at(B, C, ji)"},
        {"compute_at split inner", "chain", 4, "jo, ji = split(C, j, factor=4)\ncompute_at(B, C, jo)"},
        {"compute_at then split producer", "chain", 4,
         "compute_at(B, C, i)\njo, ji = split(B, j, factor=4)\nvectorize(B, ji)"},
        {"compute_at parallel tile", "chain", 4,
         "io, jo, ii, ji = tile(C, i, j, 2, 4)\nparallel(C, io)\ncompute_at(B, C, jo)"},
        {"compute_inline", "chain", 1, "compute_inline(B)"},
        {"compute_inline in a tile", "chain", 4,
         "compute_inline(B)\nio, jo, ii, ji = tile(C, i, j, 4, 4)\nvectorize(C, ji)"},
        {"compute_root after compute_at", "chain", 1, "compute_at(B, C, j)\ncompute_root(B)"},
        {"compute_root after compute_inline", "chain", 1, "compute_inline(B)\ncompute_root(B)"},
        {"cache_read at root", "matmul", 1, "AA = cache_read(A, local, [C])"},
        {"cache_read at a row", "matmul", 1, "AA = cache_read(A, local, [C])\ncompute_at(AA, C, i)"},
        {"cache_read at a split", "matmul", 4,
         "BB = cache_read(B, local, [C])\nio, ii = split(C, i, factor=4)\ncompute_at(BB, C, io)"},
        {"cache_read of an intermediate", "chain", 1, "BB = cache_read(B, local, [C])\ncompute_at(BB, C, i)"},
        {"cache_read into a producer", "chain", 3,
         "AA = cache_read(A, local, [B])\njo, ji = split(B, j, factor=3)\ncompute_at(AA, B, jo)"},
        {"cache_write at root", "matmul", 1, "CC = cache_write(C, local)"},
        {"cache_write at a split", "matmul", 4,
         "CC = cache_write(C, local)\nio, ii = split(C, i, factor=4)\ncompute_at(CC, C, io)"},
        {"cache_write register tile", "matmul", 4,
         "CC = cache_write(C, local)\nio, jo, ii, ji = tile(C, i, j, 3, 4)\ncompute_at(CC, C, jo)\n"
         "reorder(CC, k, i, j)\nunroll(CC, i)\nvectorize(CC, j)\nvectorize(C, ji)"},
        {"cache_write without reduction", "scale", 4,
         "BB = cache_write(B, local)\njo, ji = split(B, j, factor=4)\ncompute_at(BB, B, jo)"},
        {"cache_write of an intermediate", "chain", 1, "BB = cache_write(B, local)\ncompute_at(BB, B, i)"},
        {"rfactor at root", "matmul", 4, "CR = rfactor(C, k, 4)"},
        {"rfactor vectorized partial sums", "matmul", 4,
         "CR = rfactor(C, k, 4)\nio, ii = split(C, i, factor=4)\nparallel(C, io)\ncompute_at(CR, C, io)\n"
         "reorder(CR, i, k.outer, j, k.inner)\nunroll(CR, j)\nvectorize(CR, k.inner)"},
        {"rfactor of a register tile", "matmul", 4,
         "CR = rfactor(C, k, 4)\nCC = cache_write(CR, local)\nio, ii = split(C, i, factor=4)\n"
         "compute_at(CR, C, io)\ncompute_at(CC, CR, i)\nvectorize(CC, k.inner)"},
        {"storage_align rows", "chain", 1, "storage_align(B, i, 16, 1)"},
        {"storage_align innermost", "chain", 1, "storage_align(B, j, 4, 3)"},
        {"storage_align cache_read", "matmul", 1, "AA = cache_read(A, local, [C])\nstorage_align(AA, ax0, 8, 3)"},
        {"storage_align attached", "chain", 1, "compute_at(B, C, i)\nstorage_align(B, i, 8, 2)"},
        {"pragma", "matmul", 4, "io, ii = split(C, i, factor=4)\npragma(C, io, auto_unroll_max_step, 16)"},
        {"pragma without value", "scale", 1, "pragma(B, i, unroll_explicit)"},
    };
    std::mt19937 rng(20240611);
    auto extent = [&](int low, int high) { return int64_t(std::uniform_int_distribution<int>(low, high)(rng)); };
    for (const Row& row : rows) {
      int rank = std::string(row.workload) == "matmul" ? 3 : 2;
      int f = row.factor;
      std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
      std::vector<int64_t> smaller, tail, multiple, random;
      for (int d = 0; d < rank; ++d) {
        smaller.push_back(f > 1 ? extent(1, f - 1) : 1);
        tail.push_back(f > 1 ? f * extent(1, 2) + extent(1, f - 1) : extent(2, 9));
        multiple.push_back(f * extent(1, 3));
        random.push_back(extent(1, 3 * f + 3));
      }
      for (auto& [kind, dims] : {std::pair{"smaller", smaller}, {"tail", tail}, {"multiple", multiple},
                                 {"random", random}}) {
        std::string name = std::string(row.name) + " " + kind + " " + dimsText(dims);
        QTest::newRow(name.c_str()) << QString(row.workload) << QString::fromStdString(dimsText(dims))
                                    << QString(row.schedule);
      }
    }
  }
  void primitiveMatchesReference() {
    QFETCH(QString, workload);
    QFETCH(QString, dims);
    QFETCH(QString, schedule);
    auto w = testing::workloadByName(workload.toStdString(), parseDims(dims));
    QVERIFY(!w.outputs.empty());
    auto trace = parseTraceText(schedule.toStdString());
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.error().toString().c_str());
    auto s = Schedule::replay(w.outputs, *trace);
    QVERIFY2(s.ok(), s.ok() ? "" : s.error().toString().c_str());
    std::mt19937 rng(7);
    std::string problem = checkWorkload(w, *s, rng);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void randomTracesMatchReference_data() {
    QTest::addColumn<QString>("workload");
    QTest::addColumn<int>("seed");
    for (const char* name : {"scale", "matmul", "chain"})
      for (int seed = 1; seed <= 4; ++seed)
        QTest::newRow((std::string(name) + " seed " + std::to_string(seed)).c_str()) << QString(name) << seed;
  }
  void randomTracesMatchReference() {
    QFETCH(QString, workload);
    QFETCH(int, seed);
    std::mt19937 rng(uint32_t(seed) * 7919u);
    auto extent = [&](int low, int high) { return int64_t(std::uniform_int_distribution<int>(low, high)(rng)); };
    std::set<PrimitiveKind> kindsUsed;
    size_t longest = 0;
    for (int round = 0; round < 6; ++round) {
      std::vector<int64_t> dims = {extent(1, 13), extent(1, 19)};
      if (workload == "matmul") dims.push_back(extent(1, 11));
      auto w = testing::workloadByName(workload.toStdString(), dims);
      RandomTraceGenerator generator(w, rng);
      Schedule schedule = generator.generate(10);
      for (auto& refusal : generator.unexpectedRefusals())
        QFAIL(("a valid schedule did not lower:\n" + refusal).c_str());
      kindsUsed.insert(generator.kindsUsed().begin(), generator.kindsUsed().end());
      longest = std::max(longest, schedule.trace().primitives.size());
      std::string text = printTraceText(schedule.trace());
      // The text a person would read reproduces the schedule.
      auto parsed = parseTraceText(text);
      QVERIFY2(parsed.ok() && *parsed == schedule.trace(), text.c_str());
      std::string problem = checkWorkload(w, schedule, rng);
      QVERIFY2(problem.empty(), (workload.toStdString() + " " + dimsText(dims) + "\n" + text + problem).c_str());
    }
    // The generator must not degenerate into empty schedules.
    QVERIFY(longest >= 4);
    QVERIFY(kindsUsed.size() >= 6);
  }

  void defaultMatmulScheduleMatchesReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("lanes");  // 0: the host's
    for (int lanes : {0, 8}) {
      std::string suffix = lanes ? " lanes 8" : " host";
      QTest::newRow(("1x1x1" + suffix).c_str()) << 1 << 1 << 1 << lanes;
      QTest::newRow(("17x130x64" + suffix).c_str()) << 17 << 130 << 64 << lanes;
      QTest::newRow(("100x70x33" + suffix).c_str()) << 100 << 70 << 33 << lanes;
      QTest::newRow(("5x3x40" + suffix).c_str()) << 5 << 3 << 40 << lanes;
    }
  }
  void defaultMatmulScheduleMatchesReference() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(int, lanes);
    Target target = scheduleTarget(lanes);
    Workload w = matmul(m, n, k, DataType::float32(), target);
    auto schedule = defaultMatmulSchedule(w, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, w.args(), "matmul");
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    std::mt19937 rng(uint32_t(m * 10007 + n * 101 + k));
    std::vector<std::vector<float>> inputs = {randomValues(int64_t(m) * k, rng), randomValues(int64_t(k) * n, rng)};
    std::vector<float> got = runFloat32(*built, w.inputs, w.outputs[0], inputs);
    Reference want = matmulReference(inputs[0], inputs[1], m, n, k);
    std::string problem = compareResults(got, want.values, want.magnitude, k);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  // A tile that does not divide N makes the consumer read packed panels past the last one;
  // computing those must not read past the end of B (the tuner found a dense layer that
  // crashed this way). The panels' reads of B are clamped, and the result is right.
  void packedPanelsPastTheEndDoNotReadPastB() {
    Target target = scheduleTarget(16);
    Workload w = dense(1, 64, 8, DataType::float32(), target);
    auto trace = parseTraceText(
        "C.local = cache_write(C, local)\n"
        "io, jo, ii, ji = tile(C, i, j, 1, 24)\n"
        "parallel(C, jo)\n"
        "vectorize(C, ji)\n"
        "compute_at(C.local, C, jo)\n"
        "vectorize(C.local, j)\n"
        "parallel(B.packed, jo)\n");
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.error().toString().c_str());
    auto schedule = Schedule::replay(w.outputs, *trace);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto lowered = lower(*schedule, w.args(), "dense");
    QVERIFY(lowered.ok());
    std::string text = toString(lowered->func);
    // 64 columns are 2 panels of 32; the tiles of 24 reach column 72, so a third is computed.
    QVERIFY2(text.find("for (jo, 0, 3)") != std::string::npos, text.c_str());
    QVERIFY2(text.find("B[min(") != std::string::npos, text.c_str());
    auto built = build(*schedule, w.args(), "dense");
    QVERIFY(built.ok());
    std::mt19937 rng(7);
    std::vector<std::vector<float>> inputs = {randomValues(8, rng), randomValues(64 * 8, rng)};
    std::vector<float> got = runFloat32(*built, w.inputs, w.outputs[0], inputs);
    for (int j = 0; j < 64; ++j) {
      float want = 0;
      for (int kk = 0; kk < 8; ++kk) want += inputs[0][size_t(kk)] * inputs[1][size_t(j * 8 + kk)];
      QVERIFY2(std::fabs(got[size_t(j)] - want) <= 1e-4f * (1 + std::fabs(want)), qPrintable(QString::number(j)));
    }
  }

  void defaultConv2dScheduleMatchesReference_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("filters");
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("pad");
    QTest::addColumn<int>("lanes");
    for (int lanes : {0, 8}) {
      std::string suffix = lanes ? " lanes 8" : " host";
      QTest::newRow(("stride 2 pad 0 odd width" + suffix).c_str()) << 1 << 3 << 9 << 11 << 5 << 3 << 2 << 0 << lanes;
      QTest::newRow(("stride 1 pad 1, 20 filters" + suffix).c_str()) << 2 << 4 << 7 << 13 << 20 << 3 << 1 << 1 << lanes;
      QTest::newRow(("1x1 kernel stride 2, 33 filters" + suffix).c_str())
          << 1 << 8 << 10 << 15 << 33 << 1 << 2 << 0 << lanes;
      QTest::newRow(("5x5 pad 2 stride 2, 7 filters" + suffix).c_str())
          << 1 << 2 << 12 << 9 << 7 << 5 << 2 << 2 << lanes;
      QTest::newRow(("kernel as large as the input" + suffix).c_str()) << 1 << 3 << 3 << 5 << 17 << 3 << 1 << 0 << lanes;
    }
  }
  void defaultConv2dScheduleMatchesReference() {
    QFETCH(int, batch);
    QFETCH(int, channels);
    QFETCH(int, height);
    QFETCH(int, width);
    QFETCH(int, filters);
    QFETCH(int, kernel);
    QFETCH(int, stride);
    QFETCH(int, pad);
    QFETCH(int, lanes);
    Conv2dParams p;
    p.batch = batch;
    p.channels = channels;
    p.height = height;
    p.width = width;
    p.filters = filters;
    p.kernelH = p.kernelW = kernel;
    p.stride = stride;
    p.pad = pad;
    QCOMPARE(QString::fromStdString(p.validate()), QString());
    Target target = scheduleTarget(lanes);
    Workload w = conv2d(p, DataType::float32(), target);
    auto schedule = defaultConv2dSchedule(w, p, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, w.args(), "conv");
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    std::mt19937 rng(uint32_t(batch * 31 + channels * 17 + width * 5 + filters));
    std::vector<std::vector<float>> inputs = {randomValues(p.batch * p.channels * p.height * p.width, rng),
                                              randomValues(p.filters * p.channels * p.kernelH * p.kernelW, rng)};
    std::vector<float> got = runFloat32(*built, w.inputs, w.outputs[0], inputs);
    Reference want = conv2dReference(inputs[0], inputs[1], p);
    std::string problem = compareResults(got, want.values, want.magnitude, p.channels * p.kernelH * p.kernelW);
    QVERIFY2(problem.empty(), problem.c_str());
  }
};

QTEST_GUILESS_MAIN(TestScheduleNumeric)
#include "test_schedule_numeric.moc"
