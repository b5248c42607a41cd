// Layout transforms between NCHW activations and channel-blocked NCHW<b>c ones.
#pragma once

#include <optional>
#include <string>

#include "compiler/ops/Workload.h"

namespace tessel {

/// "NCHW<block>c" ("NCHW16c"): channels in blocks of `block`, [n][c / block][y][x][block].
std::string blockedChannelLayout(int64_t block);
/// The block of a "NCHW<b>c" layout name, 0 for "NCHW" (and for ""), nullopt for any other.
std::optional<int64_t> channelBlockOf(const std::string& layout);

/// The logical NCHW shape of a tensor stored with `block` (0: already NCHW).
std::vector<int64_t> unblockedChannelShape(const std::vector<int64_t>& physicalShape, int64_t block);
/// The physical shape of an NCHW tensor stored with channel block `block` (which must divide
/// the channels; 0 keeps it NCHW).
std::vector<int64_t> blockedChannelShape(const std::vector<int64_t>& nchwShape, int64_t block);

/// Copies a 4-D tensor between channel layouts: `sourceBlock` and `destinationBlock` are the
/// blocks of the two layouts (0 for NCHW; they must differ and divide the channels).
/// `shape` is the logical NCHW shape. Input "data" (physical source shape); one stage
/// "layout_transform" whose axes are the destination's ("n", "c", "y", "x" or "n", "co", "y",
/// "x", "ci").
Workload layoutTransform(const std::vector<int64_t>& shape, int64_t sourceBlock, int64_t destinationBlock,
                         DataType dtype = DataType::float32());

/// Rows (the outer axes) in parallel, the innermost axis as vector lanes when it is wide.
Expected<Schedule> defaultLayoutTransformSchedule(const Workload& workload,
                                                  const Target& target = hostTarget());

}  // namespace tessel
