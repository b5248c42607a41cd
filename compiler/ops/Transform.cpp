// Data-movement computes with ONNX semantics and their default schedule.
#include "compiler/ops/Transform.h"

#include "compiler/ops/TransformSupport.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {
using namespace transform_support;

Expected<Shape> broadcastShapes(const std::string& op, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (auto& s : shapes)
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[d + rank - s.size()];
      if (s[d] != 1 && o != 1 && s[d] != o)
        return opError(op, "shapes do not broadcast: dimension " + std::to_string(d + rank - s.size()) + " is " +
                               std::to_string(o) + " in one and " + std::to_string(s[d]) + " in another",
                       "each dimension must match or be 1");
      if (s[d] != 1) o = s[d];
    }
  return out;
}
// Reads `t` of `shape` at the broadcast output position `i` (stretched dimensions read 0).
Expr broadcastRead(const te::Tensor& t, const Shape& shape, const std::vector<Var>& i) {
  std::vector<Expr> indices;
  size_t rank = i.size();
  for (size_t d = 0; d < shape.size(); ++d) indices.push_back(shape[d] == 1 ? Expr(0) : Expr(i[d + rank - shape.size()]));
  return t(indices);
}

// True when every buffer read in `body` is contiguous along `inner`: the variable appears
// only in the last index, alone or plus a term that does not use it.
bool readsContiguously(const Expr& body, const Var& inner) {
  bool contiguous = true;
  postOrderVisit(body, [&](const Expr& e) {
    const auto* load = e.as<BufferLoadNode>();
    if (!load || load->indices.empty()) return;
    for (size_t d = 0; d + 1 < load->indices.size(); ++d)
      if (usesVar(load->indices[d], inner)) contiguous = false;
    const Expr& last = load->indices.back();
    if (!usesVar(last, inner)) return;
    if (last.same(inner)) return;
    if (const auto* add = last.as<AddNode>()) {
      if ((add->a.same(inner) && !usesVar(add->b, inner)) || (add->b.same(inner) && !usesVar(add->a, inner))) return;
    }
    if (const auto* sub = last.as<SubNode>()) {
      if (sub->a.same(inner) && !usesVar(sub->b, inner)) return;
    }
    contiguous = false;
  });
  return contiguous;
}
}  // namespace

Expected<Workload> transpose(const Shape& shape, const Shape& permIn, DataType dtype) {
  const std::string op = "Transpose";
  if (auto e = checkShape(op, shape, "input")) return *e;
  Shape perm = permIn;
  if (perm.empty())
    for (size_t d = shape.size(); d-- > 0;) perm.push_back(int64_t(d));
  if (perm.size() != shape.size())
    return opError(op, "perm has " + std::to_string(perm.size()) + " entries for a rank-" +
                           std::to_string(shape.size()) + " input");
  std::vector<bool> seen(shape.size(), false);
  for (int64_t& p : perm) {
    auto axis = normalizeAxis(p, shape.size());
    if (!axis || seen[size_t(*axis)])
      return opError(op, "perm is not a permutation of the input axes", "list each axis exactly once");
    seen[size_t(*axis)] = true;
    p = *axis;
  }
  Shape outShape;
  for (int64_t p : perm) outShape.push_back(shape[size_t(p)]);
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> indices(shape.size());
        for (size_t d = 0; d < perm.size(); ++d) indices[size_t(perm[d])] = i[d];
        return in(indices);
      },
      "out", axisNames(outShape.size()), "injective");
  std::string permName;
  for (int64_t p : perm) permName += std::to_string(p);
  return singleOutput("transpose_" + shapeName(shape) + "_p" + permName, {in}, out);
}

Expected<Workload> reshape(const Shape& shape, const Shape& target, DataType dtype, bool allowZero) {
  const std::string op = "Reshape";
  if (auto e = checkShape(op, shape, "input", true)) return *e;
  Shape outShape = target;
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == -1) {
      if (inferred >= 0) return opError(op, "the target shape has more than one -1", "at most one -1");
      inferred = int(d);
      continue;
    }
    if (target[d] == 0 && !allowZero) {
      if (d >= shape.size())
        return opError(op, "target dimension " + std::to_string(d) + " is 0 but the input has no such dimension");
      outShape[d] = shape[d];
    }
    if (outShape[d] < 0 || (outShape[d] == 0 && !allowZero && elementCount(shape) != 0))
      return opError(op, "target dimension " + std::to_string(d) + " is " + std::to_string(target[d]),
                     "dimensions are positive, 0 (copy) or -1 (infer)");
    known *= outShape[d];
  }
  int64_t elements = elementCount(shape);
  if (inferred >= 0 && known == 0)
    return opError(op, "cannot infer the -1 dimension next to a dimension of 0",
                   "give every dimension of an empty result");
  if (inferred >= 0) {
    if (elements % known != 0)
      return opError(op, "cannot infer the -1 dimension: " + std::to_string(elements) +
                             " elements do not divide by " + std::to_string(known));
    outShape[size_t(inferred)] = elements / known;
  }
  if (elementCount(outShape) != elements)
    return opError(op, "target shape " + shapeName(outShape) + " holds " + std::to_string(elementCount(outShape)) +
                           " elements, the input " + std::to_string(elements));
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  std::string name = "reshape_" + shapeName(shape) + "_to_" + shapeName(outShape);
  if (elements == 0) {  // nothing to copy: the loops never run
    te::Tensor out = te::compute(
        toExprs(outShape), [&](const std::vector<Var>&) { return in(toExprs(Shape(shape.size(), 0))); }, "out",
        axisNames(outShape.size()), "injective");
    return singleOutput(name, {in}, out);
  }
  // Split both shapes into aligned groups of consecutive dimensions with equal element
  // counts ([2, 8, 9] -> [2, 72]: {2}->{2}, {8, 9}->{72}). Each input index depends only on
  // the output indices of its group, so a trailing dimension kept or merged ([768] ->
  // [12, 64]) reads as "12 * i + j": the innermost axis stays a contiguous copy.
  struct Group {
    size_t inBegin, inEnd, outBegin, outEnd;
  };
  std::vector<Group> groups;
  for (size_t i = 0, o = 0; i < shape.size() || o < outShape.size();) {
    Group group{i, i, o, o};
    int64_t inCount = i < shape.size() ? shape[i++] : 1;
    int64_t outCount = o < outShape.size() ? outShape[o++] : 1;
    while (inCount != outCount) {
      TESSEL_ICHECK(i < shape.size() || o < outShape.size()) << "reshape groups of unequal element counts";
      if (inCount < outCount) inCount *= shape[i++];
      else outCount *= outShape[o++];
    }
    group.inEnd = i;
    group.outEnd = o;
    groups.push_back(group);
  }
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> indices(shape.size(), Expr(int64_t(0)));
        for (const Group& g : groups) {
          // Dimensions of extent 1 take no part: their index is always 0.
          Expr offset;
          for (size_t d = g.outBegin; d < g.outEnd; ++d)
            if (outShape[d] != 1) offset = offset.defined() ? offset * Expr(outShape[d]) + v[d] : Expr(v[d]);
          if (!offset.defined()) continue;
          std::vector<size_t> dims;
          for (size_t d = g.inBegin; d < g.inEnd; ++d)
            if (shape[d] != 1) dims.push_back(d);
          for (size_t k = dims.size(); k-- > 0;) {
            indices[dims[k]] = k == 0 ? offset : floormod(offset, Expr(shape[dims[k]]));
            if (k > 0) offset = floordiv(offset, Expr(shape[dims[k]]));
          }
        }
        return in(indices);
      },
      "out", axisNames(outShape.size()), "injective");
  return singleOutput(name, {in}, out);
}

Expected<Workload> concat(const std::vector<Shape>& shapes, int64_t axisIn, DataType dtype) {
  const std::string op = "Concat";
  if (shapes.empty()) return opError(op, "no inputs", "give at least one input");
  for (auto& s : shapes)
    if (auto e = checkShape(op, s, "input", true)) return *e;
  auto axis = normalizeAxis(axisIn, shapes[0].size());
  if (!axis) return opError(op, "axis " + std::to_string(axisIn) + " is outside the rank " +
                                     std::to_string(shapes[0].size()));
  size_t a = size_t(*axis);
  Shape outShape = shapes[0];
  outShape[a] = 0;
  std::string name = "concat_a" + std::to_string(a);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    bool matches = s.size() == shapes[0].size();
    for (size_t d = 0; matches && d < s.size(); ++d) matches = d == a || s[d] == shapes[0][d];
    if (!matches)
      return opError(op, "input " + std::to_string(k) + " has shape " + shapeName(s) + ", input 0 " +
                             shapeName(shapes[0]),
                     "all dimensions but the concatenation axis must match");
    outShape[a] += s[a];
    name += "_" + shapeName(s);
  }
  // One placeholder per input with something along the axis (an empty one has nothing to read).
  std::vector<te::Tensor> inputs(shapes.size()), placeholders;
  for (size_t k = 0; k < shapes.size(); ++k)
    if (shapes[k][a] > 0) {
      inputs[k] = te::placeholder(toExprs(shapes[k]), dtype, "in" + std::to_string(k));
      placeholders.push_back(inputs[k]);
    }
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        // Last input first, so the select chain reads from the first input whose range holds i.
        // Each test is likely(): loop partitioning then cuts the loop that carries the axis at
        // the inputs' boundaries, and each piece copies its input with no select left (a chain
        // of K reads, clamped into gathers when vectorized, per element otherwise).
        std::vector<int64_t> offsets(shapes.size(), 0);
        for (size_t k = 1; k < shapes.size(); ++k) offsets[k] = offsets[k - 1] + shapes[k - 1][a];
        Expr value;
        for (size_t k = shapes.size(); k-- > 0;) {
          if (shapes[k][a] == 0) continue;  // an empty input adds nothing to read
          std::vector<Expr> indices = asExprs(i);
          // Clamped so the discarded side of the select still reads inside its input.
          indices[a] = shapes.size() == 1 ? Expr(i[a]) : clampIndex(i[a] - Expr(offsets[k]), shapes[k][a]);
          Expr read = inputs[k](indices);
          value = value.defined() ? select(likely(i[a] < Expr(offsets[k] + shapes[k][a])), read, value) : read;
        }
        // Every input empty along the axis: so is the output, whose loops never run.
        return value.defined() ? value : makeZero(dtype);
      },
      "out", axisNames(outShape.size()), "injective");
  return singleOutput(name, placeholders, out);
}

Expected<Workload> slice(const Shape& shape, const Shape& starts, const Shape& ends, const Shape& axesIn,
                         const Shape& stepsIn, DataType dtype) {
  const std::string op = "Slice";
  if (auto e = checkShape(op, shape, "input", true)) return *e;
  if (starts.size() != ends.size())
    return opError(op, "starts has " + std::to_string(starts.size()) + " entries, ends " + std::to_string(ends.size()));
  Shape axes = axesIn;
  if (axes.empty())
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(int64_t(d));
  Shape steps = stepsIn.empty() ? Shape(starts.size(), 1) : stepsIn;
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return opError(op, "starts, ends, axes and steps must have the same length");
  Shape begin(shape.size(), 0), step(shape.size(), 1), outShape = shape;
  std::vector<bool> seen(shape.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    auto axis = normalizeAxis(axes[k], shape.size());
    if (!axis) return opError(op, "axis " + std::to_string(axes[k]) + " is outside the rank " + std::to_string(shape.size()));
    if (seen[size_t(*axis)]) return opError(op, "axis " + std::to_string(*axis) + " is listed twice");
    seen[size_t(*axis)] = true;
    if (steps[k] == 0) return opError(op, "step 0 on axis " + std::to_string(*axis), "steps must not be 0");
    int64_t dim = shape[size_t(*axis)];
    if (dim == 0) {  // nothing to slice: the result stays empty
      step[size_t(*axis)] = steps[k];
      continue;
    }
    int64_t s = starts[k], e = ends[k];
    // ONNX uses INT64_MAX/INT64_MIN as "to the end"; adding dim to them must not overflow.
    if (s < 0) s = s < -dim ? -dim - 1 : s + dim;
    if (e < 0) e = e < -dim ? -dim - 1 : e + dim;
    if (steps[k] > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    int64_t span = steps[k] > 0 ? e - s : s - e;
    int64_t magnitude = steps[k] > 0 ? steps[k] : -steps[k];
    // An empty slice is an empty tensor (its loops never run).
    int64_t length = span <= 0 ? 0 : (span + magnitude - 1) / magnitude;
    begin[size_t(*axis)] = s;
    step[size_t(*axis)] = steps[k];
    outShape[size_t(*axis)] = length;
  }
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> indices;
        for (size_t d = 0; d < shape.size(); ++d) {
          Expr index = i[d];
          if (step[d] != 1) index = index * Expr(step[d]);
          if (begin[d] != 0) index = index + Expr(begin[d]);
          indices.push_back(index);
        }
        return in(indices);
      },
      "out", axisNames(outShape.size()), "injective");
  std::string name = "slice_" + shapeName(shape) + "_to_" + shapeName(outShape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (begin[d] != 0 || step[d] != 1) name += "_" + std::to_string(d) + "b" + std::to_string(begin[d]) + "s" + std::to_string(step[d]);
  for (char& c : name)
    if (c == '-') c = 'm';
  return singleOutput(name, {in}, out);
}

Expected<Workload> gather(const Shape& dataShape, const Shape& indicesShape, int64_t axisIn, DataType dtype,
                          DataType indexType) {
  const std::string op = "Gather";
  if (auto e = checkShape(op, dataShape, "data")) return *e;
  if (auto e = checkShape(op, indicesShape, "indices")) return *e;
  if (dataShape.empty()) return opError(op, "data is a scalar", "gather needs data of rank 1 or more");
  if (indexType != DataType::int32() && indexType != DataType::int64())
    return opError(op, "indices of type " + indexType.toString(), "indices are int32 or int64");
  auto axis = normalizeAxis(axisIn, dataShape.size());
  if (!axis) return opError(op, "axis " + std::to_string(axisIn) + " is outside the rank " + std::to_string(dataShape.size()));
  size_t a = size_t(*axis);
  int64_t dim = dataShape[a];
  Shape outShape(dataShape.begin(), dataShape.begin() + long(a));
  outShape.insert(outShape.end(), indicesShape.begin(), indicesShape.end());
  outShape.insert(outShape.end(), dataShape.begin() + long(a) + 1, dataShape.end());
  te::Tensor data = te::placeholder(toExprs(dataShape), dtype, "data");
  te::Tensor indices = te::placeholder(toExprs(indicesShape), indexType, "indices");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> at(i.begin() + long(a), i.begin() + long(a + indicesShape.size()));
        Expr index = cast(DataType::index(), indices(at));
        index = clampIndex(select(index < Expr(int64_t(0)), index + Expr(dim), index), dim);
        std::vector<Expr> read(i.begin(), i.begin() + long(a));
        read.push_back(index);
        read.insert(read.end(), i.begin() + long(a + indicesShape.size()), i.end());
        return data(read);
      },
      "out", axisNames(outShape.size()), "injective");
  return singleOutput("gather_" + shapeName(dataShape) + "_" + shapeName(indicesShape) + "_a" + std::to_string(a) + "_" +
                    indexType.toString(),
                {data, indices}, out);
}

Expected<Workload> split(const Shape& shape, int64_t axisIn, const Shape& sizesIn, DataType dtype, int64_t parts) {
  const std::string op = "Split";
  if (auto e = checkShape(op, shape, "input", true)) return *e;
  auto axis = normalizeAxis(axisIn, shape.size());
  if (!axis) return opError(op, "axis " + std::to_string(axisIn) + " is outside the rank " + std::to_string(shape.size()));
  size_t a = size_t(*axis);
  Shape sizes = sizesIn;
  if (sizes.empty()) {
    if (parts < 1 || parts > shape[a])
      return opError(op, "cannot split a dimension of " + std::to_string(shape[a]) + " into " + std::to_string(parts) +
                             " non-empty parts");
    int64_t piece = (shape[a] + parts - 1) / parts;
    for (int64_t taken = 0; taken < shape[a]; taken += piece) sizes.push_back(std::min(piece, shape[a] - taken));
    if (int64_t(sizes.size()) != parts)
      return opError(op, "a dimension of " + std::to_string(shape[a]) + " does not split into " +
                             std::to_string(parts) + " parts", "give the sizes explicitly");
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return opError(op, "split size " + std::to_string(s), "sizes must not be negative");
    total += s;
  }
  if (total != shape[a])
    return opError(op, "split sizes add up to " + std::to_string(total) + ", the dimension is " + std::to_string(shape[a]));
  Workload w;
  w.name = "split_" + shapeName(shape) + "_a" + std::to_string(a);
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  w.inputs = {in};
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape outShape = shape;
    outShape[a] = sizes[k];
    w.name += "_" + std::to_string(sizes[k]);
    w.outputs.push_back(te::compute(
        toExprs(outShape),
        [&](const std::vector<Var>& i) {
          std::vector<Expr> indices = asExprs(i);
          if (offset != 0) indices[a] = i[a] + Expr(offset);
          return in(indices);
        },
        "out" + std::to_string(k), axisNames(outShape.size()), "injective"));
    offset += sizes[k];
  }
  return w;
}

Expected<Workload> where(const Shape& conditionShape, const Shape& xShape, const Shape& yShape, DataType dtype) {
  const std::string op = "Where";
  for (auto* s : {&conditionShape, &xShape, &yShape})
    if (auto e = checkShape(op, *s, "operand")) return *e;
  auto outShape = broadcastShapes(op, {conditionShape, xShape, yShape});
  if (!outShape) return outShape.error();
  te::Tensor condition = te::placeholder(toExprs(conditionShape), DataType::boolean(), "condition");
  te::Tensor x = te::placeholder(toExprs(xShape), dtype, "x");
  te::Tensor y = te::placeholder(toExprs(yShape), dtype, "y");
  te::Tensor out = te::compute(
      toExprs(*outShape),
      [&](const std::vector<Var>& i) {
        return select(broadcastRead(condition, conditionShape, i), broadcastRead(x, xShape, i),
                      broadcastRead(y, yShape, i));
      },
      "out", axisNames(outShape->size()), "broadcast");
  return singleOutput("where_" + shapeName(conditionShape) + "_" + shapeName(xShape) + "_" + shapeName(yShape),
                {condition, x, y}, out);
}

Expected<Workload> expand(const Shape& shape, const Shape& target, DataType dtype) {
  const std::string op = "Expand";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (auto e = checkShape(op, target, "target")) return *e;
  auto outShape = broadcastShapes(op, {shape, target});
  if (!outShape) return outShape.error();
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(*outShape), [&](const std::vector<Var>& i) { return broadcastRead(in, shape, i); }, "out",
      axisNames(outShape->size()), "broadcast");
  return singleOutput("expand_" + shapeName(shape) + "_to_" + shapeName(*outShape), {in}, out);
}

Expected<Workload> pad(const Shape& shape, const Shape& pads, double value, DataType dtype, PadMode mode) {
  const std::string op = "Pad";
  if (auto e = checkShape(op, shape, "input")) return *e;
  size_t rank = shape.size();
  if (pads.size() != 2 * rank)
    return opError(op, "pads has " + std::to_string(pads.size()) + " entries for a rank-" + std::to_string(rank) +
                           " input", "give a begin and an end per axis: [begins..., ends...]");
  Shape outShape(rank);
  for (size_t d = 0; d < rank; ++d) {
    outShape[d] = shape[d] + pads[d] + pads[d + rank];
    if (outShape[d] < 1)
      return opError(op, "padding leaves axis " + std::to_string(d) + " with " + std::to_string(outShape[d]) +
                             " elements", "negative pads may remove at most all but one element");
  }
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> indices;
        Expr inside;
        for (size_t d = 0; d < rank; ++d) {
          Expr index = pads[d] == 0 ? Expr(i[d]) : i[d] - Expr(pads[d]);
          bool mayLeave = pads[d] > 0 || pads[d + rank] > 0;
          if (mayLeave && mode == PadMode::Constant) {
            // likely() lets loop partitioning give the interior its own select-free loop.
            Expr here = likely(index >= Expr(int64_t(0)) && index < Expr(shape[d]));
            inside = inside.defined() ? inside && here : here;
            index = clampIndex(index, shape[d]);  // the discarded read stays in bounds
          } else if (mayLeave && mode == PadMode::Edge) {
            index = clampIndex(index, shape[d]);
          } else if (mayLeave && mode == PadMode::Wrap) {
            index = floormod(index, Expr(shape[d]));
          } else if (mayLeave && mode == PadMode::Reflect) {
            // Mirrored without repeating the edge element; the pattern repeats with period
            // 2 * (dim - 1), so pads wider than the axis keep reflecting as NumPy does.
            int64_t period = 2 * (shape[d] - 1);
            if (period == 0) {
              index = Expr(int64_t(0));
            } else {
              Expr folded = floormod(index, Expr(period));
              index = select(folded < Expr(shape[d]), folded, Expr(period) - folded);
            }
          }
          indices.push_back(index);
        }
        Expr read = in(indices);
        return inside.defined() ? select(inside, read, makeConst(dtype, value)) : read;
      },
      "out", axisNames(rank), "injective");
  static const char* modeNames[] = {"constant", "reflect", "edge", "wrap"};
  std::string name = "pad_" + std::string(modeNames[int(mode)]) + "_" + shapeName(shape) + "_to_" + shapeName(outShape);
  for (int64_t p : pads) name += "_" + std::to_string(p);
  if (mode == PadMode::Constant && value != 0) name += "_" + parameterTag({value});
  return singleOutput(symbolSafe(name), {in}, out);
}

Expected<Workload> col2im(const Shape& shape, const Shape& imageShape, const Shape& blockShape, const Shape& strides,
                          const Shape& pads, const Shape& dilations, DataType dtype) {
  const std::string op = "Col2Im";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (shape.size() != 3)
    return opError(op, "input has rank " + std::to_string(shape.size()), "the input is [N, C * product(block_shape), L]");
  const size_t k = imageShape.size();
  if (k == 0 || blockShape.size() != k || strides.size() != k || dilations.size() != k || pads.size() != 2 * k)
    return opError(op, "image_shape has " + std::to_string(k) + " entries, block_shape " +
                           std::to_string(blockShape.size()) + ", strides " + std::to_string(strides.size()) +
                           ", dilations " + std::to_string(dilations.size()) + " and pads " + std::to_string(pads.size()),
                   "give one entry per spatial axis (pads: a begin and an end per axis)");
  int64_t blockElements = 1, blockCount = 1;
  Shape blocksPerAxis;
  for (size_t d = 0; d < k; ++d) {
    if (imageShape[d] < 1 || blockShape[d] < 1 || strides[d] < 1 || dilations[d] < 1 || pads[d] < 0 || pads[d + k] < 0)
      return opError(op, "axis " + std::to_string(d) + " has image size " + std::to_string(imageShape[d]) +
                             ", block " + std::to_string(blockShape[d]) + ", stride " + std::to_string(strides[d]) +
                             ", dilation " + std::to_string(dilations[d]) + " and pads " + std::to_string(pads[d]) +
                             "/" + std::to_string(pads[d + k]),
                     "sizes, strides and dilations are positive, pads not negative");
    int64_t span = dilations[d] * (blockShape[d] - 1) + 1;
    int64_t blocks = (imageShape[d] + pads[d] + pads[d + k] - span) / strides[d] + 1;
    if (imageShape[d] + pads[d] + pads[d + k] < span)
      return opError(op, "a block spans " + std::to_string(span) + " pixels on axis " + std::to_string(d) +
                             ", more than the padded image's " + std::to_string(imageShape[d] + pads[d] + pads[d + k]));
    blocksPerAxis.push_back(blocks);
    blockElements *= blockShape[d];
    blockCount *= blocks;
  }
  if (shape[1] % blockElements != 0)
    return opError(op, "the input's " + std::to_string(shape[1]) + " rows are not a multiple of the block's " +
                           std::to_string(blockElements) + " elements");
  if (shape[2] != blockCount)
    return opError(op, "the input holds " + std::to_string(shape[2]) + " blocks; image_shape, block_shape, strides, "
                           "pads and dilations place " + std::to_string(blockCount));
  const int64_t channels = shape[1] / blockElements;
  Shape outShape{shape[0], channels};
  outShape.insert(outShape.end(), imageShape.begin(), imageShape.end());
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  std::vector<IterVar> offsets;  // the block element, per spatial axis
  for (size_t d = 0; d < k; ++d) offsets.push_back(te::reduceAxis(Expr(blockShape[d]), "b" + std::to_string(d)));
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        // Pixel x of axis d holds element b of the block starting at x + pad - b * dilation,
        // when that start lies on the stride grid inside the padded image.
        Expr valid, block = Expr(int64_t(0)), element = Expr(int64_t(0));
        for (size_t d = 0; d < k; ++d) {
          Expr start = Expr(i[2 + d]) + Expr(pads[d]) - Expr(offsets[d]) * Expr(dilations[d]);
          Expr position = strides[d] == 1 ? start : floordiv(start, Expr(strides[d]));
          Expr here = start >= Expr(int64_t(0)) && position < Expr(blocksPerAxis[d]);
          if (strides[d] != 1) here = here && eq(floormod(start, Expr(strides[d])), Expr(int64_t(0)));
          valid = valid.defined() ? valid && here : here;
          block = block * Expr(blocksPerAxis[d]) + clampIndex(position, blocksPerAxis[d]);
          element = element * Expr(blockShape[d]) + Expr(offsets[d]);
        }
        Expr read = in({Expr(i[0]), Expr(i[1]) * Expr(blockElements) + element, block});
        return te::sum(select(valid, read, makeZero(dtype)), offsets);
      },
      "out", axisNames(outShape.size()), "col2im");
  std::string name = "col2im_" + shapeName(shape) + "_to_" + shapeName(outShape) + "_b" + shapeName(blockShape) + "_s" +
                     shapeName(strides) + "_p" + shapeName(pads) + "_d" + shapeName(dilations);
  return singleOutput(symbolSafe(name), {in}, out);
}

Expected<Workload> tile(const Shape& shape, const Shape& repeats, DataType dtype) {
  const std::string op = "Tile";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (repeats.size() != shape.size())
    return opError(op, "repeats has " + std::to_string(repeats.size()) + " entries for a rank-" +
                           std::to_string(shape.size()) + " input", "give one repeat count per axis");
  Shape outShape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0)
      return opError(op, "repeat count " + std::to_string(repeats[d]) + " on axis " + std::to_string(d),
                     "repeat counts are not negative");
    outShape.push_back(shape[d] * repeats[d]);
  }
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> indices;
        for (size_t d = 0; d < shape.size(); ++d)
          indices.push_back(repeats[d] == 1 ? Expr(i[d]) : floormod(Expr(i[d]), Expr(shape[d])));
        return in(indices);
      },
      "out", axisNames(outShape.size()), "injective");
  return singleOutput("tile_" + shapeName(shape) + "_to_" + shapeName(outShape), {in}, out);
}

Expected<Workload> trilu(const Shape& shape, int64_t k, bool upper, DataType dtype) {
  const std::string op = "Trilu";
  if (auto e = checkShape(op, shape, "input", true)) return *e;
  if (shape.size() < 2) return opError(op, "input has rank " + std::to_string(shape.size()), "Trilu needs rank 2 or more");
  size_t rank = shape.size();
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(shape),
      [&](const std::vector<Var>& i) {
        Expr diagonal = Expr(i[rank - 1]) - Expr(i[rank - 2]);
        Expr keep = upper ? diagonal >= Expr(k) : diagonal <= Expr(k);
        return select(keep, in(asExprs(i)), makeZero(dtype));
      },
      "out", axisNames(rank), "injective");
  return singleOutput(symbolSafe(std::string(upper ? "triu_" : "tril_") + shapeName(shape) + "_k" + std::to_string(k)),
                      {in}, out);
}

Expected<Workload> depthToSpace(const Shape& shape, int64_t blockSize, bool columnRowDepth, DataType dtype) {
  const std::string op = "DepthToSpace";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (shape.size() != 4) return opError(op, "input has rank " + std::to_string(shape.size()), "the input is NCHW");
  if (blockSize < 1 || shape[1] % (blockSize * blockSize) != 0)
    return opError(op, "blocksize " + std::to_string(blockSize) + " does not divide the " + std::to_string(shape[1]) +
                           " channels into blocksize^2 groups");
  int64_t channels = shape[1] / (blockSize * blockSize);
  Shape outShape{shape[0], channels, shape[2] * blockSize, shape[3] * blockSize};
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        Expr b = Expr(blockSize);
        Expr rowInBlock = floormod(Expr(i[2]), b), columnInBlock = floormod(Expr(i[3]), b);
        // DCR: depth is (blockRow, blockColumn, channel); CRD: (channel, blockRow, blockColumn).
        Expr depth = columnRowDepth ? (Expr(i[1]) * b + rowInBlock) * b + columnInBlock
                                    : (rowInBlock * b + columnInBlock) * Expr(channels) + i[1];
        return in({Expr(i[0]), depth, floordiv(Expr(i[2]), b), floordiv(Expr(i[3]), b)});
      },
      "out", axisNames(4), "injective");
  return singleOutput("depth_to_space_" + std::string(columnRowDepth ? "crd_" : "dcr_") + shapeName(shape) + "_b" +
                          std::to_string(blockSize),
                      {in}, out);
}

Expected<Workload> spaceToDepth(const Shape& shape, int64_t blockSize, DataType dtype) {
  const std::string op = "SpaceToDepth";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (shape.size() != 4) return opError(op, "input has rank " + std::to_string(shape.size()), "the input is NCHW");
  if (blockSize < 1 || shape[2] % blockSize != 0 || shape[3] % blockSize != 0)
    return opError(op, "blocksize " + std::to_string(blockSize) + " does not divide the spatial shape " +
                           shapeName({shape[2], shape[3]}));
  int64_t channels = shape[1];
  Shape outShape{shape[0], channels * blockSize * blockSize, shape[2] / blockSize, shape[3] / blockSize};
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        Expr b = Expr(blockSize);
        // Output depth is (blockRow, blockColumn, channel), the inverse of DepthToSpace's DCR.
        Expr channel = floormod(Expr(i[1]), Expr(channels));
        Expr block = floordiv(Expr(i[1]), Expr(channels));
        Expr rowInBlock = floordiv(block, b), columnInBlock = floormod(block, b);
        return in({Expr(i[0]), channel, Expr(i[2]) * b + rowInBlock, Expr(i[3]) * b + columnInBlock});
      },
      "out", axisNames(4), "injective");
  return singleOutput("space_to_depth_" + shapeName(shape) + "_b" + std::to_string(blockSize), {in}, out);
}

Expected<Workload> castTensor(const Shape& shape, DataType from, DataType to) {
  const std::string op = "Cast";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (!from.isScalar() || !to.isScalar() || from.isHandle() || to.isHandle())
    return opError(op, "cannot cast " + from.toString() + " to " + to.toString(), "scalar element types only");
  te::Tensor in = te::placeholder(toExprs(shape), from, "in");
  te::Tensor out = te::compute(
      toExprs(shape), [&](const std::vector<Var>& i) { return cast(to, in(asExprs(i))); }, "out",
      axisNames(shape.size()), "elemwise");
  return singleOutput("cast_" + shapeName(shape) + "_" + from.toString() + "_to_" + to.toString(), {in}, out);
}

Expected<Schedule> defaultTransformSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  for (const te::Tensor& output : workload.outputs) {
    const std::string stage = output.name();
    const auto* compute = te::asCompute(output.op());
    if (!compute || compute->axes.empty()) continue;
    Shape extents;
    for (auto& e : output.shape()) extents.push_back(*asConstInt(e));
    int64_t elements = elementCount(extents);
    size_t rank = extents.size();
    const IterVar& inner = compute->axes.back();
    std::string innerName = inner.name();
    // Vector lanes for this element type: the target's width in bytes over the element size.
    int64_t lanes = std::max<int64_t>(1, int64_t(target.vectorLanes()) * 4 / std::max(1, output.dtype().bytes()));
    bool vectorize = extents.back() >= lanes && lanes > 1 && readsContiguously(compute->body, inner.var());
    if (vectorize) {
      if (Status st = s.split(stage, innerName, lanes, "vo", "vi"); !st) return st.error();
      if (Status st = s.vectorize(stage, "vi"); !st) return st.error();
    }
    // Parallel tasks of at least ~16K elements each so a launch stays small against the work.
    if (target.cores < 2 || elements < 32768) continue;
    std::vector<std::string> outer;
    for (size_t d = 0; d + 1 < rank; ++d) outer.push_back(compute->axes[d].name());
    // A short innermost axis (the block of an NCHW<b>c tensor: two vectors) keeps the axis
    // before it as a loop of its own inside each row, when enough rows are left to share:
    // fused into the rows, its index would be divided back out of the row number for every
    // few vectors (a blocked Concat ran 3x slower so).
    int64_t keptRows = elements / (extents.back() * extents[rank - 2]);
    if (rank >= 3 && extents.back() < 4 * lanes && keptRows >= 4 * int64_t(target.cores)) outer.pop_back();
    if (outer.empty()) {
      std::string loop = vectorize ? "vo" : innerName;
      int64_t perTask = std::max<int64_t>(1, 16384 / (vectorize ? lanes : 1));
      if (Status st = s.split(stage, loop, perTask, "task", "chunk"); !st) return st.error();
      if (Status st = s.parallel(stage, "task"); !st) return st.error();
      continue;
    }
    std::string rows = outer[0];
    if (outer.size() > 1) {
      rows = "rows";
      if (Status st = s.fuse(stage, outer, rows); !st) return st.error();
    }
    if (Status st = s.parallel(stage, rows); !st) return st.error();
  }
  return s;
}

}  // namespace tessel
