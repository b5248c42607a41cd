// Footprints, strides and reuse of a store group's accesses, from their linear index forms.
#include "tuner/features/AccessFootprint.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace tessel::features {

namespace {

// Offset sets larger than this are not factored into a grid (see gridTerms).
constexpr size_t kMaxGridOffsets = 4096;
constexpr double kTolerance = 1e-9;

/// A regular dimension of an access: `count` positions `step` elements apart. An unknown
/// step (a non-linear index) is taken to land somewhere new every time.
struct Term {
  double step = 0;
  double count = 1;
  bool unknown = false;
};

/// A set of cells (elements or cache lines): how many, and the distance from the first
/// to the end of the last, both in cells.
struct CellSet {
  double count = 1;
  double span = 1;
};

// The size of {sum of j_t * step_t} for 0 <= j_t < count_t, starting from `set`. Steps are
// taken smallest first: a step at least as long as the set so far lays copies side by side
// (count multiplies); a shorter one overlaps them, filling the grown span as densely as the
// set was. Exact for tiles, windows and strided rows; an estimate for rarer mixes.
CellSet grow(CellSet set, std::vector<Term> terms) {
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) {
    if (a.unknown != b.unknown) return !a.unknown;
    return a.step != b.step ? a.step < b.step : a.count < b.count;
  });
  for (const Term& term : terms) {
    if (term.count <= 1) continue;
    if (term.unknown) {
      set.count *= term.count;
      set.span *= term.count;
    } else if (term.step >= set.span) {
      set.count *= term.count;
      set.span += term.step * (term.count - 1);
    } else {
      double span = set.span + term.step * (term.count - 1);
      set.count = std::min(set.count * term.count, set.count / set.span * span);
      set.span = span;
    }
  }
  return set;
}

bool containsOffset(const std::vector<double>& sorted, double value) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), value - kTolerance);
  return it != sorted.end() && std::abs(*it - value) <= kTolerance;
}

// The constant offsets of unrolled copies of an access ({0, 1, 2, 3, K, K+1, ...} for four
// unrolled k steps of several unrolled rows) factored back into the unrolled loops' terms
// ((1, 4), (K, rows)), so the footprint composes with the loops around them. Offsets that
// are not such a grid become one evenly spread term.
std::vector<Term> gridTerms(std::vector<double> offsets) {
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end(),
                            [](double a, double b) { return std::abs(a - b) <= kTolerance; }),
                offsets.end());
  if (offsets.size() <= 1) return {};
  double first = offsets.front();
  for (double& offset : offsets) offset -= first;
  std::vector<Term> terms;
  if (offsets.size() <= kMaxGridOffsets) {
    std::vector<double> generated = {0};
    while (generated.size() < offsets.size()) {
      // The smallest offset not generated yet starts the next dimension.
      double step = -1;
      for (double offset : offsets)
        if (!containsOffset(generated, offset)) {
          step = offset;
          break;
        }
      if (step <= 0) break;
      size_t count = 1;
      auto allPresent = [&](size_t j) {
        for (double base : generated)
          if (!containsOffset(offsets, base + step * static_cast<double>(j))) return false;
        return true;
      };
      while (generated.size() * (count + 1) <= offsets.size() && allPresent(count)) ++count;
      if (count < 2) break;
      std::vector<double> next;
      next.reserve(generated.size() * count);
      for (size_t j = 0; j < count; ++j)
        for (double base : generated) next.push_back(base + step * static_cast<double>(j));
      std::sort(next.begin(), next.end());
      generated = std::move(next);
      terms.push_back({step, static_cast<double>(count)});
    }
    if (generated.size() == offsets.size()) return terms;
  }
  double count = static_cast<double>(offsets.size());
  return {{offsets.back() / (count - 1), count}};
}

/// Accesses of one buffer with the same index form up to a constant: one statement's
/// access, replicated by unrolling.
struct AccessClass {
  const Access* first = nullptr;
  std::vector<double> offsets;
  std::vector<Term> grid;  ///< From the offsets, once all are known.
};

struct BufferUse {
  BufferAccessSummary summary;
  std::vector<AccessClass> classes;
  double accessesPerExecution = 0;  ///< Elements loaded or stored by one execution.
  double capacity = std::numeric_limits<double>::infinity();  ///< Elements, when the shape is constant.
};

bool sameForm(const Access& a, const Access& b) {
  return a.coefficients == b.coefficients && a.unknown == b.unknown && a.laneStride == b.laneStride &&
         a.lanes == b.lanes;
}

// The terms of one class over the innermost `levels` loops (all: levels >= depth), with
// the vector lanes and unrolled copies. `scale` converts element steps to another unit.
std::vector<Term> classTerms(const AccessClass& c, const std::vector<LoopLevel>& loops, int levels, double scale) {
  std::vector<Term> terms;
  for (const Term& term : c.grid) terms.push_back({term.step * scale, term.count});
  if (c.first->lanes > 1 && c.first->laneStride != 0)
    terms.push_back({std::abs(c.first->laneStride) * scale, static_cast<double>(c.first->lanes)});
  int depth = static_cast<int>(loops.size());
  for (int l = std::max(0, depth - levels); l < depth; ++l) {
    if (c.first->unknown[l])
      terms.push_back({0, loops[l].extent, true});
    else if (c.first->coefficients[l] != 0)
      terms.push_back({std::abs(c.first->coefficients[l]) * scale, loops[l].extent});
  }
  return terms;
}

double uniqueElements(const BufferUse& use, const std::vector<LoopLevel>& loops, int levels) {
  double total = 0;
  for (const AccessClass& c : use.classes) total += grow({}, classTerms(c, loops, levels, 1)).count;
  return std::min(total, use.capacity);
}

// Lines: sub-line steps first in bytes, where only the span matters (a partly used line is
// still fetched), then the longer steps in whole lines.
double uniqueLines(const BufferUse& use, const std::vector<LoopLevel>& loops, int levels) {
  double total = 0;
  for (const AccessClass& c : use.classes) {
    std::vector<Term> terms = classTerms(c, loops, levels, use.summary.elementBytes);
    std::vector<Term> longSteps;
    CellSet bytes{double(use.summary.elementBytes), double(use.summary.elementBytes)};
    std::vector<Term> shortSteps;
    for (const Term& t : terms) (t.unknown || t.step >= kCacheLineBytes ? longSteps : shortSteps).push_back(t);
    bytes = grow(bytes, shortSteps);
    double lines = std::ceil(bytes.span / kCacheLineBytes - kTolerance);
    for (Term& t : longSteps) t.step /= kCacheLineBytes;
    total += grow({lines, lines}, longSteps).count;
  }
  return std::min(total, std::ceil(use.capacity * use.summary.elementBytes / kCacheLineBytes));
}

double firstNonZero(std::initializer_list<double> values) {
  for (double v : values)
    if (v != 0) return std::abs(v);
  return 0;
}

void computeStrides(const StoreGroup& group, BufferUse& use) {
  const Access& a = *use.classes.front().first;
  int depth = static_cast<int>(group.loops.size());
  double lineStride = kCacheLineBytes / use.summary.elementBytes;
  auto loopStride = [&](int l) { return a.unknown[l] ? lineStride : std::abs(a.coefficients[l]); };
  if (group.lanes > 1)
    use.summary.innermostStride = a.lanes > 1 ? std::abs(a.laneStride) : 0;
  else if (depth > 0)
    use.summary.innermostStride = loopStride(depth - 1);
  double touching = firstNonZero({a.lanes > 1 ? a.laneStride : 0,
                                  use.classes.front().grid.empty() ? 0 : use.classes.front().grid.front().step});
  for (int l = depth - 1; l >= 0 && touching == 0; --l) touching = loopStride(l);
  use.summary.touchingStride = touching;
}

}  // namespace

GroupMemory summarizeGroupMemory(const StoreGroup& group) {
  std::vector<BufferUse> uses;
  for (const Access& access : group.accesses) {
    auto use = std::find_if(uses.begin(), uses.end(), [&](const BufferUse& u) { return u.summary.buffer == access.buffer; });
    if (use == uses.end()) {
      use = uses.emplace(uses.end());
      use->summary.buffer = access.buffer;
      use->summary.name = access.buffer->name;
      use->summary.local = access.buffer->scope != "global";
      use->summary.elementBytes = access.elementBytes;
      double elements = 1;
      for (const Expr& extent : access.buffer->shape) {
        const int64_t* value = asConstInt(extent);
        elements = value ? elements * static_cast<double>(*value) : std::numeric_limits<double>::infinity();
      }
      use->capacity = elements;
    }
    (access.isWrite ? use->summary.written : use->summary.read) = true;
    use->accessesPerExecution += access.lanes;
    auto c = std::find_if(use->classes.begin(), use->classes.end(),
                          [&](const AccessClass& k) { return sameForm(*k.first, access); });
    if (c == use->classes.end()) c = use->classes.insert(use->classes.end(), AccessClass{&access, {}, {}});
    c->offsets.push_back(access.offset);
  }
  for (BufferUse& use : uses)
    for (AccessClass& c : use.classes) c.grid = gridTerms(std::move(c.offsets));

  const int depth = static_cast<int>(group.loops.size());
  const double trips = group.trips();
  // Distinct bytes of all buffers over the innermost k loops, computed once per k.
  std::vector<double> levelBytes(depth + 1, -1);
  auto bytesAtLevel = [&](int k) {
    if (levelBytes[k] < 0) {
      levelBytes[k] = 0;
      for (const BufferUse& use : uses) levelBytes[k] += uniqueElements(use, group.loops, k) * use.summary.elementBytes;
    }
    return levelBytes[k];
  };

  GroupMemory memory;
  for (int k = 0; k < GroupMemory::kLevels; ++k) memory.levelBytes[k] = bytesAtLevel(std::min(k, depth));
  for (BufferUse& use : uses) {
    BufferAccessSummary& s = use.summary;
    s.bytes = use.accessesPerExecution * s.elementBytes * trips;
    s.uniqueBytes = uniqueElements(use, group.loops, depth) * s.elementBytes;
    s.uniqueLines = uniqueLines(use, group.loops, depth);
    s.innermostUniqueBytes = uniqueElements(use, group.loops, std::min(1, depth)) * s.elementBytes;
    computeStrides(group, use);
    // Loop reuse: the innermost loop (of more than one iteration) that no access of the
    // buffer depends on; each element then serves all its iterations.
    for (int l = depth - 1; l >= 0; --l) {
      if (group.loops[l].extent <= 1) continue;
      bool invariant = std::all_of(use.classes.begin(), use.classes.end(), [&](const AccessClass& c) {
        return c.first->coefficients[l] == 0 && !c.first->unknown[l];
      });
      if (!invariant) continue;
      s.reuse = ReuseKind::Loop;
      s.reuseCount = group.loops[l].extent;
      s.reuseDistanceIterations = 1;
      for (int inner = l + 1; inner < depth; ++inner) s.reuseDistanceIterations *= group.loops[inner].extent;
      s.reuseDistanceBytes = bytesAtLevel(depth - 1 - l);
      s.reuseLevel = l;
      break;
    }
    // Serial reuse: one execution touches some elements more than once (c = c + ...).
    if (s.reuse == ReuseKind::None) {
      double unique = uniqueElements(use, group.loops, 0);
      if (use.accessesPerExecution > unique + kTolerance) {
        s.reuse = ReuseKind::Serial;
        s.reuseCount = use.accessesPerExecution / unique;
        s.reuseDistanceIterations = 1;
        s.reuseDistanceBytes = bytesAtLevel(0);
      }
    }
    memory.buffers.push_back(std::move(s));
  }
  return memory;
}

}  // namespace tessel::features
