// The schedule as lowering sees it: inlined stages substituted into their consumers.
#pragma once

#include <unordered_map>
#include <vector>

#include "compiler/schedule/Schedule.h"

namespace tessel {

/// A stage that gets loops of its own (not inlined, not a placeholder).
struct LoweredStage {
  const Stage* stage = nullptr;
  const te::ComputeOpNode* compute = nullptr;
  Expr body;  ///< The op body with every inlined producer substituted.
};

class ScheduleView {
public:
  explicit ScheduleView(const Schedule& schedule);

  const Schedule& schedule() const { return schedule_; }
  /// Stages with loops, producers first.
  const std::vector<LoweredStage>& stages() const { return stages_; }
  const LoweredStage* find(const std::string& name) const;
  const LoweredStage* findByBuffer(const Buffer& buffer) const;
  /// Stages whose (inlined) body reads `producer`'s buffer.
  std::vector<const LoweredStage*> consumersOf(const LoweredStage& producer) const;
  /// Placeholder stages: the function's inputs.
  std::vector<const Stage*> inputs() const;

private:
  const Schedule& schedule_;
  std::vector<LoweredStage> stages_;
};

/// Every BufferLoad of `buffer` in `e`, in visiting order.
std::vector<const BufferLoadNode*> loadsOf(const Expr& e, const Buffer& buffer);

}  // namespace tessel
