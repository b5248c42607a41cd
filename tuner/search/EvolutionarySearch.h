// Choosing which candidates to measure next: an evolutionary search over a space, guided by a
// score (the cost model's prediction), with some random points for exploration and never a
// point measured before.
#pragma once

#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tuner/space/SearchSpace.h"

namespace tessel::tuner {

struct SearchOptions {
  int batchSize = 16;       ///< Candidates proposed per round.
  int population = 128;     ///< Points kept per generation.
  int generations = 4;      ///< Rounds of mutation and crossover before choosing.
  double epsilon = 0.15;    ///< Fraction of each batch chosen at random (exploration).
  double mutationShare = 0.85;  ///< Children made by mutation; the rest by crossover.
};

/// A point that was measured, with its throughput (higher is better; 0 for a failure).
struct MeasuredPoint {
  Candidate candidate;
  double throughput = 0;
};

/// Scores candidates (higher: predicted faster). Returns one score per candidate, or an empty
/// vector when it cannot score yet (an untrained model): the batch is then chosen at random.
using CandidateScorer = std::function<std::vector<double>(const std::vector<Candidate>&)>;

/// Asked of each new point before it joins a batch: false leaves it out (the caller knows it
/// computes exactly what a measured point computes, so measuring it would tell nothing new).
/// Called at most once per point a batch takes, in the order they are taken.
using CandidateFilter = std::function<bool(const Candidate&)>;

/// The next batch of at most options.batchSize distinct candidates of `space`, none of whose
/// point keys is in `seen` (each proposed key is added to it) and each passing `accept` when
/// given. The population starts from the best measured points and random ones, evolves by
/// mutation and crossover for options.generations rounds keeping the best-scored, and the
/// batch takes the best-scored new points plus an epsilon share of random new points. Fewer
/// are returned only when the space has run out of new points that the search can find.
std::vector<Candidate> proposeBatch(const SearchSpace& space, const std::vector<MeasuredPoint>& measured,
                                    const CandidateScorer& score, std::set<std::string>& seen,
                                    const SearchOptions& options, std::mt19937_64& rng,
                                    const CandidateFilter& accept = {});

}  // namespace tessel::tuner
