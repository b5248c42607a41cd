// Roofline arithmetic: a kernel's bound from its flops and bytes, and a profile's fractions of it.
#include "compiler/driver/Roofline.h"

#include <algorithm>
#include <map>

#include "compiler/driver/Driver.h"
#include "compiler/driver/ModelProfile.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IRVisitor.h"
#include "runtime/PeakFlops.h"

namespace tessel::driver {

const char* toString(RooflineLimit limit) { return limit == RooflineLimit::Compute ? "compute" : "memory"; }

std::optional<RooflineBound> rooflineBound(double flops, double bytes, const MachineRoof& roof) {
  if (!roof.known() || flops < 0 || bytes < 0 || (flops == 0 && bytes == 0)) return std::nullopt;
  // GFLOP/s and GB/s are both 10^9 per second: flops / peak is in nanoseconds.
  double computeMs = flops / roof.peakGflops * 1e-6;
  double memoryMs = bytes / roof.bandwidthGBps * 1e-6;
  if (computeMs >= memoryMs) return RooflineBound{computeMs, RooflineLimit::Compute};
  return RooflineBound{memoryMs, RooflineLimit::Memory};
}

std::optional<double> rooflineFraction(const RooflineBound& bound, double measuredMilliseconds) {
  if (!(measuredMilliseconds > 0)) return std::nullopt;
  return bound.milliseconds / measuredMilliseconds;
}

std::optional<double> constantShapeBytes(const std::vector<Expr>& shape, DataType dtype) {
  double elements = 1;
  for (const Expr& extent : shape) {
    const int64_t* value = asConstInt(extent);
    if (!value) return std::nullopt;
    elements *= double(*value);
  }
  return elements * dtype.bytes() * dtype.lanes();
}

double leastBytesMoved(const PrimFunc& function) {
  double total = 0;
  for (const Buffer& buffer : function->params) {
    std::optional<double> bytes = constantShapeBytes(buffer.shape(), buffer.dtype());
    if (!bytes) return 0;
    total += *bytes;
  }
  return total;
}

namespace {
bool callsIntrinsic(const PrimFunc& function, Intrinsic op) {
  struct Finder : IRVisitor {
    Intrinsic op;
    bool found = false;
    void visit(const CallNode* node) override {
      found = found || node->op == op;
      IRVisitor::visit(node);
    }
  } finder;
  finder.op = op;
  finder.visitStmt(function->body);
  return finder.found;
}
}  // namespace

bool usesIntegerDot(const PrimFunc& function) { return callsIntrinsic(function, Intrinsic::DotU8I8); }

bool usesBFloat16Dot(const PrimFunc& function) { return callsIntrinsic(function, Intrinsic::DotBF16); }

bool usesIntegerTiles(const PrimFunc& function) {
  struct : IRVisitor {
    bool found = false;
    void visit(const AttrStmtNode* node) override {
      found = found || node->key == kTileDotAttr;
      IRVisitor::visit(node);
    }
  } finder;
  finder.visitStmt(function->body);
  return finder.found && runtime::supportsFmaKernel(runtime::FmaKernel::Int8Tile);
}

std::optional<RooflineBound> rooflineBound(const ProfiledNode& node, const MachineRoof& roof) {
  if (!node.flops || !node.bytes) return std::nullopt;
  if (node.integerTiles && roof.int8TilePeakGops > 0) {
    MachineRoof tiles = roof;
    tiles.peakGflops = roof.int8TilePeakGops;
    return rooflineBound(*node.flops, *node.bytes, tiles);
  }
  if (node.integerDot && roof.int8PeakGops > 0) {
    MachineRoof integer = roof;
    integer.peakGflops = roof.int8PeakGops;
    return rooflineBound(*node.flops, *node.bytes, integer);
  }
  return rooflineBound(*node.flops, *node.bytes, roof);
}

void addRooflines(ModelProfile& profile, const std::vector<CompiledKernel>& kernels, const MachineRoof& roof) {
  profile.roof = roof;
  std::map<std::string, const CompiledKernel*> byName;
  for (const CompiledKernel& kernel : kernels) byName[kernel.name] = &kernel;
  for (ProfiledNode& node : profile.nodes) {
    auto found = byName.find(node.kernel);
    if (found == byName.end()) continue;
    const CompiledKernel& kernel = *found->second;
    // Kernels without an operation are the plan's own copies into model outputs.
    node.op = kernel.node ? operationSummary(*kernel.node) : "copy";
    node.flops = kernel.flops;
    node.integerDot = kernel.function.defined() && usesIntegerDot(kernel.function);
    node.integerTiles = kernel.function.defined() && usesIntegerTiles(kernel.function);
    double bytes = kernel.function.defined() ? leastBytesMoved(kernel.function) : 0;
    if (bytes > 0) node.bytes = bytes;
    if (auto bound = rooflineBound(node, roof))
      node.rooflineFraction = rooflineFraction(*bound, node.minMilliseconds.value_or(node.milliseconds));
  }
}

}  // namespace tessel::driver
