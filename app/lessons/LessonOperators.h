// The operators lessons schedule. They are written as plainly as a textbook would (a matmul
// that reads B in place, a 3x3 box blur as two 1-D passes, a sum of rows), without the packing
// and layouts the model compiler's own operators bring, so that each schedule primitive the
// learner writes is the whole difference.
//
//   matmul  m n k       C[i, j] = sum over k of A[i, k] * B[k, j]           stage C, axes i j, reduction k
//   blur    height width
//           blur_x[y, x] = (input[y, x] + input[y, x+1] + input[y, x+2]) / 3   (height+2 rows)
//           blur_y[y, x] = (blur_x[y, x] + blur_x[y+1, x] + blur_x[y+2, x]) / 3
//   row_sum rows cols   S[i] = sum over j of A[i, j]                         stage S, axis i, reduction j
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/lessons/Lesson.h"
#include "compiler/ops/Workload.h"

namespace tessel::lessons {

struct LessonWorkload {
  Workload workload;
  /// Plain C++ loops computing the same output from the same inputs.
  std::function<void(const std::vector<const float*>& inputs, float* output)> reference;
};

std::vector<std::string> lessonOperatorNames();
/// The sizes operator `name` takes, in order; empty when there is no such operator.
std::vector<std::string> operatorSizeNames(const std::string& name);
/// The operator with its sizes (as parseLesson checked them).
Expected<LessonWorkload> makeLessonOperator(const LessonOperator& op);

}  // namespace tessel::lessons
