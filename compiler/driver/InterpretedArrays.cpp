// Arrays as the interpreter handles them between compiled segments: joined, sliced, made
// from scalars, and written as or read from text.
#include "compiler/driver/InterpretedArrays.h"

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace tessel::driver {

using runtime::NDArray;

namespace {

// The bytes before, along and after `axis` of `shape`, for copying slices.
struct AxisSplit {
  int64_t outer = 1, extent = 1, innerBytes = 1;
};
AxisSplit splitAt(const std::vector<int64_t>& shape, size_t axis, int64_t elementBytes) {
  AxisSplit split;
  for (size_t d = 0; d < axis; ++d) split.outer *= shape[d];
  split.extent = axis < shape.size() ? shape[axis] : 1;
  split.innerBytes = elementBytes;
  for (size_t d = axis + 1; d < shape.size(); ++d) split.innerBytes *= shape[d];
  return split;
}

}  // namespace

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

NDArray copyOf(const NDArray& array) {
  NDArray copy = NDArray::empty(array.shape(), array.dtype());
  copy.copyFrom(array);
  return copy;
}

// `parts` joined along `axis` (of their rank), or stacked along a new `axis` when `newAxis`.
Expected<NDArray> joinAlong(const std::vector<NDArray>& parts, int64_t axis, bool newAxis) {
  if (parts.empty()) return Diagnostic{"there are none", "", 0, 0, ""};
  const NDArray& first = parts.front();
  const int64_t rank = first.ndim() + (newAxis ? 1 : 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return Diagnostic{"axis " + std::to_string(axis) + " is outside rank " + std::to_string(rank), "", 0, 0, ""};
  std::vector<int64_t> shape = first.shape();
  if (newAxis) shape.insert(shape.begin() + axis, 0);
  else shape[size_t(axis)] = 0;
  for (const NDArray& part : parts) {
    std::vector<int64_t> expected = first.shape();
    bool same = part.dtype() == first.dtype() && part.ndim() == first.ndim();
    for (int64_t d = 0; same && d < first.ndim(); ++d)
      same = d == axis && !newAxis ? true : part.shape()[size_t(d)] == expected[size_t(d)];
    if (!same)
      return Diagnostic{"a tensor of shape " + shapeText(part.shape()) + " cannot join one of shape " +
                            shapeText(first.shape()),
                        "", 0, 0, ""};
    shape[size_t(axis)] += newAxis ? 1 : part.shape()[size_t(axis)];
  }
  NDArray result = NDArray::empty(shape, first.dtype());
  const int64_t elementBytes = first.dtype().bytes();
  AxisSplit whole = splitAt(shape, size_t(axis), elementBytes);
  auto* out = static_cast<char*>(result.data());
  int64_t offset = 0;  // along the axis, in elements of the inner block
  for (const NDArray& part : parts) {
    std::vector<int64_t> partShape = part.shape();
    if (newAxis) partShape.insert(partShape.begin() + axis, 1);
    AxisSplit piece = splitAt(partShape, size_t(axis), elementBytes);
    const auto* in = static_cast<const char*>(part.data());
    for (int64_t o = 0; o < piece.outer; ++o)
      std::memcpy(out + (o * whole.extent + offset) * whole.innerBytes, in + o * piece.extent * piece.innerBytes,
                  size_t(piece.extent * piece.innerBytes));
    offset += piece.extent;
  }
  return result;
}

// Elements [begin, begin + length) of `array` along `axis`; the axis is dropped when `dropAxis`.
NDArray sliceAlong(const NDArray& array, int64_t axis, int64_t begin, int64_t length, bool dropAxis) {
  std::vector<int64_t> shape = array.shape();
  AxisSplit whole = splitAt(shape, size_t(axis), array.dtype().bytes());
  shape[size_t(axis)] = length;
  if (dropAxis) shape.erase(shape.begin() + axis);
  NDArray result = NDArray::empty(shape, array.dtype());
  const auto* in = static_cast<const char*>(array.data());
  auto* out = static_cast<char*>(result.data());
  for (int64_t o = 0; o < whole.outer; ++o)
    std::memcpy(out + o * length * whole.innerBytes, in + (o * whole.extent + begin) * whole.innerBytes,
                size_t(length * whole.innerBytes));
  return result;
}

NDArray int64Scalar(int64_t value) {
  NDArray array = NDArray::empty({}, runtime::DataType::int64());
  array.copyFrom(&value, sizeof value);
  return array;
}
NDArray boolScalar(bool value) {
  NDArray array = NDArray::empty({}, runtime::DataType::boolean());
  unsigned char byte = value ? 1 : 0;
  array.copyFrom(&byte, 1);
  return array;
}

// A tensor of numbers as text, element by element: the shortest text that reads back the same
// (float32, float64, int32 and int64; nullopt for another type).
std::optional<frontend::StringTensor> numbersAsText(const NDArray& array) {
  frontend::StringTensor text{array.shape(), {}};
  auto write = [&](auto values) {
    char buffer[64];
    for (auto value : values) text.elements.emplace_back(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  };
  const runtime::DataType type = array.dtype();
  if (type == runtime::DataType::float32()) write(array.values<float>());
  else if (type == runtime::DataType::float64()) write(array.values<double>());
  else if (type == runtime::DataType::int32()) write(array.values<int32_t>());
  else if (type == runtime::DataType::int64()) write(array.values<int64_t>());
  else return std::nullopt;
  return text;
}

// Text as numbers of `type` (float32, float64, int32 or int64), read as C's strtod and strtoll
// do; the first text that is no number, or nullopt for another type.
Expected<NDArray> textAsNumbers(const frontend::StringTensor& text, runtime::DataType type) {
  NDArray result = NDArray::empty(text.shape, type);
  for (size_t i = 0; i < text.elements.size(); ++i) {
    const char* begin = text.elements[i].c_str();
    char* end = nullptr;
    if (type == runtime::DataType::float32()) result.dataAs<float>()[i] = std::strtof(begin, &end);
    else if (type == runtime::DataType::float64()) result.dataAs<double>()[i] = std::strtod(begin, &end);
    else if (type == runtime::DataType::int32()) result.dataAs<int32_t>()[i] = int32_t(std::strtoll(begin, &end, 10));
    else if (type == runtime::DataType::int64()) result.dataAs<int64_t>()[i] = std::strtoll(begin, &end, 10);
    else return Diagnostic{"strings are read as float32, float64, int32 or int64, not " + type.toString(), "", 0, 0, ""};
    if (end == begin) return Diagnostic{"\"" + text.elements[i] + "\" is not a number", "", 0, 0, ""};
  }
  return result;
}

}  // namespace tessel::driver
