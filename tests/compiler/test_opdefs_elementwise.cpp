// The registered ONNX elementwise operators: kernels built through the registry, JIT-compiled
// and run on random data, against C++ references of the ONNX semantics; broadcasting,
// folded constants, runtime bounds, and the type errors a user gets for a bad model.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "compiler/lower/Build.h"
#include "compiler/opdefs/OpRegistry.h"
#include "core/ir/IRPrinter.h"
#include "runtime/NDArray.h"

using namespace tessel;
using graph::Attributes;
using graph::OpCall;

namespace {

// --- host data of any element type ------------------------------------------------------

void storeElement(void* data, DataType type, size_t i, double v) {
  switch (type.code()) {
    case DataType::Code::Float:
      if (type.bits() == 64) static_cast<double*>(data)[i] = v;
      else if (type.bits() == 16) static_cast<_Float16*>(data)[i] = _Float16(v);
      else static_cast<float*>(data)[i] = float(v);
      return;
    case DataType::Code::Int:
      if (type.bits() == 8) static_cast<int8_t*>(data)[i] = int8_t(v);
      else if (type.bits() == 16) static_cast<int16_t*>(data)[i] = int16_t(v);
      else if (type.bits() == 32) static_cast<int32_t*>(data)[i] = int32_t(v);
      else static_cast<int64_t*>(data)[i] = int64_t(v);
      return;
    case DataType::Code::UInt:
      if (type.bits() == 8) static_cast<uint8_t*>(data)[i] = uint8_t(v);
      else if (type.bits() == 16) static_cast<uint16_t*>(data)[i] = uint16_t(v);
      else if (type.bits() == 32) static_cast<uint32_t*>(data)[i] = uint32_t(v);
      else static_cast<uint64_t*>(data)[i] = uint64_t(v);
      return;
    case DataType::Code::Bool: static_cast<uint8_t*>(data)[i] = v != 0; return;
    default: qFatal("element type %s is not supported by the test", type.toString().c_str());
  }
}

double loadElement(const void* data, DataType type, size_t i) {
  switch (type.code()) {
    case DataType::Code::Float:
      if (type.bits() == 16) return double(static_cast<const _Float16*>(data)[i]);
      return type.bits() == 64 ? static_cast<const double*>(data)[i] : static_cast<const float*>(data)[i];
    case DataType::Code::Int:
      if (type.bits() == 8) return static_cast<const int8_t*>(data)[i];
      if (type.bits() == 16) return static_cast<const int16_t*>(data)[i];
      if (type.bits() == 32) return static_cast<const int32_t*>(data)[i];
      return double(static_cast<const int64_t*>(data)[i]);
    case DataType::Code::UInt:
      if (type.bits() == 8) return static_cast<const uint8_t*>(data)[i];
      if (type.bits() == 16) return static_cast<const uint16_t*>(data)[i];
      if (type.bits() == 32) return static_cast<const uint32_t*>(data)[i];
      return double(static_cast<const uint64_t*>(data)[i]);
    case DataType::Code::Bool: return static_cast<const uint8_t*>(data)[i] != 0;
    default: qFatal("element type %s is not supported by the test", type.toString().c_str());
  }
  return 0;
}

int64_t countOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// NumPy broadcasting, written again here so the test does not trust the compiler's.
std::vector<int64_t> broadcastOf(const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (auto& s : shapes)
    for (size_t d = 0; d < s.size(); ++d) out[rank - s.size() + d] = std::max(out[rank - s.size() + d], s[d]);
  return out;
}

/// The row-major offset into a tensor of `shape` read at output index `index`.
int64_t broadcastOffset(const std::vector<int64_t>& shape, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i = index[index.size() - shape.size() + d];
    offset = offset * shape[d] + (shape[d] == 1 ? 0 : i);
  }
  return offset;
}

// --- the operator cases -----------------------------------------------------------------

struct InputSpec {
  DataType dtype;
  std::vector<int64_t> shape;
  double low = -3, high = 3;       ///< Random values in [low, high] (whole numbers for integer types).
  std::vector<double> specials{};  ///< Values placed first (NaN, infinities, zeros, halves).
  bool constant = false;           ///< Given to the operator as a constant input.
};

using Reference = std::function<double(const std::vector<double>&)>;

struct OpCase {
  std::string op;
  Attributes attributes;
  std::vector<InputSpec> inputs;
  DataType output;
  Reference reference;
  double tolerance = 0;  ///< Relative to 1 + |expected|; 0 for exact.
  int opset = 0;
  int outputCount = 1;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const DataType f16 = DataType::float16(), f32 = DataType::float32(), f64 = DataType::float64(), i8 = DataType::int8(), i32 = DataType::int32(),
               i64 = DataType::int64(), u8 = DataType::uint8(), u16 = DataType::uint16(), u32 = DataType::uint32(),
               u64 = DataType::uint64(), i16 = DataType::int16(), boolean = DataType::boolean();

double roundHalfEven(double x) { return std::nearbyint(x); }
float toFloat(double x) { return float(x); }
/// The float16 nearest to x (the kernels compute float16 in float32 and round once).
double toHalf(double x) { return double(_Float16(float(x))); }

/// One float32 input of shape [5, 37] (odd sizes: vector remainders) in [low, high].
std::vector<InputSpec> floats(double low = -3, double high = 3, std::vector<double> specials = {}) {
  return {{f32, {5, 37}, low, high, std::move(specials)}};
}

std::vector<std::pair<std::string, OpCase>> opCases() {
  const double exact = 0, close = 1e-6, math = 1e-5;
  auto unaryFloat = [&](std::string op, std::function<double(double)> f, double low, double high, double tol) {
    return OpCase{op, {}, floats(low, high), f32, [f](const std::vector<double>& x) { return double(toFloat(f(x[0]))); },
                  tol};
  };
  std::vector<std::pair<std::string, OpCase>> cases = {
      {"Add float32", {"Add", {}, {{f32, {4, 9}}, {f32, {4, 9}}}, f32, [](auto& x) { return x[0] + x[1]; }, close}},
      {"Add int32 broadcast", {"Add", {}, {{i32, {3, 1, 5}, -100, 100}, {i32, {4, 1}, -100, 100}}, i32,
                               [](auto& x) { return x[0] + x[1]; }}},
      {"Sub float64", {"Sub", {}, {{f64, {17}}, {f64, {17}}}, f64, [](auto& x) { return x[0] - x[1]; }, 1e-12}},
      {"Mul int64", {"Mul", {}, {{i64, {2, 33}, -1000, 1000}, {i64, {33}, -1000, 1000}}, i64,
                     [](auto& x) { return x[0] * x[1]; }}},
      {"Div float32", {"Div", {}, {{f32, {40}}, {f32, {40}, 0.5, 4}}, f32, [](auto& x) { return x[0] / x[1]; }, close}},
      {"Div int32 truncates", {"Div", {}, {{i32, {64}, -50, 50}, {i32, {64}, -6, 6, {0, -1, 7}}}, i32,
                               [](auto& x) { return x[1] == 0 ? 0 : std::trunc(x[0] / x[1]); }}},
      {"Pow float32", {"Pow", {}, {{f32, {33}, 0.5, 2}, {f32, {33}, -2, 2}}, f32,
                       [](auto& x) { return std::pow(x[0], x[1]); }, math}},
      {"Pow int32 by int64", {"Pow", {}, {{i32, {20}, -3, 3}, {i64, {20}, 0, 5}}, i32,
                              [](auto& x) { return std::pow(x[0], x[1]); }, exact, 15}},
      {"Pow constant square", {"Pow", {}, {{f32, {50}}, {f32, {}, 2, 2, {}, true}}, f32,
                               [](auto& x) { return double(toFloat(x[0] * x[0])); }, close}},
      {"Mod int32 divisor sign", {"Mod", {}, {{i32, {60}, -20, 20}, {i32, {60}, -7, 7, {0}}}, i32, [](auto& x) {
                                    if (x[1] == 0) return 0.0;
                                    double r = std::fmod(x[0], x[1]);
                                    return r != 0 && (r < 0) != (x[1] < 0) ? r + x[1] : r;
                                  }}},
      {"Mod int64 fmod", {"Mod", {{"fmod", int64_t(1)}}, {{i64, {60}, -20, 20}, {i64, {60}, -7, 7, {0}}}, i64,
                          [](auto& x) { return x[1] == 0 ? 0 : std::fmod(x[0], x[1]); }}},
      {"Mod float32 fmod", {"Mod", {{"fmod", int64_t(1)}}, {{f32, {60}, -20, 20}, {f32, {60}, 0.5, 7}}, f32,
                            [](auto& x) { return std::fmod(x[0], x[1]); }, close}},
      {"Max of three", {"Max", {}, {{f32, {3, 8}}, {f32, {8}}, {f32, {3, 1}}}, f32,
                        [](auto& x) { return std::max({x[0], x[1], x[2]}); }}},
      {"Max propagates NaN", {"Max", {}, {{f32, {8}, -1, 1, {kNaN, 0.5}}, {f32, {8}, -1, 1, {0.5, kNaN}}}, f32,
                              [](auto& x) { return std::isnan(x[0]) || std::isnan(x[1]) ? kNaN : std::max(x[0], x[1]); }}},
      {"Min float64 propagates NaN", {"Min", {}, {{f64, {8}, -1, 1, {kNaN, 0.5}}, {f64, {8}, -1, 1, {0.5, kNaN}}}, f64,
                                      [](auto& x) { return std::isnan(x[0]) || std::isnan(x[1]) ? kNaN : std::min(x[0], x[1]); }}},
      {"Add float16", {"Add", {}, {{f16, {3, 21}}, {f16, {21}}}, f16, [](auto& x) { return toHalf(x[0] + x[1]); }}},
      {"Sigmoid float16", {"Sigmoid", {}, {{f16, {40}, -6, 6}}, f16,
                           [](auto& x) { return toHalf(1 / (1 + std::exp(-x[0]))); }, 1e-3}},
      {"Cast float32 to float16", {"Cast", {{"to", int64_t(10)}}, floats(-100, 100), f16,
                                   [](auto& x) { return toHalf(x[0]); }}},
      {"Min int32", {"Min", {}, {{i32, {30}, -9, 9}, {i32, {30}, -9, 9}}, i32,
                     [](auto& x) { return std::min(x[0], x[1]); }}},
      {"Sum of one", {"Sum", {}, {{f32, {30}}}, f32, [](auto& x) { return x[0]; }}},
      {"Sum of three", {"Sum", {}, {{f32, {30}}, {f32, {30}}, {f32, {1}}}, f32,
                        [](auto& x) { return x[0] + x[1] + x[2]; }, close}},
      {"Mean", {"Mean", {}, {{f32, {2, 30}}, {f32, {30}}}, f32, [](auto& x) { return (x[0] + x[1]) / 2; }, close}},
      {"Abs int32", {"Abs", {}, {{i32, {40}, -50, 50}}, i32, [](auto& x) { return std::fabs(x[0]); }}},
      {"Neg int8", {"Neg", {}, {{i8, {40}, -100, 100}}, i8, [](auto& x) { return -x[0]; }}},
      {"Sign float32", {"Sign", {}, floats(-3, 3, {0, -0.0, 5}), f32,
                        [](auto& x) { return double(x[0] > 0) - double(x[0] < 0); }}},
      {"Sign int64", {"Sign", {}, {{i64, {40}, -3, 3}}, i64, [](auto& x) { return double(x[0] > 0) - double(x[0] < 0); }}},
      {"Relu int32", {"Relu", {}, {{i32, {40}, -9, 9}}, i32, [](auto& x) { return std::max(x[0], 0.0); }, exact, 14}},
      {"Round half to even", {"Round", {}, floats(-4, 4, {0.5, 1.5, 2.5, -0.5, -2.5}), f32,
                              [](auto& x) { return roundHalfEven(x[0]); }}},
      {"Clip attributes", {"Clip", {{"min", -0.5}, {"max", 1.25}}, floats(), f32,
                           [](auto& x) { return std::min(std::max(x[0], double(toFloat(-0.5))), 1.25); }, exact, 6}},
      {"Clip runtime bounds", {"Clip", {}, {{f32, {5, 37}}, {f32, {}, -1, -0.5}, {f32, {}, 0.5, 1}}, f32,
                               [](auto& x) { return std::min(std::max(x[0], x[1]), x[2]); }, exact, 13}},
      {"Clip constant min only", {"Clip", {}, {{i32, {40}, -20, 20}, {i32, {}, 3, 3, {}, true}}, i32,
                                  [](auto& x) { return std::max(x[0], 3.0); }, exact, 13}},
      {"PRelu channel slope", {"PRelu", {}, {{f32, {2, 3, 4, 5}}, {f32, {3, 1, 1}, 0, 1}}, f32,
                               [](auto& x) { return x[0] < 0 ? x[0] * x[1] : x[0]; }, close}},
      {"IsNaN", {"IsNaN", {}, floats(-1, 1, {kNaN, 1, kInf}), boolean, [](auto& x) { return double(std::isnan(x[0])); }}},
      {"IsInf positive only", {"IsInf", {{"detect_negative", int64_t(0)}}, floats(-1, 1, {kInf, -kInf, kNaN, 0}),
                               boolean, [](auto& x) { return double(x[0] == kInf); }}},
      {"IsInf both", {"IsInf", {}, floats(-1, 1, {kInf, -kInf, kNaN, 0}), boolean,
                      [](auto& x) { return double(std::isinf(x[0])); }}},
      {"Not", {"Not", {}, {{boolean, {3, 11}, 0, 1}}, boolean, [](auto& x) { return double(x[0] == 0); }}},
      {"And", {"And", {}, {{boolean, {3, 11}, 0, 1}, {boolean, {11}, 0, 1}}, boolean,
               [](auto& x) { return double(x[0] != 0 && x[1] != 0); }}},
      {"Or", {"Or", {}, {{boolean, {3, 11}, 0, 1}, {boolean, {3, 1}, 0, 1}}, boolean,
              [](auto& x) { return double(x[0] != 0 || x[1] != 0); }}},
      {"Xor", {"Xor", {}, {{boolean, {33}, 0, 1}, {boolean, {33}, 0, 1}}, boolean,
               [](auto& x) { return double((x[0] != 0) != (x[1] != 0)); }}},
      {"Equal int32", {"Equal", {}, {{i32, {40}, 0, 3}, {i32, {40}, 0, 3}}, boolean,
                       [](auto& x) { return double(x[0] == x[1]); }}},
      {"Equal bool", {"Equal", {}, {{boolean, {40}, 0, 1}, {boolean, {1}, 0, 1}}, boolean,
                      [](auto& x) { return double(x[0] == x[1]); }}},
      {"Less", {"Less", {}, {{f32, {40}, 0, 3}, {f32, {40}, 0, 3}}, boolean, [](auto& x) { return double(x[0] < x[1]); }}},
      {"Greater uint16", {"Greater", {}, {{u16, {40}, 0, 4}, {u16, {40}, 0, 4}}, boolean,
                          [](auto& x) { return double(x[0] > x[1]); }}},
      {"LessOrEqual", {"LessOrEqual", {}, {{i64, {40}, 0, 3}, {i64, {1}, 0, 3}}, boolean,
                       [](auto& x) { return double(x[0] <= x[1]); }}},
      {"GreaterOrEqual", {"GreaterOrEqual", {}, {{f64, {40}, 0, 3}, {f64, {40}, 0, 3}}, boolean,
                          [](auto& x) { return double(x[0] >= x[1]); }}},
      {"BitShift left uint8", {"BitShift", {{"direction", std::string("LEFT")}}, {{u8, {40}, 0, 255}, {u8, {40}, 0, 9}},
                               u8, [](auto& x) { return x[1] >= 8 ? 0 : double(uint8_t(uint32_t(x[0]) << int(x[1]))); }}},
      {"BitShift right uint32", {"BitShift", {{"direction", std::string("RIGHT")}},
                                 {{u32, {40}, 0, 4e9}, {u32, {40}, 0, 33}}, u32,
                                 [](auto& x) { return x[1] >= 32 ? 0 : double(uint32_t(x[0]) >> int(x[1])); }}},
      {"BitShift left uint64 past the width", {"BitShift", {{"direction", std::string("LEFT")}},
                                               {{u64, {40}, 0, 1e15}, {u64, {1, 40}, 0, 70}}, u64, [](auto& x) {
                                                 return x[1] >= 64 ? 0 : double(uint64_t(x[0]) << int(x[1]));
                                               }}},
      {"BitwiseAnd int32 broadcast", {"BitwiseAnd", {}, {{i32, {3, 13}, -2e9, 2e9}, {i32, {13}, -2e9, 2e9}}, i32,
                                      [](auto& x) { return double(int32_t(x[0]) & int32_t(x[1])); }, exact, 18}},
      {"BitwiseOr uint8", {"BitwiseOr", {}, {{u8, {40}, 0, 255}, {u8, {40}, 0, 255}}, u8,
                           [](auto& x) { return double(uint8_t(x[0]) | uint8_t(x[1])); }, exact, 18}},
      {"BitwiseXor int64", {"BitwiseXor", {}, {{i64, {40}, -1e15, 1e15}, {i64, {40}, -1e15, 1e15}}, i64,
                            [](auto& x) { return double(int64_t(x[0]) ^ int64_t(x[1])); }, exact, 18}},
      {"BitwiseNot int16", {"BitwiseNot", {}, {{i16, {40}, -30000, 30000}}, i16,
                            [](auto& x) { return double(int16_t(~int16_t(x[0]))); }, exact, 18}},
      {"BitwiseNot uint32", {"BitwiseNot", {}, {{u32, {40}, 0, 4e9}}, u32,
                             [](auto& x) { return double(uint32_t(~uint32_t(x[0]))); }, exact, 18}},
      {"Cast float32 to int32", {"Cast", {{"to", int64_t(6)}}, floats(-100, 100), i32,
                                 [](auto& x) { return std::trunc(x[0]); }}},
      {"Cast int64 to bool", {"Cast", {{"to", int64_t(9)}}, {{i64, {40}, -2, 2}}, boolean,
                              [](auto& x) { return double(x[0] != 0); }}},
      {"Cast bool to float64", {"Cast", {{"to", int64_t(11)}}, {{boolean, {40}, 0, 1}}, f64,
                                [](auto& x) { return x[0]; }}},
      {"Cast uint8 to int8", {"Cast", {{"to", int64_t(3)}}, {{u8, {40}, 0, 255}}, i8,
                              [](auto& x) { return double(int8_t(uint8_t(x[0]))); }}},
      {"CastLike float32 to float64", {"CastLike", {}, {{f32, {40}}, {f64, {1}}}, f64,
                                                     [](auto& x) { return x[0]; }}},
      {"Where three-way broadcast", {"Where", {}, {{boolean, {2, 1, 4}, 0, 1}, {f32, {3, 1}}, {f32, {4}}}, f32,
                                     [](auto& x) { return x[0] != 0 ? x[1] : x[2]; }}},
      {"Identity int64", {"Identity", {}, {{i64, {2, 3}, -1e12, 1e12}}, i64, [](auto& x) { return x[0]; }}},
      {"Identity bool", {"Identity", {}, {{boolean, {7}, 0, 1}}, boolean, [](auto& x) { return x[0]; }}},
      {"Dropout inference", {"Dropout", {}, floats(), f32, [](auto& x) { return x[0]; }, exact, 13}},
      {"Dropout constant ratio", {"Dropout", {}, {{f32, {5, 37}}, {f32, {}, 0.3, 0.3, {}, true}}, f32,
                                  [](auto& x) { return x[0]; }, exact, 13}},
      {"Shrink int32", {"Shrink", {{"lambd", 1.5}, {"bias", 1.0}}, {{i32, {40}, -5, 5}}, i32, [](auto& x) {
                          return x[0] < -1.5 ? x[0] + 1 : x[0] > 1.5 ? x[0] - 1 : 0;
                        }}},
  };
  // One-input float operators against the C library.
  auto push = [&](std::string row, OpCase c) { cases.push_back({std::move(row), std::move(c)}); };
  push("Abs", unaryFloat("Abs", [](double x) { return std::fabs(x); }, -3, 3, exact));
  push("Neg", unaryFloat("Neg", [](double x) { return -x; }, -3, 3, exact));
  push("Exp", unaryFloat("Exp", [](double x) { return std::exp(x); }, -10, 10, math));
  push("Log", unaryFloat("Log", [](double x) { return std::log(x); }, 0.01, 100, math));
  push("Sqrt", unaryFloat("Sqrt", [](double x) { return std::sqrt(x); }, 0, 100, close));
  push("Reciprocal", unaryFloat("Reciprocal", [](double x) { return 1 / x; }, 0.25, 8, close));
  push("Floor", unaryFloat("Floor", [](double x) { return std::floor(x); }, -5, 5, exact));
  push("Ceil", unaryFloat("Ceil", [](double x) { return std::ceil(x); }, -5, 5, exact));
  push("Relu", unaryFloat("Relu", [](double x) { return std::max(x, 0.0); }, -3, 3, exact));
  push("Sigmoid", unaryFloat("Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -12, 12, math));
  push("Tanh", unaryFloat("Tanh", [](double x) { return std::tanh(x); }, -6, 6, math));
  push("Erf", unaryFloat("Erf", [](double x) { return std::erf(x); }, -3, 3, math));
  push("Softplus", unaryFloat("Softplus", [](double x) { return std::log1p(std::exp(x)); }, -20, 30, math));
  push("Softsign", unaryFloat("Softsign", [](double x) { return x / (1 + std::fabs(x)); }, -5, 5, close));
  push("HardSwish", unaryFloat("HardSwish", [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }, -5, 5, close));
  push("Elu", unaryFloat("Elu", [](double x) { return x < 0 ? std::expm1(x) : x; }, -4, 4, math));
  push("Selu", unaryFloat("Selu", [](double x) {
         double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
         return x > 0 ? gamma * x : gamma * alpha * std::expm1(x);
       }, -4, 4, math));
  push("Sin", unaryFloat("Sin", [](double x) { return std::sin(x); }, -6, 6, math));
  push("Cos", unaryFloat("Cos", [](double x) { return std::cos(x); }, -6, 6, math));
  push("Tan", unaryFloat("Tan", [](double x) { return std::tan(x); }, -1.2, 1.2, math));
  push("Asin", unaryFloat("Asin", [](double x) { return std::asin(x); }, -1, 1, math));
  push("Acos", unaryFloat("Acos", [](double x) { return std::acos(x); }, -1, 1, math));
  push("Atan", unaryFloat("Atan", [](double x) { return std::atan(x); }, -10, 10, math));
  push("Sinh", unaryFloat("Sinh", [](double x) { return std::sinh(x); }, -5, 5, math));
  push("Cosh", unaryFloat("Cosh", [](double x) { return std::cosh(x); }, -5, 5, math));
  push("Asinh", unaryFloat("Asinh", [](double x) { return std::asinh(x); }, -10, 10, math));
  push("Acosh", unaryFloat("Acosh", [](double x) { return std::acosh(x); }, 1, 10, math));
  push("Atanh", unaryFloat("Atanh", [](double x) { return std::atanh(x); }, -0.95, 0.95, math));

  // Operators with attributes, at non-default values.
  push("LeakyRelu alpha", {"LeakyRelu", {{"alpha", 0.25}}, floats(), f32,
                           [](auto& x) { return x[0] < 0 ? 0.25 * x[0] : x[0]; }, close});
  push("Celu alpha", {"Celu", {{"alpha", 2.0}}, floats(), f32,
                      [](auto& x) { return std::max(0.0, x[0]) + std::min(0.0, 2.0 * std::expm1(x[0] / 2)); }, math});
  push("HardSigmoid", {"HardSigmoid", {{"alpha", 0.3}, {"beta", 0.4}}, floats(), f32,
                       [](auto& x) { return std::clamp(0.3 * x[0] + 0.4, 0.0, 1.0); }, close});
  push("ThresholdedRelu", {"ThresholdedRelu", {{"alpha", 0.5}}, floats(), f32,
                           [](auto& x) { return x[0] > 0.5 ? x[0] : 0; }});
  push("Shrink float32", {"Shrink", {{"lambd", 0.75}, {"bias", 0.25}}, floats(), f32, [](auto& x) {
         return x[0] < -0.75 ? x[0] + 0.25 : x[0] > 0.75 ? x[0] - 0.25 : 0;
       }, close});
  return cases;
}

/// Random inputs: specials first, then values in [low, high] (whole numbers for integer and
/// bool types), rounded to the element type so references see what the kernel sees.
std::vector<runtime::NDArray> makeInputs(const std::vector<InputSpec>& specs, std::mt19937& rng) {
  std::vector<runtime::NDArray> arrays;
  for (auto& spec : specs) {
    auto array = runtime::NDArray::empty(spec.shape, toRuntimeType(spec.dtype));
    std::uniform_real_distribution<double> uniform(spec.low, spec.high);
    for (int64_t i = 0; i < countOf(spec.shape); ++i) {
      double v = size_t(i) < spec.specials.size() ? spec.specials[size_t(i)] : uniform(rng);
      if (!spec.dtype.isFloat() && size_t(i) >= spec.specials.size()) v = std::round(v);
      storeElement(array.data(), spec.dtype, size_t(i), v);
    }
    arrays.push_back(array);
  }
  return arrays;
}

OpCall makeCall(const OpCase& c, const std::vector<runtime::NDArray>& data) {
  OpCall call;
  call.op = c.op;
  call.nodeName = "node_under_test";
  call.attributes = c.attributes;
  call.opset = c.opset;
  call.outputCount = c.outputCount;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    call.inputTypes.push_back({c.inputs[i].dtype, c.inputs[i].shape, ""});
    call.constantInputs.push_back(c.inputs[i].constant ? data[i] : runtime::NDArray());
  }
  return call;
}

/// Builds the kernel of `call` through the registry, runs it on `data` (one array per node
/// input) and returns its outputs; fails the test on any Diagnostic.
std::vector<runtime::NDArray> runKernel(const OpCall& call, const std::vector<runtime::NDArray>& data,
                                        std::string* failure) {
  auto types = graph::inferOpTypes(call);
  if (!types) return *failure = "inferTypes: " + types.error().toString(), std::vector<runtime::NDArray>{};
  auto kernel = graph::buildOpKernel(call);
  if (!kernel) return *failure = "build: " + kernel.error().toString(), std::vector<runtime::NDArray>{};
  auto schedule = kernel->schedule(kernel->workload, call.target);
  if (!schedule) return *failure = "schedule: " + schedule.error().toString(), std::vector<runtime::NDArray>{};
  auto built = build(*schedule, kernel->workload.args(), kernel->workload.name);
  if (!built) return *failure = "compile: " + built.error().toString(), std::vector<runtime::NDArray>{};
  std::vector<runtime::Value> args;
  for (int input : kernel->inputIndices) args.push_back(data[size_t(input)]);
  std::vector<runtime::NDArray> outputs;
  for (auto& type : *types) {
    auto array = runtime::NDArray::empty(type.shape, toRuntimeType(type.dtype));
    std::memset(array.data(), 0x5a, size_t(array.byteSize()));  // untouched elements show
    outputs.push_back(array);
    args.push_back(array);
  }
  built->function.callPacked(args);
  return outputs;
}

bool sameValue(double got, double want, double tolerance) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tolerance * (1 + std::fabs(want));
}

/// Compares every element of `output` with the reference at its broadcast inputs.
std::string checkAgainstReference(const OpCase& c, const std::vector<runtime::NDArray>& data,
                                  const runtime::NDArray& output, DataType outputType, const Reference& reference) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!(c.op == "Clip" && i > 0) && !(c.op == "CastLike" && i == 1) && !(c.op == "Dropout" && i > 0))
      shapes.push_back(c.inputs[i].shape);
  std::vector<int64_t> shape = broadcastOf(shapes);
  if (output.shape() != shape) return "output shape differs from the broadcast shape";
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < countOf(shape); ++flat) {
    std::vector<double> x;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      x.push_back(loadElement(data[i].data(), c.inputs[i].dtype, size_t(broadcastOffset(c.inputs[i].shape, index))));
    double want = reference(x);
    double got = loadElement(output.data(), outputType, size_t(flat));
    if (!sameValue(got, want, c.tolerance)) {
      std::string inputs;
      for (double v : x) inputs += (inputs.empty() ? "" : ", ") + std::to_string(v);
      return "element " + std::to_string(flat) + " (inputs " + inputs + "): got " + std::to_string(got) +
             ", expected " + std::to_string(want);
    }
    for (size_t d = shape.size(); d-- > 0 && ++index[d] == shape[d];) index[d] = 0;
  }
  return "";
}

/// A node with inputs of these types (a default-constructed pair: an omitted input).
OpCall typedCall(const std::string& op, std::vector<std::pair<DataType, std::vector<int64_t>>> inputs,
                 Attributes attributes = {}) {
  OpCall call;
  call.op = op;
  call.nodeName = "bad_node";
  call.attributes = std::move(attributes);
  for (auto& [dtype, shape] : inputs) call.inputTypes.push_back(graph::TensorType{dtype, shape, ""});
  call.constantInputs.resize(call.inputTypes.size());
  return call;
}

/// The loop IR of `call`'s kernel under its default schedule for `call.target`, printed;
/// a test failure (qFatal) when any step fails, since the callers only inspect the text.
QString loweredKernelText(const OpCall& call) {
  auto kernel = graph::buildOpKernel(call);
  if (!kernel) qFatal("%s does not build: %s", call.op.c_str(), kernel.error().toString().c_str());
  auto schedule = kernel->schedule(kernel->workload, call.target);
  if (!schedule) qFatal("%s has no default schedule: %s", call.op.c_str(), schedule.error().toString().c_str());
  auto lowered = lower(*schedule, kernel->workload.args(), kernel->workload.name);
  if (!lowered) qFatal("%s does not lower: %s", call.op.c_str(), lowered.error().toString().c_str());
  return QString::fromStdString(toString(lowered->func));
}

}  // namespace

class TestOpdefsElementwise : public QObject {
  Q_OBJECT
private slots:
  void matchesOnnxReference_data() {
    QTest::addColumn<int>("which");
    auto cases = opCases();
    for (size_t k = 0; k < cases.size(); ++k) QTest::newRow(cases[k].first.c_str()) << int(k);
  }
  void matchesOnnxReference() {
    QFETCH(int, which);
    OpCase c = opCases()[size_t(which)].second;
    std::mt19937 rng(1234 + which);
    auto data = makeInputs(c.inputs, rng);
    OpCall call = makeCall(c, data);
    std::string failure;
    auto outputs = runKernel(call, data, &failure);
    QVERIFY2(failure.empty(), failure.c_str());
    QCOMPARE(outputs.front().dtype(), toRuntimeType(c.output));
    std::string difference = checkAgainstReference(c, data, outputs.front(), c.output, c.reference);
    QVERIFY2(difference.empty(), difference.c_str());
  }

  void everyListedOperatorIsRegistered() {
    const char* names[] = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Mean", "Sum", "Abs", "Neg",
                           "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Relu",
                           "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
                           "Erf", "Softplus", "Softsign", "Clip", "ThresholdedRelu", "Shrink", "PRelu", "Sin",
                           "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                           "IsNaN", "IsInf", "Not", "And", "Or", "Xor", "Equal", "Less", "Greater",
                           "LessOrEqual", "GreaterOrEqual", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                           "BitwiseNot", "Cast", "CastLike", "Where",
                           "Identity", "Dropout"};
    for (const char* name : names) QVERIFY2(graph::OpRegistry::global().find(name), name);
  }

  void broadcastingOperatorsFuseAsBroadcast() {
    auto pattern = [](const char* op) { return graph::OpRegistry::global().find(op)->pattern; };
    QCOMPARE(pattern("Relu"), graph::OpPattern::ElementWise);
    QCOMPARE(pattern("Cast"), graph::OpPattern::ElementWise);
    QCOMPARE(pattern("Add"), graph::OpPattern::Broadcast);
    QCOMPARE(pattern("Where"), graph::OpPattern::Broadcast);
  }

  void dropoutMaskIsAllTrue() {
    OpCase c{"Dropout", {}, floats(), f32, nullptr, 0, 13, 2};
    std::mt19937 rng(5);
    auto data = makeInputs(c.inputs, rng);
    std::string failure;
    auto outputs = runKernel(makeCall(c, data), data, &failure);
    QVERIFY2(failure.empty(), failure.c_str());
    QCOMPARE(int(outputs.size()), 2);
    QCOMPARE(outputs[1].dtype(), runtime::DataType::boolean());
    std::string difference = checkAgainstReference(c, data, outputs[1], boolean, [](auto&) { return 1.0; });
    QVERIFY2(difference.empty(), difference.c_str());
    // Opset 7 gives the mask the input's type.
    c.opset = 7;
    auto old = runKernel(makeCall(c, data), data, &failure);
    QVERIFY2(failure.empty(), failure.c_str());
    QCOMPARE(old[1].dtype(), runtime::DataType::float32());
  }

  void foldsScalarConstantsIntoTheKernel() {
    OpCase c{"Mul", {}, {{f32, {6, 10}}, {f32, {1, 1}, 2.5, 2.5, {}, true}}, f32, nullptr};
    std::mt19937 rng(9);
    auto data = makeInputs(c.inputs, rng);
    auto kernel = graph::buildOpKernel(makeCall(c, data));
    QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
    QCOMPARE(kernel->inputIndices, std::vector<int>{0});
    QCOMPARE(kernel->workload.inputs.size(), size_t(1));
    // A constant's shape still counts: [6, 10] * [1, 1] is [6, 10].
    auto types = graph::inferOpTypes(makeCall(c, data));
    QCOMPARE(types->front().shape, (std::vector<int64_t>{6, 10}));
  }

  void runtimeBoundsArePlaceholders() {
    OpCall call = typedCall("Clip", {{f32, {4, 4}}, {}, {f32, {}}});
    call.opset = 13;
    auto kernel = graph::buildOpKernel(call);
    QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
    QCOMPARE(kernel->inputIndices, (std::vector<int>{0, 2}));
  }

  void largeKernelsVectorizeAndRunInParallel() {
    OpCall call = typedCall("Erf", {{f32, {64, 4096}}});
    call.target.vectorBits = 32 * 16;
    call.target.cores = 4;
    QString text = loweredKernelText(call);
    QVERIFY2(text.contains("parallel for") && text.contains("ramp("), qPrintable(text));
    QVERIFY2(!text.contains("if ("), qPrintable(text));  // no branches per element
  }

  void broadcastKernelsLoadContiguousVectors() {
    // A per-channel bias over NCHW: the full-size operand must be read as whole vectors,
    // not gathered lane by lane from decomposed indices.
    OpCall call = typedCall("Add", {{f32, {2, 64, 56, 56}}, {f32, {64, 1, 1}}});
    call.target.vectorBits = 32 * 16;
    call.target.cores = 2;
    QString text = loweredKernelText(call);
    QVERIFY2(text.contains("in0[ramp(") && text.contains("out[ramp("), qPrintable(text));
    QVERIFY2(!text.contains("ramp(task"), qPrintable(text));  // no decomposed vector indices
  }

  void rejectsBadModels_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    QTest::newRow("mixed types") << 0 << "different element types (float32 and int64)";
    QTest::newRow("float op on integers") << 1 << "takes a float type";
    QTest::newRow("logic on floats") << 2 << "takes bool";
    QTest::newRow("shapes do not broadcast") << 3 << "do not broadcast";
    QTest::newRow("cast to string") << 4 << "cannot cast to ONNX element type 8";
    QTest::newRow("shift of signed integers") << 5 << "unsigned integer";
    QTest::newRow("slope wider than input") << 6 << "does not broadcast to the input";
    QTest::newRow("where with a float condition") << 7 << "takes bool";
    QTest::newRow("float fmod=0") << 8 << "fmod=0";
    QTest::newRow("cast without to") << 9 << "'to' is missing";
    QTest::newRow("bad shift direction") << 10 << "LEFT or RIGHT";
    QTest::newRow("training dropout") << 11 << "training-mode";
    QTest::newRow("mean of integers") << 12 << "takes a float type";
    QTest::newRow("bitwise and of floats") << 13 << "integer";
  }
  void rejectsBadModels() {
    QFETCH(int, which);
    QFETCH(QString, expected);
    std::vector<OpCall> calls = {
        typedCall("Add", {{f32, {2}}, {i64, {2}}}),
        typedCall("Exp", {{i32, {2}}}),
        typedCall("And", {{f32, {2}}, {f32, {2}}}),
        typedCall("Mul", {{f32, {2, 3}}, {f32, {2}}}),
        typedCall("Cast", {{f32, {2}}}, {{"to", int64_t(8)}}),
        typedCall("BitShift", {{i32, {2}}, {i32, {2}}}, {{"direction", std::string("LEFT")}}),
        typedCall("PRelu", {{f32, {3}}, {f32, {2, 3}}}),
        typedCall("Where", {{f32, {2}}, {f32, {2}}, {f32, {2}}}),
        typedCall("Mod", {{f32, {2}}, {f32, {2}}}),
        typedCall("Cast", {{f32, {2}}}),
        typedCall("BitShift", {{u8, {2}}, {u8, {2}}}, {{"direction", std::string("UP")}}),
        typedCall("Dropout", {{f32, {2}}, {}, {boolean, {}}}),
        typedCall("Mean", {{i32, {2}}, {i32, {2}}}),
        typedCall("BitwiseAnd", {{f32, {2}}, {f32, {2}}}),
    };
    OpCall call = calls[size_t(which)];
    if (call.op == "Dropout") {
      auto yes = runtime::NDArray::empty({}, runtime::DataType::boolean());
      *static_cast<uint8_t*>(yes.data()) = 1;
      call.constantInputs[2] = yes;
    }
    // Errors surface when typing the node, or at the latest when building its kernel.
    auto types = graph::inferOpTypes(call);
    Diagnostic error;
    if (!types) error = types.error();
    else {
      auto kernel = graph::buildOpKernel(call);
      QVERIFY2(!kernel.ok(), "the bad node compiled");
      error = kernel.error();
    }
    QString message = QString::fromStdString(error.toString());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(message.contains(QString::fromStdString(call.op + " 'bad_node'")), qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(TestOpdefsElementwise)
#include "test_opdefs_elementwise.moc"
