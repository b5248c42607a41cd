// Workload keys: the canonical name of a kernel's computation, independent of node names, on
// which tuning records, default schedules, the Studio's edits and project files meet.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/opdefs/OpRegistry.h"
#include "core/target/Target.h"

namespace tessel::driver {

/// What a kernel computes, as one stable line: the operation (with a fused operation's body,
/// each primitive with its attributes and ONNX opset, wired by position), the types (element
/// type, shape, layout) of its inputs and outputs, and the values of constant inputs the
/// kernel reads by value (a Reshape's shape) rather than as data. Node and tensor names never
/// appear, so identical kernels of a model (or of two models) have one key. For example
///   Conv{group=1,kernel_shape=[3,3],pads=[1,1,1,1],strides=[1,1]}@13 ($0,$1,$2)
///   in=[float32[1,64,56,56]@NCHW16c; float32[4,4,3,3,16,16]@OIHW16i16o; float32[64]]
///   out=[float32[1,64,56,56]@NCHW16c]
/// (on one line). The target is not part of the text: a task is a key on a target, and
/// `hash` covers both.
struct WorkloadKey {
  std::string text;
  /// FNV-1a of the text and the target's string, as 16 hex digits: short enough for a
  /// file name or a table column, the same on every machine and run.
  std::string hash;
  bool operator==(const WorkloadKey& other) const = default;
};

/// The key of `node`'s kernel (as buildKernelForNode built it for `target`): `kernel` tells
/// which inputs it reads as data; any other constant input is read by value and keyed by
/// its values.
WorkloadKey workloadKeyOf(const graph::OperationNode& node, const graph::OpKernel& kernel, const Target& target);

/// The key of a bare operator built outside a graph (`tessel bench/tune matmul ...`): its
/// workload name (which spells out the operator and its shapes) and argument types.
WorkloadKey operatorWorkloadKey(const Workload& workload, const Target& target);

/// The 16-hex-digit hash of `text` followed by `target`'s string.
std::string workloadKeyHash(const std::string& text, const Target& target);

}  // namespace tessel::driver
