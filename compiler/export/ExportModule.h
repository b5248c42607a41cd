// Exporting compiled kernels, an execution plan and weights as a directory the runtime alone can run.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/ir/Stmt.h"
#include "core/support/Error.h"
#include "runtime/GraphPlan.h"
#include "runtime/NDArray.h"

namespace tessel {

/// Where an export's time went (`tessel compile --time-report`).
struct ExportTimes {
  /// One per kernel, in the order given. Each kernel then compiles as an LLVM module of its
  /// own, so that its time is its own: about 10-20% more CPU than the runs of kernels an
  /// export compiles otherwise.
  /// A kernel identical to an earlier one (but for its name) is compiled with it, as an
  /// alias: its own times are zero, and its group's are the first member's.
  std::vector<CodegenTimes> kernels;
  size_t distinctKernels = 0;     ///< Kernels compiled; the others are aliases.
  double codegenWallSeconds = 0;  ///< All kernels, on as many threads as there are cores.
  double linkSeconds = 0;         ///< The C compiler linking kernels.so.
  double writeSeconds = 0;        ///< params.bin, graph.json and moving the files into place.
};

struct ExportOptions {
  /// The machine the kernels are compiled for (the exporting host by default).
  Target target = hostTarget();
  /// The C compiler that links kernels.so; empty means $CC, else cc, gcc or clang on PATH.
  std::string compiler;
  /// Asked between object files (runs of at most 16 distinct kernels, with the kernels identical
  /// to them) and between the steps after them, and polled while the linker runs; once it
  /// returns true the export stops (killing the linker), removes what it wrote and returns a Diagnostic saying it was cancelled.
  /// Called from the exporting thread and its code generation threads, possibly at the same
  /// time. Empty: never cancelled.
  std::function<bool()> cancelled;
  /// Told what the export is doing: `percent` never decreases. One report per kernel
  /// compiled ("Compiling kernel 3 of 20: fused_conv2d_relu"), then "Linking kernels.so",
  /// "Writing params.bin", "Writing graph.json", and on success 100 ("Exported 20 kernels
  /// to DIR"). Called on the exporting thread or on one of its code generation threads,
  /// never two at a time.
  std::function<void(int percent, const std::string& what)> progress;
  /// When given, receives where the time went, kernel by kernel (see ExportTimes).
  ExportTimes* times = nullptr;
};

/// Writes `directory` (created if needed) in the format of runtime/GraphFormat.md:
/// kernels.so with every PrimFunc of `kernels` (lowered, constant shapes; each exported under
/// its name), graph.json holding `plan`, and params.bin holding `params` (one array per
/// param tensor name). The plan's params list is filled here, one 64-byte aligned slice of
/// params.bin per entry of `params`; entries already in plan.params are replaced.
///
/// Before writing anything the plan is validated as the runtime would, and checked against
/// the kernels: every node's kernel exists and gets as many arguments as it has buffer
/// parameters, each of the parameter's element type and element count; every param
/// matches its tensor's shape and type. The object files are emitted by the LLVM backend
/// (in parallel) and linked by the system C compiler (`cc -shared`); the runtime's C
/// backend API stays undefined in kernels.so and resolves from libtessel_runtime at load.
///
/// Nothing is lost on failure: the three files are written into a hidden staging directory
/// inside `directory` and renamed into place only when all of them are complete (the files
/// they replace are set aside and moved back if a rename fails), so a failed or cancelled
/// export leaves a module already there as it was and a reader never sees half a file.
/// Only a process killed during those last renames can leave old and new files mixed; the
/// staging directory a killed export leaves behind is removed by the next export there.
/// Failures (an inconsistent plan, no C compiler, a link error, an unwritable directory)
/// are Diagnostics naming the file or entry; a cancel is one saying the export was cancelled.
Status exportModule(const std::string& directory, const std::vector<PrimFunc>& kernels, runtime::GraphPlan plan,
                    const std::map<std::string, runtime::NDArray>& params, const ExportOptions& options = {});

}  // namespace tessel
