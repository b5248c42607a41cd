// What the schedule editor offers to complete at the cursor: primitive names, stage names, the
// stage's loops as they are at that line, scopes, thread tags, keywords.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

#include "compiler/driver/ScheduleTask.h"

namespace tessel::views {

struct CompletionContext {
  QString prefix;          ///< The partial word before the cursor (what completion replaces).
  QStringList candidates;  ///< Everything valid here, in a useful order (loops outermost first).
};

/// The stages and loops a primitive on `line` (1-based) sees: after every primitive of an
/// earlier line of the last successful lowering, so names created by earlier lines count.
const std::vector<driver::StageLoops>& stagesBeforeLine(const driver::TaskLowering& lowering, int line);

/// Completions for the cursor at `column` (0-based, in characters) of `lineText`, given the
/// stages the line sees. Empty candidates inside a comment or a number, or where a name is
/// being made up (the results before '=').
CompletionContext completionsAt(const QString& lineText, int column, const std::vector<driver::StageLoops>& stages);

/// Every primitive name, in the order the trace text documents them.
QStringList primitiveNames();

}  // namespace tessel::views
