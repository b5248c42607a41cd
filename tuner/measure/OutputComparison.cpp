// Element-wise comparison of two kernels' outputs with a float tolerance.
#include "tuner/measure/OutputComparison.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "core/support/Error.h"

namespace tessel::tuner {

namespace {

using runtime::DataType;

// Element `i` of `array` as a double; integers and booleans are exact up to 2^53, which no
// output element of a measured kernel reaches.
double elementAt(const runtime::NDArray& array, int64_t i) {
  const char* base = static_cast<const char*>(array.data());
  DataType dtype = array.dtype();
  auto load = [&](auto type) {
    decltype(type) value;
    std::memcpy(&value, base + i * int64_t(sizeof value), sizeof value);
    return double(value);
  };
  switch (dtype.code) {
    case DataType::Code::Float:
      if (dtype.bits == 32) return load(float());
      if (dtype.bits == 64) return load(double());
      break;
    case DataType::Code::Int:
      if (dtype.bits == 8) return load(int8_t());
      if (dtype.bits == 16) return load(int16_t());
      if (dtype.bits == 32) return load(int32_t());
      if (dtype.bits == 64) return load(int64_t());
      break;
    case DataType::Code::UInt:
      if (dtype.bits == 8) return load(uint8_t());
      if (dtype.bits == 16) return load(uint16_t());
      if (dtype.bits == 32) return load(uint32_t());
      if (dtype.bits == 64) return load(uint64_t());
      break;
    case DataType::Code::Bool: return load(uint8_t()) != 0 ? 1.0 : 0.0;
    case DataType::Code::BFloat: break;
  }
  // Types without a C++ counterpart here (float16, bfloat16) compare by their bits.
  uint64_t bits = 0;
  std::memcpy(&bits, base + i * dtype.bytes(), size_t(dtype.bytes()));
  return double(bits);
}

std::vector<int64_t> coordinatesOf(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coordinates(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coordinates[d] = shape[d] > 0 ? index % shape[d] : 0;
    index = shape[d] > 0 ? index / shape[d] : 0;
  }
  return coordinates;
}

}  // namespace

std::string OutputMismatch::describe() const {
  std::ostringstream text;
  text.precision(9);
  text << "output " << output << " element [";
  for (size_t i = 0; i < coordinates.size(); ++i) text << (i ? ", " : "") << coordinates[i];
  text << "] is " << actual << " where the default schedule gives " << expected << " (" << mismatchedElements
       << (mismatchedElements == 1 ? " element differs)" : " elements differ)");
  return text.str();
}

OutputComparison compareOutputs(const std::vector<runtime::NDArray>& actual,
                                const std::vector<runtime::NDArray>& expected, const OutputTolerance& tolerance) {
  TESSEL_ICHECK(actual.size() == expected.size()) << actual.size() << " outputs against " << expected.size();
  OutputComparison result;
  double worstExcess = 0;  // |difference| / allowance of the worst element so far (> 1: out)
  int64_t mismatched = 0;
  for (size_t o = 0; o < actual.size(); ++o) {
    const runtime::NDArray& a = actual[o];
    const runtime::NDArray& e = expected[o];
    TESSEL_ICHECK(a.shape() == e.shape() && a.dtype() == e.dtype())
        << "output " << o << " is " << a.describe() << " against " << e.describe();
    bool exact = a.dtype().code != DataType::Code::Float;
    int64_t count = a.numElements() * a.dtype().lanes;
    for (int64_t i = 0; i < count; ++i) {
      double x = elementAt(a, i), y = elementAt(e, i);
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;
      double difference = std::fabs(x - y);  // NaN or infinite when only one is
      double allowance = exact ? 0.0 : tolerance.absolute + tolerance.relative * std::fabs(y);
      if (std::isfinite(difference)) result.maxAbsError = std::max(result.maxAbsError, difference);
      if (difference <= allowance) continue;
      ++mismatched;
      double excess = std::isfinite(difference) && allowance > 0 ? difference / allowance : HUGE_VAL;
      if (!result.mismatch || excess > worstExcess) {
        worstExcess = excess;
        result.mismatch = OutputMismatch{o, i, coordinatesOf(i, a.shape()), x, y, 0};
      }
    }
  }
  if (result.mismatch) result.mismatch->mismatchedElements = mismatched;
  return result;
}

}  // namespace tessel::tuner
