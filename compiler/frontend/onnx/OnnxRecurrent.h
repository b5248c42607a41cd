// ONNX's recurrent operators (LSTM, GRU, RNN) expanded into graph operations unrolled over time.
//
// Tessel has no recurrent kernel: like TVM's ONNX frontend, the importer writes each recurrent
// node as the operations one time step performs, repeated for the (static) sequence length.
// The input projection of every step is one MatMul over the whole sequence; each step adds a
// small MatMul by the recurrent weights and the gate arithmetic. With constant weights,
// AlterLayout packs those MatMuls and FuseOps folds the gate arithmetic into their epilogues
// and a few elementwise kernels.
#pragma once

#include <string>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::frontend {

/// Whether expandRecurrentNode handles ONNX operator `opType` ("LSTM", "GRU", "RNN").
bool isRecurrentOperator(const std::string& opType);

/// One recurrent ONNX node as the importer sees it.
struct RecurrentNode {
  std::string name;    ///< The node's unique name; every expanded operation is "<name>/...".
  std::string opType;  ///< "LSTM", "GRU" or "RNN".
  int opset = 0;       ///< The model's opset, for the expanded operations' provenance.
  graph::Attributes attributes;
  std::vector<graph::Value> inputs;  ///< In ONNX order; undefined where an optional input is omitted.
  std::vector<bool> outputsUsed;     ///< One per ONNX output; false where its name is empty.
};

/// The values standing for `node`'s outputs (undefined where an output is unused), built from
/// graph operations whose names start with the node's name and whose provenance is the node.
/// Every attribute and optional input of the ONNX specification (opsets 7 to 14 and later)
/// is honoured: directions, layout 0 and 1, biases, sequence_lens (constant or not), initial
/// states, peepholes, activation lists with their alphas and betas, clip, input_forget and
/// linear_before_reset. `graphInputs` are the inputs of the graph being imported: the node's
/// inputs are typed through them (the sequence length must be static). A malformed node (a
/// weight of the wrong shape, an unknown activation, an unsupported element type) is a
/// Diagnostic whose message reads on from "node '<name>' (<op>) " (the importer prefixes it)
/// and whose hint says what to change.
Expected<std::vector<graph::Value>> expandRecurrentNode(const RecurrentNode& node,
                                                        const std::vector<graph::Value>& graphInputs);

}  // namespace tessel::frontend
