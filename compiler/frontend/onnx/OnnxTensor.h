// ONNX tensors (TensorProto) to runtime arrays: element types, raw and typed data, external files.
//
// Internal to the ONNX frontend: it names protobuf classes, so only frontend sources include it.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "core/ir/DataType.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace tessel::frontend {

/// Tessel's element type for an ONNX TensorProto.DataType code; the message (without a
/// location) says why when Tessel has no such type (strings, complex numbers, an unknown code).
Expected<DataType> elementTypeFromOnnx(int onnxType);

/// The runtime array type of a compiler element type (they share code, bits and lanes).
runtime::DataType toRuntimeType(DataType type);

/// Decodes a tensor's dims and data into a new CPU array. Data may be raw bytes, typed
/// repeated fields, or an external file resolved against `modelDirectory` (empty: the
/// current directory). A wrong data size, a negative dimension, an unknown element type or
/// an unreadable external file is a Diagnostic whose message names the tensor; the caller
/// sets its location.
Expected<runtime::NDArray> tensorToArray(const onnx::TensorProto& tensor, const std::string& modelDirectory);

}  // namespace tessel::frontend
