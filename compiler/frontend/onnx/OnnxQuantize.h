// Writing a quantized ONNX model in QDQ form: QuantizeLinear / DequantizeLinear pairs around
// the convolutions chosen, with int8 weights. The result loads in Tessel (whose
// FakeQuantizationToInteger pass runs those convolutions in int8) and in any ONNX runtime.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/support/Error.h"

namespace tessel::frontend {

/// A convolution `tessel quantize` can quantize, and the tensors quantized around it.
struct QuantizableConv {
  std::string node;    ///< The Conv node's name (unnamed nodes are given names first).
  std::string input;   ///< The tensor it reads, quantized before it.
  std::string output;  ///< The tensor quantized after it: its output, or its Relu's.
  std::string relu;    ///< The Relu node folded into the quantized output, if any.
  /// Where Tessel's graph has those tensors: the node making each (a graph input's own name)
  /// and which of its outputs.
  std::string inputProducer, outputProducer;
  int inputIndex = 0, outputIndex = 0;
};

struct QuantizableModel {
  std::string bytes;  ///< The model with every node named: import this, so names agree.
  std::vector<QuantizableConv> convs;
  int64_t opset = 0;  ///< The default domain's opset.
};

/// Reads the model at `path` and lists its Conv nodes with a constant 4-D float32 weight and
/// one group, in graph order; others (depthwise, grouped, weights computed at run time) stay
/// float. A Diagnostic for a file that is not an ONNX model.
Expected<QuantizableModel> findQuantizableConvs(const std::string& path);

/// How one activation tensor is quantized: uint8 with this scale and zero point.
struct ActivationQuantization {
  double scale = 1;
  int zeroPoint = 0;
};

/// The model `model.bytes` with `convs` quantized: each quantized activation tensor T gets
/// QuantizeLinear -> DequantizeLinear where it is made (the producer's output becomes
/// "T/float" and T is the DequantizeLinear's output, so all of T's readers read the int8
/// value; a graph input, or a layer input that is also a graph output, instead gets
/// "T/dequantized" read by the quantized layers only), and each weight W
/// becomes int8 "W/quantized" (symmetric: per filter with `perChannel`, else one scale),
/// dequantized on its way into the Conv. Biases stay float. `activations` is keyed by
/// tensor name and must hold every input and output of `convs`. Per-filter weight scales
/// need opset 13 (DequantizeLinear's axis); an older model is an error saying so.
Expected<std::string> writeQdqModel(const QuantizableModel& model, const std::vector<QuantizableConv>& convs,
                                    const std::map<std::string, ActivationQuantization>& activations,
                                    bool perChannel);

/// The Tessel node that makes tensor `tensor` in a model writeQdqModel wrote: its
/// DequantizeLinear's name.
std::string dequantizedProducer(const std::string& tensor);

}  // namespace tessel::frontend
