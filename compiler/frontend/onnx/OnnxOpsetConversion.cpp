// Converting a model of an old opset with onnx::version_conversion::ConvertVersion (libonnx).
#include "compiler/frontend/onnx/OnnxOpsetConversion.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>
#include <unordered_set>

#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxOpsets.h"

// Defined by the sanitizer runtimes (ASan, UBSan) when the program has them: the function run
// when a sanitizer ends the process. Weak, so a plain build has it as null.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace tessel::frontend {
namespace {

using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;


// The converter's assertions read "./onnx/version_converter/helper.cc:81: assertInputsAvailable:
// Assertion `inputs[i]->has_sizes()` failed: Shape of input 2 is not available." A reader of the
// diagnostic wants what follows "failed: ", on one line.
std::string converterMessage(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  if (size_t failed = text.find("` failed: "); failed != std::string::npos) text = text.substr(failed + 10);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.empty() ? "no message" : text;
}

std::string describeNode(const NodeProto& node, int index) {
  return "node '" + (node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name()) + "' (" +
         node.op_type() + ")";
}

// The first default-domain node of `graph` whose operator ONNX does not define at `opset` (a
// typo, or an operator newer than the model), described as the importer describes nodes; empty
// when there is none. The converter would fail on it with a bare "unordered_map::at".
std::string firstUnknownOperator(const GraphProto& graph, int opset) {
  for (int i = 0; i < graph.node_size(); ++i)
    if (isDefaultDomain(graph.node(i).domain()) && !onnx::OpSchemaRegistry::Schema(graph.node(i).op_type(), opset, ""))
      return describeNode(graph.node(i), i);
  return "";
}

// The first name the converter would look up and not find, described for the reader: a node
// input or graph output that no graph input, initializer (before IR version 4 an initializer is
// a value only when it is also an input) or node defines. ONNX's converter throws for an
// undefined node input but dereferences null for an undefined graph output (libonnx 1.12's
// graphProtoToGraph), so this is checked before the model reaches it. Empty when all are defined.
std::string firstUndefinedValue(const ModelProto& model) {
  const GraphProto& graph = model.graph();
  std::unordered_set<std::string> defined{""};  // "" is an omitted optional input
  for (const auto& input : graph.input()) defined.insert(input.name());
  if (model.ir_version() >= 4)
    for (const auto& tensor : graph.initializer()) defined.insert(tensor.name());
  for (const auto& node : graph.node())
    for (const auto& output : node.output()) defined.insert(output);
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& input : graph.node(i).input())
      if (!defined.count(input)) return "input " + quotedName(input) + " of " + describeNode(graph.node(i), i);
  for (int i = 0; i < graph.output_size(); ++i)
    if (!defined.count(graph.output(i).name()))
      return "graph output " + std::to_string(i) + " " + quotedName(graph.output(i).name());
  return "";
}

// The dimensions the model declares or shape inference found for value `name` (-1 for unknown
// ones); nullopt when its rank is unknown.
std::optional<std::vector<int64_t>> shapeOf(const GraphProto& graph, const std::string& name) {
  for (const auto& tensor : graph.initializer())
    if (tensor.name() == name) return std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end());
  for (const auto* infos : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const auto& info : *infos) {
      if (info.name() != name || !info.type().tensor_type().has_shape()) continue;
      std::vector<int64_t> dims;
      for (const auto& dim : info.type().tensor_type().shape().dim()) dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      return dims;
    }
  return std::nullopt;
}

// PRelu before opset 7 takes one slope per channel as a 1-D tensor [C] (PyTorch's nn.PReLU(C)
// exports it so); from opset 7 the slope broadcasts numpy-style from the right, so [C] would
// meet the last dimension instead. ONNX's converter calls PRelu-6 to 7 compatible and leaves
// such slopes alone; this puts an Unsqueeze in front that makes them [C, 1, ..., 1] (the
// converter then brings the Unsqueeze to the target opset). A slope of one element, or an
// input of rank 2 ([N, C]), means the same either way and is left alone.
void makePReluSlopesPerChannel(GraphProto& graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    NodeProto node = graph.node(i);
    if (!isDefaultDomain(node.domain()) || node.op_type() != "PRelu" || node.input_size() != 2) continue;
    auto input = shapeOf(graph, node.input(0)), slope = shapeOf(graph, node.input(1));
    if (!input || !slope || input->size() < 3 || slope->size() != 1 || (*slope)[0] == 1) continue;
    if ((*input)[1] >= 0 && (*slope)[0] >= 0 && (*input)[1] != (*slope)[0]) continue;  // not one per channel
    NodeProto unsqueeze;
    unsqueeze.set_op_type("Unsqueeze");
    unsqueeze.set_name(node.name() + "_slope_per_channel");
    unsqueeze.add_input(node.input(1));
    std::string reshaped = node.input(1) + "_per_channel_" + std::to_string(i);
    unsqueeze.add_output(reshaped);
    auto* axes = unsqueeze.add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    for (size_t axis = 1; axis + 1 < input->size(); ++axis) axes->add_ints(int64_t(axis));
    graph.mutable_node(i)->set_input(1, reshaped);
    // The Unsqueeze goes just before the PRelu: the converter wants producers first.
    *graph.add_node() = unsqueeze;
    for (int at = graph.node_size() - 1; at > i; --at) graph.mutable_node()->SwapElements(at, at - 1);
    ++i;
  }
}

// What became of a conversion run in a child process.
struct ConverterOutcome {
  enum Kind { Converted, Failed, OutOfMemory, Crashed } kind = Crashed;
  std::string message;  // Failed: the converter's; Crashed: what happened to the process
};

// The child's answer on the pipe: one tag byte, then the converted model or a message.
constexpr char kAnswerConverted = 'M', kAnswerFailed = 'E', kAnswerOutOfMemory = 'A';
// A conversion takes milliseconds to seconds; a child still busy after this is stuck.
constexpr int kConverterTimeoutSeconds = 300;

[[noreturn]] void convertAndAnswer(ModelProto& model, int toOpset, int answerFd) {
  std::string answer;
  try {
    // The converter needs the shapes of the operands it rewrites (Add-6's broadcast, Gemm-6's
    // C) and reads them from the model's value_info: PyTorch's old exporter wrote none.
    onnx::shape_inference::InferShapes(model);
    makePReluSlopesPerChannel(*model.mutable_graph());
    model = onnx::version_conversion::ConvertVersion(model, toOpset);
    answer = std::string(1, kAnswerConverted) + model.SerializeAsString();
  } catch (const std::bad_alloc&) {
    answer = std::string(1, kAnswerOutOfMemory);
  } catch (const std::exception& error) {
    answer = std::string(1, kAnswerFailed) + error.what();
  } catch (...) {
    answer = std::string(1, kAnswerFailed) + "it failed with an exception that carries no message";
  }
  for (size_t written = 0; written < answer.size();) {
    ssize_t n = ::write(answerFd, answer.data() + written, answer.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    written += size_t(n);
  }
  ::_exit(0);  // no destructors or atexit handlers of the parent's objects run here
}

// Runs shape inference and ONNX's version converter on `model` in a forked child and, when it
// converted, replaces `model` with the result. libonnx 1.12 dereferences null on some malformed
// models of old opsets (the shape inference of LSTM-1 with an omitted output, an undefined
// graph output; fuzz_onnx_model finds such inputs within minutes), and a crash there must cost
// the import, not the program (the Studio with the user's unsaved work).
ConverterOutcome convertInChildProcess(ModelProto& model, int toOpset) {
  ConverterOutcome outcome;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    outcome.message = "could not be started (pipe: " + std::string(std::strerror(errno)) + ")";
    return outcome;
  }
  pid_t child = ::fork();
  if (child < 0) {
    outcome.message = "could not be started (fork: " + std::string(std::strerror(errno)) + ")";
    ::close(fds[0]);
    ::close(fds[1]);
    return outcome;
  }
  if (child == 0) {
    ::close(fds[0]);
    // A fault in the converter should end this process with its signal, which the parent
    // reports; not run handlers inherited from the parent (a crash reporter, a sanitizer's or
    // libFuzzer's, which would file the parent's input as a crash).
    for (int fault : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(fault, SIG_DFL);
    // Under a sanitizer, its report (libonnx asking for an impossible allocation) ends the child
    // with an exit status, without the parent's callback (libFuzzer's files a crash).
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
    // What the child prints (libonnx's warnings, a sanitizer's report of its crash) is not the
    // parent's: the parent reports the outcome in its own words, and a fuzzer reading the
    // parent's output must not take the child's report for one of the parent's.
    if (int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
    convertAndAnswer(model, toOpset, fds[1]);
  }
  ::close(fds[1]);
  std::string answer;
  bool timedOut = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kConverterTimeoutSeconds);
  char buffer[1 << 16];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    pollfd readable{fds[0], POLLIN, 0};
    int ready = ::poll(&readable, 1, int(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // re-checks the deadline
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, size_t(n));
  }
  ::close(fds[0]);
  if (timedOut) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) {
    outcome.message = "did not finish within " + std::to_string(kConverterTimeoutSeconds) + " s and was stopped";
    return outcome;
  }
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    const char* name = sigabbrev_np(signal);
    outcome.message = "crashed (" + (name ? "SIG" + std::string(name) : "signal " + std::to_string(signal)) + ")";
    return outcome;
  }
  if (answer.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    outcome.message = "stopped without an answer (exit status " +
                      std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return outcome;
  }
  const char tag = answer[0];
  if (tag == kAnswerOutOfMemory) {
    outcome.kind = ConverterOutcome::OutOfMemory;
  } else if (tag == kAnswerFailed) {
    outcome.kind = ConverterOutcome::Failed;
    outcome.message = answer.substr(1);
  } else if (tag == kAnswerConverted && model.ParseFromArray(answer.data() + 1, int(answer.size() - 1))) {
    outcome.kind = ConverterOutcome::Converted;
  } else {
    outcome.message = "answered with a model that cannot be read back";
  }
  return outcome;
}

}  // namespace

Expected<OpsetConversion> convertOpset(ModelProto& model, int fromOpset, int toOpset, const std::string& sourceName) {
  const std::string what = "from opset " + std::to_string(fromOpset) + " to " + std::to_string(toOpset);
  if (std::string unknown = firstUnknownOperator(model.graph(), fromOpset); !unknown.empty())
    return importError("cannot be converted " + what + ": " + unknown + " is no operator of ONNX opset " +
                           std::to_string(fromOpset) + ", so ONNX's version converter does not know how it changed",
                       sourceName, "check the operator's name, or the opset the model declares");
  if (std::string undefined = firstUndefinedValue(model); !undefined.empty())
    return importError("cannot be converted " + what + ": " + undefined +
                           " is no graph input, initializer or node output",
                       sourceName, "the model is malformed; re-export it, or name a value the graph defines");
  auto failed = [&](const std::string& message) {
    return importError("cannot be converted " + what + " by ONNX's version converter: " + converterMessage(message),
                       sourceName,
                       "re-export the model at opset " + std::to_string(toOpset) +
                           " or newer, or convert it in Python (onnx.version_converter.convert_version) and "
                           "fix what the converter reports");
  };
  auto start = std::chrono::steady_clock::now();
  ConverterOutcome outcome = convertInChildProcess(model, toOpset);
  switch (outcome.kind) {
  case ConverterOutcome::Converted:
    break;
  case ConverterOutcome::Failed:
    return failed(outcome.message);
  case ConverterOutcome::OutOfMemory:
    return importError("needs more memory than is available to convert " + what, sourceName);
  case ConverterOutcome::Crashed:
    return importError("cannot be converted " + what + ": ONNX's version converter " + outcome.message +
                           " on this model (Tessel ran it in a separate process, so nothing else was affected)",
                       sourceName,
                       "the model is probably malformed: check it with onnx.checker.check_model in Python, or "
                       "re-export it at opset " + std::to_string(toOpset) + " or newer");
  }
  double milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return OpsetConversion{fromOpset, toOpset, milliseconds};
}

}  // namespace tessel::frontend
