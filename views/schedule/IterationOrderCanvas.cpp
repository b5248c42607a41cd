// The grid of the iteration-order view.
#include "views/schedule/IterationOrderCanvas.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <map>

namespace tessel::views {

namespace {

// Tableau 10: ten hues that stay apart for colour-blind readers and on light or dark canvases.
const QColor kThreadColors[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59),
                                QColor(0x76, 0xb7, 0xb2), QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48),
                                QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
                                QColor(0xba, 0xb0, 0xac)};

QColor mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
                          float(a.blueF() * (1 - t) + b.blueF() * t));
}

// Label every `stride` indices, the smallest power of two leaving room for the text.
int labelStride(double cell, double textWidth) {
  int stride = 1;
  while (stride * cell < textWidth + 6 && stride < 1024) stride *= 2;
  return stride;
}

}  // namespace

IterationOrderCanvas::IterationOrderCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QColor IterationOrderCanvas::threadColor(int thread) {
  int count = int(std::size(kThreadColors));
  return kThreadColors[std::max(thread, 0) % count];
}

namespace {
// The index text of each dimension: `rowText` for the row dimension, `columnText` for the
// column dimension, 0 for the others.
QString indexText(const IterationOrder& order, const QString& rowText, const QString& columnText) {
  QStringList parts;
  for (int d = 0; d < int(order.bufferShape.size()); ++d)
    parts << (d == order.rowDimension ? rowText : d == order.columnDimension ? columnText : QStringLiteral("0"));
  return QStringLiteral("%1[%2]").arg(QString::fromStdString(order.bufferName), parts.join(QStringLiteral(", ")));
}
}  // namespace

QString IterationOrderCanvas::elementText(const IterationOrder& order, int row, int column) {
  return indexText(order, QString::number(row), QString::number(column));
}

QString IterationOrderCanvas::tileText(const IterationOrder& order) {
  return indexText(order, QStringLiteral("0:%1").arg(order.rows), QStringLiteral("0:%1").arg(order.columns));
}

void IterationOrderCanvas::setOrder(std::shared_ptr<const IterationOrder> order) {
  order_ = std::move(order);
  cellToEvent_.clear();
  if (order_) {
    cellToEvent_.assign(size_t(order_->rows) * size_t(order_->columns), -1);
    for (size_t i = 0; i < order_->cells.size(); ++i) {
      const ProducedCell& cell = order_->cells[i];
      cellToEvent_[size_t(cell.row) * size_t(order_->columns) + size_t(cell.column)] = int(i);
    }
  }
  step_ = 0;
  update();
}

void IterationOrderCanvas::setCurrentStep(int64_t step) {
  int64_t last = order_ ? order_->stepCount : 0;
  step = std::clamp<int64_t>(step, 0, last);
  if (step == step_) return;
  step_ = step;
  update();
}

QSize IterationOrderCanvas::sizeHint() const { return {520, 520}; }
QSize IterationOrderCanvas::minimumSizeHint() const { return {160, 160}; }

IterationOrderCanvas::Geometry IterationOrderCanvas::geometry() const {
  Geometry g;
  if (!order_ || order_->rows == 0 || order_->columns == 0) return g;
  QFontMetrics metrics(font());
  double left = metrics.horizontalAdvance(QString::number(std::max(order_->rows - 1, 0))) + 10;
  double top = metrics.height() + 6;
  QRectF area = QRectF(rect()).adjusted(left, top, -8, -8);
  g.cell = std::max(1.0, std::min(area.width() / order_->columns, area.height() / order_->rows));
  // Whole pixels per cell keep grid lines crisp.
  if (g.cell >= 4) g.cell = std::floor(g.cell);
  QSizeF size(g.cell * order_->columns, g.cell * order_->rows);
  g.grid = QRectF(area.left() + (area.width() - size.width()) / 2, area.top(), size.width(), size.height());
  return g;
}

QRectF IterationOrderCanvas::cellRect(int row, int column) const {
  Geometry g = geometry();
  return QRectF(g.grid.left() + column * g.cell, g.grid.top() + row * g.cell, g.cell, g.cell);
}

QPoint IterationOrderCanvas::cellAt(const QPoint& position) const {
  Geometry g = geometry();
  if (!order_ || g.cell <= 0 || !g.grid.contains(position)) return {-1, -1};
  int column = int((position.x() - g.grid.left()) / g.cell);
  int row = int((position.y() - g.grid.top()) / g.cell);
  if (row < 0 || row >= order_->rows || column < 0 || column >= order_->columns) return {-1, -1};
  return {column, row};
}

void IterationOrderCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  QPalette p = palette();
  painter.fillRect(rect(), p.color(QPalette::Window));
  Geometry g = geometry();
  if (!order_ || g.cell <= 0) {
    painter.setPen(p.color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, tr("No loop nest to animate yet"));
    return;
  }
  QColor empty = p.color(QPalette::Base);
  bool darkTheme = empty.lightness() < 128;
  QColor gridLine = mix(empty, p.color(QPalette::Text), darkTheme ? 0.18 : 0.12);
  painter.fillRect(g.grid, empty);
  paintLabels(painter, g);

  int64_t latest = step_ - 1;
  bool numbers = g.cell >= 22;
  QFont numberFont = font();
  numberFont.setPointSizeF(std::max(6.0, std::min(numberFont.pointSizeF(), g.cell * 0.32)));
  painter.setFont(numberFont);
  for (int row = 0; row < order_->rows; ++row) {
    for (int column = 0; column < order_->columns; ++column) {
      int event = cellToEvent_[size_t(row) * size_t(order_->columns) + size_t(column)];
      if (event < 0) continue;
      const ProducedCell& cell = order_->cells[size_t(event)];
      if (cell.step >= step_) continue;
      QRectF r(g.grid.left() + column * g.cell, g.grid.top() + row * g.cell, g.cell, g.cell);
      QColor color = threadColor(cell.thread);
      // Older cells fade towards the canvas so the wave front stands out.
      QColor fill = cell.step == latest ? color : mix(color, empty, 0.45);
      painter.fillRect(r, fill);
      if (numbers) {
        painter.setPen(fill.lightness() > 150 ? QColor(0x20, 0x20, 0x20) : QColor(0xf4, 0xf4, 0xf4));
        painter.drawText(r, Qt::AlignCenter, QString::number(cell.step + 1));
      }
    }
  }
  if (g.cell >= 5) {
    painter.setPen(QPen(gridLine, 1));
    for (int row = 0; row <= order_->rows; ++row)
      painter.drawLine(QPointF(g.grid.left(), g.grid.top() + row * g.cell),
                       QPointF(g.grid.right(), g.grid.top() + row * g.cell));
    for (int column = 0; column <= order_->columns; ++column)
      painter.drawLine(QPointF(g.grid.left() + column * g.cell, g.grid.top()),
                       QPointF(g.grid.left() + column * g.cell, g.grid.bottom()));
  }
  paintVectorOutlines(painter, g, latest);
  painter.setPen(QPen(mix(empty, p.color(QPalette::Text), 0.45), 1));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(g.grid);
}

void IterationOrderCanvas::paintLabels(QPainter& painter, const Geometry& g) const {
  QFontMetrics metrics(font());
  painter.setFont(font());
  painter.setPen(palette().color(QPalette::PlaceholderText));
  int columnStride = labelStride(g.cell, metrics.horizontalAdvance(QString::number(order_->columns - 1)));
  for (int column = 0; column < order_->columns; column += columnStride) {
    QRectF r(g.grid.left() + column * g.cell - 20, g.grid.top() - metrics.height() - 4, g.cell + 40, metrics.height());
    painter.drawText(r, Qt::AlignHCenter | Qt::AlignBottom, QString::number(column));
  }
  int rowStride = labelStride(g.cell, metrics.height() - 6);
  for (int row = 0; row < order_->rows; row += rowStride) {
    QRectF r(0, g.grid.top() + row * g.cell, g.grid.left() - 5, g.cell);
    painter.drawText(r, Qt::AlignRight | Qt::AlignVCenter, QString::number(row));
  }
}

// One outline around the lanes of each vector instruction produced so far: the lanes of a
// vector store are neighbours, so the outline reads as "these were written at once". The
// latest step's instructions, and its scalar cells, get a heavier ring.
void IterationOrderCanvas::paintVectorOutlines(QPainter& painter, const Geometry& g, int64_t latestStep) const {
  struct Box {
    int top = 1 << 30, left = 1 << 30, bottom = -1, right = -1, lanes = 0, thread = -1;
    int64_t step = 0;
  };
  std::map<int64_t, Box> boxes;
  QColor ring = palette().color(QPalette::Text);
  for (const ProducedCell& cell : order_->cells) {
    if (cell.step >= step_) break;  // cells are ordered by step
    if (cell.vectorInstruction < 0) {
      if (cell.step == latestStep) {
        painter.setPen(QPen(ring, std::max(1.5, g.cell * 0.12)));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(g.grid.left() + cell.column * g.cell, g.grid.top() + cell.row * g.cell, g.cell, g.cell));
      }
      continue;
    }
    Box& box = boxes[cell.vectorInstruction];
    box.top = std::min(box.top, cell.row);
    box.left = std::min(box.left, cell.column);
    box.bottom = std::max(box.bottom, cell.row);
    box.right = std::max(box.right, cell.column);
    box.lanes++;
    box.thread = cell.thread;
    box.step = cell.step;
  }
  if (g.cell < 3) {
    // Too small to outline every vector; only the latest step's are ringed.
    for (auto it = boxes.begin(); it != boxes.end();)
      it = it->second.step == latestStep ? std::next(it) : boxes.erase(it);
  }
  painter.setBrush(Qt::NoBrush);
  for (const auto& [instruction, box] : boxes) {
    // One lane in the tile (vectors along a dimension not shown) reads as a plain cell.
    if (box.lanes == 1 && box.step != latestStep) continue;
    QRectF r(g.grid.left() + box.left * g.cell, g.grid.top() + box.top * g.cell, (box.right - box.left + 1) * g.cell,
             (box.bottom - box.top + 1) * g.cell);
    bool latest = box.step == latestStep;
    QColor edge = latest ? ring : threadColor(box.thread).darker(170);
    double width = latest ? std::max(1.5, g.cell * 0.12) : std::max(1.0, g.cell * 0.06);
    painter.setPen(QPen(edge, width));
    double inset = width / 2;
    painter.drawRoundedRect(r.adjusted(inset, inset, -inset, -inset), std::min(3.0, g.cell / 4), std::min(3.0, g.cell / 4));
  }
}

bool IterationOrderCanvas::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip && order_) {
    auto* help = static_cast<QHelpEvent*>(event);
    QPoint cell = cellAt(help->pos());
    if (cell.x() < 0) {
      QToolTip::hideText();
      return true;
    }
    int index = cellToEvent_[size_t(cell.y()) * size_t(order_->columns) + size_t(cell.x())];
    QString where = elementText(*order_, cell.y(), cell.x());
    QString text;
    if (index < 0) {
      text = tr("<b>%1</b><br>never written by this kernel").arg(where);
    } else {
      const ProducedCell& c = order_->cells[size_t(index)];
      text = tr("<b>%1</b><br>produced at step %2 of %3").arg(where).arg(c.step + 1).arg(order_->stepCount);
      if (c.thread >= 0)
        text += tr("<br>thread %1 (iteration %2 of the parallel loop)").arg(c.thread).arg(c.parallelIteration);
      if (c.vectorInstruction >= 0) text += tr("<br>vector lane %1").arg(c.lane);
      if (c.step >= step_) text += tr("<br><i>not yet at this point of the animation</i>");
    }
    QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

}  // namespace tessel::views
