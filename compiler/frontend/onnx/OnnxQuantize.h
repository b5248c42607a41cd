// Writing a quantized ONNX model in QDQ form: QuantizeLinear / DequantizeLinear pairs around
// the convolutions chosen, with int8 weights. The result loads in Tessel (whose
// FakeQuantizationToInteger pass runs those convolutions in int8) and in any ONNX runtime.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/support/Error.h"

namespace tessel::frontend {

/// A layer `tessel quantize` can quantize (a Conv, Gemm or MatMul with a constant float
/// weight), and the tensors quantized around it.
struct QuantizableLayer {
  std::string op;      ///< "Conv", "Gemm" or "MatMul".
  std::string node;    ///< The node's name (unnamed nodes are given names first).
  std::string input;   ///< The tensor it reads, quantized before it.
  std::string output;  ///< Its result: its output, or its bias Add's, or its Relu's.
  std::string bias;    ///< The Add node folded in as a MatMul's bias, if any.
  std::string relu;    ///< The Relu node folded into the quantized output, if any.
  /// Whether the output is quantized: always for a Conv; for a dense layer unless the model
  /// returns it (logits stay float; the int8 kernel dequantizes them itself).
  bool quantizeOutput = true;
  /// The weight axis of the output channels: 0 for a Conv's filters and a transposed Gemm
  /// weight ([N, K]), 1 for a [K, N] one. Per-channel scales lie along it.
  int64_t weightAxis = 0;
  /// Where Tessel's graph has those tensors: the node making each (a graph input's own name)
  /// and which of its outputs.
  std::string inputProducer, outputProducer;
  int inputIndex = 0, outputIndex = 0;
  /// The op making the input ("MaxPool"; empty for a graph input) and that op's first input:
  /// a max pool's output takes its input's scale (it passes quantized values through).
  std::string inputProducerOp, inputProducerInput;
};

struct QuantizableModel {
  std::string bytes;  ///< The model with every node named: import this, so names agree.
  std::vector<QuantizableLayer> layers;
  int64_t opset = 0;  ///< The default domain's opset.
};

/// Reads the model at `path` and lists, in graph order, its Conv nodes with a constant 4-D
/// float32 weight and one group, its Gemm nodes with a constant 2-D weight (A not transposed,
/// alpha and beta 1) and its MatMul nodes with a constant 2-D second operand; others
/// (depthwise, grouped, weights computed at run time) stay float. A Diagnostic for a file
/// that is not an ONNX model.
Expected<QuantizableModel> findQuantizableLayers(const std::string& path);

/// How one activation tensor is quantized: uint8 with this scale and zero point.
struct ActivationQuantization {
  double scale = 1;
  int zeroPoint = 0;
};

/// The model `model.bytes` with `layers` quantized: each quantized activation tensor T (a
/// layer's input, and its output where quantizeOutput) gets
/// QuantizeLinear -> DequantizeLinear where it is made (the producer's output becomes
/// "T/float" and T is the DequantizeLinear's output, so all of T's readers read the int8
/// value; a graph input, or a layer input that is also a graph output, instead gets
/// "T/dequantized" read by the quantized layers only), and each weight W
/// becomes int8 "W/quantized" (symmetric: per output channel with `perChannel`, else one
/// scale), dequantized on its way into the layer. Biases stay float. `activations` is keyed by
/// tensor name and must hold every input and output of `layers`. Per-filter weight scales
/// need opset 13 (DequantizeLinear's axis); an older model is an error saying so.
Expected<std::string> writeQdqModel(const QuantizableModel& model, const std::vector<QuantizableLayer>& layers,
                                    const std::map<std::string, ActivationQuantization>& activations,
                                    bool perChannel);

/// The model `model.bytes` with its dense `layers` (Gemm, MatMul; others are an internal
/// error) quantized dynamically, as ONNX Runtime's quantize_dynamic writes them: each input
/// T gets DynamicQuantizeLinear (scale and zero point computed from T at run time), each
/// weight becomes int8 [K, N] (symmetric; per column with `perChannel`), and the layer
/// becomes MatMulInteger -> Cast -> Mul(x_scale * w_scale) (-> Add(C) for a Gemm's bias).
/// Needs no calibration. An opset older than 11 is an error saying so.
Expected<std::string> writeDynamicModel(const QuantizableModel& model, const std::vector<QuantizableLayer>& layers,
                                        bool perChannel);

/// The Tessel node that makes tensor `tensor` in a model writeQdqModel wrote: its
/// DequantizeLinear's name.
std::string dequantizedProducer(const std::string& tensor);

}  // namespace tessel::frontend
