#include "app/lessons/LessonOperators.h"

#include <algorithm>

#include "core/ir/IROperators.h"

namespace tessel::lessons {

namespace {

LessonWorkload matmulLesson(int64_t m, int64_t n, int64_t k) {
  LessonWorkload lesson;
  Workload& w = lesson.workload;
  w.name = "lesson_matmul_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  te::Tensor A = te::placeholder({Expr(m), Expr(k)}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({Expr(k), Expr(n)}, DataType::float32(), "B");
  IterVar kk = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute(
      {Expr(m), Expr(n)}, [&](Var i, Var j) { return te::sum(A(i, kk) * B(kk, j), {kk}); }, "C", {"i", "j"}, "matmul");
  w.inputs = {A, B};
  w.outputs = {C};
  w.flops = 2.0 * double(m) * double(n) * double(k);
  lesson.reference = [m, n, k](const std::vector<const float*>& in, float* c) {
    std::fill(c, c + m * n, 0.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) c[i * n + j] += in[0][i * k + p] * in[1][p * n + j];
  };
  return lesson;
}

LessonWorkload blurLesson(int64_t height, int64_t width) {
  LessonWorkload lesson;
  Workload& w = lesson.workload;
  w.name = "lesson_blur_" + std::to_string(height) + "x" + std::to_string(width);
  te::Tensor input = te::placeholder({Expr(height + 2), Expr(width + 2)}, DataType::float32(), "input");
  const Expr third(1.0f / 3.0f);
  te::Tensor blurX = te::compute(
      {Expr(height + 2), Expr(width)},
      [&](Var y, Var x) { return (input(y, x) + input(y, x + 1) + input(y, x + 2)) * third; }, "blur_x", {"y", "x"},
      "blur");
  te::Tensor blurY = te::compute(
      {Expr(height), Expr(width)},
      [&](Var y, Var x) { return (blurX(y, x) + blurX(y + 1, x) + blurX(y + 2, x)) * third; }, "blur_y", {"y", "x"},
      "blur");
  w.inputs = {input};
  w.outputs = {blurY};
  w.flops = 6.0 * double(height) * double(width);  // two passes of two adds and a multiply
  lesson.reference = [height, width](const std::vector<const float*>& in, float* out) {
    const float third = 1.0f / 3.0f;
    std::vector<float> blurX(size_t((height + 2) * width));
    for (int64_t y = 0; y < height + 2; ++y)
      for (int64_t x = 0; x < width; ++x) {
        const float* row = in[0] + y * (width + 2);
        blurX[y * width + x] = (row[x] + row[x + 1] + row[x + 2]) * third;
      }
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x)
        out[y * width + x] = (blurX[y * width + x] + blurX[(y + 1) * width + x] + blurX[(y + 2) * width + x]) * third;
  };
  return lesson;
}

LessonWorkload rowSumLesson(int64_t rows, int64_t cols) {
  LessonWorkload lesson;
  Workload& w = lesson.workload;
  w.name = "lesson_row_sum_" + std::to_string(rows) + "x" + std::to_string(cols);
  te::Tensor A = te::placeholder({Expr(rows), Expr(cols)}, DataType::float32(), "A");
  IterVar j = te::reduceAxis(Expr(cols), "j");
  te::Tensor S = te::compute({Expr(rows)}, [&](Var i) { return te::sum(A(i, j), {j}); }, "S", {"i"}, "reduce");
  w.inputs = {A};
  w.outputs = {S};
  w.flops = double(rows) * double(cols);
  lesson.reference = [rows, cols](const std::vector<const float*>& in, float* out) {
    for (int64_t i = 0; i < rows; ++i) {
      double sum = 0;  // the schedule may sum in another order: compare with the exact sum
      for (int64_t c = 0; c < cols; ++c) sum += in[0][i * cols + c];
      out[i] = float(sum);
    }
  };
  return lesson;
}

}  // namespace

std::vector<std::string> lessonOperatorNames() { return {"matmul", "blur", "row_sum"}; }

std::vector<std::string> operatorSizeNames(const std::string& name) {
  if (name == "matmul") return {"m", "n", "k"};
  if (name == "blur") return {"height", "width"};
  if (name == "row_sum") return {"rows", "cols"};
  return {};
}

Expected<LessonWorkload> makeLessonOperator(const LessonOperator& op) {
  auto size = [&](const char* key) {
    auto found = op.sizes.find(key);
    return found == op.sizes.end() ? int64_t(0) : found->second;
  };
  for (const std::string& key : operatorSizeNames(op.name))
    if (size(key.c_str()) < 1) return Diagnostic{"operator " + op.name + " needs a positive " + key, op.name, 0, 0, ""};
  if (op.name == "matmul") return matmulLesson(size("m"), size("n"), size("k"));
  if (op.name == "blur") return blurLesson(size("height"), size("width"));
  if (op.name == "row_sum") return rowSumLesson(size("rows"), size("cols"));
  return Diagnostic{"unknown lesson operator '" + op.name + "'", op.name, 0, 0, ""};
}

}  // namespace tessel::lessons
