// One schedule primitive application: the entry of a schedule trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

#define TESSEL_SCHEDULE_PRIMITIVES(X)                                                              \
  X(Split, "split") X(Fuse, "fuse") X(Reorder, "reorder") X(Tile, "tile") X(Vectorize, "vectorize") \
  X(Unroll, "unroll") X(Parallel, "parallel") X(ComputeAt, "compute_at")                            \
  X(ComputeInline, "compute_inline") X(ComputeRoot, "compute_root") X(CacheRead, "cache_read")      \
  X(CacheWrite, "cache_write") X(StorageAlign, "storage_align") X(Pragma, "pragma") X(Bind, "bind")   \
  X(Rfactor, "rfactor") X(Tensorize, "tensorize")

enum class PrimitiveKind : uint8_t {
#define TESSEL_PRIMITIVE_ENUM(Name, text) Name,
  TESSEL_SCHEDULE_PRIMITIVES(TESSEL_PRIMITIVE_ENUM)
#undef TESSEL_PRIMITIVE_ENUM
};

const char* primitiveName(PrimitiveKind kind);
std::optional<PrimitiveKind> parsePrimitiveName(const std::string& name);

/// Where a primitive came from in schedule text (0 when built in code).
struct SourceLocation {
  int line = 0;
  int column = 0;
};

/// A primitive applied to a stage. Which fields are used depends on the kind:
///   split        stage, axes={axis}, results={outer, inner}, values={factor or nparts}, byParts
///   fuse         stage, axes={a, b, ...} (adjacent, outer first), results={fused}
///   reorder      stage, axes={new order}
///   tile         stage, axes={x, y}, results={x.outer, y.outer, x.inner, y.inner}, values={fx, fy}
///   vectorize / unroll / parallel   stage, axes={axis}
///   compute_at   stage, target=consumer stage, axes={consumer's axis}
///   compute_inline / compute_root   stage
///   cache_read   stage=tensor read, target=scope, readers={consumer stages}, results={new stage}
///   cache_write  stage, target=scope, results={new stage}
///   rfactor      stage, axes={reduction axis}, values={factor}, results={new stage}
///   storage_align stage, axes={dimension's axis}, values={factor, offset}
///   pragma       stage, axes={axis}, target=pragma name, values={optional value}
///   bind         stage, axes={axis}, target=thread tag ("threadIdx.x", ...)
///   tensorize    stage, axes={axis}, target=tensor intrinsic ("dot_16x4_u8i8")
struct Primitive {
  PrimitiveKind kind = PrimitiveKind::Split;
  std::string stage;
  std::vector<std::string> axes;
  std::vector<std::string> results;
  std::vector<int64_t> values;
  bool byParts = false;
  std::string target;
  std::vector<std::string> readers;
  SourceLocation location;

  bool operator==(const Primitive& other) const {
    return kind == other.kind && stage == other.stage && axes == other.axes && results == other.results &&
           values == other.values && byParts == other.byParts && target == other.target &&
           readers == other.readers;
  }
};

/// A schedule as data: primitives in the order they are applied.
struct Trace {
  std::vector<Primitive> primitives;
  bool operator==(const Trace& other) const { return primitives == other.primitives; }
};

}  // namespace tessel
