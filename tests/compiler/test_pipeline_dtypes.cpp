// Every element type through the whole pipeline (TE -> schedule -> lower -> build -> run):
// elementwise kernels and sum reductions, vectorized, parallel and unrolled, compared
// exactly with C++ that rounds the way the generated code does.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

#include "compiler/lower/Build.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/IROperators.h"
#include "runtime/ThreadPool.h"

using namespace tessel;

namespace {

// --- 16-bit floats, rounded to nearest even like the generated code ----------------------

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint16_t floatToHalf(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude >= 0x7F800000) return sign | (magnitude > 0x7F800000 ? 0x7E00 : 0x7C00);
  if (magnitude >= 0x477FF000) return sign | 0x7C00;  // 65520 and up round to infinity
  if (magnitude < 0x38800000) {                        // below 2^-14: a subnormal half (or zero)
    float units = std::nearbyint(floatOf(magnitude) * 16777216.0f);  // multiples of 2^-24
    return sign | uint16_t(units);
  }
  uint32_t half = ((((magnitude >> 23) - 127 + 15) << 10) | ((magnitude & 0x7FFFFF) >> 13));
  uint32_t rest = magnitude & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return sign | uint16_t(half);
}

float halfToFloat(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1F, mantissa = half & 0x3FF;
  if (exponent == 0) {
    float value = float(mantissa) / 16777216.0f;
    return sign ? -value : value;
  }
  if (exponent == 31) return floatOf(sign | 0x7F800000 | (mantissa << 13));
  return floatOf(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t floatToBfloat16(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) return uint16_t((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

float bfloat16ToFloat(uint16_t value) { return floatOf(uint32_t(value) << 16); }

// --- element types as the test sees them ----------------------------------------------------

/// Values travel as doubles holding exactly a value of the element type (every test value
/// of every type, int64 included, fits in a double's 53 bits).
struct ElementType {
  std::string name;
  DataType type;

  bool isHalf() const { return type == DataType::float16(); }
  bool isBfloat() const { return type == DataType::bfloat16(); }
  bool isFloat() const { return type.isFloat(); }
  /// float16, bfloat16 and float32 arithmetic happens in float32, then rounds to the type.
  bool computesInFloat() const { return isFloat() && type.bits() <= 32; }
  int64_t bytes() const { return (type.bits() + 7) / 8; }

  /// The value of this type nearest to `value` (floats round to nearest even from float32;
  /// integers wrap, which only unsigned test data relies on).
  double round(double value) const {
    if (type.isBool()) return value != 0 ? 1 : 0;
    if (isHalf()) return halfToFloat(floatToHalf(float(value)));
    if (isBfloat()) return bfloat16ToFloat(floatToBfloat16(float(value)));
    if (type == DataType::float32()) return float(value);
    if (isFloat()) return value;
    auto integer = int64_t(value);
    switch (type.bits()) {
      case 8: return type.isInt() ? double(int8_t(integer)) : double(uint8_t(integer));
      case 16: return double(int16_t(integer));
      case 32: return double(int32_t(integer));
      default: return double(integer);
    }
  }

  void store(double value, uint8_t* at) const {
    auto put = [&](auto typed) { std::memcpy(at, &typed, sizeof typed); };
    if (type.isBool()) return put(uint8_t(value != 0));
    if (isHalf()) return put(floatToHalf(float(value)));
    if (isBfloat()) return put(floatToBfloat16(float(value)));
    if (type == DataType::float32()) return put(float(value));
    if (isFloat()) return put(value);
    auto integer = int64_t(value);
    switch (type.bits()) {
      case 8: return type.isInt() ? put(int8_t(integer)) : put(uint8_t(integer));
      case 16: return put(int16_t(integer));
      case 32: return put(int32_t(integer));
      default: return put(integer);
    }
  }

  double load(const uint8_t* at) const {
    auto get = [&](auto typed) {
      std::memcpy(&typed, at, sizeof typed);
      return typed;
    };
    if (type.isBool()) return get(uint8_t()) != 0 ? 1 : 0;
    if (isHalf()) return halfToFloat(get(uint16_t()));
    if (isBfloat()) return bfloat16ToFloat(get(uint16_t()));
    if (type == DataType::float32()) return get(float());
    if (isFloat()) return get(double());
    switch (type.bits()) {
      case 8: return type.isInt() ? double(get(int8_t())) : double(get(uint8_t()));
      case 16: return double(get(int16_t()));
      case 32: return double(get(int32_t()));
      default: return double(get(int64_t()));
    }
  }
};

const std::vector<ElementType>& elementTypes() {
  static const std::vector<ElementType> types = {
      {"float32", DataType::float32()}, {"float64", DataType::float64()}, {"float16", DataType::float16()},
      {"bfloat16", DataType::bfloat16()}, {"int8", DataType::int8()},     {"int16", DataType::int16()},
      {"int32", DataType::int32()},     {"int64", DataType::int64()},     {"uint8", DataType::uint8()},
      {"bool", DataType::boolean()}};
  return types;
}

const ElementType& elementType(const std::string& name) {
  for (auto& t : elementTypes())
    if (t.name == name) return t;
  qFatal("unknown element type %s", name.c_str());
}

/// Random test data of `t` for `kernel`, chosen so signed integers never overflow (their
/// overflow is not defined) while unsigned ones wrap, and floats cover several magnitudes.
double randomValue(const ElementType& t, const std::string& kernel, std::mt19937& rng) {
  auto uniform = [&](double low, double high) { return std::uniform_real_distribution<double>(low, high)(rng); };
  auto integer = [&](int64_t low, int64_t high) {
    return double(std::uniform_int_distribution<int64_t>(low, high)(rng));
  };
  if (t.type.isBool()) return integer(0, 1);
  if (t.isFloat()) {
    if (kernel == "sum") return t.round(uniform(-4, 4));
    // Magnitudes from 2^-26 (float16 subnormals) to 2^13, both signs, some exact zeros.
    if (integer(0, 15) == 0) return 0;
    double magnitude = std::ldexp(uniform(1, 2), int(integer(-26, 12)));
    return t.round(integer(0, 1) ? magnitude : -magnitude);
  }
  bool product = kernel == "mul";
  bool sum = kernel == "sum";
  if (t.type.isUInt()) return integer(0, 255);
  switch (t.type.bits()) {
    case 8: return sum ? integer(-2, 2) : product ? integer(-11, 11) : integer(-64, 63);
    case 16: return sum ? integer(-700, 700) : product ? integer(-181, 181) : integer(-16384, 16383);
    case 32:
      return sum ? integer(-(1 << 24), 1 << 24) : product ? integer(-46340, 46340) : integer(-(1 << 30), (1 << 30) - 1);
    default:
      return sum ? integer(-(int64_t(1) << 40), int64_t(1) << 40)
             : product ? integer(-(int64_t(1) << 25), int64_t(1) << 25)
                       : integer(-(int64_t(1) << 40), int64_t(1) << 40);
  }
}

/// float32 values that convert to `t` without overflow: integers truncate toward zero, so
/// the fractions exercise that too.
double randomFloat32For(const ElementType& t, std::mt19937& rng) {
  auto uniform = [&](double low, double high) { return std::uniform_real_distribution<double>(low, high)(rng); };
  double value;
  if (t.type.isBool()) value = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 0.0 : uniform(-2, 2);
  else if (t.isFloat()) value = (uniform(0, 1) < 0.5 ? -1 : 1) * std::ldexp(uniform(1, 2), int(uniform(-28, 14)));
  else if (t.type.isUInt()) value = uniform(0, 255.99);
  else if (t.type.bits() == 8) value = uniform(-128.99, 127.99);
  else if (t.type.bits() == 16) value = uniform(-32768.99, 32767.99);
  else if (t.type.bits() == 32) value = uniform(-2.0e9, 2.0e9);
  else value = uniform(-1.0e15, 1.0e15);
  return float(value);
}

// --- kernels -------------------------------------------------------------------------------

/// C++ of one elementwise kernel on values of `t`, computed the way the generated code does.
double referenceOf(const std::string& kernel, const ElementType& t, double a, double b) {
  if (t.type.isBool()) {
    bool x = a != 0, y = b != 0;
    if (kernel == "and") return x && y;
    if (kernel == "or") return x || y;
    if (kernel == "max") return std::max(x, y);
    if (kernel == "select") return x < y ? x : y;
  } else if (t.computesInFloat()) {
    float x = float(a), y = float(b);
    if (kernel == "add") return t.round(x + y);
    if (kernel == "mul") return t.round(x * y);
    if (kernel == "max") return x > y ? x : y;  // of -0 and +0, the second, as generated code picks
    if (kernel == "select") return x < y ? x : y;
  } else if (t.isFloat()) {
    if (kernel == "add") return a + b;
    if (kernel == "mul") return a * b;
    if (kernel == "max") return a > b ? a : b;
    if (kernel == "select") return a < b ? a : b;
  } else {
    auto x = int64_t(a), y = int64_t(b);
    if (kernel == "add") return t.round(double(x + y));
    if (kernel == "mul") return t.round(double(x * y));
    if (kernel == "max") return double(std::max(x, y));
    if (kernel == "select") return double(x < y ? x : y);
  }
  qFatal("no reference for %s on %s", kernel.c_str(), t.name.c_str());
}

Expr kernelBody(const std::string& kernel, Expr a, Expr b) {
  if (kernel == "add") return a + b;
  if (kernel == "mul") return a * b;
  if (kernel == "and") return a && b;
  if (kernel == "or") return a || b;
  if (kernel == "max") return max(a, b);
  return select(a < b, a, b);
}

/// Vector lanes over the columns (with a tail), unrolled column blocks, parallel rows.
const char* kElementwiseSchedule =
    "jo, ji = split(Out, j, factor=8)\n"
    "parallel(Out, i)\n"
    "unroll(Out, jo)\n"
    "vectorize(Out, ji)\n";
/// Rows in vector lanes accumulating in order over k, k unrolled by 4, row blocks parallel.
const char* kReductionSchedule =
    "io, ii = split(Out, i, factor=4)\n"
    "ko, ki = split(Out, k, factor=4)\n"
    "reorder(Out, io, ko, ki, ii)\n"
    "parallel(Out, io)\n"
    "unroll(Out, ki)\n"
    "vectorize(Out, ii)\n";

std::vector<int64_t> shapeOf(const te::Tensor& tensor) {
  std::vector<int64_t> shape;
  for (auto& extent : tensor.shape()) shape.push_back(*asConstInt(extent));
  return shape;
}

/// Element bytes of one tensor, with its type.
struct HostArray {
  const ElementType* type;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t size() const { return int64_t(bytes.size()) / type->bytes(); }
  double at(int64_t i) const { return type->load(bytes.data() + i * type->bytes()); }
  void set(int64_t i, double value) { type->store(value, bytes.data() + i * type->bytes()); }
};

HostArray hostArray(const ElementType& type, const te::Tensor& tensor) {
  HostArray array{&type, shapeOf(tensor), {}};
  int64_t count = 1;
  for (int64_t extent : array.shape) count *= extent;
  array.bytes.assign(size_t(count * type.bytes()), 0xA5);  // never a plausible result
  return array;
}

/// Builds `schedule` (text) over `args` and runs it: inputs in, the last array out.
/// Returns an empty string, or what went wrong.
std::string buildAndRun(const std::vector<te::Tensor>& outputs, const std::vector<te::Tensor>& args,
                        const std::string& scheduleText, std::vector<HostArray>& arrays) {
  auto trace = parseTraceText(scheduleText);
  if (!trace) return trace.error().toString();
  auto schedule = Schedule::replay(outputs, *trace);
  if (!schedule) return schedule.error().toString();
  auto built = build(*schedule, args, "kernel");
  if (!built) return built.error().toString();
  std::vector<runtime::Value> values;
  std::vector<runtime::NDArray> devices;
  for (auto& array : arrays) {
    auto device = runtime::NDArray::empty(array.shape, toRuntimeType(array.type->type));
    device.copyFrom(array.bytes.data(), array.bytes.size());
    devices.push_back(device);
    values.push_back(device);
  }
  try {
    built->function.callPacked(values);
  } catch (const std::exception& error) {
    return std::string("running failed: ") + error.what();
  }
  devices.back().copyTo(arrays.back().bytes.data(), arrays.back().bytes.size());
  return "";
}

/// The first element that differs from `expected`, or an empty string.
std::string firstMismatch(const HostArray& got, const std::vector<double>& expected,
                          const std::function<std::string(int64_t)>& inputsAt) {
  for (int64_t i = 0; i < got.size(); ++i) {
    double value = got.at(i);
    if (value == expected[size_t(i)] && std::signbit(value) == std::signbit(expected[size_t(i)])) continue;
    if (value == 0 && expected[size_t(i)] == 0 && !got.type->isFloat()) continue;
    std::ostringstream out;
    out.precision(17);
    out << "element " << i << " is " << value << ", expected " << expected[size_t(i)] << " (" << inputsAt(i) << ")";
    return out.str();
  }
  return "";
}

}  // namespace

class TestPipelineDtypes : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { runtime::ThreadPool::global().setNumThreads(2); }

  void elementwiseKernelsMatchCpp_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<bool>("scheduled");
    for (auto& t : elementTypes()) {
      std::vector<const char*> kernels = t.type.isBool() ? std::vector<const char*>{"and", "or", "max", "select"}
                                                         : std::vector<const char*>{"add", "mul", "max", "select"};
      for (const char* kernel : kernels)
        for (bool scheduled : {true, false})
          QTest::newRow((t.name + " " + kernel + (scheduled ? " scheduled" : " plain")).c_str())
              << QString::fromStdString(t.name) << QString(kernel) << scheduled;
    }
  }
  void elementwiseKernelsMatchCpp() {
    QFETCH(QString, type);
    QFETCH(QString, kernel);
    QFETCH(bool, scheduled);
    const ElementType& t = elementType(type.toStdString());
    const int64_t rows = 3, cols = 37;
    te::Tensor A = te::placeholder({Expr(rows), Expr(cols)}, t.type, "A");
    te::Tensor B = te::placeholder({Expr(rows), Expr(cols)}, t.type, "B");
    std::string name = kernel.toStdString();
    te::Tensor Out = te::compute(
        {Expr(rows), Expr(cols)}, [&](Var i, Var j) { return kernelBody(name, A(i, j), B(i, j)); }, "Out");
    QCOMPARE(Out.dtype(), t.type);
    std::vector<HostArray> arrays = {hostArray(t, A), hostArray(t, B), hostArray(t, Out)};
    std::mt19937 rng(uint32_t(std::hash<std::string>()(t.name + name)));
    for (int input = 0; input < 2; ++input)
      for (int64_t i = 0; i < arrays[size_t(input)].size(); ++i) arrays[size_t(input)].set(i, randomValue(t, name, rng));
    std::string problem = buildAndRun({Out}, {A, B, Out}, scheduled ? kElementwiseSchedule : "", arrays);
    QVERIFY2(problem.empty(), problem.c_str());
    std::vector<double> expected;
    for (int64_t i = 0; i < arrays[2].size(); ++i)
      expected.push_back(referenceOf(name, t, arrays[0].at(i), arrays[1].at(i)));
    problem = firstMismatch(arrays[2], expected, [&](int64_t i) {
      return "inputs " + std::to_string(arrays[0].at(i)) + " and " + std::to_string(arrays[1].at(i));
    });
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void castsMatchCpp_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<bool>("toType");  // float32 -> type, else type -> float32
    for (auto& t : elementTypes())
      for (bool toType : {true, false})
        QTest::newRow((toType ? "float32 to " + t.name : t.name + " to float32").c_str())
            << QString::fromStdString(t.name) << toType;
  }
  void castsMatchCpp() {
    QFETCH(QString, type);
    QFETCH(bool, toType);
    const ElementType& t = elementType(type.toStdString());
    const ElementType& f32 = elementType("float32");
    const ElementType& from = toType ? f32 : t;
    const ElementType& to = toType ? t : f32;
    const int64_t rows = 4, cols = 29;
    te::Tensor A = te::placeholder({Expr(rows), Expr(cols)}, from.type, "A");
    te::Tensor Out = te::compute({Expr(rows), Expr(cols)}, [&](Var i, Var j) { return cast(to.type, A(i, j)); }, "Out");
    std::vector<HostArray> arrays = {hostArray(from, A), hostArray(to, Out)};
    std::mt19937 rng(uint32_t(std::hash<std::string>()(from.name + to.name)));
    for (int64_t i = 0; i < arrays[0].size(); ++i)
      arrays[0].set(i, toType ? randomFloat32For(t, rng) : randomValue(t, "cast", rng));
    std::string problem = buildAndRun({Out}, {A, Out}, kElementwiseSchedule, arrays);
    QVERIFY2(problem.empty(), problem.c_str());
    std::vector<double> expected;
    for (int64_t i = 0; i < arrays[1].size(); ++i) {
      double value = arrays[0].at(i);
      // Floats round to nearest even, integers truncate toward zero, bool is value != 0.
      if (to.type.isBool()) expected.push_back(value != 0);
      else if (to.isFloat()) expected.push_back(to.round(value));
      else expected.push_back(std::trunc(value));
    }
    problem = firstMismatch(arrays[1], expected, [&](int64_t i) { return "input " + std::to_string(arrays[0].at(i)); });
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void sumReductionsMatchCpp_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<bool>("scheduled");
    for (auto& t : elementTypes())
      if (!t.type.isBool())
        for (bool scheduled : {true, false})
          QTest::newRow((t.name + (scheduled ? " scheduled" : " plain")).c_str())
              << QString::fromStdString(t.name) << scheduled;
  }
  void sumReductionsMatchCpp() {
    QFETCH(QString, type);
    QFETCH(bool, scheduled);
    const ElementType& t = elementType(type.toStdString());
    const int64_t rows = 10, depth = 45;
    te::Tensor A = te::placeholder({Expr(rows), Expr(depth)}, t.type, "A");
    IterVar k = te::reduceAxis(Expr(depth), "k");
    te::Tensor Out = te::compute({Expr(rows)}, [&](Var i) { return te::sum(A(i, k), {k}); }, "Out");
    QCOMPARE(Out.dtype(), t.type);
    std::vector<HostArray> arrays = {hostArray(t, A), hostArray(t, Out)};
    std::mt19937 rng(uint32_t(std::hash<std::string>()(t.name + "sum")));
    for (int64_t i = 0; i < arrays[0].size(); ++i) arrays[0].set(i, randomValue(t, "sum", rng));
    std::string problem = buildAndRun({Out}, {A, Out}, scheduled ? kReductionSchedule : "", arrays);
    QVERIFY2(problem.empty(), problem.c_str());
    // Each row accumulates in k order in the type's own precision, rounding at every step.
    std::vector<double> expected;
    for (int64_t i = 0; i < rows; ++i) {
      double sum = 0;
      for (int64_t p = 0; p < depth; ++p) sum = referenceOf("add", t, sum, arrays[0].at(i * depth + p));
      expected.push_back(sum);
    }
    problem = firstMismatch(arrays[1], expected, [](int64_t i) { return "row " + std::to_string(i); });
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void sixteenBitConversionsAreRoundToNearestEven() {
    // The reference conversions the comparisons above depend on.
    QCOMPARE(floatToHalf(1.0f), uint16_t(0x3C00));
    QCOMPARE(floatToHalf(65504.0f), uint16_t(0x7BFF));
    QCOMPARE(floatToHalf(65520.0f), uint16_t(0x7C00));
    QCOMPARE(floatToHalf(1.0f + 1.0f / 2048), uint16_t(0x3C00));               // tie, stays even
    QCOMPARE(floatToHalf(1.0f + 3.0f / 2048), uint16_t(0x3C02));               // tie, rounds up to even
    QCOMPARE(floatToHalf(std::ldexp(1.0f, -24)), uint16_t(0x0001));            // smallest subnormal
    QCOMPARE(floatToHalf(std::ldexp(1.0f, -25)), uint16_t(0x0000));            // tie to zero
    QCOMPARE(floatToHalf(-std::ldexp(3.0f, -26)), uint16_t(0x8001));           // 0.75 unit rounds up
    QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24));
    QCOMPARE(halfToFloat(0xC000), -2.0f);
    QCOMPARE(floatToBfloat16(1.0f + 1.0f / 256), uint16_t(0x3F80));             // tie, stays even
    QCOMPARE(floatToBfloat16(1.0f + 3.0f / 256), uint16_t(0x3F82));             // tie, rounds up to even
    QCOMPARE(bfloat16ToFloat(0xC040), -3.0f);
  }
};

QTEST_GUILESS_MAIN(TestPipelineDtypes)
#include "test_pipeline_dtypes.moc"
