// Module groups from operation names: directories, counts, and which groups are worth a box.
#include "views/graph/ModuleGroups.h"

#include <algorithm>
#include <optional>

#include "core/graph/UnsupportedOperations.h"

namespace tessel::views {

namespace {

// The directories of an operation's name, outermost first: "/a/b/c/Conv" -> "/a", "/a/b",
// "/a/b/c"; "model/dense/MatMul" -> "model", "model/dense". A name without a directory
// ("Conv_12", "/Conv") has none.
std::vector<std::string> directoriesOf(const std::string& name) {
  std::vector<std::string> directories;
  size_t last = name.find_last_of('/');
  if (last == std::string::npos || last == 0) return directories;
  for (size_t slash = name.find('/', 1); slash != std::string::npos && slash <= last; slash = name.find('/', slash + 1))
    if (name[slash - 1] != '/') directories.push_back(name.substr(0, slash));  // "a//b": no empty part
  return directories;
}

// The directories both paths start with.
std::vector<std::string> commonDirectories(std::vector<std::string> a, const std::vector<std::string>& b) {
  size_t shared = 0;
  while (shared < a.size() && shared < b.size() && a[shared] == b[shared]) ++shared;
  a.resize(shared);
  return a;
}

// A fused operation's directories: those every body operation with a directory shares (the
// fusion pass names the kernel itself "fused_Conv_Relu_3", without one).
std::vector<std::string> directoriesOf(const graph::OperationNode& op) {
  if (!op.isFused()) return directoriesOf(op.name);
  std::vector<std::string> common;
  bool first = true;
  for (const graph::OperationNode* inner : op.body->operations()) {
    std::vector<std::string> own = directoriesOf(inner->name);
    if (own.empty()) continue;
    common = first ? std::move(own) : commonDirectories(std::move(common), own);
    first = false;
  }
  return common;
}

// The operator a group's summary counts an operation as: a fused kernel as its first body op.
std::string operatorOf(const graph::OperationNode& op) {
  if (graph::isUnsupported(op)) return graph::unsupportedOperator(op).opType;  // "Det", not "Unsupported"
  if (op.isFused())
    for (const graph::OperationNode* inner : op.body->operations()) return inner->op;
  return op.op;
}

// Every operation's directories, an operation without any in its name (exporters leave some
// nameless: DenseNet-121 has sixty "Identity_NN" at the top) taking those its consumers all
// share, or with no consumer those its producers all share: it then sits in the module whose
// work it serves instead of beside the modules as a box of its own.
std::unordered_map<const graph::OperationNode*, std::vector<std::string>> directoriesOfAll(
    const std::vector<const graph::OperationNode*>& operations) {
  std::unordered_map<const graph::OperationNode*, std::vector<std::string>> directories;
  std::unordered_map<const graph::OperationNode*, std::vector<const graph::OperationNode*>> consumers;
  std::vector<const graph::OperationNode*> nameless;
  for (const graph::OperationNode* op : operations) {
    directories[op] = directoriesOf(*op);
    if (directories[op].empty()) nameless.push_back(op);
    for (const graph::Value& input : op->inputs)
      if (const graph::OperationNode* producer = input.defined() ? graph::asOperation(input.node()) : nullptr)
        consumers[producer].push_back(op);
  }
  // Consumers come later in topological order: going backwards, a chain of nameless operations
  // hands the module down to its start.
  auto adoptFrom = [&](const std::vector<const graph::OperationNode*>& neighbours) {
    std::optional<std::vector<std::string>> shared;
    for (const graph::OperationNode* neighbour : neighbours)
      shared = shared ? commonDirectories(std::move(*shared), directories[neighbour]) : directories[neighbour];
    return shared.value_or(std::vector<std::string>{});
  };
  for (auto it = nameless.rbegin(); it != nameless.rend(); ++it)
    if (auto found = consumers.find(*it); found != consumers.end()) directories[*it] = adoptFrom(found->second);
  for (const graph::OperationNode* op : nameless) {
    if (consumers.count(op)) continue;
    std::vector<const graph::OperationNode*> producers;
    for (const graph::Value& input : op->inputs)
      if (const graph::OperationNode* producer = input.defined() ? graph::asOperation(input.node()) : nullptr)
        producers.push_back(producer);
    directories[op] = adoptFrom(producers);
  }
  return directories;
}

}  // namespace

QString flopsText(double flops) {
  static const std::pair<double, const char*> units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : units)
    if (flops >= scale) return QStringLiteral("%1 %2FLOPs").arg(flops / scale, 0, 'g', 3).arg(QLatin1String(prefix));
  return QStringLiteral("%1 FLOPs").arg(flops, 0, 'g', 3);
}

ModuleGroups::ModuleGroups(const graph::Graph& graph, const NodeCosts* costs, double openShare)
    : graph_(&graph), costs_(costs), openShare_(openShare) {
  if (costs) totalMilliseconds_ = costs->totalMilliseconds;
  std::vector<const graph::OperationNode*> operations = graph.operations();
  std::unordered_map<const graph::OperationNode*, std::vector<std::string>> directories = directoriesOfAll(operations);
  std::map<std::string, int> counts;
  for (const graph::OperationNode* op : operations)
    for (const std::string& directory : directories[op]) ++counts[directory];
  // Worth a box: more than one operation, and fewer than the enclosing group (or the graph).
  auto worthABox = [&](const std::vector<std::string>& path, size_t depth) {
    int count = counts[path[depth]];
    int enclosing = depth == 0 ? int(operations.size()) : counts[path[depth - 1]];
    return count >= 2 && count < enclosing;
  };
  for (const graph::OperationNode* op : operations) {
    const auto& path = directories[op];
    QStringList ids;
    for (size_t depth = 0; depth < path.size(); ++depth) {
      if (!worthABox(path, depth)) continue;
      QString id = kModuleGroupIdPrefix + QString::fromStdString(path[depth]);
      Group& group = counts_[id];
      ++group.operations;
      ++group.opCounts[operatorOf(*op)];
      if (costs) {
        if (auto flops = costs->flops.find(op->name); flops != costs->flops.end()) group.flops += flops->second;
        if (auto ms = costs->milliseconds.find(op->name); ms != costs->milliseconds.end()) {
          group.milliseconds += ms->second;
          group.profiled = true;
        }
      }
      ids << id;
    }
    if (!ids.isEmpty()) groupsOfOp_[op] = std::move(ids);
  }
  // Outermost first ("/a" sorts before "/a/b"): a group's encloser is decided before it.
  for (auto& [id, group] : counts_) {
    QString enclosing;
    for (QString path = id.mid(kModuleGroupIdPrefix.size()); path.lastIndexOf(QLatin1Char('/')) > 0;) {
      path.truncate(path.lastIndexOf(QLatin1Char('/')));
      if (counts_.count(kModuleGroupIdPrefix + path)) {
        enclosing = kModuleGroupIdPrefix + path;
        break;
      }
    }
    const Group* parent = enclosing.isEmpty() ? nullptr : &counts_.at(enclosing);
    if (parent && !parent->opensByDefault) continue;
    double around = parent ? double(parent->operations) : double(operations.size());
    group.opensByDefault = double(group.operations) > openShare * around;
  }
}

bool ModuleGroups::opensByDefault(const QString& id) const {
  auto it = counts_.find(id);
  return it != counts_.end() && it->second.opensByDefault;
}

const QStringList& ModuleGroups::groupsOf(const graph::OperationNode* op) const {
  static const QStringList none;
  auto it = groupsOfOp_.find(op);
  return it == groupsOfOp_.end() ? none : it->second;
}

int ModuleGroups::operationCount(const QString& id) const {
  auto it = counts_.find(id);
  return it == counts_.end() ? 0 : it->second.operations;
}

QString ModuleGroups::summary(const QString& id) const {
  auto it = counts_.find(id);
  if (it == counts_.end()) return {};
  std::vector<std::pair<int, std::string>> byCount;
  for (const auto& [op, count] : it->second.opCounts) byCount.push_back({-count, op});
  std::sort(byCount.begin(), byCount.end());
  QStringList parts;
  for (size_t i = 0; i < byCount.size() && i < 3; ++i)
    parts << QStringLiteral("%1 %2").arg(-byCount[i].first).arg(QString::fromStdString(byCount[i].second));
  if (byCount.size() > 3) parts << QStringLiteral("…");
  return QStringLiteral("%1 operations: %2").arg(it->second.operations).arg(parts.join(QStringLiteral(", ")));
}

QString ModuleGroups::costLine(const QString& id) const {
  auto it = counts_.find(id);
  if (it == counts_.end()) return {};
  const Group& group = it->second;
  QStringList parts;
  if (group.flops > 0) parts << flopsText(group.flops);
  if (group.profiled) {
    QString time = QStringLiteral("%1 ms").arg(group.milliseconds, 0, 'f', group.milliseconds < 10 ? 3 : 1);
    if (totalMilliseconds_ > 0) time += QStringLiteral(" (%1%)").arg(100.0 * group.milliseconds / totalMilliseconds_, 0, 'f', 1);
    parts << time;
  }
  return parts.join(QStringLiteral(" · "));
}

QString ModuleGroups::titleOf(const QString& id) {
  QString path = id.mid(kModuleGroupIdPrefix.size());
  return path.mid(path.lastIndexOf(QLatin1Char('/')) + 1);
}

QStringList ModuleGroups::groups() const {
  QStringList ids;
  for (const auto& [id, group] : counts_) ids << id;
  return ids;  // "/a" sorts before "/a/b"
}

}  // namespace tessel::views
