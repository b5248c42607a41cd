// Combines the per-store-group facts of a loop nest into one fixed-length vector.
#include "tuner/features/LoopFeatures.h"

#include <algorithm>
#include <cmath>

#include "tuner/features/AccessFootprint.h"
#include "tuner/features/LoopNestAnalysis.h"

namespace tessel {

namespace {

using namespace features;

// Buffers described one by one, those with the most bytes moved first; the rest only
// count in the totals.
constexpr int kBufferSlots = 5;

/// Appends features in order. The same code writes the names once (for loopFeatureNames)
/// and the values on every call, so names and values cannot drift apart.
class FeatureWriter {
public:
  explicit FeatureWriter(std::vector<std::string>* names) : names_(names) {}

  void setPrefix(std::string prefix) { prefix_ = std::move(prefix); }
  /// A count that grows with the problem: log2(1 + x), as Ansor scales them.
  void count(const char* name, double value) { raw(name, std::log2(1 + std::max(0.0, value))); }
  void flag(const char* name, bool value) { raw(name, value ? 1 : 0); }
  /// Ratios, positions and small counts, as they are. Anything not finite becomes 0 and
  /// magnitudes are capped so the float conversion stays finite.
  void raw(const char* name, double value) {
    if (names_) names_->push_back(prefix_ + name);
    if (!std::isfinite(value)) value = 0;
    values_.push_back(static_cast<float>(std::clamp(value, -1e30, 1e30)));
  }
  std::vector<float> take() { return std::move(values_); }

private:
  std::vector<std::string>* names_;
  std::string prefix_;
  std::vector<float> values_;
};

double ratio(double numerator, double denominator) { return denominator > 0 ? numerator / denominator : 0; }

void writeOps(FeatureWriter& out, const OpCounts& ops) {
  out.count("flops", ops.flops());
  out.count("float_add_sub", ops.floatAddSub);
  out.count("float_mul", ops.floatMul);
  out.count("float_div", ops.floatDiv);
  out.count("fma_shaped", ops.fmaShaped);
  out.count("float_min_max", ops.floatMinMax);
  out.count("math_calls", ops.mathCalls);
  out.count("compare_select", ops.compareSelect);
  out.count("int_ops", ops.intOps);
  out.count("int_div_mod", ops.intDivMod);
  out.count("casts", ops.casts);
}

OpCounts totalOps(const StoreGroup& group) {
  OpCounts total;
  total.add(group.ops, group.trips());
  return total;
}

bool hasLoopOfKind(const StoreGroup& group, ForKind kind) {
  return std::any_of(group.loops.begin(), group.loops.end(), [&](const LoopLevel& l) { return l.kind == kind; });
}

void writeFunction(FeatureWriter& out, const LoopNestFacts& facts, const std::vector<GroupMemory>& memories) {
  OpCounts ops;
  double bytes = 0, parallelFlops = 0, vectorFlops = 0, elementsStored = 0;
  // A buffer's footprint is the largest any one group gives it (an accumulator's
  // initialization and update touch the same elements).
  std::vector<std::pair<const BufferNode*, double>> footprints;
  for (size_t g = 0; g < facts.groups.size(); ++g) {
    const StoreGroup& group = facts.groups[g];
    OpCounts groupOps = totalOps(group);
    ops.add(groupOps);
    if (hasLoopOfKind(group, ForKind::Parallel)) parallelFlops += groupOps.flops();
    if (group.lanes > 1) vectorFlops += groupOps.flops();
    elementsStored += group.trips() * group.statements * group.lanes;
    for (const BufferAccessSummary& buffer : memories[g].buffers) {
      bytes += buffer.bytes;
      auto known = std::find_if(footprints.begin(), footprints.end(), [&](auto& f) { return f.first == buffer.buffer; });
      if (known == footprints.end())
        footprints.emplace_back(buffer.buffer, buffer.uniqueBytes);
      else
        known->second = std::max(known->second, buffer.uniqueBytes);
    }
  }
  double uniqueBytes = 0;
  for (const auto& footprint : footprints) uniqueBytes += footprint.second;

  out.setPrefix("func.");
  writeOps(out, ops);
  out.count("bytes_accessed", bytes);
  out.count("unique_bytes", uniqueBytes);
  out.raw("arithmetic_intensity", ratio(ops.flops(), uniqueBytes));
  out.count("store_statements", facts.storeStatements);
  out.count("store_groups", static_cast<double>(facts.groups.size()));
  out.count("loops", facts.loops);
  out.raw("max_depth", facts.maxDepth);
  out.raw("parallel_flops_fraction", ratio(parallelFlops, ops.flops()));
  out.raw("vector_flops_fraction", ratio(vectorFlops, ops.flops()));
  out.count("elements_stored", elementsStored);
}

void writeAllocations(FeatureWriter& out, const LoopNestFacts& facts, const LoopFeatureTarget& target) {
  double total = 0, largest = 0, localBytes = 0;
  int localCount = 0;
  for (const AllocationInfo& allocation : facts.allocations) {
    total += allocation.bytes;
    largest = std::max(largest, allocation.bytes);
    if (allocation.local) {
      ++localCount;
      localBytes += allocation.bytes;
    }
  }
  double registerFile = static_cast<double>(target.vectorBytes) * target.vectorRegisters;
  out.setPrefix("alloc.");
  out.raw("count", static_cast<double>(facts.allocations.size()));
  out.count("bytes", total);
  out.count("max_bytes", largest);
  out.raw("local_count", localCount);
  out.count("local_bytes", localBytes);
  out.raw("local_register_ratio", ratio(localBytes, registerFile));
  out.flag("local_fits_registers", localCount > 0 && localBytes <= registerFile);
}

// The group with the most arithmetic (then the most bytes, then the first): the statement
// whose schedule decides the run time. The others count in the func.* totals.
int mainGroup(const LoopNestFacts& facts, const std::vector<GroupMemory>& memories) {
  int best = -1;
  double bestFlops = -1, bestBytes = -1;
  for (size_t g = 0; g < facts.groups.size(); ++g) {
    double flops = totalOps(facts.groups[g]).flops(), bytes = 0;
    for (const BufferAccessSummary& buffer : memories[g].buffers) bytes += buffer.bytes;
    if (flops > bestFlops || (flops == bestFlops && bytes > bestBytes)) {
      best = static_cast<int>(g);
      bestFlops = flops;
      bestBytes = bytes;
    }
  }
  return best;
}

void writeMainGroup(FeatureWriter& out, const StoreGroup& group, const GroupMemory& memory, bool present,
                    double functionFlops, const LoopFeatureTarget& target) {
  const OpCounts ops = totalOps(group);
  const int depth = static_cast<int>(group.loops.size());
  const LoopLevel* innermost = depth > 0 ? &group.loops.back() : nullptr;
  double vectorizedExtent = group.lanes, unrolledExtent = group.statements, parallelExtent = 1, threadExtent = 1;
  int vectorizedLoops = 0, unrolledLoops = 0, parallelLoops = 0, parallelPosition = 0, threadLoops = 0;
  for (int l = 0; l < depth; ++l) {
    const LoopLevel& loop = group.loops[l];
    switch (loop.kind) {
      // Lowering widens vectorized loops and replicates unrolled ones; loops still marked
      // so are those it could not (or IR from an earlier step).
      case ForKind::Vectorized:
        ++vectorizedLoops;
        vectorizedExtent *= loop.extent;
        break;
      case ForKind::Unrolled:
        ++unrolledLoops;
        unrolledExtent *= loop.extent;
        break;
      case ForKind::Parallel:
        if (parallelLoops++ == 0) parallelPosition = l + 1;
        parallelExtent *= loop.extent;
        break;
      case ForKind::ThreadBinding:
        ++threadLoops;
        threadExtent *= loop.extent;
        break;
      case ForKind::Serial: break;
    }
  }
  const double cores = std::max(1, target.cores);
  const double waves = std::ceil(parallelExtent / cores);
  const int elementBytes = group.accesses.empty() ? 0 : group.accesses.front().elementBytes;

  out.setPrefix("main.");
  writeOps(out, ops);
  out.raw("flops_share", ratio(ops.flops(), functionFlops));
  out.count("statements", group.statements);
  out.count("trip_count", present ? group.trips() : 0);
  out.raw("depth", depth);
  out.count("innermost_extent", innermost ? innermost->extent : 0);
  out.count("outermost_extent", depth > 0 ? group.loops.front().extent : 0);
  out.raw("vector_lanes", present ? group.lanes : 0);
  out.raw("vector_width_fraction", ratio(group.lanes * elementBytes, target.vectorBytes));
  out.flag("innermost_vectorized", group.lanes > 1 || (innermost && innermost->kind == ForKind::Vectorized));
  out.count("vectorized_extent", present ? vectorizedExtent : 0);
  out.raw("vectorized_loops", vectorizedLoops + (group.lanes > 1 ? 1 : 0));
  out.flag("innermost_unrolled", group.statements > 1 || (innermost && innermost->kind == ForKind::Unrolled));
  out.count("unrolled_extent", unrolledExtent);
  out.raw("unrolled_loops", unrolledLoops + (group.statements > 1 ? 1 : 0));
  out.raw("parallel_loops", parallelLoops);
  out.count("parallel_extent", parallelLoops > 0 ? parallelExtent : 0);
  out.raw("parallel_position", parallelPosition);
  out.count("parallel_per_core", parallelLoops > 0 ? parallelExtent / cores : 0);
  out.raw("parallel_utilization", present && waves > 0 ? parallelExtent / (waves * cores) : 0);
  out.raw("thread_bound_loops", threadLoops);
  out.count("thread_bound_extent", threadLoops > 0 ? threadExtent : 0);
  out.flag("guarded", group.guarded);
  out.raw("buffers", static_cast<double>(memory.buffers.size()));
  static const char* const levelNames[GroupMemory::kLevels][2] = {
      {"level0.unique_bytes", "level0.intensity"},
      {"level1.unique_bytes", "level1.intensity"},
      {"level2.unique_bytes", "level2.intensity"},
      {"level3.unique_bytes", "level3.intensity"}};
  double flops = group.ops.flops();  // one execution of the statements
  for (int k = 0; k < GroupMemory::kLevels; ++k) {
    if (k > 0 && k <= depth) flops *= group.loops[depth - k].extent;
    out.count(levelNames[k][0], memory.levelBytes[k]);
    out.raw(levelNames[k][1], ratio(flops, memory.levelBytes[k]));
  }
}

void writeBuffer(FeatureWriter& out, int slot, const BufferAccessSummary* buffer) {
  static const BufferAccessSummary absent;
  const BufferAccessSummary& b = buffer ? *buffer : absent;
  out.setPrefix("buf" + std::to_string(slot) + ".");
  out.flag("is_read", b.read);
  out.flag("is_written", b.written);
  out.flag("is_local", b.local);
  out.count("bytes", b.bytes);
  out.count("unique_bytes", b.uniqueBytes);
  out.count("unique_lines", b.uniqueLines);
  out.count("innermost_unique_bytes", b.innermostUniqueBytes);
  out.count("innermost_stride", b.innermostStride);
  out.count("touching_stride", b.touchingStride);
  out.flag("reuse_loop", b.reuse == ReuseKind::Loop);
  out.flag("reuse_serial", b.reuse == ReuseKind::Serial);
  out.count("reuse_distance_iterations", b.reuseDistanceIterations);
  out.count("reuse_distance_bytes", b.reuseDistanceBytes);
  out.count("reuse_count", b.reuseCount);
  out.count("bytes_per_reuse", b.bytes / std::max(1.0, b.reuseCount));
}

void writeFeatures(FeatureWriter& out, const LoopNestFacts& facts, const LoopFeatureTarget& target) {
  std::vector<GroupMemory> memories;
  memories.reserve(facts.groups.size());
  for (const StoreGroup& group : facts.groups) memories.push_back(summarizeGroupMemory(group));
  writeFunction(out, facts, memories);
  writeAllocations(out, facts, target);

  static const StoreGroup noGroup;
  static const GroupMemory noMemory;
  int main = mainGroup(facts, memories);
  const StoreGroup& group = main >= 0 ? facts.groups[main] : noGroup;
  const GroupMemory& memory = main >= 0 ? memories[main] : noMemory;
  OpCounts functionOps;
  for (const StoreGroup& g : facts.groups) functionOps.add(totalOps(g));
  writeMainGroup(out, group, memory, main >= 0, functionOps.flops(), target);

  // Slots by bytes moved, then footprint, then name; the first access breaks what remains.
  std::vector<const BufferAccessSummary*> buffers;
  for (const BufferAccessSummary& buffer : memory.buffers) buffers.push_back(&buffer);
  std::stable_sort(buffers.begin(), buffers.end(), [](const BufferAccessSummary* a, const BufferAccessSummary* b) {
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    if (a->uniqueBytes != b->uniqueBytes) return a->uniqueBytes > b->uniqueBytes;
    return a->name < b->name;
  });
  for (int slot = 0; slot < kBufferSlots; ++slot)
    writeBuffer(out, slot, slot < static_cast<int>(buffers.size()) ? buffers[slot] : nullptr);
}

}  // namespace

const std::vector<std::string>& loopFeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    FeatureWriter writer(&result);
    writeFeatures(writer, LoopNestFacts{}, LoopFeatureTarget{});
    return result;
  }();
  return names;
}

size_t loopFeatureCount() { return loopFeatureNames().size(); }

std::vector<float> extractLoopFeatures(const PrimFunc& lowered, const LoopFeatureTarget& target) {
  FeatureWriter writer(nullptr);
  writeFeatures(writer, analyzeLoopNest(lowered), target);
  return writer.take();
}

}  // namespace tessel
