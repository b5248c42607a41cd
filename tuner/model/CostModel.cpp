// The cost model over XGBoost's C API: per-group label normalization, training, prediction,
// and the saved file (a small text header, then XGBoost's own model bytes).
#include "tuner/model/CostModel.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <utility>

#include "tuner/model/ModelFile.h"

namespace tessel::tuner {

namespace {

const char* const kLocation = "cost model";

Diagnostic modelError(std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), kLocation, 0, 0, std::move(hint)};
}

// Turns an XGBoost return code into a Status carrying XGBoost's own explanation, on one line and
// without its "[hh:mm:ss] " time stamp.
Status xgboostCall(int returnCode, const char* what) {
  if (returnCode == 0) return Status::success();
  std::string reason = XGBGetLastError();
  reason = reason.substr(0, reason.find('\n'));
  if (reason.size() > 11 && reason[0] == '[' && reason[9] == ']') reason.erase(0, 11);
  return modelError(std::string("XGBoost could not ") + what + ": " + reason);
}

// Owns a DMatrix for the length of one training or prediction.
struct Matrix {
  DMatrixHandle handle = nullptr;
  Matrix() = default;
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  ~Matrix() {
    if (handle) XGDMatrixFree(handle);
  }
};

// Checks that every row has `width` finite features; `what` names the rows in the message.
Status checkRows(const std::vector<const std::vector<float>*>& rows, size_t width, const char* what) {
  for (size_t row = 0; row < rows.size(); ++row) {
    const std::vector<float>& features = *rows[row];
    if (features.size() != width)
      return modelError(std::string(what) + " " + std::to_string(row) + " has " + std::to_string(features.size()) +
                            " features, expected " + std::to_string(width),
                        "every candidate's feature vector must have the same length");
    for (size_t column = 0; column < width; ++column)
      if (!std::isfinite(features[column]))
        return modelError(std::string(what) + " " + std::to_string(row) + " has a non-finite feature " +
                              std::to_string(column) + " (" + std::to_string(features[column]) + ")",
                          "the feature extractor produced NaN or infinity; it must be fixed, not fed to the model");
  }
  return Status::success();
}

// Row-major copy of `rows` for XGBoost.
Status makeMatrix(const std::vector<const std::vector<float>*>& rows, size_t width, int threads, Matrix& out) {
  std::vector<float> data;
  data.reserve(rows.size() * width);
  for (const std::vector<float>* row : rows) data.insert(data.end(), row->begin(), row->end());
  // No value is missing (non-finite features are refused), so NaN as "missing" never matches.
  return xgboostCall(XGDMatrixCreateFromMat_omp(data.data(), bst_ulong(rows.size()), bst_ulong(width),
                                                std::nanf(""), &out.handle, threads),
                     "build its data matrix");
}

Status checkOptions(const CostModelOptions& options) {
  if (options.objective != "rank:pairwise" && options.objective != "reg:squarederror")
    return modelError("unknown objective '" + options.objective + "'", "use rank:pairwise or reg:squarederror");
  if (options.rounds < 1 || options.maxDepth < 1 || options.threads < 1)
    return modelError("rounds, maximum depth and threads must be at least 1");
  if (!(options.eta > 0 && options.eta <= 1)) return modelError("eta must be in (0, 1]");
  return Status::success();
}

}  // namespace

struct CostModel::Booster {
  BoosterHandle handle = nullptr;
  ~Booster() {
    if (handle) XGBoosterFree(handle);
  }

  Status setParameters(const std::vector<std::pair<std::string, std::string>>& parameters) {
    for (const auto& [name, value] : parameters)
      if (Status status = xgboostCall(XGBoosterSetParam(handle, name.c_str(), value.c_str()), "set a parameter");
          !status)
        return status;
    return Status::success();
  }

  // Settings that belong to this process, not to the trees: set after creating or loading.
  Status setRuntimeParameters(const CostModelOptions& options) {
    return setParameters({{"nthread", std::to_string(options.threads)}, {"verbosity", "0"}});
  }
};

CostModel::CostModel(CostModelOptions options) : options_(std::move(options)) {}
CostModel::~CostModel() = default;

CostModel::CostModel(CostModel&& other) noexcept
    : options_(other.options_),
      booster_(std::move(other.booster_)),
      featureCount_(std::exchange(other.featureCount_, 0)),
      sampleCount_(std::exchange(other.sampleCount_, 0)),
      lastTrainingSeconds_(std::exchange(other.lastTrainingSeconds_, 0)),
      totalTrainingSeconds_(std::exchange(other.totalTrainingSeconds_, 0)) {}

CostModel& CostModel::operator=(CostModel&& other) noexcept {
  if (this == &other) return *this;
  options_ = other.options_;
  booster_ = std::move(other.booster_);
  featureCount_ = std::exchange(other.featureCount_, 0);
  sampleCount_ = std::exchange(other.sampleCount_, 0);
  lastTrainingSeconds_ = std::exchange(other.lastTrainingSeconds_, 0);
  totalTrainingSeconds_ = std::exchange(other.totalTrainingSeconds_, 0);
  return *this;
}

bool CostModel::isTrained() const { return booster_ != nullptr; }

Status CostModel::train(const std::vector<CostModelSample>& samples) {
  auto start = std::chrono::steady_clock::now();
  if (Status status = checkOptions(options_); !status) return status;
  if (samples.empty()) return modelError("no samples to train on", "measure some candidates first");
  const size_t width = samples.front().features.size();
  if (width == 0) return modelError("sample 0 has no features");

  std::vector<const std::vector<float>*> callerRows;
  for (size_t i = 0; i < samples.size(); ++i) {
    double throughput = samples[i].throughput;
    if (!std::isfinite(throughput) || throughput < 0)
      return modelError("sample " + std::to_string(i) + " has throughput " + std::to_string(throughput),
                        "a throughput is positive, or 0 for a failed candidate");
    callerRows.push_back(&samples[i].features);
  }
  if (Status status = checkRows(callerRows, width, "sample"); !status) return status;

  // Ranking objectives need each group's rows contiguous; std::map also fixes their order.
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < samples.size(); ++i) groups[samples[i].group].push_back(i);
  std::vector<const std::vector<float>*> rows;
  std::vector<float> labels;
  std::vector<unsigned> groupSizes;
  for (const auto& [name, members] : groups) {
    double best = 0;
    for (size_t i : members) best = std::max(best, samples[i].throughput);
    for (size_t i : members) {
      rows.push_back(&samples[i].features);
      // Normalizing by the group's best makes a slow task's candidates count as much as a fast
      // one's; a group where everything failed learns nothing but does no harm.
      labels.push_back(best > 0 ? float(samples[i].throughput / best) : 0.0f);
    }
    groupSizes.push_back(unsigned(members.size()));
  }

  Matrix matrix;
  if (Status status = makeMatrix(rows, width, options_.threads, matrix); !status) return status;
  if (Status status = xgboostCall(XGDMatrixSetFloatInfo(matrix.handle, "label", labels.data(), labels.size()),
                                  "set the labels");
      !status)
    return status;
  if (Status status = xgboostCall(
          XGDMatrixSetUIntInfo(matrix.handle, "group", groupSizes.data(), groupSizes.size()), "set the groups");
      !status)
    return status;

  auto booster = std::make_unique<Booster>();
  if (Status status = xgboostCall(XGBoosterCreate(&matrix.handle, 1, &booster->handle), "create a booster");
      !status)
    return status;
  std::vector<std::pair<std::string, std::string>> parameters = {
      {"objective", options_.objective},
      {"eta", std::to_string(options_.eta)},
      {"max_depth", std::to_string(options_.maxDepth)},
      {"seed", std::to_string(options_.seed)},
      // Histogram trees train several times faster than exact ones (5000 samples of 164
      // features: 1 s against 7 s).
      {"tree_method", "hist"},
  };
  // XGBoost pairs each sample with one other per round by default; among many weak features
  // that overfits badly (164 features, 1000 samples: pairwise accuracy 0.77, top-25 recall
  // 0.27), and 16 pairs fix it (0.91, 0.64) at little cost: building the trees dominates.
  if (options_.objective == "rank:pairwise") parameters.emplace_back("num_pairsample", "16");
  if (Status status = booster->setParameters(parameters); !status) return status;
  if (Status status = booster->setRuntimeParameters(options_); !status) return status;
  for (int round = 0; round < options_.rounds; ++round)
    if (Status status = xgboostCall(XGBoosterUpdateOneIter(booster->handle, round, matrix.handle), "train");
        !status)
      return status;

  booster_ = std::move(booster);
  featureCount_ = int(width);
  sampleCount_ = int(samples.size());
  lastTrainingSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  totalTrainingSeconds_ += lastTrainingSeconds_;
  return Status::success();
}

Expected<std::vector<double>> CostModel::predict(const std::vector<std::vector<float>>& rows) const {
  if (!booster_)
    return modelError("the cost model is not trained yet", "pick candidates at random until it is");
  if (rows.empty()) return std::vector<double>{};
  std::vector<const std::vector<float>*> pointers;
  for (const std::vector<float>& row : rows) pointers.push_back(&row);
  if (Status status = checkRows(pointers, size_t(featureCount_), "row"); !status) return status.error();
  Matrix matrix;
  if (Status status = makeMatrix(pointers, size_t(featureCount_), options_.threads, matrix); !status)
    return status.error();
  const bst_ulong* shape = nullptr;
  bst_ulong dimensions = 0;
  const float* scores = nullptr;
  const char* config = R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0,
                           "strict_shape": false})";
  if (Status status = xgboostCall(
          XGBoosterPredictFromDMatrix(booster_->handle, matrix.handle, config, &shape, &dimensions, &scores),
          "predict");
      !status)
    return status.error();
  if (dimensions != 1 || shape[0] != rows.size())
    return modelError("XGBoost returned predictions of an unexpected shape");
  return std::vector<double>(scores, scores + rows.size());
}

bool CostModel::shouldRetrain(int samplesNow, double sessionSeconds) const {
  const TrainingPolicy& policy = options_.policy;
  int needed = std::max(policy.minimumNewSamples, int(std::ceil(policy.growthFraction * sampleCount_)));
  if (samplesNow - sampleCount_ < needed) return false;
  // The first training in this process has no time of its own to be judged by.
  if (totalTrainingSeconds_ == 0) return true;
  // Training time grows about linearly with the samples: estimate the next one from the last.
  double nextSeconds = lastTrainingSeconds_ * double(samplesNow) / sampleCount_;
  return totalTrainingSeconds_ + nextSeconds <= policy.maximumTrainingShare * sessionSeconds;
}

Status CostModel::save(const std::string& path) const {
  if (!booster_) return modelError("an untrained cost model cannot be saved", "train it first");
  bst_ulong length = 0;
  const char* bytes = nullptr;
  if (Status status = xgboostCall(
          XGBoosterSaveModelToBuffer(booster_->handle, R"({"format": "ubj"})", &length, &bytes), "save the model");
      !status)
    return status;
  ModelFileHeader header{kFormatVersion, featureCount_, sampleCount_, options_.objective};
  return writeModelFile(path, header, std::string(bytes, length));
}

Expected<CostModel> CostModel::load(const std::string& path, int expectedFeatureCount, CostModelOptions options) {
  Expected<ModelFile> file = readModelFile(path, kFormatVersion);
  if (!file) return file.error();
  const ModelFileHeader& header = file->header;
  if (header.featureCount != expectedFeatureCount)
    return Diagnostic{"the cost model was trained on " + std::to_string(header.featureCount) +
                          " features per candidate, but the tuner now extracts " +
                          std::to_string(expectedFeatureCount),
                      path, 0, 0, "the feature layout changed: retrain the model from the records"};
  // Every failure from here on is the file's: name it, and say how to recover.
  auto fromFile = [&](const Status& status) {
    return Diagnostic{status.error().message, path, 0, 0, "delete the file; the model is retrained from the records"};
  };
  CostModel model(std::move(options));
  auto booster = std::make_unique<Booster>();
  if (Status status = xgboostCall(XGBoosterCreate(nullptr, 0, &booster->handle), "create a booster"); !status)
    return fromFile(status);
  if (Status status = xgboostCall(XGBoosterLoadModelFromBuffer(booster->handle, file->payload.data(),
                                                               file->payload.size()),
                                  "read the model");
      !status)
    return fromFile(status);
  if (Status status = booster->setRuntimeParameters(model.options_); !status) return fromFile(status);
  bst_ulong trainedFeatures = 0;
  if (Status status = xgboostCall(XGBoosterGetNumFeature(booster->handle, &trainedFeatures), "count features");
      !status)
    return fromFile(status);
  if (int(trainedFeatures) != header.featureCount)
    return fromFile(modelError("the file's header says " + std::to_string(header.featureCount) +
                               " features, its trees " + std::to_string(trainedFeatures)));
  model.booster_ = std::move(booster);
  model.featureCount_ = header.featureCount;
  model.sampleCount_ = header.sampleCount;
  return model;
}

}  // namespace tessel::tuner
