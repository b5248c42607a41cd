// LLVM backend: the inline float32 kernels for exp, log, tanh, erf, sigmoid, sin and cos against the C++ library.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/ir/IR.h"

#include "CodegenTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// How a kernel's result may differ from the exact value (computed in double).
struct ErrorBound {
  double relative = 0;
  double absolute = 0;
  bool allows(double got, double exact) const {
    if (std::isinf(exact)) return got == exact;
    return std::abs(got - exact) <= std::max(relative * std::abs(exact), absolute);
  }
};

struct KernelCase {
  Intrinsic op;
  double (*reference)(double);
  ErrorBound bound;
  /// Inputs swept densely, in float32.
  std::vector<float> (*inputs)();
};

std::vector<float> linearSweep(double low, double high, int count) {
  std::vector<float> values;
  for (int k = 0; k < count; ++k) values.push_back(float(low + (high - low) * k / (count - 1)));
  return values;
}

/// Geometrically spaced positive values: every binade from low to high is visited.
std::vector<float> geometricSweep(double low, double high, int count) {
  std::vector<float> values;
  double ratio = std::log(high / low);
  for (int k = 0; k < count; ++k) values.push_back(float(low * std::exp(ratio * k / (count - 1))));
  return values;
}

std::vector<float> concatenate(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> all;
  for (auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

const std::vector<KernelCase>& kernelCases() {
  static const std::vector<KernelCase> cases = {
      // The dense part stays where results are normal floats (exp(-87) > FLT_MIN); the
      // subnormal range is tested on its own.
      {Intrinsic::Exp, [](double x) { return std::exp(x); }, {2e-6, 0},
       [] { return concatenate({linearSweep(-87, 88, 400001), linearSweep(-1, 1, 20001)}); }},
      // Near log(1) = 0 a relative bound would ask for more than float32 inputs carry.
      // Kernels read subnormal inputs as zero (they run with denormals flushed: see
      // subnormalsAreFlushedToZero), so log's sweep starts at FLT_MIN.
      {Intrinsic::Log, [](double x) { return std::log(x); }, {2e-6, 2e-7},
       [] { return concatenate({geometricSweep(1e-30, 1e30, 400001), linearSweep(0.5, 2, 100001),
                                geometricSweep(1.1754944e-38, 1e-37, 2001)}); }},
      {Intrinsic::Tanh, [](double x) { return std::tanh(x); }, {0, 2e-6},
       [] { return concatenate({linearSweep(-10, 10, 400001), linearSweep(-1e-3, 1e-3, 2001)}); }},
      {Intrinsic::Erf, [](double x) { return std::erf(x); }, {0, 2e-6},
       [] { return concatenate({linearSweep(-10, 10, 400001), linearSweep(-1e-3, 1e-3, 2001)}); }},
      {Intrinsic::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, {0, 2e-6},
       [] { return linearSweep(-100, 100, 400001); }},
      // Vectors: up to 8192 inline, beyond through the C library (both kinds of lane meet in
      // one vector at the seams). Scalars call the C library.
      {Intrinsic::Sin, [](double x) { return std::sin(x); }, {0, 2e-6},
       [] { return concatenate({linearSweep(-10, 10, 200001), linearSweep(-8192, 8192, 400001),
                                geometricSweep(8000, 1e30, 2001)}); }},
      {Intrinsic::Cos, [](double x) { return std::cos(x); }, {0, 2e-6},
       [] { return concatenate({linearSweep(-10, 10, 200001), linearSweep(-8192, 8192, 400001),
                                geometricSweep(8000, 1e30, 2001)}); }},
  };
  return cases;
}

const KernelCase& kernelCase(Intrinsic op) {
  for (auto& kernel : kernelCases())
    if (kernel.op == op) return kernel;
  qFatal("no kernel case for %s", intrinsicName(op));
}

/// `C[i] = op(A[i])` over n elements, `lanes` at a time (a scalar loop when lanes is 1).
PrimFunc unaryLoop(Intrinsic op, int64_t n, int lanes, DataType element = DataType::float32()) {
  Buffer A("A", element, {Expr(n)}), C("C", element, {Expr(n)});
  Var i("i");
  Expr index = lanes == 1 ? Expr(i) : RampNode::make(i * lanes, Expr(1), lanes);
  Stmt body = store(C, call(op, {load(A, index)}), index);
  return PrimFunc("vector_math", {A, C}, loop(i, 0, n / lanes, body));
}

/// Runs `op` over `inputs` with the given lane count and returns the results.
std::vector<float> applyKernel(Intrinsic op, const std::vector<float>& inputs, int lanes,
                               const Target& target = hostTarget()) {
  int64_t n = (int64_t(inputs.size()) + 15) / 16 * 16;
  auto built = buildJIT({unaryLoop(op, n, lanes)}, target);
  if (!built) {
    qWarning("%s", built.error().toString().c_str());
    return {};
  }
  std::shared_ptr<JITModule> module = *built;
  AlignedArray<float> a(n, 0.0f), c(n);
  std::copy(inputs.begin(), inputs.end(), a.data());
  if (run(*module, "vector_math", {a.data(), c.data()}) != 0) return {};
  return std::vector<float>(c.data(), c.data() + inputs.size());
}

QString describe(Intrinsic op, float x, float got, double exact) {
  return QString("%1(%2) = %3, exact %4").arg(intrinsicName(op)).arg(double(x), 0, 'g', 9).arg(double(got), 0, 'g', 9)
      .arg(exact, 0, 'g', 12);
}

bool sameSpecialValue(float got, float expected) {
  if (std::isnan(expected)) return std::isnan(got);
  return got == expected && std::signbit(got) == std::signbit(expected);
}

}  // namespace

class TestCodegenVectorMath : public QObject {
  Q_OBJECT
private slots:
  void kernelsMatchStandardLibraryOverDenseSweeps_data() {
    QTest::addColumn<int>("op");
    QTest::addColumn<int>("lanes");
    for (auto& kernel : kernelCases())
      for (int lanes : {16, 8, 4, 1})
        QTest::newRow(QString("%1 x%2").arg(intrinsicName(kernel.op)).arg(lanes).toUtf8()) << int(kernel.op) << lanes;
  }
  void kernelsMatchStandardLibraryOverDenseSweeps() {
    QFETCH(int, op);
    QFETCH(int, lanes);
    const KernelCase& kernel = kernelCase(Intrinsic(op));
    std::vector<float> inputs = kernel.inputs();
    std::vector<float> results = applyKernel(kernel.op, inputs, lanes);
    QCOMPARE(results.size(), inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      double exact = kernel.reference(double(inputs[k]));
      if (!kernel.bound.allows(results[k], exact)) QFAIL(qPrintable(describe(kernel.op, inputs[k], results[k], exact)));
    }
  }

  void kernelsKeepTheirAccuracyOnOlderTargets_data() {
    QTest::addColumn<int>("op");
    QTest::addColumn<QString>("cpu");
    for (auto& kernel : kernelCases())
      for (const char* cpu : {"haswell", "x86-64"})
        QTest::newRow(QString("%1 %2").arg(intrinsicName(kernel.op)).arg(cpu).toUtf8()) << int(kernel.op) << QString(cpu);
  }
  void kernelsKeepTheirAccuracyOnOlderTargets() {
    // AVX2 with FMA (16 lanes split over two registers), and baseline SSE2 where no
    // multiply-add is fused: the kernels must not rely on a single rounding.
    QFETCH(int, op);
    QFETCH(QString, cpu);
    Target target = hostTarget();
    if (target.triple.rfind("x86_64", 0) != 0) QSKIP("x86-64 targets only");
    bool avx2 = cpu == "haswell";
    if (avx2 && !target.hasFeature("avx2")) QSKIP("this machine has no AVX2");
    target.cpu = cpu.toStdString();
    target.features = avx2 ? std::vector<std::string>{"avx", "avx2", "fma"} : std::vector<std::string>{};
    target.vectorBits = avx2 ? 256 : 128;
    const KernelCase& kernel = kernelCase(Intrinsic(op));
    std::vector<float> inputs = kernel.inputs();
    for (int lanes : {16, 1}) {
      std::vector<float> results = applyKernel(kernel.op, inputs, lanes, target);
      QCOMPARE(results.size(), inputs.size());
      for (size_t k = 0; k < inputs.size(); ++k) {
        double exact = kernel.reference(double(inputs[k]));
        if (!kernel.bound.allows(results[k], exact))
          QFAIL(qPrintable(QString("x%1: ").arg(lanes) + describe(kernel.op, inputs[k], results[k], exact)));
      }
    }
  }

  void specialValuesFollowTheCLibrary_data() {
    QTest::addColumn<int>("op");
    QTest::addColumn<float>("x");
    QTest::addColumn<float>("expected");
    auto row = [](Intrinsic op, float x, float expected) {
      QTest::newRow(QString("%1(%2)").arg(intrinsicName(op)).arg(double(x)).toUtf8()) << int(op) << x << expected;
    };
    row(Intrinsic::Exp, 89.0f, kInfinity);
    row(Intrinsic::Exp, 1000.0f, kInfinity);
    row(Intrinsic::Exp, kInfinity, kInfinity);
    row(Intrinsic::Exp, -110.0f, 0.0f);
    row(Intrinsic::Exp, -kInfinity, 0.0f);
    row(Intrinsic::Exp, kNaN, kNaN);
    row(Intrinsic::Exp, 0.0f, 1.0f);
    row(Intrinsic::Log, 0.0f, -kInfinity);
    row(Intrinsic::Log, -0.0f, -kInfinity);
    row(Intrinsic::Log, -1.0f, kNaN);
    row(Intrinsic::Log, -kInfinity, kNaN);
    row(Intrinsic::Log, kInfinity, kInfinity);
    row(Intrinsic::Log, kNaN, kNaN);
    row(Intrinsic::Log, 1.0f, 0.0f);
    row(Intrinsic::Tanh, kInfinity, 1.0f);
    row(Intrinsic::Tanh, -kInfinity, -1.0f);
    row(Intrinsic::Tanh, kNaN, kNaN);
    row(Intrinsic::Tanh, -0.0f, -0.0f);
    row(Intrinsic::Erf, kInfinity, 1.0f);
    row(Intrinsic::Erf, -kInfinity, -1.0f);
    row(Intrinsic::Erf, kNaN, kNaN);
    row(Intrinsic::Erf, -0.0f, -0.0f);
    row(Intrinsic::Sigmoid, kInfinity, 1.0f);
    row(Intrinsic::Sigmoid, -kInfinity, 0.0f);
    row(Intrinsic::Sigmoid, -200.0f, 0.0f);
    row(Intrinsic::Sigmoid, kNaN, kNaN);
    row(Intrinsic::Sin, -0.0f, -0.0f);
    row(Intrinsic::Sin, kInfinity, kNaN);
    row(Intrinsic::Sin, kNaN, kNaN);
    row(Intrinsic::Cos, -kInfinity, kNaN);
    row(Intrinsic::Cos, kNaN, kNaN);
    row(Intrinsic::Cos, 0.0f, 1.0f);
  }
  void specialValuesFollowTheCLibrary() {
    QFETCH(int, op);
    QFETCH(float, x);
    QFETCH(float, expected);
    for (int lanes : {16, 1}) {
      // The special value sits among ordinary ones, in a lane that is not the first.
      std::vector<float> inputs(16, 0.5f);
      inputs[5] = x;
      std::vector<float> results = applyKernel(Intrinsic(op), inputs, lanes);
      QCOMPARE(results.size(), inputs.size());
      QVERIFY2(sameSpecialValue(results[5], expected),
               qPrintable(QString("x%1: got %2").arg(lanes).arg(double(results[5]))));
      const KernelCase& kernel = kernelCase(Intrinsic(op));
      QVERIFY(kernel.bound.allows(results[0], kernel.reference(0.5)));
    }
  }

  void subnormalsAreFlushedToZero() {
    // Kernels run with denormals flushed (ModuleEmitter's callWithDenormalsFlushed): an
    // exp result below FLT_MIN is zero, one at or above it keeps the bound, and a subnormal
    // input reads as zero, so its log is -inf.
    std::vector<float> inputs = linearSweep(-103.9, -87, 20001);
    std::vector<float> results = applyKernel(Intrinsic::Exp, inputs, 16);
    QCOMPARE(results.size(), inputs.size());
    const double smallestNormal = std::numeric_limits<float>::min();
    int flushed = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      double exact = std::exp(double(inputs[k]));
      // Within one rounding of FLT_MIN either side is right.
      bool near = std::abs(exact - smallestNormal) <= 2e-6 * smallestNormal;
      bool right = exact < smallestNormal && !near ? results[k] == 0.0f
                                                   : std::abs(results[k] - exact) <= 2e-6 * exact || near;
      flushed += results[k] == 0.0f;
      QVERIFY2(right, qPrintable(describe(Intrinsic::Exp, inputs[k], results[k], exact)));
    }
    QVERIFY(flushed > 10000);  // exp(x) < FLT_MIN below x = -87.34: most of the sweep
    std::vector<float> logs = applyKernel(Intrinsic::Log, {1e-40f, -1e-40f, 1e-45f}, 16);
    QCOMPARE(logs.size(), size_t(3));
    for (float value : logs) QCOMPARE(value, -kInfinity);
  }

  void expNearOverflowIsFiniteUntilTheLimit() {
    // ln(FLT_MAX) = 88.7228...: just below it the result is finite and accurate.
    std::vector<float> inputs = linearSweep(88, 88.72, 10001);
    std::vector<float> results = applyKernel(Intrinsic::Exp, inputs, 16);
    QCOMPARE(results.size(), inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      double exact = std::exp(double(inputs[k]));
      QVERIFY2(std::isfinite(results[k]) && std::abs(results[k] - exact) <= 2e-6 * exact,
               qPrintable(describe(Intrinsic::Exp, inputs[k], results[k], exact)));
    }
  }

  void halfPrecisionTypesUseTheFloat32Kernels() {
    // float16 and bfloat16 compute in float32 and round once when stored.
    const int64_t n = 64;
    for (DataType type : {DataType::float16(), DataType::bfloat16()}) {
      auto module = compile(unaryLoop(Intrinsic::Tanh, n, 16, type));
      QVERIFY(module);
      AlignedArray<uint16_t> a(n), c(n);
      std::vector<float> inputs;
      for (int64_t k = 0; k < n; ++k) {
        float x = float(k - n / 2) / 8;  // exact in both types
        inputs.push_back(x);
        if (type.code() == DataType::Code::BFloat) {
          uint32_t bits;
          std::memcpy(&bits, &x, 4);
          a[k] = uint16_t(bits >> 16);
        } else {
          _Float16 half = _Float16(x);
          std::memcpy(&a[k], &half, 2);
        }
      }
      QCOMPARE(run(*module, "vector_math", {a.data(), c.data()}), 0);
      double tolerance = type.code() == DataType::Code::BFloat ? 1.0 / 128 : 1.0 / 1024;
      for (int64_t k = 0; k < n; ++k) {
        float got;
        if (type.code() == DataType::Code::BFloat) {
          uint32_t bits = uint32_t(c[k]) << 16;
          std::memcpy(&got, &bits, 4);
        } else {
          _Float16 half;
          std::memcpy(&half, &c[k], 2);
          got = float(half);
        }
        double exact = std::tanh(double(inputs[k]));
        QVERIFY2(std::abs(got - exact) <= tolerance, qPrintable(describe(Intrinsic::Tanh, inputs[k], got, exact)));
      }
    }
  }

  void vectorExpCallsNoMathLibrary() {
    for (bool optimized : {false, true}) {
      std::string ir = emitLLVMIR({unaryLoop(Intrinsic::Exp, 1024, 16)}, hostTarget(), optimized);
      QVERIFY2(ir.find("; error") == std::string::npos, ir.c_str());
      QVERIFY2(ir.find("<16 x float>") != std::string::npos, "the loop body is not a 16-lane vector");
      // Neither a direct libm call nor LLVM's exp intrinsic, which lowers to one per lane.
      QVERIFY2(ir.find("@expf") == std::string::npos, "the 16-lane exp still calls expf");
      QVERIFY2(ir.find("@llvm.exp.") == std::string::npos, "the 16-lane exp still uses llvm.exp");
    }
    for (Intrinsic op : {Intrinsic::Tanh, Intrinsic::Erf, Intrinsic::Log, Intrinsic::Sigmoid}) {
      std::string ir = emitLLVMIR({unaryLoop(op, 1024, 16)}, hostTarget(), true);
      for (const char* libm : {"@tanhf", "@erff", "@logf", "@expf", "@llvm.log.", "@llvm.exp."})
        QVERIFY2(ir.find(libm) == std::string::npos, qPrintable(QString("%1 uses %2").arg(intrinsicName(op)).arg(libm)));
    }
  }

  void float64KeepsTheMathLibrary() {
    // Double precision needs more than these float32 polynomials give.
    std::string ir = emitLLVMIR({unaryLoop(Intrinsic::Tanh, 64, 4, DataType::float64())}, hostTarget(), false);
    QVERIFY2(ir.find("@tanh(") != std::string::npos, "float64 tanh no longer calls tanh");
  }
};

QTEST_GUILESS_MAIN(TestCodegenVectorMath)
#include "test_codegen_vector_math.moc"
