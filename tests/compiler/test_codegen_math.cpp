// LLVM backend: every math intrinsic on scalars and vectors against the C++ standard library.
#include <QtTest>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/codegen/llvm/HostTarget.h"
#include "core/ir/IR.h"

#include "CodegenTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

struct MathCase {
  Intrinsic op;
  int arity;
  double low, high;  // the argument range tested
  double (*reference)(double, double, double);
};

const std::vector<MathCase>& mathCases() {
  static const std::vector<MathCase> cases = {
      {Intrinsic::Exp, 1, -10, 10, [](double x, double, double) { return std::exp(x); }},
      {Intrinsic::Log, 1, 0.01, 100, [](double x, double, double) { return std::log(x); }},
      {Intrinsic::Sqrt, 1, 0, 100, [](double x, double, double) { return std::sqrt(x); }},
      {Intrinsic::Rsqrt, 1, 0.01, 100, [](double x, double, double) { return 1 / std::sqrt(x); }},
      {Intrinsic::Tanh, 1, -6, 6, [](double x, double, double) { return std::tanh(x); }},
      {Intrinsic::Erf, 1, -3, 3, [](double x, double, double) { return std::erf(x); }},
      {Intrinsic::Pow, 2, 0.1, 4, [](double x, double y, double) { return std::pow(x, y); }},
      {Intrinsic::Fabs, 1, -50, 50, [](double x, double, double) { return std::fabs(x); }},
      {Intrinsic::Floor, 1, -50, 50, [](double x, double, double) { return std::floor(x); }},
      {Intrinsic::Ceil, 1, -50, 50, [](double x, double, double) { return std::ceil(x); }},
      // Half to even (the inputs include exact halves).
      {Intrinsic::Round, 1, -8, 8, [](double x, double, double) { return std::nearbyint(x); }},
      {Intrinsic::Trunc, 1, -50, 50, [](double x, double, double) { return std::trunc(x); }},
      {Intrinsic::Sin, 1, -7, 7, [](double x, double, double) { return std::sin(x); }},
      {Intrinsic::Cos, 1, -7, 7, [](double x, double, double) { return std::cos(x); }},
      {Intrinsic::Sigmoid, 1, -30, 30, [](double x, double, double) { return 1 / (1 + std::exp(-x)); }},
      {Intrinsic::Fma, 3, -5, 5, [](double x, double y, double z) { return std::fma(x, y, z); }},
  };
  return cases;
}

double tolerance(DataType type) {
  if (type.bits() == 64) return 1e-12;
  if (type.bits() == 32) return 2e-6;
  return 4e-3;  // float16: 11 significant bits
}

}  // namespace

class TestCodegenMath : public QObject {
  Q_OBJECT
private slots:
  void intrinsicsMatchStandardLibrary_data() {
    QTest::addColumn<int>("caseIndex");
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("lanes");
    for (size_t k = 0; k < mathCases().size(); ++k)
      for (const char* type : {"float32", "float64", "float16"})
        for (int lanes : {1, 16})
          QTest::newRow(QString("%1 %2 x%3").arg(intrinsicName(mathCases()[k].op)).arg(type).arg(lanes).toUtf8())
              << int(k) << QString(type) << lanes;
  }
  void intrinsicsMatchStandardLibrary() {
    QFETCH(int, caseIndex);
    QFETCH(QString, type);
    QFETCH(int, lanes);
    const MathCase& mathCase = mathCases()[caseIndex];
    DataType dtype = *DataType::parse(type.toStdString());
    const int64_t n = 64;
    std::vector<Buffer> inputs;
    for (int k = 0; k < mathCase.arity; ++k)
      inputs.emplace_back(std::string(1, char('A' + k)), dtype, std::vector<Expr>{Expr(n)});
    Buffer C("C", dtype, {Expr(n)});
    Var i("i");
    Expr index = lanes == 1 ? Expr(i) : RampNode::make(i * lanes, Expr(1), lanes);
    std::vector<Expr> args;
    for (auto& input : inputs) args.push_back(BufferLoadNode::make(input, {index}));
    Stmt body = BufferStoreNode::make(C, call(mathCase.op, args), {index});
    std::vector<Buffer> params = inputs;
    params.push_back(C);
    auto module = compile(PrimFunc("math", params, ForNode::make(i, 0, n / lanes, ForKind::Serial, body)));
    QVERIFY(module);

    // Values are generated in double, then stored at the tested precision; the reference
    // uses the stored values.
    size_t bytes = dtype.bytes();
    std::vector<std::unique_ptr<AlignedArray<char>>> memory;
    std::vector<void*> pointers;
    for (int k = 0; k <= mathCase.arity; ++k) {
      memory.push_back(std::make_unique<AlignedArray<char>>(n * bytes));
      pointers.push_back(memory.back()->data());
    }
    auto store = [&](int array, int64_t i, double v) {
      char* p = memory[array]->data() + i * bytes;
      if (bytes == 8) *reinterpret_cast<double*>(p) = v;
      else if (bytes == 4) *reinterpret_cast<float*>(p) = float(v);
      else *reinterpret_cast<_Float16*>(p) = _Float16(float(v));
    };
    auto load = [&](int array, int64_t i) -> double {
      char* p = memory[array]->data() + i * bytes;
      if (bytes == 8) return *reinterpret_cast<double*>(p);
      if (bytes == 4) return *reinterpret_cast<float*>(p);
      return float(*reinterpret_cast<_Float16*>(p));
    };
    for (int64_t k = 0; k < n; ++k)
      for (int a = 0; a < mathCase.arity; ++a) {
        double t = double((k * 7 + a * 13) % n) / (n - 1);
        double v = mathCase.low + t * (mathCase.high - mathCase.low);
        if (mathCase.op == Intrinsic::Round && k % 4 == 0) v = std::floor(v) + 0.5;  // exact ties
        if (mathCase.op == Intrinsic::Pow && a == 1) v = v - 2;                       // negative exponents too
        store(a, k, v);
      }
    TesselKernel kernel = module->getKernel("math");
    QVERIFY(kernel);
    QCOMPARE(kernel(pointers.data()), 0);
    for (int64_t k = 0; k < n; ++k) {
      double x = load(0, k), y = mathCase.arity > 1 ? load(1, k) : 0, z = mathCase.arity > 2 ? load(2, k) : 0;
      double expected = mathCase.reference(x, y, z);
      if (bytes == 2) expected = float(_Float16(float(expected)));  // the result is stored as float16
      double got = load(mathCase.arity, k);
      double allowed = tolerance(dtype) * std::max(1.0, std::abs(expected));
      if (!(std::abs(got - expected) <= allowed))
        QFAIL(qPrintable(QString("%1(%2, %3, %4) = %5, expected %6")
                             .arg(intrinsicName(mathCase.op)).arg(x).arg(y).arg(z).arg(got, 0, 'g', 17)
                             .arg(expected, 0, 'g', 17)));
    }
  }

  // int32(round(x)) of float32 vectors is one vcvtps2dq per register on x86 (the
  // requantization of every int8 kernel): still half to even, on every width, with AVX-512,
  // with AVX only, with SSE only, and on one lane.
  void roundedConversionToInt32IsHalfToEven_data() {
    QTest::addColumn<int>("lanes");
    QTest::addColumn<QString>("hidden");  // a prefix of the features hidden from the target
    for (int lanes : {1, 4, 8, 16, 32})
      for (const char* hidden : {"", "avx512", "avx"})
        QTest::addRow("%d lanes, no %s", lanes, *hidden ? hidden : "feature hidden") << lanes << QString(hidden);
  }
  void roundedConversionToInt32IsHalfToEven() {
    QFETCH(int, lanes);
    QFETCH(QString, hidden);
    const int64_t n = 64;
    Buffer A("A", DataType::float32(), {Expr(n)}), C("C", DataType::int32(), {Expr(n)});
    Var i("i");
    Expr index = lanes == 1 ? Expr(i) : RampNode::make(Expr(i) * Expr(int64_t(lanes)), Expr(1), lanes);
    Expr rounded = cast(DataType::int32(lanes), call(Intrinsic::Round, {BufferLoadNode::make(A, {index})}));
    Stmt body = loop(i, Expr(0), Expr(n / lanes), BufferStoreNode::make(C, rounded, {index}));
    PrimFunc func("round_to_int", {A, C}, body);
    Target target = hostTarget();
    if (!hidden.isEmpty())
      std::erase_if(target.features, [&](const std::string& f) { return QString::fromStdString(f).startsWith(hidden); });
    target.vectorBits = Target::vectorBitsForFeatures(target.features);
    auto built = buildJIT({func}, target);
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    if (lanes >= 16 && target.hasFeature("avx512f"))
      QVERIFY(emitAssembly({func}, target).find("vcvtps2dq") != std::string::npos);
    AlignedArray<float> a(n);
    AlignedArray<int32_t> c(n);
    for (int64_t k = 0; k < n; ++k) a[k] = float(k - n / 2) / 2 + (k % 3 == 0 ? 0.25f : 0.0f);  // halves and quarters
    void* args[] = {a.data(), c.data()};
    QCOMPARE((*built)->getKernel("round_to_int")(args), 0);
    for (int64_t k = 0; k < n; ++k)
      QVERIFY2(c[k] == int32_t(std::nearbyint(a[k])), qPrintable(QString("%1 -> %2").arg(double(a[k])).arg(c[k])));
  }

  void bfloat16IsComputedInFloat32() {
    const int64_t n = 16;
    Buffer A("A", DataType::bfloat16(), {Expr(n)}), C("C", DataType::bfloat16(), {Expr(n)});
    Var i("i");
    Expr index = RampNode::make(Expr(0), Expr(1), int(n));
    Stmt body = BufferStoreNode::make(C, exp(BufferLoadNode::make(A, {index})) * 2.0f, {index});
    auto module = compile(PrimFunc("bf16_exp", {A, C}, body));
    QVERIFY(module);
    AlignedArray<uint16_t> a(n), c(n);
    for (int k = 0; k < n; ++k) {
      float v = float(k) / 4 - 2;  // exactly representable in bfloat16
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      a[k] = uint16_t(bits >> 16);
    }
    void* args[] = {a.data(), c.data()};
    QCOMPARE(module->getKernel("bf16_exp")(args), 0);
    for (int k = 0; k < n; ++k) {
      uint32_t bits = uint32_t(c[k]) << 16;
      float got;
      std::memcpy(&got, &bits, 4);
      float expected = std::exp(float(k) / 4 - 2) * 2;
      QVERIFY2(std::abs(got - expected) <= expected / 128, qPrintable(QString("%1 vs %2").arg(got).arg(expected)));
    }
  }

  void integerArgumentsOfRoundingAndAbs() {
    const int64_t n = 16;
    Buffer A("A", DataType::int32(), {Expr(n)}), C("C", DataType::int32(), {Expr(n)}), D("D", DataType::int32(), {Expr(n)});
    Var i("i");
    Expr a = BufferLoadNode::make(A, {i});
    Stmt body = SeqStmtNode::make({BufferStoreNode::make(C, fabs(a), {i}),
                                   BufferStoreNode::make(D, call(Intrinsic::Floor, {a}), {i})});
    auto module = compile(PrimFunc("int_math", {A, C, D}, ForNode::make(i, 0, n, ForKind::Serial, body)));
    QVERIFY(module);
    AlignedArray<int32_t> a_(n), c_(n), d_(n);
    for (int k = 0; k < n; ++k) a_[k] = k * 3 - 20;
    void* args[] = {a_.data(), c_.data(), d_.data()};
    QCOMPARE(module->getKernel("int_math")(args), 0);
    for (int k = 0; k < n; ++k) {
      QCOMPARE(c_[k], std::abs(a_[k]));
      QCOMPARE(d_[k], a_[k]);
    }
  }

  void vectorMultiplyAddAccumulates() {
    // a*b + c with 'contract' may round once (FMA) or twice; both are within one rounding of
    // the exact value, so compare against the exact result with that tolerance.
    const int64_t n = 64;
    Buffer A("A", DataType::float32(), {Expr(n)}), B("B", DataType::float32(), {Expr(n)}),
        C("C", DataType::float32(), {Expr(n)});
    Var i("i");
    Expr index = RampNode::make(i * 16, Expr(1), 16);
    Expr a = BufferLoadNode::make(A, {index}), b = BufferLoadNode::make(B, {index});
    Stmt body = BufferStoreNode::make(C, a * b + BufferLoadNode::make(C, {index}), {index});
    auto module = compile(PrimFunc("muladd", {A, B, C}, ForNode::make(i, 0, n / 16, ForKind::Serial, body)));
    QVERIFY(module);
    AlignedArray<float> a_(n), b_(n), c_(n);
    for (int k = 0; k < n; ++k) a_[k] = 1.0f + k * 1e-3f, b_[k] = 3.0f - k * 7e-4f, c_[k] = -float(k);
    std::vector<float> before(c_.data(), c_.data() + n);
    void* args[] = {a_.data(), b_.data(), c_.data()};
    QCOMPARE(module->getKernel("muladd")(args), 0);
    for (int k = 0; k < n; ++k) {
      double exact = double(a_[k]) * double(b_[k]) + double(before[k]);
      QVERIFY(std::abs(c_[k] - exact) <= 2 * std::abs(exact) * 6e-8 + 1e-7);
    }
  }
};

QTEST_GUILESS_MAIN(TestCodegenMath)
#include "test_codegen_math.moc"
