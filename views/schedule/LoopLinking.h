// Compiler Explorer-style links between schedule lines, the loops of the lowered loop nest, and
// the LLVM IR / assembly blocks generated for them.
//
// What matches, and how:
// - Schedule line -> loops: the loops a line creates (split/tile/fuse results, and everything
//   later derived from them), or annotates (vectorize/unroll/parallel/pragma/bind/reorder).
//   The stage's original axes come from the operator, not from a line: they link to no line.
// - Loop nest: loops are matched by name. The IR printer gives two different variables of one
//   name distinct spellings ("jo", "jo_1"), so a printed name links to the trace name it
//   spells; a name used by two stages (both have "jo") links to both stages' loops.
// - LLVM IR: the backend names each serial loop's blocks "<var>.header", "<var>.body" and
//   "<var>.exit" (LLVM may add suffixes: "ii.body2.i"); those blocks are highlighted. Each
//   parallel loop is outlined into "<function>_parallel_<k>" (k counts parallel loops in
//   loop-nest order), whose definition is highlighted. Pointing into the LLVM IR links back:
//   the enclosing loop block names the loop, else the outlined function it is in.
// - Assembly (verbose, as emitAssembly writes it): every block's label carries its IR block's
//   name ("# %ii.body.i"), so serial loops match as in the LLVM IR, and parallel loops through
//   their outlined "<function>_parallel_<k>" functions (both ways).
// - Not matched: loops that the optimizer fully unrolled or vectorized away have no blocks
//   left; a loop that lowering removed (extent 1) has no line in the loop nest.
#pragma once

#include <QList>
#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

#include "compiler/schedule/Primitive.h"

namespace tessel::views {

/// Lines [first, last] of a text, 0-based.
struct LineRange {
  int first = 0;
  int last = 0;
  bool operator==(const LineRange& other) const { return first == other.first && last == other.last; }
};

/// One loop of the printed loop nest.
struct PrintedLoop {
  QString printedName;  ///< As printed ("jo_1").
  QString name;         ///< The schedule's name for it ("jo").
  LineRange lines;      ///< The "for" line through its closing brace.
  int parallelIndex = -1;  ///< k for the k-th parallel loop (its outlined function), else -1.
};

class LoopLinking {
public:
  LoopLinking() = default;
  /// `loopNames`: every loop name the schedule's stages have (to tell a printer suffix from
  /// a name that ends in digits). `functionName`: the lowered function's name.
  LoopLinking(const Trace& trace, const QString& loopNest, const QSet<QString>& loopNames, const QString& functionName);

  /// The 1-based schedule line that created `loop` (by its schedule name), or 0 for an axis
  /// the operator defines.
  int originLine(const QString& loop) const { return origin_.value(loop, 0); }
  /// The schedule names of the loops `line` (1-based) created or annotated, with the loops
  /// later derived from them.
  QStringList loopsOfLine(int line) const;

  const QList<PrintedLoop>& printedLoops() const { return printed_; }
  /// The innermost loop of the loop nest containing `line` (0-based), or null.
  const PrintedLoop* loopAtLine(int line) const;
  /// Loop nest ranges of the loops named `loops` (schedule names).
  QList<LineRange> loopNestRanges(const QStringList& loops) const;
  /// The LLVM IR lines generated for `loops`: their serial blocks, and the outlined function
  /// of each of them that is a parallel loop.
  QList<LineRange> llvmRanges(const QString& llvmIR, const QStringList& loops) const;
  /// The assembly lines generated for `loops`: the blocks named after their serial loops'
  /// IR blocks, and the outlined function of each of them that is a parallel loop.
  QList<LineRange> assemblyRanges(const QString& assembly, const QStringList& loops) const;
  /// The loop whose code line `line` (0-based) of `llvmIR` is: the loop of the enclosing
  /// serial-loop block, else the parallel loop whose outlined function it is in; empty if none.
  QString loopOfLlvmLine(const QStringList& llvmLines, int line) const;
  /// The loop whose code line `line` (0-based) of the assembly is: the serial loop of the
  /// enclosing block, else the parallel loop whose outlined function it is in; empty if none.
  QString loopOfAssemblyLine(const QStringList& assemblyLines, int line) const;

private:
  QList<int> parallelIndicesOf(const QStringList& loops) const;

  QString function_;
  QMap<QString, int> origin_;                  // loop -> creating line
  QMap<int, QStringList> touched_;             // line -> loops created or annotated there
  QMap<QString, QStringList> derived_;         // loop -> loops split/fused from it
  QList<PrintedLoop> printed_;
};

}  // namespace tessel::views
