// Arrays as the interpreter (InterpretedModel.h) handles them between compiled segments: joined
// along an axis (ConcatFromSequence, a loop's scan outputs), sliced (Scan, SplitToSequence),
// made from scalars (a loop's iteration and condition), and written as or read from text
// (casts to and from strings). Internal to the interpreter.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/frontend/onnx/OnnxImporter.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace tessel::driver {

/// "[2, 3]".
std::string shapeText(const std::vector<int64_t>& shape);

/// A new array with `array`'s elements (a deep copy).
runtime::NDArray copyOf(const runtime::NDArray& array);

/// `parts` joined along `axis` (of their rank, negative from the back), or stacked along a new
/// `axis` when `newAxis`. A Diagnostic (no location) saying why not when there are no parts,
/// the axis is outside the rank or the parts' types or shapes differ.
Expected<runtime::NDArray> joinAlong(const std::vector<runtime::NDArray>& parts, int64_t axis, bool newAxis);

/// Elements [begin, begin + length) of `array` along `axis`; the axis is dropped when `dropAxis`.
runtime::NDArray sliceAlong(const runtime::NDArray& array, int64_t axis, int64_t begin, int64_t length, bool dropAxis);

runtime::NDArray int64Scalar(int64_t value);
runtime::NDArray boolScalar(bool value);

/// A tensor of numbers as text, element by element: the shortest text that reads back the
/// same (float32, float64, int32 and int64; nullopt for another type).
std::optional<frontend::StringTensor> numbersAsText(const runtime::NDArray& array);

/// Text as numbers of `type` (float32, float64, int32 or int64), read as C's strtod and
/// strtoll do; a Diagnostic (no location) names the first text that is no number, or the type.
Expected<runtime::NDArray> textAsNumbers(const frontend::StringTensor& text, runtime::DataType type);

}  // namespace tessel::driver
