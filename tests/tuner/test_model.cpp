// The cost model's contract: ranking figures on hand-computed examples, bad inputs as
// Diagnostics, prediction before training, saving and loading (exact round trip, refusal of
// another feature layout, damaged files), moving, and the retraining policy. How well it learns
// is tests/tuner/test_model_quality.cpp.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "tuner/model/CostModel.h"
#include "tuner/model/ModelFile.h"
#include "tuner/model/RankingQuality.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

using Doubles = std::vector<double>;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A small two-knob space: the fastest point is x = 5, y = 2; a third feature is noise.
std::vector<CostModelSample> makeSamples(int count, unsigned seed, const std::string& group = "task") {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> knob(0, 7);
  std::vector<CostModelSample> samples;
  for (int i = 0; i < count; ++i) {
    float x = float(knob(random)), y = float(knob(random)), z = float(knob(random));
    double throughput = 1e9 * std::exp(-(x - 5) * (x - 5) / 4 - (y - 2) * (y - 2) / 6);
    samples.push_back({group, {x, y, z}, throughput});
  }
  return samples;
}

std::vector<std::vector<float>> featuresOf(const std::vector<CostModelSample>& samples) {
  std::vector<std::vector<float>> rows;
  for (const CostModelSample& sample : samples) rows.push_back(sample.features);
  return rows;
}

CostModel trainedModel(int samples = 200) {
  CostModel model;
  Status status = model.train(makeSamples(samples, 1));
  if (!status) qFatal("training failed: %s", status.error().toString().c_str());
  return model;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

}  // namespace

Q_DECLARE_METATYPE(tessel::tuner::CostModelOptions)

class TestModel : public QObject {
  Q_OBJECT
private slots:
  void pairwiseAccuracyExamples_data() {
    QTest::addColumn<Doubles>("predicted");
    QTest::addColumn<Doubles>("measured");
    QTest::addColumn<double>("expected");
    QTest::newRow("same order") << Doubles{1, 2, 3} << Doubles{10, 20, 30} << 1.0;
    QTest::newRow("reversed") << Doubles{3, 2, 1} << Doubles{10, 20, 30} << 0.0;
    QTest::newRow("one pair swapped") << Doubles{1, 3, 2} << Doubles{1, 2, 3} << 2.0 / 3;
    QTest::newRow("predicted tie counts half") << Doubles{1, 1, 2} << Doubles{1, 2, 3} << 2.5 / 3;
    QTest::newRow("measured tie is no pair") << Doubles{3, 1, 2} << Doubles{5, 5, 6} << 0.5;
    QTest::newRow("constant prediction") << Doubles{7, 7, 7, 7} << Doubles{1, 2, 3, 4} << 0.5;
  }
  void pairwiseAccuracyExamples() {
    QFETCH(Doubles, predicted);
    QFETCH(Doubles, measured);
    QFETCH(double, expected);
    QCOMPARE(pairwiseAccuracy(predicted, measured), expected);
  }

  void pairwiseAccuracyWithoutPairsIsNaN() {
    QVERIFY(std::isnan(pairwiseAccuracy({}, {})));
    QVERIFY(std::isnan(pairwiseAccuracy({1}, {2})));
    QVERIFY(std::isnan(pairwiseAccuracy({1, 2, 3}, {4, 4, 4})));
  }

  void rankCorrelationExamples_data() {
    QTest::addColumn<Doubles>("predicted");
    QTest::addColumn<Doubles>("measured");
    QTest::addColumn<double>("rho");
    QTest::addColumn<double>("tau");
    QTest::newRow("same order, any scale") << Doubles{1, 2, 30} << Doubles{0.1, 0.2, 0.3} << 1.0 << 1.0;
    QTest::newRow("reversed") << Doubles{3, 2, 1} << Doubles{10, 20, 30} << -1.0 << -1.0;
    // Ranks 1 3 2 against 1 2 3: d² = 0 + 1 + 1, rho = 1 - 6·2 / (3·8) = 0.5; pairs 2 - 1 over 3.
    QTest::newRow("one pair swapped") << Doubles{1, 3, 2} << Doubles{1, 2, 3} << 0.5 << 1.0 / 3;
    // Ranks 1.5 1.5 3 against 1 2 3; tau-b: 2 concordant over sqrt(2 · 3).
    QTest::newRow("predicted tie") << Doubles{1, 1, 2} << Doubles{1, 2, 3} << std::sqrt(0.75) << 2 / std::sqrt(6.0);
  }
  void rankCorrelationExamples() {
    QFETCH(Doubles, predicted);
    QFETCH(Doubles, measured);
    QFETCH(double, rho);
    QFETCH(double, tau);
    QVERIFY2(std::abs(spearmanRho(predicted, measured) - rho) < 1e-12,
             qPrintable(QString::number(spearmanRho(predicted, measured))));
    QVERIFY2(std::abs(kendallTau(predicted, measured) - tau) < 1e-12,
             qPrintable(QString::number(kendallTau(predicted, measured))));
  }

  void rankCorrelationWithoutSpreadIsNaN() {
    QVERIFY(std::isnan(spearmanRho({1}, {2})));
    QVERIFY(std::isnan(spearmanRho({7, 7, 7}, {1, 2, 3})));
    QVERIFY(std::isnan(kendallTau({1, 2, 3}, {4, 4, 4})));
    QVERIFY(std::isnan(kendallTau({}, {})));
  }

  void topKRecallExamples_data() {
    QTest::addColumn<Doubles>("predicted");
    QTest::addColumn<Doubles>("measured");
    QTest::addColumn<int>("k");
    QTest::addColumn<double>("expected");
    // By prediction: 0, 2, 3, 1. By measurement: 2, 1, 0, 3.
    const Doubles predicted{0.9, 0.1, 0.8, 0.2}, measured{10, 20, 30, 1};
    QTest::newRow("k=1 misses") << predicted << measured << 1 << 0.0;
    QTest::newRow("k=2 finds one") << predicted << measured << 2 << 0.5;
    QTest::newRow("k=3 finds two") << predicted << measured << 3 << 2.0 / 3;
    QTest::newRow("k=all") << predicted << measured << 4 << 1.0;
    QTest::newRow("k beyond size is clipped") << predicted << measured << 10 << 1.0;
    QTest::newRow("ties go to the earlier") << Doubles{1, 1, 1} << Doubles{3, 2, 1} << 1 << 1.0;
  }
  void topKRecallExamples() {
    QFETCH(Doubles, predicted);
    QFETCH(Doubles, measured);
    QFETCH(int, k);
    QFETCH(double, expected);
    QCOMPARE(topKRecall(predicted, measured, k), expected);
  }

  void topKRecallUndefinedIsNaN() {
    QVERIFY(std::isnan(topKRecall({}, {}, 3)));
    QVERIFY(std::isnan(topKRecall({1, 2}, {1, 2}, 0)));
  }

  void predictBeforeTrainingIsADiagnostic() {
    CostModel model;
    QVERIFY(!model.isTrained());
    QCOMPARE(model.featureCount(), 0);
    QCOMPARE(model.sampleCount(), 0);
    auto scores = model.predict({{1, 2, 3}});
    QVERIFY(!scores);
    QVERIFY(scores.error().message.find("not trained") != std::string::npos);
  }

  void learnsTheSmallSpace() {
    CostModel model = trainedModel();
    QVERIFY(model.isTrained());
    QCOMPARE(model.featureCount(), 3);
    QCOMPARE(model.sampleCount(), 200);
    QVERIFY(model.lastTrainingSeconds() > 0);
    std::vector<CostModelSample> heldOut = makeSamples(200, 2);
    auto scores = model.predict(featuresOf(heldOut));
    QVERIFY2(scores, scores ? "" : scores.error().toString().c_str());
    Doubles measured;
    for (const CostModelSample& sample : heldOut) measured.push_back(sample.throughput);
    QVERIFY(pairwiseAccuracy(*scores, measured) > 0.9);
    QVERIFY(model.predict({})->empty());
  }

  // Early in a session the data can be tiny or all failures; training must still give a model.
  void trainsOnDegenerateData_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("one sample") << 0;
    QTest::newRow("every candidate failed") << 1;
    QTest::newRow("one sample per task") << 2;
  }
  void trainsOnDegenerateData() {
    QFETCH(int, kind);
    std::vector<CostModelSample> samples = makeSamples(kind == 0 ? 1 : 20, 7);
    for (size_t i = 0; i < samples.size(); ++i) {
      if (kind == 1) samples[i].throughput = 0;
      if (kind == 2) samples[i].group = "task " + std::to_string(i);
    }
    CostModel model;
    Status status = model.train(samples);
    QVERIFY2(status, status ? "" : status.error().toString().c_str());
    auto scores = model.predict(featuresOf(samples));
    QVERIFY(scores);
    for (double score : *scores) QVERIFY(std::isfinite(score));
  }

  void badTrainingInputIsADiagnostic_data() {
    QTest::addColumn<int>("damage");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("no samples") << 0 << "no samples";
    QTest::newRow("shorter features") << 1 << "sample 3 has 2 features, expected 3";
    QTest::newRow("NaN feature") << 2 << "sample 3 has a non-finite feature 1";
    QTest::newRow("infinite feature") << 3 << "non-finite feature";
    QTest::newRow("negative throughput") << 4 << "sample 3 has throughput";
    QTest::newRow("NaN throughput") << 5 << "sample 3 has throughput";
    QTest::newRow("no features") << 6 << "no features";
  }
  void badTrainingInputIsADiagnostic() {
    QFETCH(int, damage);
    QFETCH(QString, mentions);
    std::vector<CostModelSample> samples = makeSamples(10, 3);
    switch (damage) {
      case 0: samples.clear(); break;
      case 1: samples[3].features.pop_back(); break;
      case 2: samples[3].features[1] = std::nanf(""); break;
      case 3: samples[3].features[0] = std::numeric_limits<float>::infinity(); break;
      case 4: samples[3].throughput = -1; break;
      case 5: samples[3].throughput = kNaN; break;
      case 6: for (CostModelSample& sample : samples) sample.features.clear(); break;
    }
    // A model that was trained keeps its trees when a retraining is refused.
    CostModel model = trainedModel();
    Doubles before = *model.predict(featuresOf(makeSamples(20, 4)));
    Status status = model.train(samples);
    QVERIFY(!status);
    QVERIFY2(status.error().message.find(mentions.toStdString()) != std::string::npos,
             status.error().toString().c_str());
    QVERIFY(model.isTrained());
    QCOMPARE(model.sampleCount(), 200);
    QCOMPARE(*model.predict(featuresOf(makeSamples(20, 4))), before);
  }

  void invalidOptionsAreADiagnostic_data() {
    QTest::addColumn<CostModelOptions>("options");
    QTest::addColumn<QString>("mentions");
    CostModelOptions objective, rounds, eta;
    objective.objective = "binary:logistic";
    rounds.rounds = 0;
    eta.eta = 0;
    QTest::newRow("objective") << objective << "unknown objective 'binary:logistic'";
    QTest::newRow("rounds") << rounds << "at least 1";
    QTest::newRow("eta") << eta << "eta";
  }
  void invalidOptionsAreADiagnostic() {
    QFETCH(CostModelOptions, options);
    QFETCH(QString, mentions);
    CostModel model(options);
    Status status = model.train(makeSamples(50, 1));
    QVERIFY(!status);
    QVERIFY2(status.error().message.find(mentions.toStdString()) != std::string::npos,
             status.error().toString().c_str());
    QVERIFY(!model.isTrained());
  }

  void badPredictionInputIsADiagnostic() {
    CostModel model = trainedModel();
    auto shortRow = model.predict({{1, 2, 3}, {1, 2}});
    QVERIFY(!shortRow);
    QVERIFY(shortRow.error().message.find("row 1 has 2 features, expected 3") != std::string::npos);
    auto nanRow = model.predict({{1, std::nanf(""), 3}});
    QVERIFY(!nanRow);
    QVERIFY(nanRow.error().message.find("non-finite") != std::string::npos);
  }

  void saveAndLoadGiveTheSamePredictions() {
    QTemporaryDir directory;
    const std::string path = directory.filePath("model.tcm").toStdString();
    CostModel model = trainedModel();
    QVERIFY(model.save(path).ok());
    QVERIFY(!QFile::exists(QString::fromStdString(path + ".tmp")));
    auto loaded = CostModel::load(path, 3);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    QVERIFY(loaded->isTrained());
    QCOMPARE(loaded->featureCount(), 3);
    QCOMPARE(loaded->sampleCount(), 200);
    auto rows = featuresOf(makeSamples(300, 5));
    QCOMPARE(*loaded->predict(rows), *model.predict(rows));
    // Saving again replaces the file whole.
    QVERIFY(trainedModel(100).save(path).ok());
    QCOMPARE(CostModel::load(path, 3)->sampleCount(), 100);
  }

  void saveFailuresAreDiagnostics() {
    QVERIFY(!CostModel().save("/tmp/never-written.tcm"));
    QTemporaryDir directory;
    Status status = trainedModel().save(directory.filePath("missing/dir/model.tcm").toStdString());
    QVERIFY(!status);
    QVERIFY(status.error().message.find("cannot") != std::string::npos);
  }

  void anotherFeatureCountIsRefused() {
    QTemporaryDir directory;
    const std::string path = directory.filePath("model.tcm").toStdString();
    QVERIFY(trainedModel().save(path).ok());
    auto loaded = CostModel::load(path, 16);
    QVERIFY(!loaded);
    const Diagnostic& error = loaded.error();
    QVERIFY2(error.message.find("trained on 3 features") != std::string::npos, error.toString().c_str());
    QVERIFY(error.message.find("16") != std::string::npos);
    QVERIFY(error.hint.find("retrain") != std::string::npos);
    QCOMPARE(error.location, path);
  }

  void damagedFilesAreDiagnostics_data() {
    QTest::addColumn<int>("damage");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("missing") << 0 << "cannot open";
    QTest::newRow("not a model") << 1 << "not a Tessel cost model";
    QTest::newRow("empty") << 2 << "not a Tessel cost model";
    QTest::newRow("newer version") << 3 << "format version 2; this Tessel reads version 1";
    QTest::newRow("damaged header") << 4 << "header is damaged";
    QTest::newRow("truncated") << 5 << "truncated";
    QTest::newRow("flipped byte") << 6 << "corrupt";
    QTest::newRow("trailing bytes") << 7 << "trailing bytes";
  }
  void damagedFilesAreDiagnostics() {
    QFETCH(int, damage);
    QFETCH(QString, mentions);
    QTemporaryDir directory;
    const std::string path = directory.filePath("model.tcm").toStdString();
    QVERIFY(trainedModel().save(path).ok());
    std::string contents = readFile(path);
    auto replace = [&](const std::string& from, const std::string& to) {
      contents.replace(contents.find(from), from.size(), to);
    };
    switch (damage) {
      case 0: QFile::remove(QString::fromStdString(path)); break;
      case 1: contents = "{\"learner\": {}}"; break;
      case 2: contents.clear(); break;
      case 3: replace("version 1", "version 2"); break;
      case 4: replace("features 3", "features three"); break;
      case 5: contents.resize(contents.size() - 100); break;
      case 6: contents[contents.size() - 200] ^= 0x5a; break;
      case 7: contents += "more"; break;
    }
    if (damage != 0) writeFile(path, contents);
    auto loaded = CostModel::load(path, 3);
    QVERIFY(!loaded);
    QVERIFY2(loaded.error().message.find(mentions.toStdString()) != std::string::npos,
             loaded.error().toString().c_str());
    QCOMPARE(loaded.error().location, path);
  }

  // Bytes that pass the file's own checks but are no model reach XGBoost, whose refusal
  // comes back as a Diagnostic with its reason.
  void modelBytesXGBoostRefusesAreADiagnostic_data() {
    QTest::addColumn<QByteArray>("payload");
    QTest::newRow("binary garbage") << QByteArray("\x01\x02garbage\xff", 11);
    QTest::newRow("cut JSON") << QByteArray("{\"learner\": {\"attributes\": ");
    QTest::newRow("empty JSON") << QByteArray("{}");
  }
  void modelBytesXGBoostRefusesAreADiagnostic() {
    QFETCH(QByteArray, payload);
    QTemporaryDir directory;
    const std::string path = directory.filePath("model.tcm").toStdString();
    QVERIFY(writeModelFile(path, {CostModel::kFormatVersion, 3, 10, "rank:pairwise"}, payload.toStdString()).ok());
    auto loaded = CostModel::load(path, 3);
    QVERIFY(!loaded);
    QVERIFY2(loaded.error().message.find("XGBoost") != std::string::npos, loaded.error().toString().c_str());
    QCOMPARE(loaded.error().location, path);
  }

  void aHeaderDisagreeingWithTheTreesIsRefused() {
    QTemporaryDir directory;
    const std::string path = directory.filePath("model.tcm").toStdString();
    QVERIFY(trainedModel().save(path).ok());
    Expected<ModelFile> file = readModelFile(path, CostModel::kFormatVersion);
    QVERIFY(file);
    QVERIFY(writeModelFile(path, {CostModel::kFormatVersion, 4, 10, "rank:pairwise"}, file->payload).ok());
    auto loaded = CostModel::load(path, 4);
    QVERIFY(!loaded);
    QVERIFY2(loaded.error().message.find("header says 4 features, its trees 3") != std::string::npos,
             loaded.error().toString().c_str());
  }

  void movingKeepsTheTrees() {
    CostModel model = trainedModel();
    auto rows = featuresOf(makeSamples(20, 6));
    Doubles scores = *model.predict(rows);
    CostModel moved(std::move(model));
    QCOMPARE(*moved.predict(rows), scores);
    QVERIFY(!model.isTrained());  // NOLINT(bugprone-use-after-move): documented as untrained
    QCOMPARE(model.featureCount(), 0);
    QVERIFY(!model.predict(rows));
  }

  void retrainsWhenTheSamplesGrewEnough() {
    CostModelOptions options;  // At least 32 new samples, and 5 % more.
    CostModel model(options);
    QVERIFY(!model.shouldRetrain(31, 1e6));
    QVERIFY(model.shouldRetrain(32, 0));  // The first training never waits for the clock.
    QVERIFY(model.train(makeSamples(100, 1)).ok());
    QVERIFY(!model.shouldRetrain(131, 1e6));
    QVERIFY(model.shouldRetrain(132, 1e6));
    QVERIFY(model.train(makeSamples(1000, 1)).ok());
    QVERIFY(!model.shouldRetrain(1049, 1e6));
    QVERIFY(model.shouldRetrain(1050, 1e6));
  }

  void retrainingWaitsWhileTrainingWouldTakeTooMuchOfTheSession() {
    CostModel model;
    QVERIFY(model.train(makeSamples(100, 1)).ok());
    // Any training took some time, more than 20 % of a session just begun.
    QVERIFY(!model.shouldRetrain(1000, 0));
    QVERIFY(model.shouldRetrain(1000, 1e6));
    // Training counts only once the session has lasted five times the projected training.
    double projected = model.totalTrainingSeconds() + model.lastTrainingSeconds() * 1000 / 100;
    QVERIFY(!model.shouldRetrain(1000, projected / 0.2 * 0.99));
    QVERIFY(model.shouldRetrain(1000, projected / 0.2 * 1.01));
  }

  void aLoadedModelRetrainsByItsSavedSampleCount() {
    QTemporaryDir directory;
    const std::string path = directory.filePath("model.tcm").toStdString();
    QVERIFY(trainedModel(1000).save(path).ok());
    auto loaded = CostModel::load(path, 3);
    QVERIFY(loaded);
    QVERIFY(!loaded->shouldRetrain(1049, 0));
    QVERIFY(loaded->shouldRetrain(1050, 0));
  }
};

QTEST_APPLESS_MAIN(TestModel)
#include "test_model.moc"
