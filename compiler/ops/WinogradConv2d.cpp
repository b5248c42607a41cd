// F(m x m, 3 x 3) Winograd convolution: the transform matrices, the weight transform done at
// compile time, the compute stages and their default schedule.
#include "compiler/ops/WinogradConv2d.h"

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "core/ir/IROperators.h"

namespace tessel {

namespace {

// The transforms of F(m, 3) for m = 2 and 4 (interpolation points 0, +-1, +-2 and infinity):
// data tiles of alpha = m + 2 values become B^T d, filters G g, and products A^T M.
struct WinogradMatrices {
  int m = 0, alpha = 0;
  std::vector<std::vector<double>> dataT, filter, outputT;  // B^T [alpha][alpha], G [alpha][3], A^T [m][alpha]
};

const WinogradMatrices& winogradMatrices(int64_t m) {
  static const WinogradMatrices f2{2, 4,
                                   {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
                                   {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                                   {{1, 1, 1, 0}, {0, 1, -1, -1}}};
  static const WinogradMatrices f4{
      4,
      6,
      {{4, 0, -5, 0, 1, 0},
       {0, -4, -4, 1, 1, 0},
       {0, 4, -4, -1, 1, 0},
       {0, -2, -1, 2, 1, 0},
       {0, 2, -1, -2, 1, 0},
       {0, 4, 0, -5, 0, 1}},
      {{1.0 / 4, 0, 0},
       {-1.0 / 6, -1.0 / 6, -1.0 / 6},
       {-1.0 / 6, 1.0 / 6, -1.0 / 6},
       {1.0 / 24, 1.0 / 12, 1.0 / 6},
       {1.0 / 24, -1.0 / 12, 1.0 / 6},
       {0, 0, 1}},
      {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};
  TESSEL_ICHECK(m == 2 || m == 4) << "no Winograd transform for output tiles of " << m;
  return m == 2 ? f2 : f4;
}

// Row `row` of `matrix` times the vector element(0..n-1), as one expression per possible row
// chosen by `row`: once `row` is a constant (its loop unrolled) the selects fold away and only
// that row's non-zero terms are left, unit coefficients without a multiplication.
Expr matrixRowTimes(const std::vector<std::vector<double>>& matrix, Expr row,
                    const std::function<Expr(int)>& element, DataType dtype) {
  auto rowExpression = [&](size_t r) {
    Expr sum;
    for (size_t k = 0; k < matrix[r].size(); ++k) {
      double coefficient = matrix[r][k];
      if (coefficient == 0) continue;
      Expr value = element(int(k));
      Expr term = coefficient == 1 ? value : coefficient == -1 ? -value : makeConst(dtype, coefficient) * value;
      sum = sum.defined() ? sum + term : term;
    }
    return sum.defined() ? sum : makeZero(dtype);
  };
  Expr result = rowExpression(matrix.size() - 1);
  for (size_t r = matrix.size() - 1; r-- > 0;) result = select(eq(row, Expr(int64_t(r))), rowExpression(r), result);
  return result;
}

struct TileGrid {
  int64_t m, alpha, dilation, rowTiles, columnTiles, tiles;  // tiles per phase along y and x; all tiles
  int64_t extraBottom, extraRight;  // zero rows and columns past the padding, to fill the last tiles
};

TileGrid tileGrid(const Conv2dParams& p) {
  TileGrid g;
  g.m = p.winogradTile;
  g.alpha = g.m + 2;
  g.dilation = p.dilationH;
  int64_t phaseRows = p.outHeight() / g.dilation, phaseColumns = p.outWidth() / g.dilation;
  g.rowTiles = (phaseRows + g.m - 1) / g.m;
  g.columnTiles = (phaseColumns + g.m - 1) / g.m;
  g.tiles = p.batch * g.dilation * g.dilation * g.rowTiles * g.columnTiles;
  g.extraBottom = g.dilation * g.rowTiles * g.m - p.outHeight();
  g.extraRight = g.dilation * g.columnTiles * g.m - p.outWidth();
  return g;
}

// Tiles a call must have for Winograd to be chosen, and below which F(4x4, 3x3) has too few
// tiles to read its larger filters for (see winogradTileFor).
constexpr int64_t kMinimumTiles = 16;
constexpr int64_t kFewTiles = 32;


}  // namespace

bool winogradApplies(const Conv2dParams& p) {
  if (p.groups != 1 || p.kernelH != 3 || p.kernelW != 3) return false;
  if (p.strideAlongHeight() != 1 || p.strideAlongWidth() != 1 || p.dilationH != p.dilationW) return false;
  return p.outHeight() % p.dilationH == 0 && p.outWidth() % p.dilationW == 0;
}

int64_t winogradTileFor(const Conv2dParams& p, const Target& target) {
  if (!winogradApplies(p) || p.channels < 64 || p.filters < 64) return 0;
  if (p.channels % target.vectorLanes() != 0 || p.filters % conv2dFilterBlock(p, target) != 0) return 0;
  // Each transformed weight (4x the direct weight's bytes for m = 4) is read once per call and
  // used once per tile: with few tiles (ResNet's 7x7 stage has 4) reading them costs more than
  // the multiplications saved (measured: 2.0 ms direct against 2.7 ms for 512 -> 512 at 7x7).
  // F(4x4, 3x3) multiplies least, but its filters take 36 values each against F(2x2, 3x3)'s 16:
  // with few tiles (ResNet's 14x14 stage: 16 tiles of 4x4, 49 of 2x2) the smaller filters read
  // for more tiles win (measured 1.0-1.2 ms against 0.7-0.9 ms for 256 -> 256 at 14x14), with
  // many (FCN's dilated 28x28 layers: 64 tiles) the fewer multiplications do (4.6 against 8.1 ms).
  Conv2dParams tiled = p;
  tiled.winogradTile = 4;
  int64_t tiles4 = tileGrid(tiled).tiles;
  tiled.winogradTile = 2;
  int64_t tiles2 = tileGrid(tiled).tiles;
  bool wholeTiles2 = (p.outHeight() / p.dilationH) % 2 == 0 && (p.outWidth() / p.dilationW) % 2 == 0;
  if (tiles4 >= kFewTiles) return 4;
  if (wholeTiles2 && tiles2 >= kMinimumTiles) return 2;
  return tiles4 >= kMinimumTiles ? 4 : 0;
}

std::vector<int64_t> winogradPackedWeightShape(const Conv2dParams& p, const Target& target) {
  int64_t kb = conv2dFilterBlock(p, target), alpha = p.winogradTile + 2;
  return {(p.filters + kb - 1) / kb, alpha, alpha, p.channels, kb};
}

namespace {
template <class T>
void transformWeights(const Conv2dParams& p, int64_t kb, const T* source, T* packed) {
  const WinogradMatrices& w = winogradMatrices(p.winogradTile);
  const int alpha = w.alpha;
  // G in a flat array: the loops below run K * C times (a million for 2048 -> 512 filters).
  double g[6][3];
  for (int a = 0; a < alpha; ++a)
    for (int r = 0; r < 3; ++r) g[a][r] = w.filter[size_t(a)][size_t(r)];
  int64_t blocks = (p.filters + kb - 1) / kb;
  const int64_t positionStride = p.channels * kb;  // between (a, b) positions of one block
  // One (block, channel) at a time, all its lanes into `tile` and then out as alpha^2 runs of
  // kb contiguous values: lane by lane, each of the 36 stores would touch its own cache line
  // (ResNet-50-sized layers took seconds that way).
  std::vector<T> tile(size_t(alpha * alpha * kb));
  for (int64_t block = 0; block < blocks; ++block) {
    T* blockOut = packed + block * alpha * alpha * positionStride;
    for (int64_t c = 0; c < p.channels; ++c) {
      for (int64_t lane = 0; lane < kb; ++lane) {
        int64_t filter = block * kb + lane;
        if (filter >= p.filters) {
          for (int ab = 0; ab < alpha * alpha; ++ab) tile[size_t(ab * kb + lane)] = T(0);
          continue;
        }
        const T* taps = source + (filter * p.channels + c) * 9;
        double rows[6][3];  // G g
        for (int a = 0; a < alpha; ++a)
          for (int s = 0; s < 3; ++s)
            rows[a][s] = g[a][0] * double(taps[s]) + g[a][1] * double(taps[3 + s]) + g[a][2] * double(taps[6 + s]);
        for (int a = 0; a < alpha; ++a)
          for (int b = 0; b < alpha; ++b)
            tile[size_t((a * alpha + b) * kb + lane)] =
                T(rows[a][0] * g[b][0] + rows[a][1] * g[b][1] + rows[a][2] * g[b][2]);
      }
      for (int ab = 0; ab < alpha * alpha; ++ab)
        std::copy_n(tile.data() + ab * kb, kb, blockOut + ab * positionStride + c * kb);
    }
  }
}
}  // namespace

runtime::NDArray packWinogradWeight(const Conv2dParams& p, const runtime::NDArray& weight, const Target& target) {
  TESSEL_ICHECK(p.winogradTile == 2 || p.winogradTile == 4) << "packWinogradWeight without a Winograd tile";
  TESSEL_ICHECK(weight.defined() && weight.shape() == std::vector<int64_t>({p.filters, p.channels, 3, 3}))
      << "packWinogradWeight: the weight is not [K, C, 3, 3] of the convolution";
  runtime::NDArray packed = runtime::NDArray::empty(winogradPackedWeightShape(p, target), weight.dtype());
  int64_t kb = conv2dFilterBlock(p, target);
  if (weight.dtype() == runtime::DataType::float32())
    transformWeights(p, kb, weight.dataAs<float>(), packed.dataAs<float>());
  else if (weight.dtype() == runtime::DataType::float64())
    transformWeights(p, kb, weight.dataAs<double>(), packed.dataAs<double>());
  else
    TESSEL_ICHECK(false) << "packWinogradWeight: unsupported element type " << weight.dtype().toString();
  return packed;
}

Workload winogradConv2d(const Conv2dParams& p, const Conv2dActivationLayout& activations, DataType dtype,
                        const Target& target) {
  TESSEL_ICHECK(winogradApplies(p) && (p.winogradTile == 2 || p.winogradTile == 4))
      << "winogradConv2d for a convolution it cannot compute";
  const WinogradMatrices& matrices = winogradMatrices(p.winogradTile);
  const TileGrid grid = tileGrid(p);
  const int64_t m = grid.m, alpha = grid.alpha, d = grid.dilation;
  const int64_t inputBlock = activations.inputBlock, kb = conv2dFilterBlock(p, target);
  const int64_t filterBlocks = (p.filters + kb - 1) / kb;

  te::Tensor data = inputBlock > 0 ? te::placeholder({Expr(p.batch), Expr(p.channels / inputBlock), Expr(p.height),
                                                      Expr(p.width), Expr(inputBlock)},
                                                     dtype, "data")
                                   : te::placeholder({Expr(p.batch), Expr(p.channels), Expr(p.height), Expr(p.width)},
                                                     dtype, "data");
  te::Tensor weight = te::placeholder(toExprs(winogradPackedWeightShape(p, target)), dtype, "weight");
  te::Tensor bias = p.bias ? te::placeholder({Expr(p.filters)}, dtype, "bias") : te::Tensor();

  // The padded input, extended with zeros so that the last tiles of each phase are whole.
  Conv2dParams extended = p;
  extended.padBottom = p.paddingBottom() + grid.extraBottom;
  extended.padRight = p.paddingRight() + grid.extraRight;
  te::Tensor padded = inputBlock > 0 ? padBlockedConv2dInput(extended, data, inputBlock, makeZero(dtype))
                                     : padConv2dInput(extended, data, dtype);
  auto paddedAt = [&](Expr n, Expr c, Expr y, Expr x) {
    if (inputBlock > 0) return padded(n, floordiv(c, Expr(inputBlock)), y, x, floormod(c, Expr(inputBlock)));
    return padded(n, c, y, x);
  };

  // Tile t is (n, row phase, column phase, tile row, tile column), the last fastest.
  const int64_t perPhase = grid.rowTiles * grid.columnTiles;
  struct TileOrigin {
    Expr n, row, column;  // the tile's first padded input row and column
  };
  auto tileOrigin = [&](Expr t) {
    Expr tx = floormod(t, Expr(grid.columnTiles));
    Expr ty = floormod(floordiv(t, Expr(grid.columnTiles)), Expr(grid.rowTiles));
    Expr phases = floordiv(t, Expr(perPhase));
    Expr pw = floormod(phases, Expr(d)), ph = floormod(floordiv(phases, Expr(d)), Expr(d));
    Expr n = floordiv(phases, Expr(d * d));
    return TileOrigin{n, ph + ty * (m * d), pw + tx * (m * d)};
  };

  te::Tensor dataRows = te::compute(
      {Expr(alpha), Expr(alpha), Expr(grid.tiles), Expr(p.channels)},
      [&](const std::vector<Var>& v) {
        Expr a = v[0], j = v[1], t = v[2], c = v[3];
        TileOrigin origin = tileOrigin(t);
        return matrixRowTimes(matrices.dataT, a, [&](int i) {
          return paddedAt(origin.n, c, origin.row + Expr(int64_t(i) * d), origin.column + j * d);
        }, dtype);
      },
      "winograd.data.rows", {"a", "j", "t", "c"}, "winograd_data");
  te::Tensor transformed = te::compute(
      {Expr(alpha), Expr(alpha), Expr(grid.tiles), Expr(p.channels)},
      [&](const std::vector<Var>& v) {
        Expr a = v[0], b = v[1], t = v[2], c = v[3];
        return matrixRowTimes(matrices.dataT, b, [&](int j) { return dataRows(a, Expr(int64_t(j)), t, c); }, dtype);
      },
      "winograd.data", {"a", "b", "t", "c"}, "winograd_data");
  IterVar c = te::reduceAxis(Expr(p.channels), "c");
  te::Tensor product = te::compute(
      {Expr(alpha), Expr(alpha), Expr(filterBlocks), Expr(grid.tiles), Expr(kb)},
      [&](const std::vector<Var>& v) {
        Expr a = v[0], b = v[1], ko = v[2], t = v[3], ki = v[4];
        return te::sum(transformed(a, b, t, c) * weight(ko, a, b, c, ki), {c});
      },
      "winograd.product", {"a", "b", "ko", "t", "ki"}, "winograd_product");
  te::Tensor outputRows = te::compute(
      {Expr(m), Expr(alpha), Expr(filterBlocks), Expr(grid.tiles), Expr(kb)},
      [&](const std::vector<Var>& v) {
        Expr i = v[0], b = v[1], ko = v[2], t = v[3], ki = v[4];
        return matrixRowTimes(matrices.outputT, i, [&](int a) { return product(Expr(int64_t(a)), b, ko, t, ki); },
                              dtype);
      },
      "winograd.output.rows", {"i", "b", "ko", "t", "ki"}, "winograd_output");
  // Output pixel (n, y, x): phase y % d, tile row (y / d) / m, row (y / d) % m in its tile.
  auto pixel = [&](Expr n, Expr ko, Expr y, Expr x, Expr ki) {
    Expr yq = d == 1 ? y : floordiv(y, Expr(d)), xq = d == 1 ? x : floordiv(x, Expr(d));
    Expr ph = d == 1 ? Expr(int64_t(0)) : floormod(y, Expr(d)), pw = d == 1 ? Expr(int64_t(0)) : floormod(x, Expr(d));
    Expr tileRow = floordiv(yq, Expr(m)), tileColumn = floordiv(xq, Expr(m));
    Expr t = (((n * d + ph) * d + pw) * grid.rowTiles + tileRow) * grid.columnTiles + tileColumn;
    Expr i = floormod(yq, Expr(m)), j = floormod(xq, Expr(m));
    return matrixRowTimes(matrices.outputT, j, [&](int b) { return outputRows(i, Expr(int64_t(b)), ko, t, ki); },
                          dtype);
  };
  te::Tensor out = activations.blockedOutput
                       ? te::compute(
                             {Expr(p.batch), Expr(filterBlocks), Expr(p.outHeight()), Expr(p.outWidth()), Expr(kb)},
                             [&](const std::vector<Var>& v) {
                               Expr value = pixel(v[0], v[1], v[2], v[3], v[4]);
                               return p.bias ? value + bias(v[1] * kb + v[4]) : value;
                             },
                             "conv", {"n", "ko", "y", "x", "ki"}, "bias")
                       : te::compute(
                             {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
                             [&](const std::vector<Var>& v) {
                               Expr k = v[1];
                               Expr value = pixel(v[0], floordiv(k, Expr(kb)), v[2], v[3], floormod(k, Expr(kb)));
                               return p.bias ? value + bias(k) : value;
                             },
                             "conv", {"n", "k", "y", "x"}, "layout");
  Workload w;
  w.outputs = {out};
  w.fixedStructure = true;
  w.inputs = {data, weight};
  if (p.bias) w.inputs.push_back(bias);
  w.name = conv2dName(p) + "_winograd" + std::to_string(m);
  if (inputBlock > 0) w.name += "_in" + std::to_string(inputBlock) + "c";
  if (activations.blockedOutput) w.name += "_out" + std::to_string(kb) + "c";
  w.flops = 2.0 * double(p.batch) * double(p.filters) * double(p.outHeight()) * double(p.outWidth()) *
            double(p.channels) * 9.0;
  if (p.bias) w.flops += double(p.batch) * double(p.filters) * double(p.outHeight()) * double(p.outWidth());
  return w;
}

Expected<Schedule> defaultWinogradConv2dSchedule(const Workload& workload, const Conv2dParams& p,
                                                 const Conv2dActivationLayout& activations, const Target& target) {
  const TileGrid grid = tileGrid(p);
  const int64_t d = grid.dilation, kb = conv2dFilterBlock(p, target);
  const int64_t filterVectors = std::max<int64_t>(1, kb / target.vectorLanes());
  const int64_t channelVector = activations.inputBlock > 0 ? activations.inputBlock : target.vectorLanes();
  const int64_t tileBlock = conv2dPixelBlock(grid.tiles, filterVectors, target);
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  // The padded input: rows in parallel, whole channel blocks as vectors.
  if (activations.inputBlock > 0) {
    int64_t paddedRows = p.height + p.paddingTop() + p.paddingBottom() + grid.extraBottom;
    parallelizeRows(s, "data.pad", {"n", "co", "y"}, p.batch * (p.channels / activations.inputBlock) * paddedRows,
                    target, steps);
    steps.push_back(s.vectorize("data.pad", "ci"));
  } else {
    steps.push_back(s.parallel("data.pad", "c"));
  }
  // The input transform: per tile and vector of channels, B^T down the columns into a small
  // buffer, then across its rows, every coefficient a constant.
  steps.insert(steps.end(), {
      s.split("winograd.data", "c", channelVector, "co", "ci"),
      s.reorder("winograd.data", {"t", "co", "a", "b", "ci"}),
      s.fuse("winograd.data", {"t", "co"}, "tiles"),
      s.parallel("winograd.data", "tiles"),
      s.unroll("winograd.data", "a"),
      s.unroll("winograd.data", "b"),
      s.vectorize("winograd.data", "ci"),
      s.computeAt("winograd.data.rows", "winograd.data", "tiles"),
      s.unroll("winograd.data.rows", "a"),
      s.unroll("winograd.data.rows", "j"),
      s.vectorize("winograd.data.rows", "c"),
  });
  // The products: a register tile of tileBlock tiles times the filter block's vectors, the
  // channels streamed through it; each (a, b, filter block) is a task.
  steps.insert(steps.end(), {
      s.cacheWrite("winograd.product", "local", "winograd.product.local"),
      s.split("winograd.product", "t", tileBlock, "to", "ti"),
      s.reorder("winograd.product", {"a", "b", "ko", "to", "ti", "ki"}),
      s.fuse("winograd.product", {"a", "b", "ko"}, "tasks"),
      s.parallel("winograd.product", "tasks"),
      s.vectorize("winograd.product", "ki"),
      s.computeAt("winograd.product.local", "winograd.product", "to"),
      s.reorder("winograd.product.local", {"c", "t", "ki"}),
      s.unroll("winograd.product.local", "t"),
      s.vectorize("winograd.product.local", "ki"),
  });
  // The output transform, tile by tile: A^T down the columns, then across into the output.
  std::vector<std::string> order = {"n", "ko"};
  if (!activations.blockedOutput) steps.push_back(s.split("conv", "k", kb, "ko", "ki"));
  std::string rows = "y", columns = "x";
  if (d > 1) {
    steps.push_back(s.split("conv", "y", d, "yq", "ph"));
    steps.push_back(s.split("conv", "x", d, "xq", "pw"));
    rows = "yq";
    columns = "xq";
    order.insert(order.end(), {"ph", "pw"});
  }
  steps.push_back(s.split("conv", rows, grid.m, "ty", "i"));
  steps.push_back(s.split("conv", columns, grid.m, "tx", "j"));
  std::vector<std::string> fused = order;
  fused.push_back("ty");
  order.insert(order.end(), {"ty", "tx"});
  if (activations.blockedOutput)
    order.insert(order.end(), {"i", "j", "ki"});
  else
    order.insert(order.end(), {"ki", "i", "j"});
  steps.push_back(s.reorder("conv", order));
  steps.push_back(s.fuse("conv", fused, "rows"));
  steps.push_back(s.parallel("conv", "rows"));
  steps.push_back(s.unroll("conv", "i"));
  steps.push_back(s.unroll("conv", "j"));
  if (activations.blockedOutput) steps.push_back(s.vectorize("conv", "ki"));
  steps.push_back(s.computeAt("winograd.output.rows", "conv", "tx"));
  steps.push_back(s.unroll("winograd.output.rows", "i"));
  steps.push_back(s.unroll("winograd.output.rows", "b"));
  steps.push_back(s.vectorize("winograd.output.rows", "ki"));
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
