// Converting a model of an old opset to one Tessel supports, with ONNX's own version converter.
//
// Internal to the ONNX frontend: it names protobuf classes, so only frontend sources include it.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "core/support/Error.h"

namespace tessel::frontend {

/// What a conversion did, for the step `tessel inspect` and the pass timeline show.
struct OpsetConversion {
  int fromOpset = 0;
  int toOpset = 0;
  double milliseconds = 0;
};

/// Replaces `model` (of default-domain opset `fromOpset`) by its conversion to opset
/// `toOpset` with onnx::version_conversion::ConvertVersion, which rewrites every operator
/// whose definition changed in between (Add-6's broadcast attribute into Add-7's numpy
/// broadcasting, Reshape-1's shape attribute into Reshape-5's input, ...). ONNX's shape
/// inference runs first (the converter needs operand shapes old exporters did not write), and
/// per-channel PRelu-6 slopes are made explicit (the converter misses them). An operator ONNX
/// does not define at `fromOpset`, and whatever the converter throws, become a Diagnostic
/// located at `sourceName` naming both opsets and the cause; `model` is then half-converted
/// and must not be imported.
Expected<OpsetConversion> convertOpset(onnx::ModelProto& model, int fromOpset, int toOpset,
                                       const std::string& sourceName);

}  // namespace tessel::frontend
