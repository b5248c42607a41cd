// An interpreter of lowered loop nests that records when each output element is produced.
#include "compiler/lower/IterationOrder.h"
#include "compiler/schedule/TensorIntrinsic.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/IRVisitor.h"
#include "runtime/ThreadPool.h"

namespace tessel {

namespace {

/// Thrown by the evaluator for an expression it cannot compute from loop variables alone
/// (a load, a float, an unbound variable); the statement using it is then skipped or guessed.
struct NotEvaluable {
  std::string what;
};
struct BudgetExhausted {};

/// Which element of the output lands in the shown tile: dimensions `rowDimension` (-1: a single
/// row) and `columnDimension` (-1: a single column) from index 0, every other dimension at 0.
class TileGeometry {
public:
  TileGeometry(std::vector<int64_t> shape, int rowDimension, int columnDimension, int maxRows, int maxColumns)
      : shape_(std::move(shape)), rowDimension_(rowDimension), columnDimension_(columnDimension) {
    rows_ = rowDimension_ >= 0 ? int(std::min<int64_t>(shape_[size_t(rowDimension_)], maxRows)) : 1;
    columns_ = columnDimension_ >= 0 ? int(std::min<int64_t>(shape_[size_t(columnDimension_)], maxColumns)) : 1;
    rows_ = std::max(rows_, 0);
    columns_ = std::max(columns_, 0);
  }
  int rows() const { return rows_; }
  int columns() const { return columns_; }
  const std::vector<int64_t>& shape() const { return shape_; }

  /// The tile cell (row * columns + column) of a flat row-major element index, or -1.
  int cellOfFlatIndex(int64_t flat) const {
    if (flat < 0) return -1;
    coordinates_.resize(shape_.size());
    for (size_t d = shape_.size(); d-- > 0;) {
      coordinates_[d] = shape_[d] > 0 ? flat % shape_[d] : 0;
      flat = shape_[d] > 0 ? flat / shape_[d] : 0;
    }
    if (flat != 0) return -1;  // past the end
    return cellOfCoordinates(coordinates_);
  }

  /// The tile cell of one index per dimension, or -1.
  int cellOfCoordinates(const std::vector<int64_t>& coordinates) const {
    for (size_t d = 0; d < shape_.size(); ++d)
      if (int(d) != rowDimension_ && int(d) != columnDimension_ && coordinates[d] != 0) return -1;
    int64_t row = rowDimension_ >= 0 ? coordinates[size_t(rowDimension_)] : 0;
    int64_t column = columnDimension_ >= 0 ? coordinates[size_t(columnDimension_)] : 0;
    if (row < 0 || row >= rows_ || column < 0 || column >= columns_) return -1;
    return int(row * columns_ + column);
  }

private:
  std::vector<int64_t> shape_;
  int rowDimension_, columnDimension_;
  int rows_ = 1, columns_ = 1;
  mutable std::vector<int64_t> coordinates_;  // scratch, so the hot path does not allocate
};

// Dimensions 2 and 3 of outputs of rank 4 or more (H and W of NCHW and of NCHW16c, whose
// trailing channel block is not an image axis), else the last two.
std::pair<int, int> defaultTileDimensions(const std::vector<int64_t>& shape) {
  int rank = int(shape.size());
  if (rank == 0) return {-1, -1};
  if (rank == 1) return {-1, 0};
  if (rank >= 4) return {2, 3};
  return {rank - 2, rank - 1};
}

/// The last write to one tile cell, with its raw (not yet renumbered) time.
struct FinalWrite {
  bool written = false;
  int64_t time = 0;
  int thread = -1;
  int64_t parallelIteration = -1;
  int64_t vectorInstruction = -1;
  int lane = 0;
};

/// Runs a loop nest with integer semantics for indices only: loops, lets and conditions are
/// followed, and each store to the output is timed. Time advances by one per in-tile store
/// (or per vector instruction); inside a parallel loop each thread has its own clock starting
/// at the loop's start, so the threads' stores interleave the way they would run.
class LoopNestInterpreter {
public:
  LoopNestInterpreter(const Buffer& output, const TileGeometry& tile, int threads, int64_t budget)
      : output_(output->data.get()), tile_(tile), threads_(std::max(threads, 1)), budget_(budget),
        writes_(size_t(tile.rows()) * size_t(tile.columns())) {}

  /// Runs `body`; false when the statement budget ran out first.
  bool run(const Stmt& body) {
    try {
      exec(body);
      return true;
    } catch (const BudgetExhausted&) {
      return false;
    }
  }

  const std::vector<FinalWrite>& writes() const { return writes_; }
  int threadsUsed() const { return threadsUsed_; }
  int widestInstruction() const { return widestInstruction_; }
  const std::string& parallelLoopName() const { return parallelLoopName_; }
  int64_t parallelLoopExtent() const { return parallelLoopExtent_; }
  const std::set<std::string>& notes() const { return notes_; }

private:
  void exec(const Stmt& s) {
    if (!s.defined()) return;
    if (++executed_ > budget_) throw BudgetExhausted{};
    switch (s->kind()) {
      case NodeKind::For: execFor(s.as<ForNode>()); break;
      case NodeKind::SeqStmt:
        for (const Stmt& item : s.as<SeqStmtNode>()->seq)
          if (writesOutput(item)) exec(item);
        break;
      case NodeKind::LetStmt: execLet(s.as<LetStmtNode>()); break;
      case NodeKind::IfThenElse: execIf(s.as<IfThenElseNode>()); break;
      case NodeKind::Allocate: exec(s.as<AllocateNode>()->body); break;
      case NodeKind::AttrStmt: execAttr(s.as<AttrStmtNode>()); break;
      case NodeKind::BufferRealize: exec(s.as<BufferRealizeNode>()->body); break;
      case NodeKind::BufferStore: execStore(s.as<BufferStoreNode>()); break;
      default: break;  // Evaluate and anything else writes no output element
    }
  }

  // A tile_u8i8 nest is one instruction's worth of outputs, as a vectorized loop is: its
  // stores share one step and one instruction, whatever loops it keeps inside.
  void execAttr(const AttrStmtNode* attr) {
    if (attr->key != kTileDotAttr || vectorGroup_ >= 0) return exec(attr->body);
    vectorGroup_ = nextVectorInstruction_++;
    vectorGroupTime_ = -1;
    vectorGroupLane_ = 0;
    exec(attr->body);
    vectorGroup_ = -1;
  }

  void execFor(const ForNode* loop) {
    if (!writesOutput(loop->body)) return;
    int64_t min = 0, extent = 0;
    try {
      min = eval(loop->min, 0);
      extent = eval(loop->extent, 0);
    } catch (const NotEvaluable& unknown) {
      notes_.insert("The loop over '" + loop->loopVar.name() + "' has bounds that depend on " + unknown.what +
                    ", so the elements it writes are not shown.");
      return;
    }
    if (extent <= 0) return;
    bool startsParallel = loop->forKind == ForKind::Parallel && currentThread_ < 0;
    bool startsVector = loop->forKind == ForKind::Vectorized && vectorGroup_ < 0;
    // Every iteration of a reduction loop writes the same elements: only the last one decides
    // the final writes, so the others are skipped (a K of 1024 costs one iteration).
    int64_t first = iterationsRewriteTheSameElements(loop) ? min + extent - 1 : min;

    env_.emplace_back(loop->loopVar.get(), first);
    if (startsParallel) {
      runParallel(loop, min, extent);
    } else if (startsVector) {
      vectorGroup_ = nextVectorInstruction_++;
      vectorGroupTime_ = -1;
      vectorGroupLane_ = 0;
      for (int64_t i = first; i < min + extent; ++i) {
        env_.back().second = i;
        exec(loop->body);
      }
      vectorGroup_ = -1;
    } else {
      for (int64_t i = first; i < min + extent; ++i) {
        env_.back().second = i;
        exec(loop->body);
      }
    }
    env_.pop_back();
  }

  // The runtime's split: min(threads, extent) contiguous chunks, the first (extent % chunks)
  // one iteration longer; every chunk starts at the loop's start time.
  void runParallel(const ForNode* loop, int64_t min, int64_t extent) {
    int64_t chunks = std::min<int64_t>(threads_, extent);
    int64_t base = extent / chunks, remainder = extent % chunks;
    std::vector<int64_t> clocks(size_t(chunks), clock_);
    threadsUsed_ = std::max(threadsUsed_, int(chunks));
    if (parallelLoopName_.empty()) {
      parallelLoopName_ = loop->loopVar.name();
      parallelLoopExtent_ = extent;
    }
    for (int64_t i = 0; i < extent; ++i) {
      int64_t longChunksEnd = remainder * (base + 1);
      int thread = int(i < longChunksEnd ? i / (base + 1) : remainder + (i - longChunksEnd) / base);
      currentThread_ = thread;
      parallelIteration_ = i;
      clock_ = clocks[size_t(thread)];
      env_.back().second = min + i;
      exec(loop->body);
      clocks[size_t(thread)] = clock_;
    }
    currentThread_ = -1;
    parallelIteration_ = -1;
    clock_ = *std::max_element(clocks.begin(), clocks.end());
  }

  void execLet(const LetStmtNode* let) {
    bool bound = false;
    try {
      env_.emplace_back(let->var.get(), eval(let->value, 0));
      bound = true;
    } catch (const NotEvaluable&) {
      // A let of a loaded value or a float: indices never use it, so leave it unbound.
    }
    exec(let->body);
    if (bound) env_.pop_back();
  }

  void execIf(const IfThenElseNode* branch) {
    bool taken = true;
    try {
      taken = eval(branch->condition, 0) != 0;
    } catch (const NotEvaluable& unknown) {
      notes_.insert("A condition depends on " + unknown.what +
                    "; the picture assumes it holds wherever it guards a store.");
    }
    exec(taken ? branch->thenCase : branch->elseCase);
  }

  void execStore(const BufferStoreNode* store) {
    if (store->buffer->data.get() != output_) return;
    int lanes = 1;
    for (const Expr& index : store->indices) lanes = std::max(lanes, index.dtype().lanes());
    std::vector<std::pair<int, int>> cellAndLane;
    try {
      for (int lane = 0; lane < lanes; ++lane) {
        int cell = -1;
        if (store->indices.size() == 1 && tile_.shape().size() != 1) {  // flattened
          cell = tile_.cellOfFlatIndex(eval(store->indices[0], lane));
        } else {
          std::vector<int64_t> coordinates;
          for (const Expr& index : store->indices) coordinates.push_back(eval(index, lane));
          if (coordinates.size() != tile_.shape().size()) return;
          cell = tile_.cellOfCoordinates(coordinates);
        }
        if (cell >= 0) cellAndLane.emplace_back(cell, lane);
      }
    } catch (const NotEvaluable& unknown) {
      notes_.insert("The store to " + store->buffer.name() + " has an index that depends on " + unknown.what +
                    ", so the elements it writes are not shown.");
      return;
    }
    if (cellAndLane.empty()) return;  // outside the tile: no step for the animation
    widestInstruction_ = std::max(widestInstruction_, lanes);

    int64_t time = 0, instruction = -1;
    bool laneFromGroup = false;
    if (vectorGroup_ >= 0) {
      if (vectorGroupTime_ < 0) vectorGroupTime_ = clock_++;
      time = vectorGroupTime_;
      instruction = vectorGroup_;
      laneFromGroup = true;
    } else {
      time = clock_++;
      if (lanes > 1) instruction = nextVectorInstruction_++;
    }
    for (auto [cell, lane] : cellAndLane) {
      FinalWrite& write = writes_[size_t(cell)];
      write.written = true;
      write.time = time;
      write.thread = currentThread_;
      write.parallelIteration = parallelIteration_;
      write.vectorInstruction = instruction;
      write.lane = laneFromGroup ? vectorGroupLane_++ : lane;
    }
  }

  int64_t lookup(const VarNode* var) const {
    for (auto it = env_.rbegin(); it != env_.rend(); ++it)
      if (it->first == var) return it->second;
    throw NotEvaluable{"'" + var->name + "'"};
  }

  // Integer value of `e` in `lane` (scalars ignore the lane).
  int64_t eval(const Expr& e, int lane) {
    switch (e->kind()) {
      case NodeKind::IntImm: return e.as<IntImmNode>()->value;
      case NodeKind::Var: return lookup(e.as<VarNode>());
#define TESSEL_EVAL_BINARY(Name, formula)        \
  case NodeKind::Name: {                         \
    auto* node = e.as<Name##Node>();             \
    int64_t a = eval(node->a, lane);             \
    int64_t b = eval(node->b, lane);             \
    return formula;                              \
  }
      TESSEL_EVAL_BINARY(Add, a + b)
      TESSEL_EVAL_BINARY(Sub, a - b)
      TESSEL_EVAL_BINARY(Mul, a * b)
      TESSEL_EVAL_BINARY(Div, b == 0 ? throw NotEvaluable{"a division by zero"} : a / b)
      TESSEL_EVAL_BINARY(Mod, b == 0 ? throw NotEvaluable{"a division by zero"} : a % b)
      TESSEL_EVAL_BINARY(FloorDiv, floorDivide(a, b))
      TESSEL_EVAL_BINARY(FloorMod, a - floorDivide(a, b) * b)
      TESSEL_EVAL_BINARY(Min, std::min(a, b))
      TESSEL_EVAL_BINARY(Max, std::max(a, b))
      TESSEL_EVAL_BINARY(EQ, a == b)
      TESSEL_EVAL_BINARY(NE, a != b)
      TESSEL_EVAL_BINARY(LT, a < b)
      TESSEL_EVAL_BINARY(LE, a <= b)
      TESSEL_EVAL_BINARY(GT, a > b)
      TESSEL_EVAL_BINARY(GE, a >= b)
      TESSEL_EVAL_BINARY(And, a && b)
      TESSEL_EVAL_BINARY(Or, a || b)
#undef TESSEL_EVAL_BINARY
      case NodeKind::Not: return !eval(e.as<NotNode>()->a, lane);
      case NodeKind::Select: {
        auto* select = e.as<SelectNode>();
        return eval(select->condition, lane) ? eval(select->trueValue, lane) : eval(select->falseValue, lane);
      }
      case NodeKind::Cast: {
        auto* cast = e.as<CastNode>();
        if (!cast->dtype.isIntegral() && !cast->dtype.isBool()) break;
        int64_t value = eval(cast->value, lane);
        return cast->dtype.isBool() ? value != 0 : value;
      }
      case NodeKind::Call: {
        auto* call = e.as<CallNode>();
        if (call->op == Intrinsic::Likely && call->args.size() == 1) return eval(call->args[0], lane);
        break;
      }
      case NodeKind::Ramp: {
        auto* ramp = e.as<RampNode>();
        return eval(ramp->base, lane) + int64_t(lane) * eval(ramp->stride, lane);
      }
      case NodeKind::Broadcast: return eval(e.as<BroadcastNode>()->value, lane);
      case NodeKind::Let: {
        auto* let = e.as<LetNode>();
        env_.emplace_back(let->var.get(), eval(let->value, lane));
        int64_t value = 0;
        try {
          value = eval(let->body, lane);
        } catch (...) {
          env_.pop_back();
          throw;
        }
        env_.pop_back();
        return value;
      }
      case NodeKind::BufferLoad: throw NotEvaluable{"data loaded from " + e.as<BufferLoadNode>()->buffer.name()};
      default: break;
    }
    throw NotEvaluable{"a value that is not an integer index (" + std::string(nodeKindName(e->kind())) + ")"};
  }

  static int64_t floorDivide(int64_t a, int64_t b) {
    if (b == 0) throw NotEvaluable{"a division by zero"};
    int64_t quotient = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? quotient - 1 : quotient;
  }

  // --- Static facts about statements, computed once per node.

  bool writesOutput(const Stmt& s) {
    if (!s.defined()) return false;
    auto found = writesOutput_.find(s.get());
    if (found != writesOutput_.end()) return found->second;
    bool writes = false;
    switch (s->kind()) {
      case NodeKind::For: writes = writesOutput(s.as<ForNode>()->body); break;
      case NodeKind::SeqStmt:
        for (const Stmt& item : s.as<SeqStmtNode>()->seq) writes = writesOutput(item) || writes;
        break;
      case NodeKind::LetStmt: writes = writesOutput(s.as<LetStmtNode>()->body); break;
      case NodeKind::IfThenElse: {
        auto* branch = s.as<IfThenElseNode>();
        writes = writesOutput(branch->thenCase) || (branch->elseCase.defined() && writesOutput(branch->elseCase));
        break;
      }
      case NodeKind::Allocate: writes = writesOutput(s.as<AllocateNode>()->body); break;
      case NodeKind::AttrStmt: writes = writesOutput(s.as<AttrStmtNode>()->body); break;
      case NodeKind::BufferRealize: writes = writesOutput(s.as<BufferRealizeNode>()->body); break;
      case NodeKind::BufferStore: writes = s.as<BufferStoreNode>()->buffer->data.get() == output_; break;
      default: break;
    }
    writesOutput_[s.get()] = writes;
    return writes;
  }

  // True for a serial or unrolled loop whose variable decides neither which output element
  // is written nor which statements run: then every iteration writes the same elements in the
  // same order, and only the last iteration's writes are final.
  bool iterationsRewriteTheSameElements(const ForNode* loop) {
    if (loop->forKind != ForKind::Serial && loop->forKind != ForKind::Unrolled) return false;
    auto found = rewritesSame_.find(loop);
    if (found != rewritesSame_.end()) return found->second;
    std::unordered_set<const VarNode*> control;
    collectControlVariables(loop->body, control);
    bool same = !control.count(loop->loopVar.get());
    rewritesSame_[loop] = same;
    return same;
  }

  // Variables that decide which output elements are written and which statements run: those
  // in output store indices, conditions, loop bounds and let values (conservatively all lets).
  void collectControlVariables(const Stmt& s, std::unordered_set<const VarNode*>& control) {
    if (!s.defined()) return;
    auto addVariablesOf = [&](const Expr& e) {
      postOrderVisit(e, [&](const Expr& sub) {
        if (auto* var = sub.as<VarNode>()) control.insert(var);
      });
    };
    switch (s->kind()) {
      case NodeKind::For: {
        auto* loop = s.as<ForNode>();
        addVariablesOf(loop->min);
        addVariablesOf(loop->extent);
        collectControlVariables(loop->body, control);
        break;
      }
      case NodeKind::SeqStmt:
        for (const Stmt& item : s.as<SeqStmtNode>()->seq) collectControlVariables(item, control);
        break;
      case NodeKind::LetStmt:
        addVariablesOf(s.as<LetStmtNode>()->value);
        collectControlVariables(s.as<LetStmtNode>()->body, control);
        break;
      case NodeKind::IfThenElse: {
        auto* branch = s.as<IfThenElseNode>();
        addVariablesOf(branch->condition);
        collectControlVariables(branch->thenCase, control);
        collectControlVariables(branch->elseCase, control);
        break;
      }
      case NodeKind::Allocate: collectControlVariables(s.as<AllocateNode>()->body, control); break;
      case NodeKind::AttrStmt: collectControlVariables(s.as<AttrStmtNode>()->body, control); break;
      case NodeKind::BufferRealize: collectControlVariables(s.as<BufferRealizeNode>()->body, control); break;
      case NodeKind::BufferStore: {
        auto* store = s.as<BufferStoreNode>();
        if (store->buffer->data.get() == output_)
          for (const Expr& index : store->indices) addVariablesOf(index);
        break;
      }
      default: break;
    }
  }

  const Node* output_;
  const TileGeometry& tile_;
  int threads_;
  int64_t budget_;
  int64_t executed_ = 0;

  std::vector<std::pair<const VarNode*, int64_t>> env_;
  int64_t clock_ = 0;
  int currentThread_ = -1;
  int64_t parallelIteration_ = -1;
  int threadsUsed_ = 1;
  int widestInstruction_ = 1;
  std::string parallelLoopName_;  // the first parallel loop that wrote the output
  int64_t parallelLoopExtent_ = 0;
  int64_t nextVectorInstruction_ = 0;
  int64_t vectorGroup_ = -1;  // the open vectorized loop's instruction, -1 when none
  int64_t vectorGroupTime_ = -1;
  int vectorGroupLane_ = 0;

  std::vector<FinalWrite> writes_;
  std::set<std::string> notes_;
  std::unordered_map<const Node*, bool> writesOutput_;
  std::unordered_map<const ForNode*, bool> rewritesSame_;
};

}  // namespace

int64_t IterationOrder::cellsProducedBefore(int64_t step) const {
  auto end = std::partition_point(cells.begin(), cells.end(), [&](const ProducedCell& c) { return c.step < step; });
  return int64_t(end - cells.begin());
}

Expected<IterationOrder> iterationOrder(const PrimFunc& func, const Buffer& output,
                                        const IterationOrderOptions& options) {
  TESSEL_ICHECK(func.defined() && output.defined()) << "iterationOrder needs a function and a buffer";
  bool isParameter = std::any_of(func->params.begin(), func->params.end(),
                                 [&](const Buffer& p) { return p->data.same(output->data); });
  if (!isParameter)
    return Diagnostic{"'" + output.name() + "' is not a parameter of " + func->name, func->name, 0, 0,
                      "pass one of the function's output buffers"};
  std::vector<int64_t> shape;
  for (const Expr& extent : output.shape()) {
    const int64_t* value = asConstInt(extent);
    if (!value)
      return Diagnostic{"the shape of '" + output.name() + "' is not constant, so its elements cannot be placed",
                        func->name, 0, 0, "give the model's inputs concrete shapes"};
    shape.push_back(*value);
  }
  if (!output->strides.empty())
    return Diagnostic{"'" + output.name() + "' has explicit strides; the iteration order shows compact buffers only",
                      func->name, 0, 0, ""};

  auto [rowDimension, columnDimension] = defaultTileDimensions(shape);
  if (options.rowDimension >= 0 || options.columnDimension >= 0) {
    rowDimension = options.rowDimension;
    columnDimension = options.columnDimension;
    int rank = int(shape.size());
    if (rowDimension >= rank || columnDimension >= rank || columnDimension < 0 || rowDimension == columnDimension)
      return Diagnostic{"cannot show dimensions " + std::to_string(rowDimension) + " x " +
                            std::to_string(columnDimension) + " of '" + output.name() + "', which has " +
                            std::to_string(rank) + " dimensions",
                        func->name, 0, 0, "pick two different dimensions below its rank (or -1 for one row)"};
  }
  TileGeometry tile(shape, rowDimension, columnDimension, std::max(options.maxRows, 1), std::max(options.maxColumns, 1));
  int threads = options.threads > 0 ? options.threads : runtime::ThreadPool::global().numThreads();
  LoopNestInterpreter interpreter(output, tile, threads, options.maxExecutedStatements);
  bool finished = interpreter.run(func->body);

  IterationOrder order;
  order.bufferName = output.name();
  order.bufferShape = shape;
  order.rowDimension = rowDimension;
  order.columnDimension = columnDimension;
  order.rows = tile.rows();
  order.columns = tile.columns();
  order.threads = interpreter.threadsUsed();
  order.widestVectorInstruction = interpreter.widestInstruction();
  order.parallelLoop = interpreter.parallelLoopName();
  order.parallelLoopExtent = interpreter.parallelLoopExtent();
  order.truncated = !finished;
  order.notes.assign(interpreter.notes().begin(), interpreter.notes().end());
  if (!finished)
    order.notes.push_back("The kernel is too large to follow to the end; only the cells produced before the "
                          "interpreter stopped are shown.");

  // Steps are the distinct times at which some cell got its final value, renumbered from 0
  // (a reduction's init stores, overwritten later, leave no step behind).
  const std::vector<FinalWrite>& writes = interpreter.writes();
  std::vector<int64_t> times;
  for (const FinalWrite& w : writes)
    if (w.written) times.push_back(w.time);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::map<int64_t, int> lanesPerInstruction;
  for (size_t cell = 0; cell < writes.size(); ++cell) {
    const FinalWrite& w = writes[cell];
    if (!w.written) continue;
    ProducedCell produced;
    produced.row = int(cell / size_t(tile.columns()));
    produced.column = int(cell % size_t(tile.columns()));
    produced.step = std::lower_bound(times.begin(), times.end(), w.time) - times.begin();
    produced.thread = w.thread;
    produced.parallelIteration = w.parallelIteration;
    produced.vectorInstruction = w.vectorInstruction;
    produced.lane = w.lane;
    if (w.vectorInstruction >= 0) order.widestVector = std::max(order.widestVector, ++lanesPerInstruction[w.vectorInstruction]);
    order.cells.push_back(produced);
  }
  std::sort(order.cells.begin(), order.cells.end(), [](const ProducedCell& a, const ProducedCell& b) {
    return std::tie(a.step, a.thread, a.vectorInstruction, a.lane, a.row, a.column) <
           std::tie(b.step, b.thread, b.vectorInstruction, b.lane, b.row, b.column);
  });
  order.stepCount = int64_t(times.size());
  return order;
}

Expected<IterationOrder> iterationOrder(const PrimFunc& func, const IterationOrderOptions& options) {
  TESSEL_ICHECK(func.defined() && !func->params.empty()) << "iterationOrder needs a function with parameters";
  return iterationOrder(func, func->params.back(), options);
}

}  // namespace tessel
