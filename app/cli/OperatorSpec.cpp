// Operator construction from flags and plain C++ reference implementations.
#include "app/cli/OperatorSpec.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/TuningRecordsFlag.h"
#include "app/lessons/LessonOperators.h"
#include "compiler/ops/PackedMatmul.h"
#include "compiler/schedule/TraceText.h"

namespace tessel::cli {

namespace {
// The lessons' operators (app/lessons/LessonOperators.h) as "lesson_NAME", so that the Studio
// measures a lesson step in a child `tessel measure --operator lesson_blur ...` like any other.
constexpr const char* kLessonPrefix = "lesson_";

std::string lessonOperatorOf(const std::string& op) {
  if (op.rfind(kLessonPrefix, 0) != 0) return "";
  std::string name = op.substr(std::string(kLessonPrefix).size());
  return lessons::operatorSizeNames(name).empty() ? "" : name;
}
}  // namespace

std::vector<std::string> operatorNames() {
  std::vector<std::string> names = {"matmul", "dense", "conv2d", "bf16_matmul", "int8_matmul"};
  for (const std::string& name : lessons::lessonOperatorNames()) names.push_back(kLessonPrefix + name);
  return names;
}

std::vector<FlagSpec> operatorFlags(const std::string& op) {
  if (op == "matmul")
    return {{"m", "rows of A and C", true, "1024"}, {"n", "columns of B and C", true, "1024"},
            {"k", "columns of A, rows of B", true, "1024"}};
  if (op == "dense")
    return {{"m", "rows of A (batch) and C", true, "1024"}, {"n", "rows of B (outputs) and columns of C", true, "1024"},
            {"k", "columns of A and B (inputs)", true, "1024"}};
  if (op == "bf16_matmul")
    return {{"m", "rows of A and C", true, "256"}, {"n", "columns of C (a multiple of 16)", true, "1024"},
            {"k", "columns of A, rows of the weight (a multiple of 2)", true, "1024"}};
  if (op == "int8_matmul")
    return {{"m", "rows of A and C", true, "256"}, {"n", "columns of C (a multiple of 16)", true, "1024"},
            {"k", "columns of A, rows of the weight (a multiple of 4)", true, "1024"}};
  if (std::string lesson = lessonOperatorOf(op); !lesson.empty()) {
    std::vector<FlagSpec> flags;
    for (const std::string& size : lessons::operatorSizeNames(lesson)) flags.push_back({size, "size " + size, true, "64"});
    return flags;
  }
  if (op == "conv2d")
    return {{"n", "batch size", true, "1"},        {"c", "input channels", true, "64"},
            {"h", "input height", true, "56"},     {"w", "input width", true, "56"},
            {"k", "output channels (filters)", true, "64"}, {"r", "kernel height", true, "3"},
            {"s", "kernel width", true, "3"},      {"stride", "stride", true, "1"},
            {"pad", "zero padding on each side", true, "1"}};
  return {};
}

std::optional<std::string> makeOperator(const std::string& op, const CommandLine& flags,
                                        std::unique_ptr<OperatorSpec>* out) {
  auto spec = std::make_unique<OperatorSpec>();
  Target target = hostTarget();
  // --target (on the commands that take it) picks a GPU; the CPU's options come from the host.
  if (flags.has("target") && !flags.get("target").empty()) {
    auto parsed = Target::parse(flags.get("target"));
    if (!parsed) return "--target: " + parsed.error().message;
    if (parsed->kind != TargetKind::Cpu) target = *parsed;
  }
  spec->target = target;
  if (target.kind != TargetKind::Cpu && op != "matmul" && op != "dense" && op != "conv2d")
    return "--target " + std::string(targetKindName(target.kind)) +
           ": only matmul, dense and conv2d have GPU schedules so far";
  if (op == "matmul" || op == "dense") {
    int64_t m, n, k;
    if (auto e = flags.getInt("m", &m)) return e;
    if (auto e = flags.getInt("n", &n)) return e;
    if (auto e = flags.getInt("k", &k)) return e;
    bool transposed = op == "dense";
    spec->workload = transposed ? dense(m, n, k, DataType::float32(), target)
                                : matmul(m, n, k, DataType::float32(), target);
    Workload w = spec->workload;
    spec->defaultSchedule = [w, target] { return defaultMatmulSchedule(w, target); };
    spec->reference = [m, n, k, transposed](const std::vector<const float*>& in, float* c) {
      const float* a = in[0];
      const float* b = in[1];
      std::fill(c, c + m * n, 0.0f);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) {
          float av = a[i * k + p];
          for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * (transposed ? b[j * k + p] : b[p * n + j]);
        }
    };
  } else if (op == "bf16_matmul" || op == "int8_matmul") {
    int64_t m, n, k;
    if (auto e = flags.getInt("m", &m)) return e;
    if (auto e = flags.getInt("n", &n)) return e;
    if (auto e = flags.getInt("k", &k)) return e;
    PackedMatmulKind kind = op == "bf16_matmul" ? PackedMatmulKind::BFloat16 : PackedMatmulKind::Int8;
    if (std::string problem = packedMatmulProblem(m, n, k, kind); !problem.empty()) return problem;
    spec->workload = packedMatmul(m, n, k, kind);
    Workload w = spec->workload;
    spec->defaultSchedule = [w, kind, target] { return defaultPackedMatmulSchedule(w, kind, target); };
    // The inputs arrive as the values the kernel reads (bfloat16 or bytes, as floats); W in
    // its packed layout of g-element words. Integer sums stay exact in double.
    const int64_t g = kind == PackedMatmulKind::BFloat16 ? 2 : 4;
    spec->reference = [m, n, k, g](const std::vector<const float*>& in, float* c) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += double(in[0][i * k + p]) * in[1][((j / 16 * (k / g) + p / g) * 16 + j % 16) * g + p % g];
          c[i * n + j] = float(sum);
        }
    };
  } else if (op == "conv2d") {
    Conv2dParams p;
    if (auto e = flags.getInt("n", &p.batch)) return e;
    if (auto e = flags.getInt("c", &p.channels)) return e;
    if (auto e = flags.getInt("h", &p.height)) return e;
    if (auto e = flags.getInt("w", &p.width)) return e;
    if (auto e = flags.getInt("k", &p.filters)) return e;
    if (auto e = flags.getInt("r", &p.kernelH)) return e;
    if (auto e = flags.getInt("s", &p.kernelW)) return e;
    if (auto e = flags.getInt("stride", &p.stride)) return e;
    if (auto e = flags.getInt("pad", &p.pad, 0)) return e;
    if (std::string problem = p.validate(); !problem.empty()) return "conv2d: " + problem;
    spec->workload = conv2d(p, DataType::float32(), target);
    Workload w = spec->workload;
    spec->defaultSchedule = [w, p, target] { return defaultConv2dSchedule(w, p, target); };
    spec->reference = [p](const std::vector<const float*>& in, float* out) {
      const float* data = in[0];
      const float* weight = in[1];
      int64_t oh = p.outHeight(), ow = p.outWidth();
      for (int64_t n = 0; n < p.batch; ++n)
        for (int64_t k = 0; k < p.filters; ++k)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
              float sum = 0;
              for (int64_t c = 0; c < p.channels; ++c)
                for (int64_t r = 0; r < p.kernelH; ++r)
                  for (int64_t s = 0; s < p.kernelW; ++s) {
                    int64_t iy = y * p.stride + r - p.pad, ix = x * p.stride + s - p.pad;
                    if (iy < 0 || iy >= p.height || ix < 0 || ix >= p.width) continue;
                    sum += data[((n * p.channels + c) * p.height + iy) * p.width + ix] *
                           weight[((k * p.channels + c) * p.kernelH + r) * p.kernelW + s];
                  }
              out[((n * p.filters + k) * oh + y) * ow + x] = sum;
            }
    };
  } else if (std::string lesson = lessonOperatorOf(op); !lesson.empty()) {
    lessons::LessonOperator lessonOp{lesson, {}};
    for (const std::string& size : lessons::operatorSizeNames(lesson))
      if (auto e = flags.getInt(size, &lessonOp.sizes[size])) return e;
    auto made = lessons::makeLessonOperator(lessonOp);
    if (!made) return made.error().message;
    spec->workload = made->workload;
    std::vector<te::Tensor> outputs = made->workload.outputs;
    // A lesson starts from no schedule at all: every loop in its natural order.
    spec->defaultSchedule = [outputs]() -> Expected<Schedule> { return Schedule::replay(outputs, Trace{}); };
    spec->reference = made->reference;
  } else {
    std::string known;
    for (auto& name : operatorNames()) known += (known.empty() ? "" : ", ") + name;
    return "unknown operator '" + op + "' (known: " + known + ")";
  }
  *out = std::move(spec);
  return std::nullopt;
}

Expected<Schedule> loadSchedule(const OperatorSpec& spec, const std::string& path) {
  if (path.empty()) return spec.defaultSchedule();
  std::ifstream file(path);
  if (!file) return Diagnostic{"cannot read the schedule file", path, 0, 0, "check the path"};
  std::stringstream text;
  text << file.rdbuf();
  auto trace = parseTraceText(text.str());
  if (!trace) {
    Diagnostic d = trace.error();
    d.location = path;
    return d;
  }
  auto schedule = Schedule::replay(spec.workload.outputs, *trace);
  if (!schedule) {
    Diagnostic d = schedule.error();
    d.location = path;
    return d;
  }
  return schedule;
}

Diagnostic OperatorCommand::locate(Diagnostic d) const {
  if (d.location == "schedule" && !schedulePath.empty()) d.location = schedulePath;
  return d;
}

std::optional<int> parseOperatorCommand(const std::string& command, const std::vector<std::string>& args,
                                        const std::vector<FlagSpec>& extraFlags, const std::string& description,
                                        OperatorCommand* out) {
  std::string op = args.empty() || args[0].rfind("--", 0) == 0 ? "" : args[0];
  std::vector<std::string> rest(args.begin() + (op.empty() ? 0 : 1), args.end());
  auto flags = operatorFlags(op.empty() ? "matmul" : op);
  flags.insert(flags.end(), extraFlags.begin(), extraFlags.end());
  flags.push_back({"schedule", "schedule text file replacing the default schedule", true, ""});
  flags.push_back(tuningRecordsFlag());
  std::string prefix = "tessel " + command + ": ";
  if (auto error = CommandLine::parse(rest, flags, &out->line)) {
    std::cerr << prefix << *error << "\n";
    return kExitError;
  }
  // A stray word or a single-dash flag ("-m 64") would otherwise be ignored silently.
  if (!out->line.positional().empty()) {
    std::cerr << prefix << "unexpected argument '" << out->line.positional()[0] << "' (see --help)\n";
    return kExitError;
  }
  if (out->line.helpRequested() || op.empty()) {
    std::string names;
    for (auto& name : operatorNames()) names += (names.empty() ? "" : "|") + name;
    std::cout << usage("tessel " + command + " " + names + " [options]", flags) << "\n" << description;
    return op.empty() && !out->line.helpRequested() ? kExitError : kExitOk;
  }
  bool tuned = out->line.has("tuning-records");
  if (tuned && out->line.has("schedule")) {
    std::cerr << prefix << "--schedule and --tuning-records both replace the default schedule; give one\n";
    return kExitError;
  }
  if (auto error = applyThreads(out->line)) {
    std::cerr << prefix << *error << "\n";
    return kExitError;
  }
  if (auto error = makeOperator(op, out->line, &out->spec)) {
    std::cerr << prefix << *error << "\n";
    return kExitError;
  }
  if (tuned) {
    // Records of the target the operator runs on: the host, or the GPU --target names.
    auto records = tuner::loadTuningRecords(out->line.get("tuning-records"), out->spec->target);
    if (!records) {
      std::cerr << records.error().toString() << "\n";
      return kExitError;
    }
    out->schedule = tuner::tunedOperatorSchedule(*records, out->spec->workload);
    reportTuningRecords(*records);
    out->tuningRecords = std::move(*records);
    if (out->schedule) return std::nullopt;
  }
  out->schedulePath = out->line.get("schedule");
  auto schedule = loadSchedule(*out->spec, out->schedulePath);
  if (!schedule) {
    std::cerr << schedule.error().toString() << "\n";
    return kExitError;
  }
  out->schedule = std::move(*schedule);
  return std::nullopt;
}

}  // namespace tessel::cli
