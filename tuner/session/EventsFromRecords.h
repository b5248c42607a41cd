// A tuning session's event stream rebuilt from its records file alone, for history that has
// no kept stream: sessions from before streams were kept, files merged with `tessel records
// merge`, or a stream deleted by hand. The records hold every trial (its round, origin,
// prediction, timings or error, and time), so the trials, rounds, cost-model quality and
// final confirmations come back as they were; what only the live session knew (the machine's
// peak, the budget, the scheduler's reasons, the search spaces) is left out or marked unknown.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/records/TuningRecord.h"

namespace tessel::tuner {

/// What the model being tuned says of a task, when it is at hand: the records alone know
/// neither how often a kernel runs in the model nor its other kernels.
struct RecordedTaskFacts {
  std::string workloadHash;
  std::string op;
  std::vector<std::string> kernels;
  int weight = 1;
  double flops = 0;
  double bytes = 0;
};

struct EventsFromRecordsOptions {
  std::string recordsPath;  ///< session_start's "records".
  std::string source;       ///< session_start's "source" (the model); the records path when empty.
  /// Facts by workload hash; a task without facts counts once and its op is read from its
  /// workload key.
  std::vector<RecordedTaskFacts> facts;
};

/// The events of the session (or sessions, in file order) `records` came from, each valid by
/// eventSchemas(): session_start, a warning saying what could not be rebuilt, every record as
/// a trial, a round event after each round's trials (rounds numbered afresh from 1, so a file
/// of several sessions reads as one), a confirm event per confirmed task, and session_end
/// with reason "records". `t` is seconds since the first record's time.
std::vector<nlohmann::json> eventsFromRecords(const std::vector<TuningRecord>& records,
                                              const EventsFromRecordsOptions& options);

/// The op summary of a workload key: "fused(Conv+Clip)" for a fused kernel, "Conv" for one
/// operator (attributes and shapes left out).
std::string opSummaryOfWorkloadKey(const std::string& workloadKey);

}  // namespace tessel::tuner
