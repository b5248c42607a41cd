// The learned cost model: gradient-boosted trees (XGBoost) that rank unmeasured schedule
// candidates of a task by their loop-nest features, so the search measures promising ones.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/support/Error.h"

namespace tessel::tuner {

/// One measured candidate: its task, its features and how fast it ran.
struct CostModelSample {
  std::string group;            ///< The task (workload) it belongs to; ranking happens within a group.
  std::vector<float> features;  ///< Fixed-length features of its loop nest; finite values only.
  double throughput = 0;        ///< Higher is faster (FLOP/s, say); 0 for a failed candidate.
};

/// When to retrain, so that training never dominates a session. The sample count must grow by
/// max(minimumNewSamples, growthFraction × samples at the last training): with a fraction f the
/// trainings of a session cost about (1 + f) / f times the last one, a bounded overhead however
/// long it runs, while early on (few samples, cheap training) the model improves every batch.
/// Training must also stay under maximumTrainingShare of the session's elapsed time, so a slow
/// machine or a huge record set gives measuring its time back.
///
/// The fraction trades training time for a fresh model. Replaying 20-minute sessions of
/// ResNet-18 (5,500 trials), 0.2 ranked its rounds at 0.65 pairwise accuracy, 0.05 at 0.68 and
/// a model retrained before every round at 0.70; at 0.05 the trainings of a 9,000-trial session
/// add up to about 40 s on 2 cores.
struct TrainingPolicy {
  int minimumNewSamples = 32;         ///< About one measured batch; also the first training's size.
  double growthFraction = 0.05;       ///< Retrain when the samples grew by this fraction.
  double maximumTrainingShare = 0.2;  ///< Training seconds / session seconds not to exceed.
};

/// How the model learns. The defaults ranked best on the synthetic spaces of
/// tests/tuner/test_model_quality.cpp; with them 5000 samples of 164 features train in about a
/// second on one core.
struct CostModelOptions {
  /// "rank:pairwise" (learns the order within each group) or "reg:squarederror" (fits the
  /// normalized throughput). Both learn labels normalized per group to [0, 1] by the group's best
  /// throughput, so tasks of very different speeds weigh the same. Pairwise ranks better: mean
  /// pairwise accuracy 0.95 against 0.85 on ten informative features, 0.90 against 0.76 (top-25
  /// recall 0.61 against 0.36) when 154 uninformative features are added.
  std::string objective = "rank:pairwise";
  int rounds = 100;    ///< Boosting rounds (trees).
  int maxDepth = 6;    ///< Depth of each tree.
  double eta = 0.2;    ///< Learning rate (shrinkage of each tree).
  int threads = 1;     ///< XGBoost threads; 1 leaves the other core to the measurer.
  int seed = 0;        ///< XGBoost's random seed, for reproducible models.
  TrainingPolicy policy;
};

/// Predicts, for candidates of a task, scores whose order within the task estimates the order
/// of their throughputs. Movable, not copyable; a moved-from model is untrained.
class CostModel {
public:
  /// The version of the file format save() writes; load() refuses any other.
  static constexpr int kFormatVersion = 1;

  explicit CostModel(CostModelOptions options = {});
  ~CostModel();
  CostModel(CostModel&& other) noexcept;
  CostModel& operator=(CostModel&& other) noexcept;
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  /// Trains a new model from all `samples` (not incrementally). Each sample's label is its
  /// throughput divided by the best of its group; failed candidates (throughput 0) learn to rank
  /// last (a group with no working candidate teaches nothing). A Diagnostic, with the model left as it was, for: no samples, features of differing
  /// lengths or none, a NaN or infinite feature (a feature-extraction bug that would silently
  /// teach the model garbage, so it is refused, not patched), a negative or non-finite
  /// throughput, invalid options, or an XGBoost failure.
  [[nodiscard]] Status train(const std::vector<CostModelSample>& samples);

  /// One score per row, higher = predicted faster; only the order within a group means
  /// anything. An empty list gives an empty list. A Diagnostic before any training or loading
  /// (the caller then picks candidates at random), for rows whose length is not
  /// featureCount(), or for a NaN or infinite feature.
  [[nodiscard]] Expected<std::vector<double>> predict(const std::vector<std::vector<float>>& rows) const;

  bool isTrained() const;
  /// Features per row the model was trained on; 0 before training.
  int featureCount() const { return featureCount_; }
  /// Samples of the last training (as saved, for a loaded model); 0 before training.
  int sampleCount() const { return sampleCount_; }
  /// Wall-clock seconds of the last train() call that succeeded; 0 when none in this process.
  double lastTrainingSeconds() const { return lastTrainingSeconds_; }
  /// Wall-clock seconds of all successful train() calls of this model in this process.
  double totalTrainingSeconds() const { return totalTrainingSeconds_; }
  const CostModelOptions& options() const { return options_; }

  /// Whether to retrain now that `samplesNow` samples exist, `sessionSeconds` into the session,
  /// by options().policy. Until trained, true once minimumNewSamples exist.
  bool shouldRetrain(int samplesNow, double sessionSeconds) const;

  /// Writes the model to `path` atomically (a temporary file renamed over it), so a session
  /// killed while saving leaves the previous model. A Diagnostic when untrained or on I/O errors.
  [[nodiscard]] Status save(const std::string& path) const;

  /// Reads a model save() wrote. `expectedFeatureCount` is the length of the feature vectors
  /// the caller extracts: a model trained on another length is refused (the caller retrains
  /// from its records), as are another format version and a corrupt or truncated file.
  /// `options` govern later training and prediction threads; the loaded trees keep the
  /// objective they were trained with.
  [[nodiscard]] static Expected<CostModel> load(const std::string& path, int expectedFeatureCount,
                                                CostModelOptions options = {});

private:
  struct Booster;  // Owns the XGBoost handle, keeping XGBoost's headers out of this one.

  CostModelOptions options_;
  std::unique_ptr<Booster> booster_;  // Null until trained or loaded.
  int featureCount_ = 0;
  int sampleCount_ = 0;
  double lastTrainingSeconds_ = 0;
  double totalTrainingSeconds_ = 0;
};

}  // namespace tessel::tuner
