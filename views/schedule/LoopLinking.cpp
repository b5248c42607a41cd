// Links between schedule lines, loop-nest loops and generated code, found by loop names.
#include "views/schedule/LoopLinking.h"

#include <QRegularExpression>

#include <algorithm>

namespace tessel::views {

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

/// The schedule name a printed loop variable spells: the printer appends "_<n>" to the second
/// and later variables of one name.
QString scheduleNameOf(const QString& printed, const QSet<QString>& loopNames) {
  if (loopNames.contains(printed)) return printed;
  static const QRegularExpression suffix(QStringLiteral("_\\d+$"));
  QString base = printed;
  base.remove(suffix);
  return base;
}

/// The lines from `first` up to (not including) the next line matching `end`, or the text's end.
LineRange blockFrom(const QStringList& lines, int first, const QRegularExpression& end) {
  int last = first;
  while (last + 1 < lines.size() && !end.match(lines[last + 1]).hasMatch()) ++last;
  return {first, last};
}

// A block's label line in verbose assembly: ".LBB2_3:  # %jj.body.i" for a branch target,
// "# %bb.5:  # %ii.header.preheader.i" for a fall-through block; captures the IR block name.
const QRegularExpression& assemblyBlockLabel() {
  static const QRegularExpression label(QStringLiteral("^(?:\\.LBB\\w+:|# %bb\\.\\d+:)\\s*# %([\\w.$-]+)"));
  return label;
}

// Where an assembly block ends: the next block, function label or function end.
const QRegularExpression& assemblyBlockEnd() {
  static const QRegularExpression end(QStringLiteral("^(?:\\.LBB\\w+:|# %bb\\.\\d+:|[A-Za-z_][\\w$]*:|\\.Lfunc_end)"));
  return end;
}

}  // namespace

LoopLinking::LoopLinking(const Trace& trace, const QString& loopNest, const QSet<QString>& loopNames,
                         const QString& functionName)
    : function_(functionName) {
  for (const Primitive& p : trace.primitives) {
    int line = p.location.line;
    QStringList& touched = touched_[line];
    auto created = [&](const std::string& loop) {
      origin_[qs(loop)] = line;
      touched << qs(loop);
    };
    switch (p.kind) {
      case PrimitiveKind::Split:
      case PrimitiveKind::Tile:
      case PrimitiveKind::Fuse:
        for (auto& result : p.results) created(result);
        // split: parent -> outer, inner; tile: x -> xo, xi and y -> yo, yi; fuse: each -> fused.
        if (p.kind == PrimitiveKind::Split && p.axes.size() == 1)
          derived_[qs(p.axes[0])] << qs(p.results[0]) << qs(p.results[1]);
        else if (p.kind == PrimitiveKind::Tile && p.axes.size() == 2 && p.results.size() == 4) {
          derived_[qs(p.axes[0])] << qs(p.results[0]) << qs(p.results[2]);
          derived_[qs(p.axes[1])] << qs(p.results[1]) << qs(p.results[3]);
        } else if (p.kind == PrimitiveKind::Fuse && !p.results.empty()) {
          for (auto& axis : p.axes) derived_[qs(axis)] << qs(p.results[0]);
        }
        break;
      case PrimitiveKind::Vectorize:
      case PrimitiveKind::Unroll:
      case PrimitiveKind::Parallel:
      case PrimitiveKind::Pragma:
      case PrimitiveKind::Bind:
      case PrimitiveKind::Tensorize:
      case PrimitiveKind::Reorder:
        for (auto& axis : p.axes) touched << qs(axis);
        break;
      default: break;
    }
  }

  // The loop nest: "for" lines open a loop, a line starting with '}' closes the innermost
  // open brace; "} else {" closes one and opens another.
  static const QRegularExpression forLine(QStringLiteral("^\\s*(?:(\\w+) )?for \\(([^,]+),"));
  QStringList lines = loopNest.split(QLatin1Char('\n'));
  QList<int> open;  // per open brace: its loop's index in printed_, or -1 for another block
  int parallelCount = 0;
  for (int i = 0; i < lines.size(); ++i) {
    QString trimmed = lines[i].trimmed();
    if (trimmed.startsWith(QLatin1Char('}')) && !open.isEmpty()) {
      int closing = open.takeLast();
      if (closing >= 0) printed_[closing].lines.last = i;
    }
    if (!trimmed.endsWith(QLatin1Char('{'))) continue;
    auto match = forLine.match(lines[i]);
    if (!match.hasMatch()) {
      open.append(-1);
      continue;
    }
    PrintedLoop loop;
    loop.printedName = match.captured(2).trimmed();
    loop.name = scheduleNameOf(loop.printedName, loopNames);
    loop.lines = {i, i};
    if (match.captured(1) == QLatin1String("parallel")) loop.parallelIndex = parallelCount++;
    printed_.append(loop);
    open.append(int(printed_.size()) - 1);
  }
}

QStringList LoopLinking::loopsOfLine(int line) const {
  QStringList loops;
  QStringList pending = touched_.value(line);
  while (!pending.isEmpty()) {
    QString loop = pending.takeFirst();
    if (loops.contains(loop)) continue;
    loops << loop;
    pending << derived_.value(loop);
  }
  return loops;
}

const PrintedLoop* LoopLinking::loopAtLine(int line) const {
  const PrintedLoop* innermost = nullptr;
  for (const PrintedLoop& loop : printed_)
    if (loop.lines.first <= line && line <= loop.lines.last &&
        (!innermost || loop.lines.first >= innermost->lines.first))
      innermost = &loop;
  return innermost;
}

QList<LineRange> LoopLinking::loopNestRanges(const QStringList& loops) const {
  QList<LineRange> ranges;
  for (const PrintedLoop& loop : printed_)
    if (loops.contains(loop.name)) ranges << loop.lines;
  return ranges;
}

QList<int> LoopLinking::parallelIndicesOf(const QStringList& loops) const {
  QList<int> indices;
  for (const PrintedLoop& loop : printed_)
    if (loop.parallelIndex >= 0 && loops.contains(loop.name)) indices << loop.parallelIndex;
  return indices;
}

QList<LineRange> LoopLinking::llvmRanges(const QString& llvmIR, const QStringList& loops) const {
  QList<LineRange> ranges;
  if (loops.isEmpty()) return ranges;
  QStringList lines = llvmIR.split(QLatin1Char('\n'));
  QStringList escaped;
  for (auto& loop : loops) escaped << QRegularExpression::escape(loop);
  QRegularExpression blockLabel(QStringLiteral("^(?:%1)\\.(?:header|body|exit)[\\w.]*:").arg(escaped.join('|')));
  static const QRegularExpression anyLabel(QStringLiteral("^[\\w.$-]+:|^}"));
  static const QRegularExpression functionEnd(QStringLiteral("^}"));
  QStringList parallelNames;
  for (int k : parallelIndicesOf(loops))
    parallelNames << QRegularExpression::escape(function_ + QStringLiteral("_parallel_%1").arg(k));
  QRegularExpression parallelDefine(
      QStringLiteral("^define .*@(?:%1)(?:_compute)?\\(").arg(parallelNames.isEmpty() ? QStringLiteral("$^")
                                                                                        : parallelNames.join('|')));
  for (int i = 0; i < lines.size(); ++i) {
    if (blockLabel.match(lines[i]).hasMatch()) ranges << blockFrom(lines, i, anyLabel);
    else if (!parallelNames.isEmpty() && parallelDefine.match(lines[i]).hasMatch())
      ranges << blockFrom(lines, i, functionEnd);
  }
  return ranges;
}

QList<LineRange> LoopLinking::assemblyRanges(const QString& assembly, const QStringList& loops) const {
  QList<LineRange> ranges;
  if (loops.isEmpty()) return ranges;
  QStringList escaped;
  for (auto& loop : loops) escaped << QRegularExpression::escape(loop);
  // Serial loops: the blocks whose IR names are the loop's (see llvmRanges).
  QRegularExpression loopBlock(QStringLiteral("^(?:%1)\\.(?:header|body|exit)").arg(escaped.join('|')));
  QStringList parallelNames;
  for (int k : parallelIndicesOf(loops))
    parallelNames << QRegularExpression::escape(function_ + QStringLiteral("_parallel_%1").arg(k));
  QRegularExpression label(QStringLiteral("^(?:%1)(?:_compute)?:").arg(parallelNames.isEmpty() ? QStringLiteral("$^")
                                                                                                  : parallelNames.join('|')));
  static const QRegularExpression functionEnd(QStringLiteral("^\\.Lfunc_end"));
  QStringList lines = assembly.split(QLatin1Char('\n'));
  for (int i = 0; i < lines.size(); ++i) {
    if (!parallelNames.isEmpty() && label.match(lines[i]).hasMatch()) {
      ranges << blockFrom(lines, i, functionEnd);
      continue;
    }
    auto block = assemblyBlockLabel().match(lines[i]);
    if (block.hasMatch() && loopBlock.match(block.captured(1)).hasMatch()) ranges << blockFrom(lines, i, assemblyBlockEnd());
  }
  return ranges;
}

QString LoopLinking::loopOfLlvmLine(const QStringList& llvmLines, int line) const {
  static const QRegularExpression label(QStringLiteral("^([\\w.$-]+):"));
  static const QRegularExpression loopBlock(QStringLiteral("^(.+?)\\.(?:header|body|exit)"));
  static const QRegularExpression define(QStringLiteral("^define .*@([\\w.$-]+)\\("));
  QRegularExpression parallelFunction(QStringLiteral("^%1_parallel_(\\d+)").arg(QRegularExpression::escape(function_)));
  bool sawLabel = false;
  for (int i = std::min(line, int(llvmLines.size()) - 1); i >= 0; --i) {
    const QString& text = llvmLines[i];
    if (text.startsWith(QLatin1Char('}'))) return {};  // between functions
    if (!sawLabel) {
      auto labelMatch = label.match(text);
      if (labelMatch.hasMatch()) {
        sawLabel = true;
        auto block = loopBlock.match(labelMatch.captured(1));
        if (block.hasMatch()) {
          QString name = block.captured(1);
          for (const PrintedLoop& loop : printed_)
            if (loop.name == name) return name;
        }
        // Another block (entry, then/else): the enclosing function may still be a loop's.
      }
    }
    auto defineMatch = define.match(text);
    if (defineMatch.hasMatch()) {
      auto parallel = parallelFunction.match(defineMatch.captured(1));
      if (!parallel.hasMatch()) return {};
      int index = parallel.captured(1).toInt();
      for (const PrintedLoop& loop : printed_)
        if (loop.parallelIndex == index) return loop.name;
      return {};
    }
  }
  return {};
}

QString LoopLinking::loopOfAssemblyLine(const QStringList& assemblyLines, int line) const {
  QRegularExpression parallelLabel(
      QStringLiteral("^%1_parallel_(\\d+)(?:_compute)?:").arg(QRegularExpression::escape(function_)));
  static const QRegularExpression functionStart(QStringLiteral("^[A-Za-z_][\\w$]*:"));
  static const QRegularExpression loopBlock(QStringLiteral("^(.+?)\\.(?:header|body|exit)"));
  bool sawBlock = false;
  for (int i = std::min(line, int(assemblyLines.size()) - 1); i >= 0; --i) {
    const QString& text = assemblyLines[i];
    if (text.startsWith(QLatin1String(".Lfunc_end"))) return {};
    if (!sawBlock) {
      // The enclosing block, named after its IR block: a serial loop's block names the loop.
      auto block = assemblyBlockLabel().match(text);
      if (block.hasMatch()) {
        sawBlock = true;
        auto loop = loopBlock.match(block.captured(1));
        if (loop.hasMatch())
          for (const PrintedLoop& printed : printed_)
            if (printed.name == loop.captured(1)) return printed.name;
      }
    }
    auto parallel = parallelLabel.match(text);
    if (parallel.hasMatch()) {
      int index = parallel.captured(1).toInt();
      for (const PrintedLoop& loop : printed_)
        if (loop.parallelIndex == index) return loop.name;
      return {};
    }
    if (functionStart.match(text).hasMatch()) return {};  // another function's entry
  }
  return {};
}

}  // namespace tessel::views
