// The evolutionary search: it finds the optimum of a synthetic space within a small number of
// trials when its scorer ranks well, does better than random sampling, and never proposes a
// point twice.
#include <QtTest>

#include <cmath>
#include <random>

#include "compiler/ops/Conv2d.h"
#include "tuner/search/EvolutionarySearch.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

// A space with the shape of a real one (a convolution's default sketch and generated one).
SearchSpace convolutionSpace() {
  Conv2dParams p;
  p.channels = 32, p.height = 28, p.width = 28, p.filters = 64, p.kernelH = 3, p.kernelW = 3, p.pad = 1;
  Target target = hostTarget();
  Workload w = conv2d(p, DataType::float32(), target);
  return SearchSpace::generate(w, defaultConv2dSchedule(w, p, target)->trace(), target);
}

// A made-up speed with one best point: a bump around a hidden choice per decision.
struct SyntheticSpeed {
  std::vector<std::vector<int>> hidden;  // per sketch, per decision
  double operator()(const Candidate& c) const {
    double distance = 0;
    for (size_t d = 0; d < c.choices.size(); ++d) distance += std::abs(c.choices[d] - hidden[size_t(c.sketch)][d]);
    return (c.sketch == 1 ? 2.0 : 1.0) * std::exp(-0.7 * distance);
  }
};

SyntheticSpeed hiddenOptimum(const SearchSpace& space, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SyntheticSpeed speed;
  for (const Sketch& sketch : space.sketches()) {
    std::vector<int> choice;
    for (const Decision& d : sketch.decisions) choice.push_back(int(std::uniform_int_distribution<size_t>(0, d.choices.size() - 1)(rng)));
    speed.hidden.push_back(choice);
  }
  return speed;
}

// Runs rounds of `batch` proposals until the optimum is measured or `budget` trials pass; the
// number of trials it took (budget + 1 when not found). The scorer is the true speed with
// multiplicative noise: a cost model that ranks well but not perfectly.
int trialsToOptimum(const SearchSpace& space, const SyntheticSpeed& speed, bool guided, int budget, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.1);
  CandidateScorer scorer = [&](const std::vector<Candidate>& points) {
    std::vector<double> scores;
    for (const Candidate& c : points) scores.push_back(speed(c) * std::exp(noise(rng)));
    return scores;
  };
  SearchOptions options;
  options.batchSize = 8;
  std::vector<MeasuredPoint> measured;
  std::set<std::string> seen;
  double optimum = 2.0;
  while (int(measured.size()) < budget) {
    auto batch = proposeBatch(space, measured, guided ? scorer : CandidateScorer{}, seen, options, rng);
    if (batch.empty()) break;
    for (const Candidate& c : batch) {
      measured.push_back({c, speed(c)});
      if (speed(c) >= optimum - 1e-12) return int(measured.size());
    }
  }
  return budget + 1;
}

}  // namespace

class TestSearch : public QObject {
  Q_OBJECT
private slots:
  void findsTheOptimumOfASyntheticSpace() {
    SearchSpace space = convolutionSpace();
    QVERIFY2(space.size() > 1e4, "the space is too small to show anything");
    int found = 0, guidedTrials = 0, randomTrials = 0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      SyntheticSpeed speed = hiddenOptimum(space, seed);
      int guided = trialsToOptimum(space, speed, true, 400, seed);
      int random = trialsToOptimum(space, speed, false, 400, seed);
      found += guided <= 400;
      guidedTrials += guided;
      randomTrials += random;
    }
    qInfo("trials to the optimum over 5 spaces: guided %d, random %d (of %.3g points each)", guidedTrials,
          randomTrials, space.size());
    QCOMPARE(found, 5);
    QVERIFY(guidedTrials * 3 < randomTrials);
  }

  void neverProposesAPointTwice() {
    SearchSpace space = convolutionSpace();
    std::mt19937_64 rng(3);
    std::set<std::string> seen;
    std::set<std::string> proposed;
    std::vector<MeasuredPoint> measured;
    SearchOptions options;
    for (int round = 0; round < 10; ++round) {
      auto batch = proposeBatch(space, measured, {}, seen, options, rng);
      QCOMPARE(int(batch.size()), options.batchSize);
      for (const Candidate& c : batch) {
        QVERIFY(proposed.insert(SearchSpace::pointKey(c)).second);
        measured.push_back({c, 1.0});
      }
    }
    QCOMPARE(seen.size(), proposed.size());
  }

  // A filter leaves points out of a batch (the session's: points whose code was measured
  // under another point), and the batch is still filled with points that pass it.
  void aFilteredPointIsNeverProposed() {
    SearchSpace space = convolutionSpace();
    std::mt19937_64 rng(4);
    std::set<std::string> seen;
    std::vector<MeasuredPoint> measured;
    SearchOptions options;
    int asked = 0, refused = 0;
    // Refuse every point whose first choice is odd (half the space, or so).
    CandidateFilter evenFirst = [&](const Candidate& c) {
      ++asked;
      bool odd = !c.choices.empty() && c.choices[0] % 2 == 1;
      refused += odd;
      return !odd;
    };
    for (int round = 0; round < 5; ++round) {
      auto batch = proposeBatch(space, measured, {}, seen, options, rng, evenFirst);
      QCOMPARE(int(batch.size()), options.batchSize);
      for (const Candidate& c : batch) {
        QVERIFY(c.choices.empty() || c.choices[0] % 2 == 0);
        measured.push_back({c, 1.0});
      }
    }
    QVERIFY(refused > 0 && asked > refused);
  }
};

QTEST_GUILESS_MAIN(TestSearch)
#include "test_search.moc"
