// ONNX node attributes (AttributeProto) to the graph IR's typed attributes.
//
// Internal to the ONNX frontend: it names protobuf classes, so only frontend sources include it.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "core/graph/Graph.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace tessel::frontend {

/// The attributes of `node` keyed by their ONNX names. INT, FLOAT, STRING, INTS, FLOATS and
/// STRINGS map one to one (floats widen to double). The graph IR has no tensor attribute, so
/// a TENSOR attribute `K` (ConstantOfShape's `value`) is stored as three: `K` with every
/// element (a list of doubles for floating-point types, of int64 otherwise, bool as 0/1),
/// `K.dtype` with the element type's name ("float32") and `K.shape` with the dims. Subgraphs,
/// sparse tensors, tensor lists and type attributes are a Diagnostic naming the attribute
/// (the caller adds file and node).
Expected<graph::Attributes> convertAttributes(const onnx::NodeProto& node, const std::string& modelDirectory);
/// The attributes of a node kept only to be shown (a placeholder for an unsupported node):
/// converted as convertAttributes does where it can, the others described in words ("subgraph
/// 'body' (12 nodes)", "sparse tensor"). Never fails; attributes without a name are left out.
graph::Attributes attributesForDisplay(const onnx::NodeProto& node, const std::string& modelDirectory);

/// Every element of `array` (any element type Tessel has, 16-bit floats included) as double.
std::vector<double> arrayToDoubles(const runtime::NDArray& array);
/// Every element of an integer or bool `array` as int64.
std::vector<int64_t> arrayToInts(const runtime::NDArray& array);

}  // namespace tessel::frontend
