// The breadcrumb bar: the path from a layout's frames, and a row of flat buttons for it.
#include "views/graph/GraphBreadcrumbs.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include "views/graph/ModuleGroups.h"

namespace tessel::views {

namespace {

const QString kSeparator = QStringLiteral(" › ");

// A box's name as its crumb: the part after the innermost open module's path
// ("/features/denseblock3/denselayer12/conv/Conv" inside denselayer12 reads "conv/Conv").
QString nodeTitle(const LayoutNode& node, const QStringList& frames) {
  if (node.collapsedModule) return ModuleGroups::titleOf(node.id);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (!isModuleGroupId(*it)) continue;
    QString prefix = it->mid(kModuleGroupIdPrefix.size()) + QLatin1Char('/');
    if (node.name.startsWith(prefix) && node.name.size() > prefix.size()) return node.name.mid(prefix.size());
    break;
  }
  return node.name.isEmpty() ? node.title : node.name;
}

}  // namespace

std::vector<Breadcrumb> breadcrumbPath(const GraphLayout& layout, const QString& id) {
  std::vector<Breadcrumb> path{{QString(), GraphBreadcrumbs::tr("Graph")}};
  const LayoutNode* node = id.isEmpty() ? nullptr : layout.findNode(id);
  const LayoutCluster* frame = node || id.isEmpty() ? nullptr : layout.findCluster(id);
  if (!node && !frame) return path;
  QStringList frames = layout.enclosingClusters(id);
  if (frame) frames << id;
  for (const QString& frameId : frames) {
    const LayoutCluster* cluster = layout.findCluster(frameId);
    // A module by its own name; a fused operation by what it computes ("Conv + Relu").
    QString title = isModuleGroupId(frameId) ? ModuleGroups::titleOf(frameId) : cluster ? cluster->title : frameId;
    path.push_back({frameId, title});
  }
  if (node) path.push_back({node->id, nodeTitle(*node, frames)});
  return path;
}

GraphBreadcrumbs::GraphBreadcrumbs(QWidget* parent) : QWidget(parent), row_(new QHBoxLayout(this)) {
  setObjectName(QStringLiteral("GraphBreadcrumbs"));
  row_->setContentsMargins(6, 1, 6, 1);
  row_->setSpacing(0);
  row_->addStretch(1);
  // One height whatever the path holds (an empty one too): the view below must not move by a
  // few pixels each time the path changes, which would shift what is anchored on screen.
  QToolButton sample;
  sample.setAutoRaise(true);
  sample.setText(QStringLiteral("Graph"));
  QFont bold = sample.font();
  bold.setBold(true);
  sample.setFont(bold);
  setFixedHeight(sample.sizeHint().height() + 2);
}

void GraphBreadcrumbs::setPath(std::vector<Breadcrumb> path) {
  if (path == path_) return;
  path_ = std::move(path);
  while (QLayoutItem* item = row_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  for (size_t i = 0; i < path_.size(); ++i) {
    if (i > 0) row_->addWidget(new QLabel(kSeparator.trimmed(), this));
    auto* button = new QToolButton(this);
    button->setAutoRaise(true);
    button->setText(path_[i].title);
    button->setToolTip(path_[i].id.isEmpty() ? tr("Show the whole graph")
                                             : tr("Go to %1").arg(isModuleGroupId(path_[i].id)
                                                                      ? path_[i].id.mid(kModuleGroupIdPrefix.size())
                                                                      : path_[i].id));
    if (i + 1 == path_.size()) {
      QFont font = button->font();
      font.setBold(true);
      button->setFont(font);
    }
    QString id = path_[i].id;
    connect(button, &QToolButton::clicked, this, [this, id] { emit crumbClicked(id); });
    row_->addWidget(button);
  }
  row_->addStretch(1);
}

QString GraphBreadcrumbs::text() const {
  QStringList titles;
  for (const Breadcrumb& crumb : path_) titles << crumb.title;
  return titles.join(kSeparator);
}

}  // namespace tessel::views
