// Completion candidates at a cursor in schedule text, from the call and argument it is in.
#include "views/schedule/ScheduleCompletion.h"

namespace tessel::views {

namespace {

bool isNameCharacter(QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char('.'); }

QStringList stageNames(const std::vector<driver::StageLoops>& stages, bool withPlaceholders) {
  QStringList names;
  for (auto& stage : stages)
    if (withPlaceholders || !stage.placeholder) names << QString::fromStdString(stage.stage);
  return names;
}

QStringList loopsOf(const std::vector<driver::StageLoops>& stages, const QString& stage) {
  QStringList loops;
  for (auto& s : stages)
    if (QString::fromStdString(s.stage) == stage)
      for (auto& loop : s.loops) loops << QString::fromStdString(loop);
  return loops;
}

/// The arguments written so far inside the call's parentheses, split at top-level commas; the
/// last one is the argument the cursor is in. `inList` says whether the cursor is inside [..].
QStringList splitArguments(const QString& inside, bool* inList) {
  QStringList arguments{QString()};
  int depth = 0;
  for (QChar c : inside) {
    if (c == QLatin1Char('[')) ++depth;
    if (c == QLatin1Char(']')) --depth;
    if (c == QLatin1Char(',') && depth == 0) {
      arguments << QString();
      continue;
    }
    arguments.last() += c;
  }
  *inList = depth > 0;
  for (auto& argument : arguments) argument = argument.trimmed();
  return arguments;
}

/// Candidates for argument `index` of primitive `callee`, whose earlier arguments are `arguments`.
QStringList argumentCandidates(const QString& callee, int index, const QStringList& arguments,
                               const std::vector<driver::StageLoops>& stages) {
  const QString stage = arguments.value(0);
  if (callee == QLatin1String("cache_read")) {
    if (index == 0) return stageNames(stages, true);
    if (index == 1) return {"local", "shared", "global"};
    return {};
  }
  if (index == 0) return stageNames(stages, false);
  if (callee == QLatin1String("compute_at")) {
    if (index == 1) return stageNames(stages, false);
    if (index == 2) return loopsOf(stages, arguments.value(1));
    return {};
  }
  if (callee == QLatin1String("cache_write")) return index == 1 ? QStringList{"local", "shared", "global"} : QStringList{};
  if (callee == QLatin1String("compute_inline") || callee == QLatin1String("compute_root")) return {};
  if (callee == QLatin1String("rfactor")) return index == 1 ? loopsOf(stages, stage) : QStringList{};
  if (callee == QLatin1String("split")) {
    if (index == 1) return loopsOf(stages, stage);
    if (index == 2) return {"factor=", "nparts="};
    return {};
  }
  if (callee == QLatin1String("tile")) return index <= 2 ? loopsOf(stages, stage) : QStringList{};
  if (callee == QLatin1String("fuse") || callee == QLatin1String("reorder")) {
    // Each loop once: the ones already listed are not offered again.
    QStringList loops = loopsOf(stages, stage);
    for (int i = 1; i < index; ++i) loops.removeAll(arguments.value(i));
    return loops;
  }
  if (callee == QLatin1String("bind")) {
    if (index == 1) return loopsOf(stages, stage);
    if (index == 2) return {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    return {};
  }
  if (callee == QLatin1String("pragma")) {
    if (index == 1) return loopsOf(stages, stage);
    if (index == 2) return {"auto_unroll_max_step", "unroll_explicit"};
    return {};
  }
  // vectorize, unroll, parallel, storage_align: one loop.
  return index == 1 ? loopsOf(stages, stage) : QStringList{};
}

}  // namespace

QStringList primitiveNames() {
  QStringList names;
#define TESSEL_PRIMITIVE_TEXT(Name, text) names << QStringLiteral(text);
  TESSEL_SCHEDULE_PRIMITIVES(TESSEL_PRIMITIVE_TEXT)
#undef TESSEL_PRIMITIVE_TEXT
  return names;
}

const std::vector<driver::StageLoops>& stagesBeforeLine(const driver::TaskLowering& lowering, int line) {
  const std::vector<driver::StageLoops>* stages = &lowering.initialStages;
  const auto& primitives = lowering.trace.primitives;
  for (size_t i = 0; i < primitives.size() && i < lowering.stagesAfter.size(); ++i)
    if (primitives[i].location.line < line) stages = &lowering.stagesAfter[i];
  return *stages;
}

CompletionContext completionsAt(const QString& lineText, int column, const std::vector<driver::StageLoops>& stages) {
  CompletionContext context;
  QString before = lineText.left(column);
  if (before.contains(QLatin1Char('#'))) return context;
  int start = before.size();
  while (start > 0 && isNameCharacter(before[start - 1])) --start;
  context.prefix = before.mid(start);
  if (!context.prefix.isEmpty() && context.prefix[0].isDigit()) return context;  // a number
  before.truncate(start);

  int open = before.lastIndexOf(QLatin1Char('('));
  if (open < 0) {
    // A primitive starts the line or follows "results =".
    QString written = before.trimmed();
    if (written.isEmpty() || written.endsWith(QLatin1Char('='))) context.candidates = primitiveNames();
    return context;
  }
  if (before.indexOf(QLatin1Char(')'), open) >= 0) return context;
  int calleeEnd = open;
  while (calleeEnd > 0 && before[calleeEnd - 1].isSpace()) --calleeEnd;
  int calleeStart = calleeEnd;
  while (calleeStart > 0 && isNameCharacter(before[calleeStart - 1])) --calleeStart;
  QString callee = before.mid(calleeStart, calleeEnd - calleeStart);
  bool inList = false;
  QStringList arguments = splitArguments(before.mid(open + 1), &inList);
  if (arguments.last().contains(QLatin1Char('='))) return context;  // factor=..., a number follows
  if (inList) {
    context.candidates = stageNames(stages, false);  // cache_read's readers
    return context;
  }
  context.candidates = argumentCandidates(callee, int(arguments.size()) - 1, arguments, stages);
  return context;
}

}  // namespace tessel::views
