// The Tuning view: a recorded session's event stream (tests/views/data, from a real
// `tessel tune` of the tiny ResNet) rebuilds the session and shows its series in every plot;
// garbled or truncated lines are reported with their number and skipped; the task table is a
// well-formed model; selecting a task links the table and the plots; 20,000 events arriving at
// once never stall the event loop; and a real short session started from the view is paused,
// resumed and stopped with every trial kept.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <ctime>

#include <nlohmann/json.hpp>

#include "tests/views/ModularGraphSupport.h"
#include "tuner/records/RecordFile.h"
#include "views/tuning/TuningDashboard.h"
#include "views/tuning/TuningHeatMap.h"
#include "views/tuning/TuningEventFeed.h"
#include "views/tuning/TuningPlots.h"
#include "views/tuning/TuningTaskModel.h"

using namespace tessel;
using namespace tessel::views;

namespace {

const QString kSession = TESSEL_SOURCE_DIR "/tests/views/data/tiny_resnet_session.events";
const QString kModel = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx";
const QString kTessel = TESSEL_BINARY_DIR "/bin/tessel";

QByteArray readFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
  return file.readAll();
}

// What the stream holds, counted independently of the log: events by kind.
std::map<std::string, int> countEvents(const QByteArray& stream) {
  std::map<std::string, int> counts;
  for (const QByteArray& line : stream.split('\n')) {
    if (line.trimmed().isEmpty()) continue;
    auto event = nlohmann::json::parse(line.toStdString());
    ++counts[event["event"].get<std::string>()];
  }
  return counts;
}

// Feeds `stream` and waits until it is read.
void feedAll(TuningEventFeed& feed, const QByteArray& stream) {
  feed.append(stream);
  feed.finish();
  QTRY_VERIFY_WITH_TIMEOUT(!feed.busy(), 20000);
}

int pointCount(QCPGraph* graph) { return graph ? graph->data()->size() : 0; }

}  // namespace

class TestTuningDashboard : public QObject {
  Q_OBJECT

private slots:
  // Sessions started from the view find the tool as the Studio would beside it.
  void initTestCase() { qputenv("TESSEL_CLI", kTessel.toUtf8()); }

  void aRecordedStreamRebuildsTheSession() {
    QByteArray stream = readFile(kSession);
    std::map<std::string, int> counts = countEvents(stream);
    QVERIFY(counts["trial"] > 0 && counts["round"] > 0 && counts["confirm"] > 0);
    TuningEventFeed feed;
    feedAll(feed, stream);
    const tuner::TuningEventLog& log = feed.log();
    QVERIFY(log.problems().empty());
    QVERIFY(log.started());
    QVERIFY(log.ended());
    QCOMPARE(int(log.trials().size()), counts["trial"]);
    QCOMPARE(int(log.rounds().size()), counts["round"]);
    int confirmed = 0, trials = 0;
    for (size_t task = 0; task < log.tasks().size(); ++task) {
      const tuner::LoggedTaskState& state = log.taskStates()[task];
      trials += state.trials;
      if (state.chosenPoint) ++confirmed;
      // Every task's default was measured, and its best is no slower.
      QVERIFY(state.defaultMs);
      QVERIFY(state.bestMs && *state.bestMs <= *state.defaultMs);
    }
    QCOMPARE(trials, counts["trial"]);
    QCOMPARE(confirmed, counts["confirm"]);
    QVERIFY(log.estimatedLatencyMs() > 0 && log.estimatedLatencyMs() <= log.defaultLatencyMs());
    QVERIFY(log.measuredTunedMs() && log.measuredDefaultMs());
  }

  void garbledAndTruncatedLinesAreReportedAndSkipped() {
    QList<QByteArray> lines = readFile(kSession).split('\n');
    while (!lines.isEmpty() && lines.back().isEmpty()) lines.removeLast();
    QVERIFY(lines.size() > 10);
    // Line 4 cut in half, line 7 not JSON, line 9 a trial without its fields; the last one cut
    // short. An event of a type this version does not know (line 11, from a newer tessel) is
    // skipped without a complaint.
    QList<QByteArray> damaged = lines;
    damaged[3] = damaged[3].left(damaged[3].size() / 2);
    damaged[6] = "this is not an event";
    damaged[8] = R"({"event":"trial","t":1.0})";
    damaged.insert(10, R"({"event":"from_the_future","t":1.0,"anything":[1,2]})");
    damaged.back() = damaged.back().left(10);
    std::map<std::string, int> lost;  // the valid events the damage removed, by kind
    for (int i : {3, 6, 8, int(lines.size()) - 1}) ++lost[nlohmann::json::parse(lines[i].toStdString())["event"]];
    std::map<std::string, int> counts = countEvents(lines.join('\n'));

    TuningEventFeed feed;
    QSignalSpy problems(&feed, &TuningEventFeed::problemFound);
    feedAll(feed, damaged.join('\n'));
    const tuner::TuningEventLog& log = feed.log();
    QCOMPARE(int(log.problems().size()), 4);
    QCOMPARE(problems.count(), 4);
    std::vector<int> where;
    for (const tuner::LoggedProblem& problem : log.problems()) where.push_back(problem.line);
    QCOMPARE(where, (std::vector<int>{4, 7, 9, int(damaged.size())}));
    QCOMPARE(log.unknownEvents(), 1);
    QVERIFY2(problems.front().front().toString().contains("line 4"), qPrintable(problems.front().front().toString()));
    // Everything valid is kept.
    QCOMPARE(int(log.trials().size()), counts["trial"] - lost["trial"]);
    QCOMPARE(int(log.rounds().size()), counts["round"] - lost["round"]);
  }

  void anOlderStreamWithoutTheOptionalFieldsStillReads() {
    // Streams written before the optional fields existed (Events.md marks them) lack them.
    QByteArray older;
    for (const QByteArray& line : readFile(kSession).split('\n')) {
      if (line.trimmed().isEmpty()) continue;
      auto event = nlohmann::json::parse(line.toStdString());
      for (const char* field : {"spearman_rho", "kendall_tau", "chosen_by", "gradient_ms_per_trial", "bandwidth_gbps"})
        event.erase(field);
      if (event.contains("tasks") && event["tasks"].is_array())
        for (auto& task : event["tasks"])
          if (task.is_object()) task.erase("bytes");
      older += QByteArray::fromStdString(event.dump()) + '\n';
    }
    TuningEventFeed feed;
    feedAll(feed, older);
    QVERIFY(feed.log().problems().empty());
    QCOMPARE(int(feed.log().rounds().size()), countEvents(older)["round"]);
  }

  void aStreamArrivingInPiecesIsReadTheSame() {
    QByteArray stream = readFile(kSession);
    TuningEventFeed whole, pieces;
    feedAll(whole, stream);
    // Cut anywhere, even inside a line or a UTF-8 sequence.
    for (qsizetype at = 0; at < stream.size(); at += 777) pieces.append(stream.mid(at, 777));
    pieces.finish();
    QTRY_VERIFY(!pieces.busy());
    QCOMPARE(pieces.log().trials().size(), whole.log().trials().size());
    QCOMPARE(pieces.log().rounds().size(), whole.log().rounds().size());
    QVERIFY(pieces.log().problems().empty());
  }

  void theTaskTableIsAWellFormedModel() {
    TuningEventFeed feed;
    TuningTaskModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setFeed(&feed);
    QCOMPARE(model.rowCount(), 0);
    feedAll(feed, readFile(kSession));
    const tuner::TuningEventLog& log = feed.log();
    QCOMPARE(model.rowCount(), int(log.tasks().size()));
    double shares = 0;
    for (int row = 0; row < model.rowCount(); ++row) {
      QCOMPARE(model.index(row, TuningTaskModel::KernelColumn).data().toString(),
               QString::fromStdString(log.tasks()[size_t(row)].name));
      QCOMPARE(model.index(row, TuningTaskModel::TrialsColumn).data().toInt(), log.taskStates()[size_t(row)].trials);
      shares += model.index(row, TuningTaskModel::ShareColumn).data(TuningTaskModel::SortRole).toDouble();
      double speedup = model.index(row, TuningTaskModel::SpeedupColumn).data(TuningTaskModel::SortRole).toDouble();
      QVERIFY(speedup > 0);
      // The session ended: a task is tuned, kept its default, or was never worth a round.
      QString state = model.index(row, TuningTaskModel::StateColumn).data().toString();
      if (log.taskStates()[size_t(row)].chosenPoint)
        QVERIFY2(state == "tuned" || state == "default kept", qPrintable(state));
      else
        QVERIFY2(state == "exhausted" || state == "not searched" || state == "stopped", qPrintable(state));
    }
    QVERIFY(std::abs(shares - 100) < 1e-6);  // the shares of the model's time add up
    feed.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void thePlotsShowTheSessionsSeries() {
    TuningDashboard dashboard;
    dashboard.resize(1400, 900);
    dashboard.show();
    QString error;
    QVERIFY2(dashboard.loadEvents(kSession, &error), qPrintable(error));
    QTRY_VERIFY(!dashboard.feed()->busy());
    const tuner::TuningEventLog& log = dashboard.feed()->log();
    // Latency: a point per round and one for now; the default as a line; the end measured.
    QCOMPARE(pointCount(dashboard.latencyPlot()->estimateGraph()), int(log.rounds().size()) + 1);
    QCOMPARE(pointCount(dashboard.latencyPlot()->defaultGraph()), 2);
    QCOMPARE(pointCount(dashboard.latencyPlot()->measuredGraph()), 1);
    QCOMPARE(dashboard.latencyPlot()->estimateGraph()->data()->at(0)->key, log.rounds().front().t / 60);
    // ...or against trials.
    dashboard.latencyPlot()->setAgainstTrials(true);
    QCOMPARE(dashboard.latencyPlot()->estimateGraph()->data()->at(0)->key, double(log.rounds().front().trials));
    QCOMPARE(pointCount(dashboard.latencyPlot()->estimateGraph()), int(log.rounds().size()) + 1);
    dashboard.latencyPlot()->setAgainstTrials(false);
    // Trials: every measured candidate is a point of its task or a failure.
    int ok = 0, failed = 0;
    for (const tuner::LoggedTrial& trial : log.trials()) (trial.ok ? ok : failed) += 1;
    int plotted = 0;
    for (size_t task = 0; task < log.tasks().size(); ++task)
      plotted += pointCount(dashboard.trialPlot()->taskGraph(int(task)));
    QCOMPARE(plotted, ok);
    QCOMPARE(pointCount(dashboard.trialPlot()->errorGraph()), failed);
    // The cost model: its figures for every round that had predictions.
    int judged = 0;
    for (const tuner::LoggedRound& round : log.rounds()) judged += round.pairwiseAccuracy ? 1 : 0;
    QVERIFY(judged > 0);
    QCOMPARE(pointCount(dashboard.costModelPlot()->accuracyGraph()), judged);
    QCOMPARE(pointCount(dashboard.costModelPlot()->rhoGraph()), judged);
    QVERIFY(pointCount(dashboard.costModelPlot()->latestRoundGraph()) >= 2);
    // Progress: one staircase per task with rounds (no selection: every task).
    QVERIFY(dashboard.progressPlot()->graphCount() > 0);
    // Allocation: every round once, under the reason its task was chosen; warm-up first.
    int allocated = 0;
    for (const char* reason : {"warm-up", "gradient", "random"})
      allocated += pointCount(dashboard.allocationPlot()->reasonGraph(reason));
    QCOMPARE(allocated, int(log.rounds().size()));
    QCOMPARE(QString::fromStdString(log.rounds().front().chosenBy), QString("warm-up"));
    // The roofline: the machine's roof, and every task with floating-point work as its
    // default and its best, at its arithmetic intensity.
    QVERIFY(log.peakGflops() > 0 && log.bandwidthGBps() > 0);
    int onRoofline = 0;
    for (size_t task = 0; task < log.tasks().size(); ++task)
      onRoofline += log.tasks()[task].flops > 0 && log.tasks()[task].bytes > 0 ? 1 : 0;
    QVERIFY(onRoofline > 0);
    QCOMPARE(pointCount(dashboard.rooflinePlot()->defaultGraph()), onRoofline);
    QCOMPARE(pointCount(dashboard.rooflinePlot()->bestGraph()), onRoofline);
    QCOMPARE(pointCount(dashboard.rooflinePlot()->roofGraph()), 3);  // slope, ridge, flat
    // Every plot's data exports as CSV with a header and a line per point.
    QCOMPARE(dashboard.trialPlot()->csv().count('\n'), int(log.trials().size()) + 1);
    QCOMPARE(dashboard.costModelPlot()->csv().count('\n'), judged + 1);
  }

  void selectingATaskLinksTheTableAndThePlots() {
    TuningDashboard dashboard;
    dashboard.resize(1400, 900);
    dashboard.show();
    QVERIFY(dashboard.loadEvents(kSession, nullptr));
    QTRY_VERIFY(!dashboard.feed()->busy());
    const tuner::TuningEventLog& log = dashboard.feed()->log();
    // A task with floating-point work that was searched.
    int chosen = -1;
    for (size_t task = 0; task < log.tasks().size() && chosen < 0; ++task)
      if (log.tasks()[task].flops > 0 && !log.taskStates()[task].bestHistory.empty()) chosen = int(task);
    QVERIFY(chosen >= 0);
    QSignalSpy kernels(&dashboard, &TuningDashboard::taskSelected);
    dashboard.selectTask(chosen);
    QCOMPARE(dashboard.selectedTasks(), std::set<int>{chosen});
    QCOMPARE(kernels.count(), 1);
    QStringList expected;
    for (const std::string& kernel : log.tasks()[size_t(chosen)].kernels) expected << QString::fromStdString(kernel);
    QCOMPARE(kernels.back().front().toStringList(), expected);
    // The progress plot shows the selected task alone (its name, shortened when long).
    QCOMPARE(dashboard.progressPlot()->graphCount(), 1);
    QString name = QString::fromStdString(log.tasks()[size_t(chosen)].name);
    QVERIFY2(name.startsWith(dashboard.progressPlot()->graph(0)->name().chopped(1)),
             qPrintable(dashboard.progressPlot()->graph(0)->name()));

    // Clicking a trial's point opens it: the signal names its kernel and point.
    TrialScatterPlot* plot = dashboard.trialPlot();
    plot->replot();
    const tuner::LoggedTrial* target = nullptr;
    for (size_t i = 0; i < log.trials().size(); ++i)
      if (log.trials()[i].task == chosen && log.trials()[i].ok && log.trials()[i].origin == "search") {
        target = &log.trials()[i];
      }
    QVERIFY(target);
    QPointF pixel(plot->xAxis->coordToPixel(target->sessionTrials),
                  plot->yAxis->coordToPixel(TrialScatterPlot::relativeThroughput(log, *target)));
    int found = plot->trialAt(pixel);
    QVERIFY(found >= 0);
    // Points can overlap; whichever is hit lies under the cursor.
    const tuner::LoggedTrial& hit = log.trials()[size_t(found)];
    QCOMPARE(hit.sessionTrials, target->sessionTrials);
    QSignalSpy activated(&dashboard, &TuningDashboard::trialActivated);
    QTest::mouseClick(plot, Qt::LeftButton, {}, pixel.toPoint());
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.front().at(0).toString(), QString::fromStdString(log.tasks()[size_t(hit.task)].name));
    QCOMPARE(activated.front().at(1).toString(), QString::fromStdString(hit.point));

    // Double-clicking the task's row opens the schedule it is best with: the confirmed point,
    // else its fastest trial's.
    QModelIndex row;
    for (int r = 0; r < dashboard.taskTable()->model()->rowCount(); ++r) {
      QModelIndex index = dashboard.taskTable()->model()->index(r, 0);
      if (index.data(TuningTaskModel::TaskRole).toInt() == chosen) row = index;
    }
    QVERIFY(row.isValid());
    const tuner::LoggedTaskState& state = log.taskStates()[size_t(chosen)];
    std::string bestPoint = state.chosenPoint && !state.chosenPoint->empty()
                                ? *state.chosenPoint
                                : log.trials()[size_t(state.bestTrial)].point;
    dashboard.taskTable()->scrollTo(row);
    QPoint cell = dashboard.taskTable()->visualRect(row).center();
    // A double click is a press, a release and then the double-click (the view acts on the
    // second press only when the first was on the same row).
    QTest::mouseClick(dashboard.taskTable()->viewport(), Qt::LeftButton, {}, cell);
    QTest::mouseDClick(dashboard.taskTable()->viewport(), Qt::LeftButton, {}, cell);
    QCOMPARE(activated.count(), 2);
    QCOMPARE(activated.back().at(0).toString(), name);
    QCOMPARE(activated.back().at(1).toString(), QString::fromStdString(bestPoint));

    // A click on a task's mark in the roofline or the allocation plot selects that task.
    int other = -1;
    for (size_t task = 0; task < log.tasks().size() && other < 0; ++task)
      if (int(task) != chosen && log.tasks()[task].flops > 0 && log.tasks()[task].bytes > 0 &&
          log.taskStates()[task].defaultMs)
        other = int(task);
    QVERIFY(other >= 0);
    RooflinePlot* roofline = dashboard.rooflinePlot();
    roofline->replot();
    const tuner::LoggedTask& otherTask = log.tasks()[size_t(other)];
    QPointF mark(roofline->xAxis->coordToPixel(otherTask.flops / otherTask.bytes),
                 roofline->yAxis->coordToPixel(otherTask.flops / (*log.taskStates()[size_t(other)].defaultMs * 1e6)));
    int underMark = roofline->taskAt(mark);
    QVERIFY(underMark >= 0);
    QTest::mouseClick(roofline, Qt::LeftButton, {}, mark.toPoint());
    QCOMPARE(dashboard.selectedTasks(), std::set<int>{underMark});
    AllocationPlot* allocation = dashboard.allocationPlot();
    allocation->replot();
    QVERIFY(!log.rounds().empty());
    const tuner::LoggedRound& round = log.rounds().front();
    QPointF dot(allocation->xAxis->coordToPixel(round.round), allocation->yAxis->coordToPixel(round.task));
    QCOMPARE(allocation->taskAt(dot), round.task);
    QTest::mouseClick(allocation, Qt::LeftButton, {}, dot.toPoint());
    QCOMPARE(dashboard.selectedTasks(), std::set<int>{round.task});
    // Empty space selects nothing new.
    QCOMPARE(allocation->taskAt(QPointF(-100, -100)), -1);
  }

  void theHeatMapColoursTheNodesOfTunedKernelsOnly() {
    TuningEventFeed feed;
    feedAll(feed, readFile(kSession));
    const tuner::TuningEventLog& log = feed.log();
    // Each kernel computes a node of its own name; one more node's kernel was never tuned.
    std::map<std::string, std::string> kernelNodes{{"untuned_kernel", "untuned_node"}};
    int searchedKernels = 0, kernelsWithFlops = 0;
    for (size_t task = 0; task < log.tasks().size(); ++task) {
      for (const std::string& kernel : log.tasks()[task].kernels) kernelNodes[kernel] = "node_" + kernel;
      if (log.taskStates()[task].trials == 0) continue;
      searchedKernels += int(log.tasks()[task].kernels.size());
      if (log.tasks()[task].flops > 0) kernelsWithFlops += int(log.tasks()[task].kernels.size());
    }
    QVERIFY(tuningHeat(log, kernelNodes, HeatMode::None).empty());
    QVERIFY(heatLegendHtml(HeatMode::None).isEmpty());

    std::vector<NodeHeat> speedup = tuningHeat(log, kernelNodes, HeatMode::Speedup);
    QCOMPARE(int(speedup.size()), searchedKernels);
    for (const NodeHeat& node : speedup) {
      QVERIFY(node.node != "untuned_node");
      QVERIFY(node.colour.isValid());
      QVERIFY2(node.badge.endsWith('x') && node.badge.chopped(1).toDouble() > 0, qPrintable(node.badge));
    }
    // The badge is the session's confirmed speedup.
    for (size_t task = 0; task < log.tasks().size(); ++task) {
      const tuner::LoggedTaskState& state = log.taskStates()[task];
      if (!state.confirmedSpeedup) continue;
      QString node = QString::fromStdString("node_" + log.tasks()[task].kernels.front());
      auto found = std::find_if(speedup.begin(), speedup.end(), [&](const NodeHeat& h) { return h.node == node; });
      QVERIFY(found != speedup.end());
      QCOMPARE(found->badge, QString::number(*state.confirmedSpeedup, 'f', 2) + 'x');
    }

    std::vector<NodeHeat> roofline = tuningHeat(log, kernelNodes, HeatMode::Roofline);
    QCOMPARE(int(roofline.size()), kernelsWithFlops);
    for (const NodeHeat& node : roofline) {
      int percent = node.badge.chopped(1).toInt();
      QVERIFY2(node.badge.endsWith('%') && percent >= 0 && percent <= 100, qPrintable(node.badge));
    }
    std::vector<NodeHeat> trials = tuningHeat(log, kernelNodes, HeatMode::Trials);
    QCOMPARE(int(trials.size()), searchedKernels);
    for (HeatMode mode : {HeatMode::Speedup, HeatMode::Roofline, HeatMode::Trials})
      QVERIFY(!heatLegendHtml(mode).isEmpty());
  }

  // A closed module's box sums its operations' heat: their default time over their tuned
  // time, their tasks' trials (a task once however many of its kernels are inside), their
  // shares of the model's time.
  void moduleBoxesSumTheirOperationsHeat() {
    auto graph = tessel::testing::modularGraph(3);
    ModuleGroups modules(*graph);
    const QString conv1 = "/features/block2/layer1/conv/Conv", conv2 = "/features/block2/layer2/conv/Conv";
    auto heatOf = [&](double value1, double ms1, double value2, double ms2) {
      return std::vector<NodeHeat>{{conv1, Qt::green, {}, {}, value1, ms1, 0}, {conv2, Qt::green, {}, {}, value2, ms2, 0}};
    };
    auto find = [](const std::vector<NodeHeat>& heat, const QString& id) -> const NodeHeat* {
      for (const NodeHeat& node : heat)
        if (node.node == id) return &node;
      return nullptr;
    };
    // 2x on a 1 ms kernel, 1x on another: 2 ms of default work done in 1.5 ms.
    auto speedup = moduleHeat(heatOf(2.0, 1.0, 1.0, 1.0), modules, *graph, HeatMode::Speedup);
    const NodeHeat* block2 = find(speedup, "module:/features/block2");
    QVERIFY(block2);
    QCOMPARE(block2->badge, QString("1.33x"));
    QVERIFY2(block2->tooltip.contains("2 of its 9 operations"), qPrintable(block2->tooltip));
    QVERIFY(find(speedup, "module:/features"));
    QVERIFY(find(speedup, "module:/features/block2/layer1"));
    QVERIFY(!find(speedup, "module:/features/block1"));  // nothing of it was tuned

    auto trials = moduleHeat(heatOf(40, 0, 40, 0), modules, *graph, HeatMode::Trials);
    QCOMPARE(find(trials, "module:/features/block2")->badge, QString("40"));  // one task, counted once
    auto time = moduleHeat(heatOf(0.10, 1.0, 0.05, 0.5), modules, *graph, HeatMode::Time);
    QCOMPARE(find(time, "module:/features/block2")->badge, QString("15.0%"));
    auto roofline = moduleHeat(heatOf(0.9, 3.0, 0.3, 1.0), modules, *graph, HeatMode::Roofline);
    QCOMPARE(find(roofline, "module:/features/block2")->badge, QString("75%"));  // weighted by time
    QVERIFY(moduleHeat(heatOf(2, 1, 1, 1), modules, *graph, HeatMode::None).empty());
  }

  void twentyThousandEventsNeverStallTheEventLoop() {
    // A long session's stream arriving at once (a resumed dashboard reading its events file).
    QList<QByteArray> lines = readFile(kSession).split('\n');
    QByteArray start = lines.front();
    QByteArray trial;
    for (const QByteArray& line : lines)
      if (line.contains("\"event\":\"trial\"") && line.contains("\"ok\":true")) {
        trial = line;
        break;
      }
    QVERIFY(!trial.isEmpty());
    QByteArray stream = start + '\n';
    for (int i = 0; i < 20000; ++i) stream += trial + '\n';

    TuningDashboard dashboard;
    dashboard.resize(1400, 900);
    dashboard.show();
    // The GUI thread's own work between two turns of its event loop, in CPU time: on a busy
    // machine (CI runs tests in parallel) the thread may also wait for a core, which no code
    // of ours can prevent, and wall time would count that too.
    auto threadMilliseconds = [] {
      timespec now{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
      return qint64(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
    };
    QElapsedTimer clock;
    qint64 longestGap = 0, last = 0;
    QTimer ticker;
    ticker.setInterval(5);
    clock.start();
    connect(&ticker, &QTimer::timeout, [&] {
      longestGap = std::max(longestGap, threadMilliseconds() - last);
      last = threadMilliseconds();
    });
    ticker.start();
    last = threadMilliseconds();
    dashboard.feed()->append(stream);
    dashboard.feed()->finish();
    QTRY_VERIFY_WITH_TIMEOUT(!dashboard.feed()->busy(), 60000);
    QTest::qWait(300);  // the last redraw
    ticker.stop();
    QCOMPARE(int(dashboard.feed()->log().trials().size()), 20000);
    qInfo("20,000 events read in %lld ms; longest work between two turns of the event loop %lld ms (CPU time)",
          clock.elapsed(), longestGap);
    QVERIFY2(longestGap < 100, qPrintable(QString("the event loop stalled for %1 ms").arg(longestGap)));
  }

  void aSessionIsPausedResumedAndStoppedWithEveryTrialKept() {
    QTemporaryDir dir;
    QString records = dir.filePath("tiny.jsonl");
    TuningDashboard dashboard;
    dashboard.setModel(kModel, {});
    dashboard.setRecordsPath(records);
    dashboard.setBudgetMinutes(10);
    TuningRunner* runner = dashboard.runner();
    TuningRunRequest request = dashboard.request();
    request.tesselPath = kTessel;
    request.threads = 1;
    QString error;
    QVERIFY2(runner->start(request, &error), qPrintable(error));
    const tuner::TuningEventLog& log = runner->feed()->log();
    // Let it search a little, then pause.
    QTRY_VERIFY_WITH_TIMEOUT(log.rounds().size() >= 2, 120000);
    runner->pause();
    QCOMPARE(runner->state(), TuningRunner::State::Paused);
    QTRY_VERIFY_WITH_TIMEOUT(log.paused(), 60000);
    size_t whilePaused = log.trials().size();
    QTest::qWait(1500);
    QCOMPARE(log.trials().size(), whilePaused);  // nothing measured while paused
    runner->resume();
    QTRY_VERIFY_WITH_TIMEOUT(log.trials().size() > whilePaused + 2, 60000);
    QSignalSpy finished(runner, &TuningRunner::finished);
    runner->stop();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QVERIFY2(finished.front().at(0).toBool(), qPrintable(finished.front().at(1).toString()));
    QCOMPARE(runner->state(), TuningRunner::State::Finished);
    QTRY_VERIFY(!runner->feed()->busy());
    QCOMPARE(log.endReason().value_or(""), std::string("interrupted"));
    // Every trial the view saw is in the records file, and the stream was kept beside it.
    auto contents = tuner::readRecordFile(records.toStdString());
    QVERIFY(contents);
    QCOMPARE(contents->records.size(), log.trials().size());
    QVERIFY(QFile::exists(TuningRunner::eventsPathFor(records)));
    // Reopening shows the same session from the kept events.
    TuningDashboard reopened;
    reopened.setRecordsPath(records);
    QTRY_VERIFY(!reopened.feed()->busy());
    QCOMPARE(reopened.feed()->log().trials().size(), log.trials().size());
    // Without the kept stream the records alone tell the same session: every trial and round.
    QVERIFY(QFile::rename(TuningRunner::eventsPathFor(records), records + ".kept"));
    TuningDashboard fromRecords;
    QSignalSpy rebuilt(fromRecords.runner(), &TuningRunner::historyLoaded);
    fromRecords.setModel(kModel, {});
    fromRecords.setRecordsPath(records);
    QTRY_COMPARE_WITH_TIMEOUT(rebuilt.count(), 1, 60000);
    QVERIFY2(rebuilt.front().at(0).toBool(), qPrintable(rebuilt.front().at(1).toString()));
    QTRY_VERIFY(!fromRecords.feed()->busy());
    const tuner::TuningEventLog& history = fromRecords.feed()->log();
    QCOMPARE(history.trials().size(), log.trials().size());
    QCOMPARE(history.rounds().size(), log.rounds().size());
    QCOMPARE(history.tasks().size(), log.tasks().size());
    for (size_t i = 0; i < log.tasks().size(); ++i) QCOMPARE(history.tasks()[i].weight, log.tasks()[i].weight);
    QCOMPARE(history.endReason().value_or(""), std::string("records"));
    QVERIFY(fromRecords.taskModel()->rowCount() == int(log.tasks().size()));
    QVERIFY(QFile::rename(records + ".kept", TuningRunner::eventsPathFor(records)));

    // Start again without Resume: the user is asked. Cancel starts nothing and touches nothing.
    int asked = 0;
    size_t recorded = contents->records.size();
    reopened.setModel(kModel, {});
    reopened.setExistingRecordsPrompt([&](const QString& path) {
      ++asked;
      return path == records ? TuningDashboard::ExistingRecords::Cancel : TuningDashboard::ExistingRecords::Resume;
    });
    reopened.startSession();
    QCOMPARE(asked, 1);
    QVERIFY(!reopened.runner()->isActive());
    QCOMPARE(tuner::readRecordFile(records.toStdString())->records.size(), recorded);
    // Start Over moves the earlier session aside (records, model and events), deleting nothing.
    reopened.setExistingRecordsPrompt([&](const QString&) {
      ++asked;
      return TuningDashboard::ExistingRecords::StartOver;
    });
    reopened.startSession();
    QCOMPARE(asked, 2);
    QVERIFY(QFile::exists(records + ".previous"));
    QVERIFY(QFile::exists(records + ".previous.events"));
    QCOMPARE(tuner::readRecordFile((records + ".previous").toStdString())->records.size(), recorded);
    reopened.runner()->kill();
    QTRY_VERIFY_WITH_TIMEOUT(!reopened.runner()->isActive(), 30000);
  }
};

QTEST_MAIN(TestTuningDashboard)
#include "test_tuning_dashboard.moc"
