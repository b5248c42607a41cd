// The order in which a lowered loop nest produces its output's elements, on a 2-D tile, for
// the Studio's iteration-order animation (Halide's tutorial pictures, for any schedule).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/Stmt.h"
#include "core/support/Error.h"

namespace tessel {

struct IterationOrderOptions {
  /// The dimensions of the output shown as rows and columns of the tile; every other
  /// dimension is fixed at index 0. Both -1 (the default): dimensions 2 and 3 for outputs of
  /// rank 4 or more (the H x W image of NCHW and of blocked NCHW16c), the last two for rank 2
  /// and 3 (a matrix, or a batch of them); a 1-D output is one row. A rowDimension of -1
  /// with a columnDimension shows one row.
  int rowDimension = -1;
  int columnDimension = -1;
  /// The tile shown: at most this many rows and columns, starting at index 0.
  int maxRows = 64;
  int maxColumns = 64;
  /// Threads a parallel loop is split over, the way the runtime splits it (min(threads,
  /// extent) balanced contiguous chunks); 0 or less means the runtime's thread count.
  int threads = 0;
  /// Statements the interpreter may execute before it gives up (and marks the order
  /// truncated); bounds the time spent on big kernels.
  int64_t maxExecutedStatements = 20'000'000;
};

/// One tile element and how it got its final value.
struct ProducedCell {
  int row = 0;
  int column = 0;
  /// When the element got its final value, counting from 0. Lanes of one vector instruction
  /// share a step, and the threads of a parallel loop advance through steps together (each
  /// thread's n-th store is at the loop's first step + n), so one step can produce many cells.
  int64_t step = 0;
  /// The thread (parallel chunk) that produced it: 0 .. threads-1 inside a parallel loop,
  /// -1 outside any.
  int thread = -1;
  /// The iteration of the enclosing parallel loop that produced it, -1 outside any.
  int64_t parallelIteration = -1;
  /// Identifies the vector instruction (a store of a ramp of indices, or one execution of a
  /// loop left vectorized) that produced it, shared by all its lanes; -1 for a scalar store.
  int64_t vectorInstruction = -1;
  /// The lane within that instruction (0 for a scalar store).
  int lane = 0;
};

/// The production order of one output's tile.
struct IterationOrder {
  std::string bufferName;
  std::vector<int64_t> bufferShape;
  int rowDimension = -1;     ///< The output dimension along the tile's rows (-1: one row).
  int columnDimension = -1;  ///< The output dimension along its columns (-1: a scalar output).
  int rows = 0;     ///< The tile's height (1 for a 1-D output).
  int columns = 0;  ///< The tile's width.
  /// Every produced tile element once, ordered by step (then thread, then lane). Elements the
  /// kernel never writes (or that were not reached before truncation) are absent.
  std::vector<ProducedCell> cells;
  int64_t stepCount = 0;  ///< Steps that produced at least one cell: steps are 0 .. stepCount-1.
  int threads = 1;        ///< Threads used by parallel loops (1 when there are none).
  /// The variable and extent of the (first) parallel loop writing the output; empty and 0
  /// when none does. Its iterations are split into `threads` contiguous chunks.
  std::string parallelLoop;
  int64_t parallelLoopExtent = 0;
  int widestVector = 1;   ///< The most lanes one instruction produced in the tile.
  /// The most lanes of one vector store that reached the tile, counting lanes outside it: more
  /// than widestVector when the vectors run along a dimension the tile does not show (the
  /// channel block of NCHW16c), so each cell is one lane.
  int widestVectorInstruction = 1;
  /// The interpreter hit IterationOrderOptions::maxExecutedStatements: later cells are missing.
  bool truncated = false;
  /// Things the user should know about the picture ("the store at C[...] has a data-dependent
  /// index and is not shown"), one sentence each.
  std::vector<std::string> notes;

  /// How many cells have been produced once steps 0 .. step-1 have run (0 for step 0,
  /// cells.size() for stepCount).
  int64_t cellsProducedBefore(int64_t step) const;
};

/// Interprets the loop nest of `func` (constant-extent For loops of every kind, LetStmt,
/// IfThenElse, Allocate, AttrStmt, ...; index expressions evaluated with loop variables bound)
/// and records, for every store to `output` (one of func's parameters) that lands in the tile,
/// which element it writes, at which step, on which thread and in which vector instruction.
/// An element's final write counts (a reduction's init and updates land on its last update);
/// a serial loop whose iterations all write the same elements (a reduction loop) is run for
/// its last iteration only, so a big matmul's K loop costs one iteration. Takes the IR after
/// storage flattening (one flat index) or before it (one index per dimension).
/// A Diagnostic when `output` is not a parameter, its shape is not constant, or the tile
/// dimensions asked for do not exist.
Expected<IterationOrder> iterationOrder(const PrimFunc& func, const Buffer& output,
                                        const IterationOrderOptions& options = {});

/// The same for func's last parameter (the output in Tessel's argument order).
Expected<IterationOrder> iterationOrder(const PrimFunc& func, const IterationOrderOptions& options = {});

}  // namespace tessel
