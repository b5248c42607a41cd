// The op categories the graph view colours nodes by (conv/matmul, elementwise, pooling, ...).
#pragma once

#include <QString>

#include <string>

namespace tessel::views {

/// What kind of work a node does, as a reader of the graph groups it. Each category has one
/// colour in GraphPalette.
enum class NodeCategory {
  Compute,          ///< Convolutions and matrix products: where the FLOPs are.
  Elementwise,      ///< Activations and arithmetic applied element by element.
  Reduction,        ///< Reductions and pooling.
  DataMovement,     ///< Shape and data movement: reshape, concat, gather, slice, ...
  Normalization,    ///< Batch/layer/instance normalization, softmax.
  LayoutTransform,  ///< Changes of memory layout (AlterLayout's LayoutTransform, Transpose).
  Constant,         ///< A constant or weight shown as a node of its own.
  InputOutput,      ///< A graph input or output.
  Fused,            ///< A fused operation drawn collapsed (its body hidden).
  Unsupported,      ///< A placeholder for an operator Tessel does not implement (graph::kUnsupportedOp).
  Module,           ///< A module group drawn closed (its operations hidden).
  Other,            ///< Anything not listed above (control flow, random, custom).
};

constexpr int kNodeCategoryCount = static_cast<int>(NodeCategory::Other) + 1;

/// The category of a primitive operator ("Conv" -> Compute). Unknown operators are Other.
NodeCategory categorizeOperator(const std::string& op);

/// A short human name of the category ("Convolution / MatMul"), for legends and tooltips.
QString categoryDisplayName(NodeCategory category);

}  // namespace tessel::views
