// The int8 VNNI dense layer: compute, weight packing and default schedule.
#include "compiler/ops/Int8Dense.h"

#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Quantized.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// The intrinsic's lanes and products per lane: 16 int32 outputs, 4 products each.
constexpr int64_t kLanes = 16;
constexpr int64_t kProductsPerLane = 4;
// Groups of 4 bytes in a 64-byte AMX tile row: one tdpbusd's reduction.
constexpr int64_t kTileQuads = 16;
// Rows per AMX tile of the layer, at most: 16 KiB of accumulators for 32 columns, in L1, and
// each block of the weight (the bulk of the bytes) read from memory once per 128 rows
// (BERT's 768 x 3072 layer: 0.25-0.36 ms against 0.42-0.68 with 32 rows).
constexpr int64_t kTileRowLimit = 128;

int64_t roundUp(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// The leading axes' names ("b0", "b1", ...) then "i" for the row axis.
std::vector<std::string> rowAxes(size_t rank) {
  std::vector<std::string> axes;
  for (size_t d = 0; d + 2 < rank; ++d) axes.push_back("b" + std::to_string(d));
  axes.push_back("i");
  return axes;
}
}  // namespace

int64_t Int8DenseParams::rows() const {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < dataShape.size(); ++d) rows *= dataShape[d];
  return rows;
}

int64_t Int8DenseParams::paddedDepth() const { return roundUp(depth(), kProductsPerLane); }
int64_t Int8DenseParams::paddedColumns() const { return roundUp(columns, columnBlock); }

int64_t Int8DenseParams::unsignedDataZeroPoint() const {
  return dataZeroPoint + (dataType == DataType::int8() ? 128 : 0);
}

bool Int8DenseParams::copiesData() const { return dataType != DataType::uint8() || depth() % kProductsPerLane != 0; }

std::vector<int64_t> Int8DenseParams::weightShape() const {
  return {paddedColumns() / columnBlock, paddedDepth() / kProductsPerLane, columnBlock, kProductsPerLane};
}

std::vector<int64_t> Int8DenseParams::outputShape() const {
  std::vector<int64_t> shape = dataShape;
  if (!shape.empty()) shape.back() = columns;
  return shape;
}

std::string Int8DenseParams::validate() const {
  if (dataShape.size() < 2) return "the data needs a row axis and a depth axis";
  for (int64_t extent : dataShape)
    if (extent < 1) return "every axis of the data must be positive";
  if (columns < 1) return "the output needs at least one column";
  if (columnBlock != 16 && columnBlock != 32) return "the column block must be 16 or 32";
  if (dataType != DataType::uint8() && dataType != DataType::int8()) return "the data must be uint8 or int8";
  if (outputType != DataType::uint8() && outputType != DataType::int8() && outputType != DataType::float32())
    return "the output must be uint8, int8 or float32";
  if (dynamicData && (dataType != DataType::uint8() || outputType != DataType::float32()))
    return "run-time quantized data must be uint8 and the output float32";
  if (!zeroPointFits(dataType, dataZeroPoint)) return "the data's zero point lies outside its type";
  if (outputType != DataType::float32() && !zeroPointFits(outputType, outputZeroPoint))
    return "the output's zero point lies outside its type";
  return "";
}

Workload int8Dense(const Int8DenseParams& params) {
  TESSEL_ICHECK(params.validate().empty()) << "int8Dense: " << params.validate();
  const std::vector<int64_t>& shape = params.dataShape;
  const size_t rank = shape.size();
  const int64_t K = params.depth(), Kp = params.paddedDepth(), N = params.columns, nb = params.columnBlock;
  DataType u8 = DataType::uint8(), i32 = DataType::int32();
  te::Tensor data = te::placeholder(toExprs(shape), params.dataType, "data");
  te::Tensor weight = te::placeholder(toExprs(params.weightShape()), DataType::int8(), "weight");
  DataType f32 = DataType::float32();
  // Static: offset (bias and zero-point terms folded) and scale per column. Dynamic: the
  // weight sums, the data's run-time scale and zero point, and per column the weight's scale
  // and the float bias.
  te::Tensor offset = te::placeholder({Expr(N)}, i32, params.dynamicData ? "weight_sum" : "offset");
  te::Tensor dataScale, dataZero, bias;
  if (params.dynamicData) {
    dataScale = te::placeholder({}, f32, "data_scale");
    dataZero = te::placeholder({}, u8, "data_zero_point");
  }
  te::Tensor scale = te::placeholder({Expr(N)}, f32, params.dynamicData ? "weight_scale" : "scale");
  if (params.dynamicData) bias = te::placeholder({Expr(N)}, f32, "bias");

  // The uint8 operand: the data itself, or a copy shifted by 128 (int8 data) and padded to
  // whole quads (the padded products read a real value; their weights are 0).
  std::function<Expr(std::vector<Expr>)> operand = [&](std::vector<Expr> index) { return data(index); };
  te::Tensor copy;
  if (params.copiesData()) {
    std::vector<int64_t> copyShape = shape;
    copyShape.back() = Kp;
    std::vector<std::string> axes = rowAxes(rank);
    axes.push_back("k");
    copy = te::compute(
        toExprs(copyShape),
        [&](const std::vector<Var>& v) {
          std::vector<Expr> index(v.begin(), v.end());
          if (Kp != K) index.back() = min(index.back(), Expr(K - 1));
          Expr value = data(index);
          if (params.dataType == u8) return value;
          return cast(u8, cast(i32, value) + Expr(int32_t(128)));
        },
        "data.u8", axes, "shift");
    operand = [&](std::vector<Expr> index) { return copy(index); };
  }

  IterVar kq = te::reduceAxis(Expr(Kp / kProductsPerLane), "kq");
  IterVar kl = te::reduceAxis(Expr(kProductsPerLane), "kl");
  std::vector<int64_t> accShape(shape.begin(), shape.end() - 1);
  accShape.push_back(params.paddedColumns() / nb);
  accShape.push_back(nb);
  std::vector<std::string> accAxes = rowAxes(rank);
  accAxes.insert(accAxes.end(), {"no", "ni"});
  te::Tensor acc = te::compute(
      toExprs(accShape),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> row(v.begin(), v.end() - 2);
        row.push_back(Expr(kq) * kProductsPerLane + kl);
        Expr no = v[v.size() - 2], ni = v.back();
        return te::sum(cast(i32, operand(row)) * cast(i32, weight(no, kq, ni, kl)), {kq, kl});
      },
      "dense.acc", accAxes, "dense");

  std::vector<std::string> outAxes = rowAxes(rank);
  outAxes.push_back("j");
  te::Tensor out = te::compute(
      toExprs(params.outputShape()),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> index(v.begin(), v.end() - 1);
        Expr j = v.back();
        index.push_back(j / nb);
        index.push_back(j % nb);
        if (params.dynamicData) {
          Expr zeroTerm = cast(i32, dataZero(std::vector<Expr>{})) * offset(j);
          Expr value = cast(f32, acc(index) - zeroTerm) * (dataScale(std::vector<Expr>{}) * scale(j)) + bias(j);
          return params.relu ? max(value, makeConst(f32, 0.0)) : value;
        }
        Expr total = acc(index) + offset(j);
        if (params.outputType == DataType::float32()) {
          Expr value = cast(DataType::float32(), total) * scale(j);
          return params.relu ? max(value, makeConst(DataType::float32(), 0.0)) : value;
        }
        Expr q = requantize(total, scale(j), Expr(params.outputZeroPoint), params.outputType);
        return params.relu ? max(q, makeConst(params.outputType, double(params.outputZeroPoint))) : q;
      },
      "dense", outAxes, params.outputType == DataType::float32() ? "dequantized" : "quantized");

  Workload w;
  w.name = "int8_dense_" + shapeName(shape) + "_n" + std::to_string(N);
  if (params.dataType != u8 || params.outputType != u8)
    w.name += "_" + params.dataType.toString() + "_" + params.outputType.toString();
  if (params.relu) w.name += "_relu";
  if (params.dynamicData) w.name += "_dynamic";
  w.inputs = params.dynamicData ? std::vector<te::Tensor>{data, weight, offset, dataScale, dataZero, scale, bias}
                                : std::vector<te::Tensor>{data, weight, offset, scale};
  w.outputs = {out};
  w.flops = 2.0 * double(params.rows()) * double(N) * double(K);
  return w;
}

std::vector<int8_t> packInt8DenseWeight(const Int8DenseParams& params, const int8_t* weight, bool transposed) {
  const int64_t K = params.depth(), N = params.columns, nb = params.columnBlock;
  std::vector<int8_t> packed(size_t(params.paddedColumns() * params.paddedDepth()));
  size_t at = 0;
  for (int64_t no = 0; no < params.paddedColumns() / nb; ++no)
    for (int64_t kq = 0; kq < params.paddedDepth() / kProductsPerLane; ++kq)
      for (int64_t ni = 0; ni < nb; ++ni)
        for (int64_t kl = 0; kl < kProductsPerLane; ++kl) {
          int64_t n = no * nb + ni, k = kq * kProductsPerLane + kl;
          packed[at++] = n < N && k < K ? weight[transposed ? n * K + k : k * N + n] : int8_t(0);
        }
  return packed;
}

namespace {

// Tiles of rows x one column block in parallel, the accumulators computed per tile and the
// epilogue vectorized along the block; the caller then schedules "dense.acc" inside a tile.
std::vector<Status> tiledSteps(Schedule& s, const std::vector<std::string>& leading, int64_t rowBlock,
                               int64_t columnBlock) {
  std::vector<std::string> tileOrder = leading, rowsOfTiles = leading;
  tileOrder.insert(tileOrder.end(), {"io", "jo", "ii", "ji"});
  rowsOfTiles.insert(rowsOfTiles.end(), {"io", "jo"});
  return {
      s.split("dense", "j", columnBlock, "jo", "ji"),
      s.split("dense", "i", rowBlock, "io", "ii"),
      s.reorder("dense", tileOrder),
      s.vectorize("dense", "ji"),
      s.fuse("dense", rowsOfTiles, "tiles"),
      s.parallel("dense", "tiles"),
      s.computeAt("dense.acc", "dense", "tiles"),
  };
}

// Fewer columns than a block (a classifier's 10 classes): the epilogue needs only part of
// the block, the intrinsic computes whole vectors, and the layer is small, so the products
// are plain vector multiply-adds along the columns that exist.
std::vector<Status> narrowSteps(Schedule& s, size_t rank) {
  std::vector<std::string> accOrder = rowAxes(rank);
  accOrder.insert(accOrder.end(), {"no", "kq", "kl", "ni"});
  return {s.reorder("dense.acc", accOrder), s.vectorize("dense.acc", "ni")};
}

}  // namespace

bool int8DenseUsesTiles(const Int8DenseParams& params, const Target& target) {
  const int64_t rowExtent = params.dataShape[params.dataShape.size() - 2];
  // Fewer than 8 rows per tile (one token, a batch-1 classifier) waste most of each
  // instruction: those stay on VNNI.
  return hasIntegerTiles(target) && params.columns >= params.columnBlock && params.columnBlock % 16 == 0 &&
         params.paddedDepth() % (kTileQuads * kProductsPerLane) == 0 && widestDivisor(rowExtent, kTileRowLimit) >= 8;
}

Expected<Schedule> defaultInt8DenseSchedule(const Workload& workload, const Int8DenseParams& params,
                                            const Target& target) {
  const size_t rank = params.dataShape.size();
  const int64_t rowExtent = params.dataShape[rank - 2];
  const int64_t columnVectors = params.columnBlock / kLanes;
  const int64_t rowBlock = conv2dPixelBlock(rowExtent, columnVectors, target);
  const char* intrinsic = target.vectorLanes() >= 16 ? "dot_16x4_u8i8" : "dot_8x4_u8i8";
  const int64_t lanes = findTensorIntrinsic(intrinsic)->lanes;
  std::vector<std::string> leading = rowAxes(rank);
  leading.pop_back();  // the batch axes, outside the row axis
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  if (params.columns < params.columnBlock) {
    steps = narrowSteps(s, rank);
  } else if (int8DenseUsesTiles(params, target)) {
    // Per tile the whole reduction in tile registers (tile_u8i8), 64 bytes of each row per
    // instruction (steps apply as they are made, so these come after the tile's).
    steps = tiledSteps(s, leading, widestDivisor(rowExtent, kTileRowLimit), params.columnBlock);
    steps.insert(steps.end(), {s.split("dense.acc", "kq", kTileQuads, "kc", "kg"),
                               s.reorder("dense.acc", {"i", "no", "ni", "kc", "kg", "kl"}),
                               s.tensorize("dense.acc", "i", "tile_u8i8")});
  } else {
    steps = tiledSteps(s, leading, rowBlock, params.columnBlock);
    // The reduction outermost (the packed weights in memory order), then rows and column
    // vectors unrolled with their accumulators in registers, 4 products per lane one
    // instruction.
    steps.insert(steps.end(), {s.split("dense.acc", "ni", lanes, "nv", "nl"),
                               s.reorder("dense.acc", {"kq", "i", "nv", "nl", "kl"}), s.unroll("dense.acc", "i"),
                               s.unroll("dense.acc", "nv"), s.tensorize("dense.acc", "nl", intrinsic)});
  }
  if (params.copiesData()) {
    parallelizeRows(s, "data.u8", rowAxes(rank), params.rows(), target, steps);
    const int64_t chunk = 64;
    if (params.paddedDepth() > chunk) {
      steps.push_back(s.split("data.u8", "k", chunk, "ko", "kv"));
      steps.push_back(s.vectorize("data.u8", "kv"));
    } else {
      steps.push_back(s.vectorize("data.u8", "k"));
    }
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
