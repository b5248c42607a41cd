// Evolutionary search over a space: parents from the measured best, children by mutation and
// crossover, survivors by score, a batch of the best new points and a few random ones.
#include "tuner/search/EvolutionarySearch.h"

#include <algorithm>
#include <numeric>

namespace tessel::tuner {

namespace {

// Scores `points`; an empty result (nothing to score with) leaves every score at zero.
std::vector<double> scoresOf(const CandidateScorer& score, const std::vector<Candidate>& points) {
  std::vector<double> scores = score ? score(points) : std::vector<double>{};
  if (scores.size() != points.size()) scores.assign(points.size(), 0.0);
  return scores;
}

}  // namespace

std::vector<Candidate> proposeBatch(const SearchSpace& space, const std::vector<MeasuredPoint>& measured,
                                    const CandidateScorer& score, std::set<std::string>& seen,
                                    const SearchOptions& options, std::mt19937_64& rng,
                                    const CandidateFilter& accept) {
  std::vector<Candidate> batch;
  if (space.empty() || options.batchSize <= 0) return batch;
  std::set<std::string> chosen;
  auto isNew = [&](const Candidate& c) {
    std::string key = SearchSpace::pointKey(c);
    return !seen.count(key) && !chosen.count(key) && (!accept || accept(c));
  };
  auto take = [&](const Candidate& c) {
    chosen.insert(SearchSpace::pointKey(c));
    batch.push_back(c);
  };

  // Parents: the best measured points (a quarter of the population at most), then random.
  std::vector<MeasuredPoint> best = measured;
  std::sort(best.begin(), best.end(), [](const MeasuredPoint& a, const MeasuredPoint& b) { return a.throughput > b.throughput; });
  std::vector<Candidate> population;
  for (const MeasuredPoint& point : best) {
    if (int(population.size()) >= options.population / 4 || point.throughput <= 0) break;
    population.push_back(point.candidate);
  }
  while (int(population.size()) < options.population) population.push_back(space.random(rng));

  // Can the scorer rank yet (an untrained model cannot)?
  bool scored = score && !score({space.random(rng)}).empty();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (scored) {
    for (int generation = 0; generation < options.generations; ++generation) {
      std::vector<Candidate> children = population;
      for (int i = 0; i < options.population; ++i) {
        const Candidate& parent = population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(rng)];
        if (unit(rng) < options.mutationShare) children.push_back(space.mutate(parent, rng));
        else {
          const Candidate& other = population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(rng)];
          children.push_back(space.crossover(parent, other, rng));
        }
      }
      // Keep the best-scored distinct points.
      std::vector<double> scores = scoresOf(score, children);
      std::vector<size_t> order(children.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
      std::vector<Candidate> next;
      std::set<std::string> keys;
      for (size_t index : order) {
        if (int(next.size()) >= options.population) break;
        if (keys.insert(SearchSpace::pointKey(children[index])).second) next.push_back(children[index]);
      }
      population = std::move(next);
    }
    // The best-scored new points fill the batch but for the exploration share.
    int exploit = options.batchSize - int(options.epsilon * options.batchSize + 0.5);
    std::vector<double> scores = scoresOf(score, population);
    std::vector<size_t> order(population.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    for (size_t index : order) {
      if (int(batch.size()) >= exploit) break;
      if (isNew(population[index])) take(population[index]);
    }
  }
  // Random new points for the rest (all of it before the model can score). Mutations of the
  // measured best are tried as well: late in a search, random points of a small space are
  // mostly known, while neighbours of the best may not be.
  for (int attempt = 0; int(batch.size()) < options.batchSize && attempt < 50 * options.batchSize; ++attempt) {
    Candidate c = (attempt % 2 == 1 && !population.empty())
                      ? space.mutate(population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(rng)], rng)
                      : space.random(rng);
    if (isNew(c)) take(c);
  }
  for (const Candidate& c : batch) seen.insert(SearchSpace::pointKey(c));
  return batch;
}

}  // namespace tessel::tuner
