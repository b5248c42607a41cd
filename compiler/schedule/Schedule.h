// The schedule of a tensor-expression pipeline: per-stage loop structure built by
// replaying primitives, with a trace that records every primitive applied.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/schedule/Primitive.h"
#include "core/ir/Stmt.h"
#include "core/support/Error.h"
#include "core/te/Tensor.h"

namespace tessel {

/// Loops wider than this are not turned into one vector (split them and vectorize the inner
/// loop), and longer ones not unrolled.
inline constexpr int64_t kMaxVectorizedExtent = 64;
inline constexpr int64_t kMaxUnrolledExtent = 512;

/// How one iteration variable relates to others: split (parent -> outer, inner) or fuse
/// (outer, inner -> fused).
struct IterVarRelation {
  enum class Kind : uint8_t { Split, Fuse };
  Kind kind = Kind::Split;
  IterVar parent, outer, inner;  // split: parent -> outer*factor + inner; fuse: outer, inner -> fused
  IterVar fused;
  Expr factor;  ///< Split by factor: extent of inner.
  Expr nparts;  ///< Split by parts: extent of outer.
};

/// Per-loop annotations set by vectorize/unroll/parallel/bind/pragma.
struct IterVarAttr {
  ForKind forKind = ForKind::Serial;
  std::string threadTag;
  std::vector<std::pair<std::string, Expr>> pragmas;
  std::string tensorize;  ///< The tensor intrinsic that replaces this loop nest, if any.
  SourceLocation setAt;  ///< The primitive that chose forKind, for lowering diagnostics.
};

enum class AttachKind : uint8_t {
  Root,    ///< Computed in full before its consumers (the default).
  Inline,  ///< Substituted into every consumer; has no loops of its own.
  At,      ///< Computed inside a loop of a consumer stage, for the region that loop needs.
};

struct StorageAlignment {
  int dimension;
  int64_t factor;
  int64_t offset;
  SourceLocation setAt;
};

/// One operation's loop structure.
struct Stage {
  te::Operation op;
  std::string name;
  bool isOutput = false;
  std::vector<IterVar> rootIterVars;  ///< The op's axes, then its reduction axes.
  std::vector<IterVar> allIterVars;   ///< Roots and every var created by split/fuse.
  std::vector<IterVar> leafIterVars;  ///< The loops, outermost first.
  std::vector<IterVarRelation> relations;
  std::unordered_map<const Node*, IterVarAttr> attrs;  ///< Keyed by IterVar node.
  AttachKind attach = AttachKind::Root;
  std::string attachStage;
  IterVar attachIterVar;
  SourceLocation attachedAt;
  std::string scope = "global";
  std::vector<StorageAlignment> alignments;

  const Buffer& buffer() const { return op->buffer; }
  /// The loop of this stage named `name` among all its iteration variables, or null.
  IterVar findIterVar(const std::string& name) const;
  int leafPosition(const IterVar& iv) const;
  const IterVarAttr* attr(const IterVar& iv) const;
};

/// A schedule: stages for every operation reachable from the outputs, producers first.
/// Primitives are validated before they change anything: a failed apply() leaves the
/// schedule as it was and returns a Diagnostic naming the primitive's line and the axis.
class Schedule {
public:
  /// The default schedule: every stage computed at root, loops in axis order. Throws
  /// UserError when two operations of the pipeline share a name.
  explicit Schedule(std::vector<te::Tensor> outputs);

  /// Applies one primitive and appends it to the trace.
  Status apply(const Primitive& primitive);
  /// A fresh schedule of `outputs` with `trace` replayed; stops at the first error.
  static Expected<Schedule> replay(std::vector<te::Tensor> outputs, const Trace& trace);

  const Trace& trace() const { return trace_; }
  const std::vector<te::Tensor>& outputs() const { return outputs_; }
  const std::vector<Stage>& stages() const { return stages_; }
  const Stage* findStage(const std::string& name) const;
  Stage* findStage(const std::string& name);
  /// Stages whose op reads `producer`'s buffer.
  std::vector<const Stage*> consumersOf(const Stage& producer) const;

  // Convenience wrappers for schedules written in C++ (default schedules). Each builds a
  // Primitive and applies it, so the trace reads the same as text written by a person.
  Status split(const std::string& stage, const std::string& axis, int64_t factor, const std::string& outer,
               const std::string& inner);
  Status splitParts(const std::string& stage, const std::string& axis, int64_t nparts, const std::string& outer,
                    const std::string& inner);
  Status fuse(const std::string& stage, const std::vector<std::string>& axes, const std::string& fused);
  Status reorder(const std::string& stage, const std::vector<std::string>& order);
  Status tile(const std::string& stage, const std::string& x, const std::string& y, int64_t fx, int64_t fy,
              const std::string& xo, const std::string& yo, const std::string& xi, const std::string& yi);
  Status vectorize(const std::string& stage, const std::string& axis);
  Status unroll(const std::string& stage, const std::string& axis);
  Status parallel(const std::string& stage, const std::string& axis);
  Status computeAt(const std::string& stage, const std::string& target, const std::string& axis);
  Status computeInline(const std::string& stage);
  Status computeRoot(const std::string& stage);
  Status cacheRead(const std::string& tensor, const std::string& scope, const std::vector<std::string>& readers,
                   const std::string& newStage);
  Status cacheWrite(const std::string& stage, const std::string& scope, const std::string& newStage);
  Status rfactor(const std::string& stage, const std::string& axis, int64_t factor, const std::string& newStage);
  Status storageAlign(const std::string& stage, const std::string& axis, int64_t factor, int64_t offset);
  Status pragma(const std::string& stage, const std::string& axis, const std::string& name,
                std::optional<int64_t> value = std::nullopt);
  Status bind(const std::string& stage, const std::string& axis, const std::string& threadTag);
  Status tensorize(const std::string& stage, const std::string& axis, const std::string& intrinsic);

private:
  Status applyUnrecorded(const Primitive& p);
  Status applySplit(const Primitive& p, Stage& stage);
  Status applyFuse(const Primitive& p, Stage& stage);
  Status applyReorder(const Primitive& p, Stage& stage);
  Status applyTile(const Primitive& p, Stage& stage);
  Status applyLoopKind(const Primitive& p, Stage& stage);
  Status applyComputeAt(const Primitive& p, Stage& stage);
  Status applyComputeInline(const Primitive& p, Stage& stage);
  Status applyCacheRead(const Primitive& p);
  Status applyCacheWrite(const Primitive& p, Stage& stage);
  Status applyRfactor(const Primitive& p, Stage& stage);
  Status checkStageUntouched(const Primitive& p, const Stage& stage) const;
  Status applyStorageAlign(const Primitive& p, Stage& stage);
  Status applyPragma(const Primitive& p, Stage& stage);
  Status applyBind(const Primitive& p, Stage& stage);
  Status applyTensorize(const Primitive& p, Stage& stage);
  /// Resolves `name` to a leaf loop of `stage`, or explains why it is not one.
  Expected<IterVar> leafAxis(const Primitive& p, const Stage& stage, const std::string& name) const;
  Status checkNewNames(const Primitive& p, const Stage& stage, const std::vector<std::string>& names) const;
  Status checkNewStageName(const Primitive& p, const std::string& name) const;
  void replaceOp(Stage& stage, te::Operation op);
  void insertStage(size_t position, Stage stage);
  /// `stage` becomes `consumer` (keeping whether it is an output and its scope), with a new
  /// stage for `producer` just before it: cache_write's cache, rfactor's partial sums.
  void splitStage(Stage& stage, te::Operation producer, te::Operation consumer);

  std::vector<te::Tensor> outputs_;
  std::vector<Stage> stages_;
  Trace trace_;
};

/// A Diagnostic located at a primitive's line and column.
Diagnostic scheduleError(const Primitive& p, std::string message, std::string hint = "");

}  // namespace tessel
