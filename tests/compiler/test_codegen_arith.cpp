// LLVM backend: arithmetic, comparisons, casts and control flow on every element type, against C++.
#include <QtTest>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/ir/IR.h"

#include "CodegenTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

float bfloat16BitsToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float out;
  std::memcpy(&out, &wide, sizeof out);
  return out;
}

/// Round to nearest even, NaN kept quiet: the conversion bfloat16 is defined by.
uint16_t floatToBfloat16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value)) return uint16_t((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

/// Host memory aligned as NDArrays are, holding `count` elements of one DataType, written and
/// read as doubles with C++'s own conversions (wrapping integers, rounding floats).
class TypedBuffer {
public:
  TypedBuffer(DataType type, int64_t count) : type_(type), count_(count) {
    size_t bytes = (size_t(std::max<int64_t>(count, 1)) * type.bytes() + 63) / 64 * 64;
    data_ = std::aligned_alloc(64, bytes);
    std::memset(data_, 0, bytes);
  }
  ~TypedBuffer() { std::free(data_); }
  TypedBuffer(const TypedBuffer&) = delete;
  TypedBuffer& operator=(const TypedBuffer&) = delete;

  void* data() { return data_; }

  void set(int64_t i, double v) {
    char* p = static_cast<char*>(data_) + i * type_.bytes();
    switch (type_.code()) {
      case DataType::Code::Bool: *reinterpret_cast<uint8_t*>(p) = v != 0; return;
      case DataType::Code::BFloat: *reinterpret_cast<uint16_t*>(p) = floatToBfloat16Bits(float(v)); return;
      case DataType::Code::Float:
        if (type_.bits() == 16) *reinterpret_cast<_Float16*>(p) = _Float16(float(v));
        else if (type_.bits() == 32) *reinterpret_cast<float*>(p) = float(v);
        else *reinterpret_cast<double*>(p) = v;
        return;
      default: break;
    }
    // Integers wrap modulo 2^bits, as the generated code does.
    uint64_t bits = uint64_t(int64_t(v));
    std::memcpy(p, &bits, type_.bytes());
  }

  double get(int64_t i) const {
    const char* p = static_cast<const char*>(data_) + i * type_.bytes();
    switch (type_.code()) {
      case DataType::Code::Bool: return *reinterpret_cast<const uint8_t*>(p);
      case DataType::Code::BFloat: return bfloat16BitsToFloat(*reinterpret_cast<const uint16_t*>(p));
      case DataType::Code::Float:
        if (type_.bits() == 16) return float(*reinterpret_cast<const _Float16*>(p));
        if (type_.bits() == 32) return *reinterpret_cast<const float*>(p);
        return *reinterpret_cast<const double*>(p);
      case DataType::Code::Int:
        switch (type_.bits()) {
          case 8: return *reinterpret_cast<const int8_t*>(p);
          case 16: return *reinterpret_cast<const int16_t*>(p);
          case 32: return *reinterpret_cast<const int32_t*>(p);
          default: return double(*reinterpret_cast<const int64_t*>(p));
        }
      default:
        switch (type_.bits()) {
          case 8: return *reinterpret_cast<const uint8_t*>(p);
          case 16: return *reinterpret_cast<const uint16_t*>(p);
          case 32: return *reinterpret_cast<const uint32_t*>(p);
          default: return double(*reinterpret_cast<const uint64_t*>(p));
        }
    }
  }

  /// What storing `v` and reading it back gives: the type's rounding or wrapping.
  double representable(double v) {
    TypedBuffer scratch(type_, 1);
    scratch.set(0, v);
    return scratch.get(0);
  }

private:
  DataType type_;
  int64_t count_;
  void* data_;
};

DataType typeNamed(const QString& name) { return *DataType::parse(name.toStdString()); }

constexpr int64_t kCount = 37;  // not a multiple of any vector width: remainder loops run too

}  // namespace

class TestCodegenArith : public QObject {
  Q_OBJECT
private slots:
  void binaryOperatorsMatchCpp_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("op");
    for (const char* type : {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                             "float32", "float64", "bfloat16"})
      for (const char* op : {"add", "sub", "mul", "div", "min", "max"})
        QTest::newRow((std::string(type) + " " + op).c_str()) << QString(type) << QString(op);
  }
  void binaryOperatorsMatchCpp() {
    QFETCH(QString, type);
    QFETCH(QString, op);
    DataType dtype = typeNamed(type);
    Buffer A("A", dtype, {Expr(kCount)}), B("B", dtype, {Expr(kCount)}), C("C", dtype, {Expr(kCount)});
    Var i("i");
    Expr a = BufferLoadNode::make(A, {i}), b = BufferLoadNode::make(B, {i});
    std::map<QString, std::function<Expr()>> build = {
        {"add", [&] { return AddNode::make(a, b); }}, {"sub", [&] { return SubNode::make(a, b); }},
        {"mul", [&] { return MulNode::make(a, b); }}, {"div", [&] { return DivNode::make(a, b); }},
        {"min", [&] { return MinNode::make(a, b); }}, {"max", [&] { return MaxNode::make(a, b); }}};
    PrimFunc func("binary", {A, B, C},
                  ForNode::make(i, 0, kCount, ForKind::Serial, BufferStoreNode::make(C, build[op](), {i})));
    auto module = compile(func);
    QVERIFY(module);

    TypedBuffer a_(dtype, kCount), b_(dtype, kCount), c_(dtype, kCount);
    for (int64_t k = 0; k < kCount; ++k) {
      // Small values: exact in every type; unsigned b stays below a so a - b does not wrap.
      double bv = dtype.isUInt() ? double(k % 5 + 1) : double(k % 11 - 5);
      if (bv == 0) bv = 3;
      double av = dtype.isUInt() ? bv + double(k % 7) : double(k % 13 - 6);
      if (dtype.isFloat()) av += 0.25, bv *= 1.5;
      a_.set(k, av);
      b_.set(k, bv);
    }
    QCOMPARE(run(*module, "binary", {a_.data(), b_.data(), c_.data()}), 0);
    for (int64_t k = 0; k < kCount; ++k) {
      double av = a_.get(k), bv = b_.get(k), expected = 0;
      if (op == "add") expected = av + bv;
      if (op == "sub") expected = av - bv;
      if (op == "mul") expected = av * bv;
      if (op == "div") expected = dtype.isFloat() ? av / bv : std::trunc(av / bv);
      if (op == "min") expected = std::min(av, bv);
      if (op == "max") expected = std::max(av, bv);
      QCOMPARE(c_.get(k), c_.representable(expected));
    }
  }

  void integerArithmeticWraps() {
    Buffer A("A", DataType::int8(), {Expr(4)}), U("U", DataType::uint8(), {Expr(4)});
    Var i("i");
    Stmt body = SeqStmtNode::make(
        {BufferStoreNode::make(A, AddNode::make(BufferLoadNode::make(A, {i}), IntImmNode::make(DataType::int8(), 100)), {i}),
         BufferStoreNode::make(U, SubNode::make(BufferLoadNode::make(U, {i}), IntImmNode::make(DataType::uint8(), 10)), {i})});
    auto module = compile(PrimFunc("wrap", {A, U}, ForNode::make(i, 0, 4, ForKind::Serial, body)));
    QVERIFY(module);
    alignas(64) int8_t a[64] = {100, 27, 28, -128};
    alignas(64) uint8_t u[64] = {5, 10, 255, 0};
    QCOMPARE(run(*module, "wrap", {a, u}), 0);
    QCOMPARE(int(a[0]), -56);
    QCOMPARE(int(a[1]), 127);
    QCOMPARE(int(a[2]), -128);
    QCOMPARE(int(a[3]), -28);
    QCOMPARE(int(u[0]), 251);
    QCOMPARE(int(u[1]), 0);
    QCOMPARE(int(u[2]), 245);
    QCOMPARE(int(u[3]), 246);
  }

  void bitwiseOperationsMatchCpp_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("op");
    for (const char* type : {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
      for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right"})
        QTest::newRow((std::string(type) + " " + op).c_str()) << QString(type) << QString(op);
  }
  void bitwiseOperationsMatchCpp() {
    QFETCH(QString, type);
    QFETCH(QString, op);
    DataType dtype = typeNamed(type);
    Intrinsic intrinsic;
    QVERIFY(parseIntrinsic(op.toStdString(), &intrinsic));
    Buffer A("A", dtype, {Expr(kCount)}), B("B", dtype, {Expr(kCount)}), C("C", dtype, {Expr(kCount)});
    Var i("i");
    std::vector<Expr> args = {BufferLoadNode::make(A, {i})};
    if (intrinsicArity(intrinsic) == 2) args.push_back(BufferLoadNode::make(B, {i}));
    Expr result = CallNode::make(dtype, intrinsic, args);
    auto module = compile(PrimFunc("bitwise", {A, B, C},
                                   ForNode::make(i, 0, kCount, ForKind::Serial, BufferStoreNode::make(C, result, {i}))));
    QVERIFY(module);

    // Raw bit patterns, little-endian, `bytes` wide: the sign bit set in half of them, and
    // shift amounts from 0 past the width (and negative, for signed types), where C++ is
    // undefined and Tessel gives 0 (or the sign, shifting a signed value right).
    const int bits = dtype.bits(), bytes = dtype.bytes();
    const uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    std::vector<uint64_t> a(kCount), b(kCount);
    for (int64_t k = 0; k < kCount; ++k) {
      a[k] = (0x9E3779B97F4A7C15ull * uint64_t(k + 1)) & mask;
      b[k] = op.startsWith("shift") ? uint64_t(k % (bits + 4)) : (0xC2B2AE3D27D4EB4Full * uint64_t(k + 3)) & mask;
      if (op.startsWith("shift") && dtype.isInt() && k % 9 == 8) b[k] = mask;  // -1
    }
    AlignedArray<char> a_(kCount * bytes), b_(kCount * bytes), c_(kCount * bytes);
    for (int64_t k = 0; k < kCount; ++k) {
      std::memcpy(a_.data() + k * bytes, &a[k], bytes);
      std::memcpy(b_.data() + k * bytes, &b[k], bytes);
    }
    QCOMPARE(run(*module, "bitwise", {a_.data(), b_.data(), c_.data()}), 0);
    for (int64_t k = 0; k < kCount; ++k) {
      uint64_t got = 0, expected = 0;
      std::memcpy(&got, c_.data() + k * bytes, bytes);
      bool negative = dtype.isInt() && (a[k] >> (bits - 1)) & 1;
      uint64_t amount = b[k];
      if (dtype.isInt() && (b[k] >> (bits - 1)) & 1) amount = ~uint64_t(0);  // a negative amount
      if (op == "bitwise_and") expected = a[k] & b[k];
      if (op == "bitwise_or") expected = a[k] | b[k];
      if (op == "bitwise_xor") expected = a[k] ^ b[k];
      if (op == "bitwise_not") expected = ~a[k];
      if (op == "shift_left") expected = amount >= uint64_t(bits) ? 0 : a[k] << amount;
      if (op == "shift_right") {
        if (amount >= uint64_t(bits)) expected = negative ? ~uint64_t(0) : 0;
        else expected = (a[k] >> amount) | (negative && amount ? ~uint64_t(0) << (bits - amount) : 0);
      }
      QCOMPARE(got, expected & mask);
    }
  }

  void bitwiseOperationsRejectFloats() {
    Buffer A("A", DataType::float32(), {Expr(4)});
    Var i("i");
    Expr result = CallNode::make(DataType::float32(), Intrinsic::BitwiseAnd,
                                 {BufferLoadNode::make(A, {i}), BufferLoadNode::make(A, {i})});
    auto built = buildJIT({PrimFunc("bitwise", {A}, ForNode::make(i, 0, 4, ForKind::Serial, BufferStoreNode::make(A, result, {i})))});
    QVERIFY(!built);
    QVERIFY2(QString::fromStdString(built.error().toString()).contains("bitwise_and() of float32 is not supported"),
             built.error().toString().c_str());
  }

  void comparisonsAndLogicProduceBools_data() {
    QTest::addColumn<QString>("type");
    for (const char* type : {"int8", "int32", "uint8", "uint32", "int64", "float16", "float32", "float64", "bfloat16"})
      QTest::newRow(type) << QString(type);
  }
  void comparisonsAndLogicProduceBools() {
    QFETCH(QString, type);
    DataType dtype = typeNamed(type);
    const int64_t n = 9;
    Buffer A("A", dtype, {Expr(n)}), B("B", dtype, {Expr(n)});
    std::vector<Buffer> outputs;
    for (const char* name : {"lt", "le", "gt", "ge", "eq", "ne", "between", "outside", "notlt"})
      outputs.emplace_back(name, DataType::boolean(), std::vector<Expr>{Expr(n)});
    Var i("i");
    Expr a = BufferLoadNode::make(A, {i}), b = BufferLoadNode::make(B, {i});
    Expr two = makeConst(dtype, 2);
    std::vector<Expr> results = {LTNode::make(a, b), LENode::make(a, b), GTNode::make(a, b), GENode::make(a, b),
                                 EQNode::make(a, b), NENode::make(a, b),
                                 AndNode::make(LENode::make(two, a), LTNode::make(a, b)),
                                 OrNode::make(LTNode::make(a, two), GENode::make(a, b)), NotNode::make(LTNode::make(a, b))};
    std::vector<Stmt> stores;
    for (size_t k = 0; k < results.size(); ++k) stores.push_back(BufferStoreNode::make(outputs[k], results[k], {i}));
    std::vector<Buffer> params{A, B};
    params.insert(params.end(), outputs.begin(), outputs.end());
    auto module = compile(PrimFunc("compare", params, ForNode::make(i, 0, n, ForKind::Serial, SeqStmtNode::make(stores))));
    QVERIFY(module);

    TypedBuffer a_(dtype, n), b_(dtype, n);
    std::vector<std::unique_ptr<TypedBuffer>> out;
    std::vector<void*> args{a_.data(), b_.data()};
    for (size_t k = 0; k < outputs.size(); ++k) {
      out.push_back(std::make_unique<TypedBuffer>(DataType::boolean(), n));
      args.push_back(out.back()->data());
    }
    for (int64_t k = 0; k < n; ++k) {
      a_.set(k, double(k % 4));
      b_.set(k, double((k * 5) % 4));
    }
    QCOMPARE(run(*module, "compare", args), 0);
    for (int64_t k = 0; k < n; ++k) {
      double av = a_.get(k), bv = b_.get(k);
      bool expected[] = {av < bv, av <= bv, av > bv, av >= bv, av == bv, av != bv, 2 <= av && av < bv,
                         av < 2 || av >= bv, !(av < bv)};
      for (size_t r = 0; r < outputs.size(); ++r) {
        // Booleans are stored as bytes holding exactly 0 or 1.
        QCOMPARE(out[r]->get(k), expected[r] ? 1.0 : 0.0);
      }
    }
  }

  void floatComparisonsTreatNanAsUnordered() {
    Buffer A("A", DataType::float32(), {Expr(2)}), C("C", DataType::boolean(), {Expr(8)});
    Expr nan = BufferLoadNode::make(A, {Expr(0)}), one = BufferLoadNode::make(A, {Expr(1)});
    std::vector<Expr> tests = {EQNode::make(nan, nan), NENode::make(nan, nan), LTNode::make(nan, one),
                               GENode::make(nan, one), call(Intrinsic::IsNan, {nan}), call(Intrinsic::IsNan, {one})};
    std::vector<Stmt> stores;
    for (size_t k = 0; k < tests.size(); ++k) stores.push_back(BufferStoreNode::make(C, tests[k], {Expr(int64_t(k))}));
    auto module = compile(PrimFunc("nan", {A, C}, SeqStmtNode::make(stores)));
    QVERIFY(module);
    alignas(64) float a[16] = {std::numeric_limits<float>::quiet_NaN(), 1.0f};
    alignas(64) uint8_t c[64] = {};
    QCOMPARE(run(*module, "nan", {a, c}), 0);
    QCOMPARE(int(c[0]), 0);
    QCOMPARE(int(c[1]), 1);
    QCOMPARE(int(c[2]), 0);
    QCOMPARE(int(c[3]), 0);
    QCOMPARE(int(c[4]), 1);
    QCOMPARE(int(c[5]), 0);
  }

  void divisionAndModuloRoundAsDocumented_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("lanes");
    QTest::addColumn<int>("constantDivisor");  // 0: divisor loaded from memory
    for (const char* type : {"int8", "int32", "int64"})
      for (int lanes : {1, 8})
        for (int divisor : {0, 4, 3, -4, 1})
          QTest::newRow(QString("%1 x%2 / %3").arg(type).arg(lanes).arg(divisor).toUtf8())
              << QString(type) << lanes << divisor;
  }
  void divisionAndModuloRoundAsDocumented() {
    QFETCH(QString, type);
    QFETCH(int, lanes);
    QFETCH(int, constantDivisor);
    DataType dtype = typeNamed(type);
    const int64_t n = 64;
    Buffer A("A", dtype, {Expr(n)}), B("B", dtype, {Expr(n)});
    Buffer D("D", dtype, {Expr(n)}), M("M", dtype, {Expr(n)}), FD("FD", dtype, {Expr(n)}), FM("FM", dtype, {Expr(n)});
    Var i("i");
    Expr index = lanes == 1 ? Expr(i) : RampNode::make(i * lanes, Expr(1), lanes);
    Expr a = BufferLoadNode::make(A, {index});
    Expr b = constantDivisor == 0 ? BufferLoadNode::make(B, {index}) : makeConst(dtype.withLanes(lanes), constantDivisor);
    Stmt body = SeqStmtNode::make({BufferStoreNode::make(D, DivNode::make(a, b), {index}),
                                   BufferStoreNode::make(M, ModNode::make(a, b), {index}),
                                   BufferStoreNode::make(FD, FloorDivNode::make(a, b), {index}),
                                   BufferStoreNode::make(FM, FloorModNode::make(a, b), {index})});
    auto module = compile(PrimFunc("divide", {A, B, D, M, FD, FM}, ForNode::make(i, 0, n / lanes, ForKind::Serial, body)));
    QVERIFY(module);

    TypedBuffer a_(dtype, n), b_(dtype, n), d_(dtype, n), m_(dtype, n), fd_(dtype, n), fm_(dtype, n);
    const int divisors[] = {3, -3, 4, -4, 7, -1, 1, -7};
    for (int64_t k = 0; k < n; ++k) {
      a_.set(k, double(k - n / 2) * 3 + (k % 5));  // negative and positive dividends
      b_.set(k, divisors[k % 8]);
    }
    QCOMPARE(run(*module, "divide", {a_.data(), b_.data(), d_.data(), m_.data(), fd_.data(), fm_.data()}), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t av = int64_t(a_.get(k));
      int64_t bv = constantDivisor == 0 ? int64_t(b_.get(k)) : constantDivisor;
      int64_t floorQuotient = int64_t(std::floor(double(av) / double(bv)));
      QCOMPARE(int64_t(d_.get(k)), av / bv);
      QCOMPARE(int64_t(m_.get(k)), av % bv);
      QCOMPARE(int64_t(fd_.get(k)), floorQuotient);
      QCOMPARE(int64_t(fm_.get(k)), av - floorQuotient * bv);
    }
  }

  void floatFloorDivisionAndModulo() {
    Buffer A("A", DataType::float32(), {Expr(4)}), FD("FD", DataType::float32(), {Expr(4)}),
        FM("FM", DataType::float32(), {Expr(4)});
    Var i("i");
    Expr load = BufferLoadNode::make(A, {i});
    Expr divisor = Expr(-2.0f);
    Stmt body = SeqStmtNode::make({BufferStoreNode::make(FD, FloorDivNode::make(load, divisor), {i}),
                                   BufferStoreNode::make(FM, FloorModNode::make(load, divisor), {i})});
    auto module = compile(PrimFunc("fdivide", {A, FD, FM}, ForNode::make(i, 0, 4, ForKind::Serial, body)));
    QVERIFY(module);
    alignas(64) float a[16] = {5.0f, -5.0f, 4.0f, 0.5f}, fd[16], fm[16];
    QCOMPARE(run(*module, "fdivide", {a, fd, fm}), 0);
    for (int k = 0; k < 4; ++k) {
      QCOMPARE(fd[k], std::floor(a[k] / -2.0f));
      QCOMPARE(fm[k], a[k] - std::floor(a[k] / -2.0f) * -2.0f);
    }
  }

  void castsConvertLikeCpp_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    const char* types[] = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint32", "float16", "float32", "float64",
                           "bfloat16"};
    for (const char* from : types)
      for (const char* to : types)
        if (std::strcmp(from, to) != 0) QTest::newRow((std::string(from) + " to " + to).c_str()) << QString(from) << QString(to);
  }
  void castsConvertLikeCpp() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    DataType source = typeNamed(from), target = typeNamed(to);
    // Values every source type holds; conversions to narrower types wrap (integers) or round
    // (floats), and float-to-integer truncates toward zero.
    std::vector<double> values = {0, 1, 2, 3, 7, 100, 127, 120.5, 3.75, 1.0 / 3, 250, 1000.125, 70000, -1, -2.5, -100, -128};
    std::vector<double> usable;
    TypedBuffer probe(source, 1);
    for (double v : values) {
      if (source.isBool() && v != 0 && v != 1) continue;
      if (source.isUInt() && v < 0) continue;
      double stored = probe.representable(v);
      if (target.isUInt() && source.isFloat() && stored < 0) continue;  // undefined in C++ too
      if (target.isIntegral() && source.isFloat() && std::abs(stored) >= std::ldexp(1.0, target.bits() - 1)) continue;
      if (std::isinf(stored)) continue;
      usable.push_back(stored);
    }
    const int64_t n = int64_t(usable.size());
    Buffer A("A", source, {Expr(n)}), C("C", target, {Expr(n)});
    Var i("i");
    auto module = compile(PrimFunc("convert", {A, C},
                                   ForNode::make(i, 0, n, ForKind::Serial,
                                                 BufferStoreNode::make(C, CastNode::make(target, BufferLoadNode::make(A, {i})), {i}))));
    QVERIFY(module);
    TypedBuffer a_(source, n), c_(target, n);
    for (int64_t k = 0; k < n; ++k) a_.set(k, usable[k]);
    QCOMPARE(run(*module, "convert", {a_.data(), c_.data()}), 0);
    for (int64_t k = 0; k < n; ++k) {
      double v = usable[k];
      double expected = target.isBool() ? double(v != 0) : target.isIntegral() ? std::trunc(v) : v;
      QCOMPARE(c_.get(k), c_.representable(expected));
    }
  }

  void bfloat16RoundsToNearestEven() {
    const int64_t n = 8;
    Buffer A("A", DataType::float32(), {Expr(n)}), C("C", DataType::bfloat16(), {Expr(n)});
    Var i("i");
    auto module = compile(PrimFunc("to_bf16", {A, C},
                                   ForNode::make(i, 0, n, ForKind::Serial,
                                                 BufferStoreNode::make(C, CastNode::make(DataType::bfloat16(), BufferLoadNode::make(A, {i})), {i}))));
    QVERIFY(module);
    alignas(64) float a[16] = {1.0f + 1.0f / 256,      // tie, rounds down to even 1.0
                               1.0f + 3.0f / 256,      // tie, rounds up to even 1.015625
                               1.0f + 1.0f / 256 + 1e-6f,  // above the tie: up
                               -2.0f,
                               std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               3.4e38f,  // rounds to the largest finite bfloat16 or infinity, as the bits say
                               1e-40f};  // subnormal
    alignas(64) uint16_t c[32] = {};
    QCOMPARE(run(*module, "to_bf16", {a, c}), 0);
    QCOMPARE(int(c[0]), 0x3F80);
    QCOMPARE(int(c[1]), 0x3F82);
    QCOMPARE(int(c[2]), 0x3F81);
    QCOMPARE(int(c[3]), 0xC000);
    QCOMPARE(int(c[4]), 0x7F80);
    QVERIFY(std::isnan(bfloat16BitsToFloat(c[5])));
    QCOMPARE(int(c[6]), int(floatToBfloat16Bits(3.4e38f)));
    QCOMPARE(int(c[7]), int(floatToBfloat16Bits(1e-40f)));
  }

  void sixteenBitFloatsRoundTripThroughFloat32_data() {
    QTest::addColumn<QString>("type");
    QTest::newRow("bfloat16") << "bfloat16";
    QTest::newRow("float16") << "float16";
  }
  void sixteenBitFloatsRoundTripThroughFloat32() {
    QFETCH(QString, type);
    DataType dtype = typeNamed(type);
    const int64_t n = 65536;  // every bit pattern
    Buffer A("A", dtype, {Expr(n)}), F("F", DataType::float32(), {Expr(n)}), C("C", dtype, {Expr(n)});
    Var i("i"), j("j");
    Stmt widen = ForNode::make(i, 0, n, ForKind::Serial,
                               BufferStoreNode::make(F, CastNode::make(DataType::float32(), BufferLoadNode::make(A, {i})), {i}));
    Stmt narrow = ForNode::make(j, 0, n, ForKind::Serial,
                                BufferStoreNode::make(C, CastNode::make(dtype, BufferLoadNode::make(F, {j})), {j}));
    auto module = compile(PrimFunc("round_trip", {A, F, C}, SeqStmtNode::make({widen, narrow})));
    QVERIFY(module);
    std::vector<uint16_t> a(n), c(n);
    std::vector<float> f(n);
    uint16_t* a_ = static_cast<uint16_t*>(std::aligned_alloc(64, n * 2));
    uint16_t* c_ = static_cast<uint16_t*>(std::aligned_alloc(64, n * 2));
    float* f_ = static_cast<float*>(std::aligned_alloc(64, n * 4));
    for (int64_t k = 0; k < n; ++k) a_[k] = uint16_t(k);
    QCOMPARE(run(*module, "round_trip", {a_, f_, c_}), 0);
    int mismatches = 0;
    for (int64_t k = 0; k < n; ++k) {
      uint16_t bits = uint16_t(k);
      float expectedWide;
      if (dtype.code() == DataType::Code::BFloat) expectedWide = bfloat16BitsToFloat(bits);
      else {
        _Float16 h;
        std::memcpy(&h, &bits, 2);
        expectedWide = float(h);
      }
      bool nan = std::isnan(expectedWide);
      if (nan ? !std::isnan(f_[k]) : f_[k] != expectedWide) ++mismatches;
      if (nan ? (c_[k] & 0x7FFF) <= (dtype.code() == DataType::Code::BFloat ? 0x7F80 : 0x7C00) : c_[k] != bits) ++mismatches;
    }
    std::free(a_);
    std::free(c_);
    std::free(f_);
    QCOMPARE(mismatches, 0);
  }

  void selectLetAndIfThenElse() {
    const int64_t n = 30;
    Buffer A("A", DataType::float32(), {Expr(n)}), C("C", DataType::float32(), {Expr(n)}),
        D("D", DataType::int32(), {Expr(n)});
    Var i("i"), x("x", DataType::float32()), y("y", DataType::float32());
    Expr a = BufferLoadNode::make(A, {i});
    // C[i] = i % 3 == 0 ? (let x = a*a in x + x) : select(a > 0, a, -a) - 1
    Stmt thenCase = BufferStoreNode::make(C, LetNode::make(x, a * a, x + x), {i});
    Stmt elseCase = LetStmtNode::make(y, select(a > 0.0f, a, 0.0f - a), BufferStoreNode::make(C, y - 1.0f, {i}));
    Stmt branch = IfThenElseNode::make(EQNode::make(FloorModNode::make(i, Expr(3)), Expr(0)), thenCase, elseCase);
    // D[i] = 1 where likely(i < 10), untouched elsewhere: an if without else.
    Stmt hinted = IfThenElseNode::make(likely(i < 10), BufferStoreNode::make(D, IntImmNode::make(DataType::int32(), 1), {i}));
    auto module = compile(PrimFunc("control", {A, C, D}, ForNode::make(i, 0, n, ForKind::Serial, SeqStmtNode::make({branch, hinted}))));
    QVERIFY(module);
    alignas(64) float a_[64], c_[64];
    alignas(64) int32_t d_[64];
    for (int k = 0; k < n; ++k) a_[k] = float(k % 7) - 3.5f, d_[k] = 7;
    QCOMPARE(run(*module, "control", {a_, c_, d_}), 0);
    for (int k = 0; k < n; ++k) {
      float expected = k % 3 == 0 ? 2 * a_[k] * a_[k] : std::abs(a_[k]) - 1;
      QCOMPARE(c_[k], expected);
      QCOMPARE(d_[k], k < 10 ? 1 : 7);
    }
  }

  void oneVariableBoundInSiblingScopes() {
    // After unrolling, the same Var is defined once per copy of the body.
    Buffer C("C", DataType::int64(), {Expr(8)});
    Var t("t");
    std::vector<Stmt> copies;
    for (int k = 0; k < 4; ++k)
      copies.push_back(LetStmtNode::make(t, Expr(k * 10), BufferStoreNode::make(C, t + 1, {Expr(k)})));
    Var i("i");
    Stmt loops = SeqStmtNode::make({ForNode::make(i, 0, 2, ForKind::Serial, BufferStoreNode::make(C, i, {i + 4})),
                                    ForNode::make(i, 2, 2, ForKind::Serial, BufferStoreNode::make(C, i * 2, {i + 4}))});
    auto module = compile(PrimFunc("siblings", {C}, SeqStmtNode::make({SeqStmtNode::make(copies), loops})));
    QVERIFY(module);
    alignas(64) int64_t c[8] = {};
    QCOMPARE(run(*module, "siblings", {c}), 0);
    const int64_t expected[8] = {1, 11, 21, 31, 0, 1, 4, 6};
    for (int k = 0; k < 8; ++k) QCOMPARE(c[k], expected[k]);
  }
};

QTEST_GUILESS_MAIN(TestCodegenArith)
#include "test_codegen_arith.moc"
