// Translation of lowered loop IR into LLVM IR: one exported kernel per PrimFunc, parallel loops outlined.
#include "compiler/codegen/llvm/ModuleEmitter.h"

#include <cctype>
#include <cstring>
#include <functional>
#include <set>
#include <unordered_map>
#include <utility>

#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalAlias.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/codegen/llvm/FreeVariables.h"
#include "compiler/codegen/llvm/TensorDot.h"
#include "compiler/codegen/llvm/TileDot.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "compiler/transform/TileDotNest.h"
#include "compiler/codegen/llvm/VectorMath.h"
#include "core/ir/IRPrinter.h"
#include "runtime/BFloat16.h"

namespace tessel {

namespace {

/// Allocations up to this size with a constant extent live on the stack; larger ones, or
/// ones whose size is only known at run time, come from the runtime's workspace memory.
constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;
/// NDArrays, stack allocations and workspace memory are all aligned this much.
constexpr unsigned kBufferAlignment = 64;
/// What the kernel returns when the runtime cannot provide workspace memory.
constexpr int32_t kWorkspaceAllocationFailed = -1;

/// Thrown inside the emitter for a construct the backend cannot compile; becomes the
/// Diagnostic that emitModule returns.
struct UnsupportedConstruct {
  Diagnostic diagnostic;
};

// --- small differences between LLVM versions ---------------------------------------------

llvm::Function* intrinsicDeclaration(llvm::Module* module, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> types) {
#if LLVM_VERSION_MAJOR >= 20
  return llvm::Intrinsic::getOrInsertDeclaration(module, id, types);
#else
  return llvm::Intrinsic::getDeclaration(module, id, types);
#endif
}

llvm::Type* bytePointerType(llvm::LLVMContext& context) {
#if LLVM_VERSION_MAJOR >= 17
  return llvm::PointerType::getUnqual(context);
#else
  return llvm::Type::getInt8PtrTy(context);
#endif
}

llvm::Type* pointerTo(llvm::Type* element) {
#if LLVM_VERSION_MAJOR >= 17
  return llvm::PointerType::getUnqual(element->getContext());
#else
  return element->getPointerTo();
#endif
}

// --- names ---------------------------------------------------------------------------------

bool isCIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

/// Names a kernel must not take: the runtime's C API and the C library functions that
/// generated code calls (directly or through LLVM's lowering of intrinsics). A kernel under
/// one of these names would capture those calls.
bool isReservedName(const std::string& name) {
  static const std::set<std::string> reserved = {
      "exp",   "expf",  "exp2",  "exp2f", "log",   "logf",  "log2",   "log2f",  "log10",     "log10f",
      "pow",   "powf",  "sqrt",  "sqrtf", "tanh",  "tanhf", "erf",    "erff",   "sin",       "sinf",
      "cos",   "cosf",  "fabs",  "fabsf", "floor", "floorf", "ceil",  "ceilf",  "round",     "roundf",
      "trunc", "truncf", "nearbyint", "nearbyintf", "rint", "rintf", "fma", "fmaf", "fmod",  "fmodf",
      "tan",   "tanf",  "asin",  "asinf", "acos",  "acosf", "atan",   "atanf",  "sinh",      "sinhf",
      "cosh",  "coshf", "asinh", "asinhf", "acosh", "acoshf", "atanh", "atanhf",
      "memset", "memcpy", "memmove", "malloc", "free", "abort", "main"};
  return reserved.count(name) > 0 || name.rfind("tessel_", 0) == 0 || name.rfind("__", 0) == 0;
}

// --- vector indices -----------------------------------------------------------------------

/// Writes `index` as (scalar base) + (constant stride) * lane when it has that form, as a
/// Ramp does, possibly under additions and constant multiplications that simplification
/// has not folded. A stride-1 index is one contiguous vector access.
bool decomposeLinearIndex(const Expr& index, Expr* base, int64_t* stride) {
  if (auto* ramp = index.as<RampNode>()) {
    const int64_t* constantStride = asConstInt(ramp->stride);
    if (!constantStride) return false;
    *base = ramp->base;
    *stride = *constantStride;
    return true;
  }
  if (auto* broadcast = index.as<BroadcastNode>()) {
    *base = broadcast->value;
    *stride = 0;
    return true;
  }
  auto both = [&](const Expr& a, const Expr& b, Expr* baseA, Expr* baseB, int64_t* strideA, int64_t* strideB) {
    return decomposeLinearIndex(a, baseA, strideA) && decomposeLinearIndex(b, baseB, strideB);
  };
  Expr baseA, baseB;
  int64_t strideA = 0, strideB = 0;
  if (auto* add = index.as<AddNode>()) {
    if (!both(add->a, add->b, &baseA, &baseB, &strideA, &strideB)) return false;
    *base = AddNode::make(baseA, baseB);
    *stride = strideA + strideB;
    return true;
  }
  if (auto* sub = index.as<SubNode>()) {
    if (!both(sub->a, sub->b, &baseA, &baseB, &strideA, &strideB)) return false;
    *base = SubNode::make(baseA, baseB);
    *stride = strideA - strideB;
    return true;
  }
  if (auto* mul = index.as<MulNode>()) {
    const Expr* factorSide = nullptr;
    const Expr* linearSide = nullptr;
    if (mul->b.as<BroadcastNode>() && asConstInt(mul->b)) factorSide = &mul->b, linearSide = &mul->a;
    else if (mul->a.as<BroadcastNode>() && asConstInt(mul->a)) factorSide = &mul->a, linearSide = &mul->b;
    if (!factorSide || !decomposeLinearIndex(*linearSide, &baseA, &strideA)) return false;
    int64_t factor = *asConstInt(*factorSide);
    *base = MulNode::make(baseA, IntImmNode::make(baseA.dtype(), factor));
    *stride = strideA * factor;
    return true;
  }
  return false;
}

// --- the emitter --------------------------------------------------------------------------

class ModuleEmitter {
public:
  ModuleEmitter(llvm::Module& module, const Target& target)
      : module_(module), context_(module.getContext()), target_(target), builder_(context_) {
    // Only 'contract': mul+add may become one FMA; no other reassociation or approximation.
    llvm::FastMathFlags flags;
    flags.setAllowContract(true);
    builder_.setFastMathFlags(flags);
  }

  /// Declares the exported entry points first, so internal helpers never take their names.
  void declareKernel(const PrimFunc& func) {
    auto* type = llvm::FunctionType::get(builder_.getInt32Ty(), {pointerTo(bytePointerType(context_))}, false);
    llvm::Function* kernel = llvm::Function::Create(type, llvm::Function::ExternalLinkage, func->name, module_);
    setCommonAttributes(kernel);
    kernel->getArg(0)->setName("args");
  }

  void emitKernel(const PrimFunc& func) {
    func_ = func.get();
    parallelBodyCount_ = 0;
    llvm::Function* kernel = module_.getFunction(func->name);
    TESSEL_ICHECK(kernel) << "kernel " << func->name << " was not declared";

    // The body goes into an internal function taking the buffer pointers directly, so they
    // can be marked noalias and 64-byte aligned; it is inlined into the entry point, which
    // turns noalias into alias scopes on every access.
    std::vector<Var> dataVars;
    std::vector<llvm::Type*> paramTypes;
    std::set<const VarNode*> seen;
    for (auto& param : func->params) {
      TESSEL_ICHECK(param.defined()) << "undefined parameter of " << func->name;
      // Parameters are noalias: one memory passed as two of them would be miscompiled.
      if (!seen.insert(param->data.get()).second)
        fail("parameter '" + param.name() + "' shares its memory with an earlier parameter",
             "pass each buffer once");
      dataVars.push_back(param->data);
      paramTypes.push_back(bytePointerType(context_));
    }
    llvm::Function* compute = createComputeFunction(func->name + "_compute", {}, dataVars, paramTypes);
    withFunction(compute, /*insideParallelBody=*/false, bindArguments(compute, 0, dataVars), [&] {
      emitStmt(func->body);
      builder_.CreateRet(builder_.getInt32(0));
    });

    llvm::BasicBlock* entry = llvm::BasicBlock::Create(context_, "entry", kernel);
    builder_.SetInsertPoint(entry);
    std::vector<llvm::Value*> pointers;
    for (size_t i = 0; i < func->params.size(); ++i) {
      llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(bytePointerType(context_), kernel->getArg(0), i);
      pointers.push_back(builder_.CreateLoad(bytePointerType(context_), slot, func->params[i].name()));
    }
    builder_.CreateRet(callWithDenormalsFlushed(compute, pointers));
  }

private:
  using ValueMap = std::unordered_map<const VarNode*, llvm::Value*>;

  /// Where code is being emitted: the function, whether it is an outlined parallel body
  /// (a parallel loop nested in one runs serially), and its shared early-return block.
  struct FunctionState {
    llvm::Function* function = nullptr;
    bool insideParallelBody = false;
    llvm::BasicBlock* failureBlock = nullptr;
    llvm::PHINode* failureCode = nullptr;
  };

  // --- errors -----------------------------------------------------------------------------

  [[noreturn]] void fail(const std::string& message, const std::string& hint = "") const {
    throw UnsupportedConstruct{Diagnostic{message, "function " + func_->name, 0, 0, hint}};
  }

  // --- functions ----------------------------------------------------------------------------

  void setCommonAttributes(llvm::Function* function) {
    function->addFnAttr(llvm::Attribute::NoUnwind);
    if (!target_.cpu.empty()) function->addFnAttr("target-cpu", target_.cpu);
    if (std::string features = target_.llvmFeatureString(); !features.empty())
      function->addFnAttr("target-features", features);
    // Without these, LLVM splits 512-bit vectors in two on CPUs where it prefers 256 bits.
    std::string width = std::to_string(target_.vectorBits);
    function->addFnAttr("prefer-vector-width", width);
    function->addFnAttr("min-legal-vector-width", width);
  }

  /// An internal, always-inlined function `i32 name(leading..., captured...)`; captured
  /// pointers are noalias and 64-byte aligned.
  llvm::Function* createComputeFunction(const std::string& name, const std::vector<llvm::Type*>& leading,
                                        const std::vector<Var>& captured, const std::vector<llvm::Type*>& capturedTypes) {
    std::vector<llvm::Type*> types = leading;
    types.insert(types.end(), capturedTypes.begin(), capturedTypes.end());
    auto* type = llvm::FunctionType::get(builder_.getInt32Ty(), types, false);
    llvm::Function* function = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, module_);
    setCommonAttributes(function);
    function->addFnAttr(llvm::Attribute::AlwaysInline);
    for (size_t i = 0; i < captured.size(); ++i) {
      unsigned argument = leading.size() + i;
      function->getArg(argument)->setName(captured[i].name());
      if (capturedTypes[i]->isPointerTy()) {
        function->addParamAttr(argument, llvm::Attribute::NoAlias);
        function->addParamAttr(argument, llvm::Attribute::getWithAlignment(context_, llvm::Align(kBufferAlignment)));
      }
    }
    return function;
  }

  ValueMap bindArguments(llvm::Function* function, unsigned first, const std::vector<Var>& vars) {
    ValueMap values;
    for (size_t i = 0; i < vars.size(); ++i) values[vars[i].get()] = function->getArg(first + i);
    return values;
  }

  /// Emits into `function` (from a fresh entry block) with its own variables, then returns
  /// to where the emitter was.
  void withFunction(llvm::Function* function, bool insideParallelBody, ValueMap values,
                    const std::function<void()>& emitBody) {
    auto savedInsertPoint = builder_.saveIP();
    FunctionState savedState = state_;
    std::swap(values_, values);
    state_ = FunctionState{function, insideParallelBody, nullptr, nullptr};
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", function));
    emitBody();
    std::swap(values_, values);
    state_ = savedState;
    builder_.restoreIP(savedInsertPoint);
  }

  /// Returns `code` from the current function when it is non-zero.
  void returnIfNonZero(llvm::Value* code) {
    if (!state_.failureBlock) {
      auto savedInsertPoint = builder_.saveIP();
      state_.failureBlock = llvm::BasicBlock::Create(context_, "failure", state_.function);
      builder_.SetInsertPoint(state_.failureBlock);
      state_.failureCode = builder_.CreatePHI(builder_.getInt32Ty(), 2, "code");
      builder_.CreateRet(state_.failureCode);
      builder_.restoreIP(savedInsertPoint);
    }
    llvm::BasicBlock* next = llvm::BasicBlock::Create(context_, "ok", state_.function);
    llvm::Value* failed = builder_.CreateICmpNE(code, builder_.getInt32(0));
    builder_.CreateCondBr(failed, state_.failureBlock, next, llvm::MDBuilder(context_).createBranchWeights(1, 1 << 20));
    state_.failureCode->addIncoming(code, builder_.GetInsertBlock());
    builder_.SetInsertPoint(next);
  }

  /// Calls `compute` (the inlined body of an entry point: a kernel or a parallel chunk) with
  /// denormal floats flushed to zero, and restores the caller's mode after it: on x86 the
  /// FTZ and DAZ bits of MXCSR, as TensorFlow's and XLA's CPU runtimes set them. A denormal
  /// operand or result costs an x86 core a microcode assist of about a hundred cycles: a
  /// masked softmax (exp(-100) is 3.7e-44) made each of swin_t's following attention
  /// matmuls 26x slower. The mode is per thread, so every entry point sets it (pool workers
  /// run parallel chunks), and restoring it keeps the caller's own code IEEE.
  llvm::Value* callWithDenormalsFlushed(llvm::Function* compute, const std::vector<llvm::Value*>& arguments) {
    if (!llvm::Triple(module_.getTargetTriple()).isX86()) return builder_.CreateCall(compute, arguments);
    constexpr uint32_t kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;
    llvm::Function* caller = builder_.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entryBuilder(&caller->getEntryBlock(), caller->getEntryBlock().begin());
    llvm::AllocaInst* callerMode = entryBuilder.CreateAlloca(builder_.getInt32Ty(), nullptr, "caller.mxcsr");
    llvm::AllocaInst* kernelMode = entryBuilder.CreateAlloca(builder_.getInt32Ty(), nullptr, "kernel.mxcsr");
    auto* store = llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_sse_stmxcsr);
    auto* load = llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_sse_ldmxcsr);
    // The intrinsics take an i8* to the 32-bit register image.
    llvm::Value* callerBytes = builder_.CreatePointerCast(callerMode, bytePointerType(context_));
    llvm::Value* kernelBytes = builder_.CreatePointerCast(kernelMode, bytePointerType(context_));
    builder_.CreateCall(store, {callerBytes});
    llvm::Value* mode = builder_.CreateLoad(builder_.getInt32Ty(), callerMode);
    builder_.CreateStore(builder_.CreateOr(mode, builder_.getInt32(kFlushToZero | kDenormalsAreZero)), kernelMode);
    builder_.CreateCall(load, {kernelBytes});
    llvm::Value* status = builder_.CreateCall(compute, arguments);
    builder_.CreateCall(load, {callerBytes});
    return status;
  }

  /// An alloca in the entry block of the current function, so it is created once even when
  /// the allocation sits inside a loop, and SROA can promote it to registers.
  llvm::AllocaInst* entryAlloca(llvm::Type* type, const std::string& name) {
    llvm::BasicBlock& entry = state_.function->getEntryBlock();
    llvm::IRBuilder<> entryBuilder(&entry, entry.begin());
    llvm::AllocaInst* slot = entryBuilder.CreateAlloca(type, nullptr, name);
    slot->setAlignment(llvm::Align(kBufferAlignment));
    return slot;
  }

  llvm::FunctionCallee runtimeFunction(const char* name) {
    llvm::Type* i64 = builder_.getInt64Ty();
    llvm::Type* i32 = builder_.getInt32Ty();
    llvm::Type* bytes = bytePointerType(context_);
    if (std::strcmp(name, "tessel_parallel_for") == 0)
      return module_.getOrInsertFunction(name, i32, i64, pointerTo(parallelBodyType()), bytes);
    if (std::strcmp(name, "tessel_workspace_alloc") == 0) {
      llvm::FunctionCallee callee = module_.getOrInsertFunction(name, bytes, i64);
      if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
        function->setReturnDoesNotAlias();
        function->addRetAttr(llvm::Attribute::getWithAlignment(context_, llvm::Align(kBufferAlignment)));
        function->setDoesNotThrow();
      }
      return callee;
    }
    TESSEL_ICHECK(std::strcmp(name, "tessel_workspace_free") == 0) << "unknown runtime function " << name;
    return module_.getOrInsertFunction(name, builder_.getVoidTy(), bytes);
  }

  llvm::FunctionType* parallelBodyType() {
    return llvm::FunctionType::get(builder_.getInt32Ty(),
                                   {builder_.getInt64Ty(), builder_.getInt64Ty(), bytePointerType(context_)}, false);
  }

  // --- types --------------------------------------------------------------------------------

  /// How a value of `type` is held in registers: bool as i1, bfloat16 as float.
  llvm::Type* registerType(DataType type) {
    llvm::Type* element = nullptr;
    switch (type.code()) {
      case DataType::Code::Int:
      case DataType::Code::UInt: element = llvm::Type::getIntNTy(context_, type.bits()); break;
      case DataType::Code::Bool: element = builder_.getInt1Ty(); break;
      case DataType::Code::BFloat: element = builder_.getFloatTy(); break;
      case DataType::Code::Float:
        if (type.bits() == 16) element = builder_.getHalfTy();
        else if (type.bits() == 32) element = builder_.getFloatTy();
        else if (type.bits() == 64) element = builder_.getDoubleTy();
        break;
      case DataType::Code::Handle: element = bytePointerType(context_); break;
    }
    if (!element) fail("type " + type.toString() + " has no CPU representation");
    return type.lanes() > 1 ? llvm::FixedVectorType::get(element, type.lanes()) : element;
  }

  /// How an element of `type` is stored in memory: bool as i8, bfloat16 as i16.
  llvm::Type* memoryType(DataType type) {
    if (type.isBool()) return wrapLanes(builder_.getInt8Ty(), type.lanes());
    if (type.code() == DataType::Code::BFloat) return wrapLanes(builder_.getInt16Ty(), type.lanes());
    if (type.isHandle()) fail("a buffer of handles cannot be loaded or stored");
    return registerType(type);
  }

  static llvm::Type* wrapLanes(llvm::Type* element, int lanes) {
    return lanes > 1 ? llvm::FixedVectorType::get(element, lanes) : element;
  }

  llvm::Type* withLanesOf(llvm::Type* element, llvm::Type* shape) {
    if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(shape))
      return llvm::FixedVectorType::get(element, vector->getNumElements());
    return element;
  }

  // --- memory <-> registers -------------------------------------------------------------

  llvm::Value* loadedToRegister(llvm::Value* value, DataType type) {
    if (type.isBool()) return builder_.CreateICmpNE(value, llvm::Constant::getNullValue(value->getType()));
    if (type.code() == DataType::Code::BFloat) {
      llvm::Value* wide = builder_.CreateZExt(value, withLanesOf(builder_.getInt32Ty(), value->getType()));
      wide = builder_.CreateShl(wide, 16);
      return builder_.CreateBitCast(wide, withLanesOf(builder_.getFloatTy(), value->getType()));
    }
    return value;
  }

  llvm::Value* registerToStored(llvm::Value* value, DataType type) {
    if (type.isBool()) return builder_.CreateZExt(value, withLanesOf(builder_.getInt8Ty(), value->getType()));
    if (type.code() == DataType::Code::BFloat) {
      llvm::Value* bits = builder_.CreateBitCast(roundFloatToBfloat16(value), withLanesOf(builder_.getInt32Ty(), value->getType()));
      return builder_.CreateTrunc(builder_.CreateLShr(bits, 16), withLanesOf(builder_.getInt16Ty(), value->getType()));
    }
    return value;
  }

  /// Rounds float lanes to the nearest bfloat16 (ties to even), keeping NaN a quiet NaN;
  /// the result is still a float whose low 16 bits are zero.
  llvm::Value* roundFloatToBfloat16(llvm::Value* value) {
    llvm::Type* intType = withLanesOf(builder_.getInt32Ty(), value->getType());
    auto constant = [&](uint32_t v) { return llvm::ConstantInt::get(intType, v); };
    llvm::Value* bits = builder_.CreateBitCast(value, intType);
    llvm::Value* lowestKeptBit = builder_.CreateAnd(builder_.CreateLShr(bits, 16), constant(1));
    llvm::Value* rounded = builder_.CreateAdd(bits, builder_.CreateAdd(lowestKeptBit, constant(0x7FFF)));
    rounded = builder_.CreateAnd(rounded, constant(0xFFFF0000u));
    llvm::Value* quietNan = builder_.CreateOr(builder_.CreateAnd(bits, constant(0xFFFF0000u)), constant(0x00400000u));
    llvm::Value* isNan = builder_.CreateFCmpUNO(value, value);
    return builder_.CreateBitCast(builder_.CreateSelect(isNan, quietNan, rounded), value->getType());
  }

  // --- buffers ------------------------------------------------------------------------------

  llvm::Value* bufferBase(const Buffer& buffer, llvm::Type* elementType) {
    auto it = values_.find(buffer->data.get());
    if (it == values_.end())
      fail("accesses buffer '" + buffer.name() + "', which is neither a parameter nor allocated around the access",
           "pass it as a parameter or allocate it");
    return builder_.CreatePointerCast(it->second, pointerTo(elementType));
  }

  const Expr& flatIndex(const std::vector<Expr>& indices, const Buffer& buffer) {
    TESSEL_ICHECK(indices.size() == 1) << "access to " << buffer.name() << " in " << func_->name << " has "
                                       << indices.size() << " indices; codegen needs flattened storage";
    return indices[0];
  }

  /// An index as i64 (or a vector of i64), as addresses are computed.
  llvm::Value* emitIndex(const Expr& index) {
    llvm::Value* value = emitExpr(index);
    llvm::Type* target = withLanesOf(builder_.getInt64Ty(), value->getType());
    if (value->getType() == target) return value;
    return index.dtype().isUInt() ? builder_.CreateZExt(value, target) : builder_.CreateSExt(value, target);
  }

  llvm::Value* emitLoad(const BufferLoadNode* node) {
    const Buffer& buffer = node->buffer;
    DataType stored = buffer.dtype();
    const Expr& index = flatIndex(node->indices, buffer);
    int lanes = index.dtype().lanes();
    llvm::Type* element = memoryType(stored);
    llvm::Align align(std::max<uint64_t>(1, module_.getDataLayout().getTypeStoreSize(element->getScalarType())));
    llvm::Value* base = bufferBase(buffer, element);
    if (lanes == 1) {
      llvm::Value* address = builder_.CreateInBoundsGEP(element, base, emitIndex(index));
      return loadedToRegister(builder_.CreateAlignedLoad(element, address, align, buffer.name()), stored);
    }
    if (stored.lanes() > 1) fail("vector index into buffer '" + buffer.name() + "' of vector type " + stored.toString());
    auto* vectorType = llvm::FixedVectorType::get(element, lanes);
    Expr scalarBase;
    int64_t stride = 0;
    if (decomposeLinearIndex(index, &scalarBase, &stride) && (stride == 1 || stride == 0)) {
      llvm::Value* address = builder_.CreateInBoundsGEP(element, base, emitIndex(scalarBase));
      if (stride == 0) {
        llvm::Value* scalar = builder_.CreateAlignedLoad(element, address, align, buffer.name());
        return loadedToRegister(builder_.CreateVectorSplat(lanes, scalar), stored.withLanes(lanes));
      }
      address = builder_.CreatePointerCast(address, pointerTo(vectorType));
      return loadedToRegister(builder_.CreateAlignedLoad(vectorType, address, align, buffer.name()),
                              stored.withLanes(lanes));
    }
    llvm::Value* addresses = builder_.CreateInBoundsGEP(element, base, emitIndex(index));
    return loadedToRegister(builder_.CreateMaskedGather(vectorType, addresses, align), stored.withLanes(lanes));
  }

  void emitStore(const BufferStoreNode* node) {
    const Buffer& buffer = node->buffer;
    DataType stored = buffer.dtype();
    const Expr& index = flatIndex(node->indices, buffer);
    int lanes = index.dtype().lanes();
    llvm::Type* element = memoryType(stored);
    llvm::Align align(std::max<uint64_t>(1, module_.getDataLayout().getTypeStoreSize(element->getScalarType())));
    llvm::Value* value = emitExpr(node->value);
    if (lanes == 1) {
      TESSEL_ICHECK(node->value.dtype().lanes() == stored.lanes())
          << "store of " << node->value.dtype().toString() << " to " << buffer.name() << " with a scalar index";
      llvm::Value* address = builder_.CreateInBoundsGEP(element, bufferBase(buffer, element), emitIndex(index));
      builder_.CreateAlignedStore(registerToStored(value, node->value.dtype()), address, align);
      return;
    }
    if (stored.lanes() > 1) fail("vector index into buffer '" + buffer.name() + "' of vector type " + stored.toString());
    if (node->value.dtype().lanes() == 1) value = builder_.CreateVectorSplat(lanes, value);
    TESSEL_ICHECK(node->value.dtype().lanes() == 1 || node->value.dtype().lanes() == lanes)
        << "store to " << buffer.name() << ": value and index lanes differ";
    value = registerToStored(value, stored.withLanes(lanes));
    llvm::Value* base = bufferBase(buffer, element);
    Expr scalarBase;
    int64_t stride = 0;
    if (decomposeLinearIndex(index, &scalarBase, &stride) && stride == 1) {
      llvm::Value* address = builder_.CreateInBoundsGEP(element, base, emitIndex(scalarBase));
      address = builder_.CreatePointerCast(address, pointerTo(value->getType()));
      builder_.CreateAlignedStore(value, address, align);
      return;
    }
    // Lanes are written in order, so with repeated addresses the last lane wins.
    llvm::Value* addresses = builder_.CreateInBoundsGEP(element, base, emitIndex(index));
    builder_.CreateMaskedScatter(value, addresses, align);
  }

  // --- expressions ------------------------------------------------------------------------

  llvm::Value* emitExpr(const Expr& e) {
    TESSEL_ICHECK(e.defined()) << "undefined expression in " << func_->name;
    switch (e->kind()) {
      case NodeKind::IntImm: {
        auto* imm = e.as<IntImmNode>();
        if (imm->dtype.isBool()) return builder_.getInt1(imm->value != 0);
        return llvm::ConstantInt::get(registerType(imm->dtype), static_cast<uint64_t>(imm->value), true);
      }
      case NodeKind::FloatImm: {
        auto* imm = e.as<FloatImmNode>();
        if (imm->dtype.code() == DataType::Code::BFloat)
          return llvm::ConstantFP::get(builder_.getFloatTy(), runtime::roundToBFloat16(static_cast<float>(imm->value)));
        return llvm::ConstantFP::get(registerType(imm->dtype), imm->value);
      }
      case NodeKind::Var: {
        auto it = values_.find(e.as<VarNode>());
        if (it == values_.end())
          fail("uses variable '" + e.as<VarNode>()->name + "', which is not defined where it is used",
               "every variable must be a loop variable, a let, or a buffer");
        return it->second;
      }
#define TESSEL_EMIT_BINARY(Name) \
  case NodeKind::Name: return emitBinary(NodeKind::Name, *static_cast<const Name##Node*>(e.get()));
        TESSEL_BINARY_NODES(TESSEL_EMIT_BINARY)
#undef TESSEL_EMIT_BINARY
      case NodeKind::Not: return builder_.CreateNot(emitExpr(e.as<NotNode>()->a));
      case NodeKind::Select: {
        auto* select = e.as<SelectNode>();
        llvm::Value* condition = emitExpr(select->condition);
        llvm::Value* trueValue = emitExpr(select->trueValue);
        llvm::Value* falseValue = emitExpr(select->falseValue);
        return builder_.CreateSelect(condition, trueValue, falseValue);
      }
      case NodeKind::Cast: {
        auto* cast = e.as<CastNode>();
        if (llvm::Value* converted = emitRoundedConversion(cast)) return converted;
        return emitCast(emitExpr(cast->value), cast->value.dtype(), cast->dtype);
      }
      case NodeKind::Call: return emitCall(e.as<CallNode>());
      case NodeKind::BufferLoad: return emitLoad(e.as<BufferLoadNode>());
      case NodeKind::Ramp: return emitRamp(e.as<RampNode>());
      case NodeKind::Broadcast: {
        auto* broadcast = e.as<BroadcastNode>();
        return builder_.CreateVectorSplat(broadcast->lanes, emitExpr(broadcast->value));
      }
      case NodeKind::Let: {
        auto* let = e.as<LetNode>();
        llvm::Value* value = emitExpr(let->value);
        ScopedBinding binding(values_, let->var, value);
        return emitExpr(let->body);
      }
      case NodeKind::Reduce:
        TESSEL_ICHECK(false) << "a Reduce reached codegen in " << func_->name << "; lowering must remove it";
        return nullptr;
      default: break;
    }
    TESSEL_ICHECK(false) << "codegen does not know expression kind " << nodeKindName(e->kind());
    return nullptr;
  }

  /// Binds a variable for the extent of a scope; the same Var may be bound again in a
  /// sibling scope (after unrolling), each binding its own value.
  class ScopedBinding {
  public:
    ScopedBinding(ValueMap& values, const Var& var, llvm::Value* value) : values_(values), var_(var.get()) {
      auto it = values.find(var_);
      if (it != values.end()) previous_ = it->second;
      values[var_] = value;
      if (!value->hasName() && !llvm::isa<llvm::Constant>(value)) value->setName(var.name());
    }
    ~ScopedBinding() {
      if (previous_) values_[var_] = previous_;
      else values_.erase(var_);
    }
    ScopedBinding(const ScopedBinding&) = delete;
    ScopedBinding& operator=(const ScopedBinding&) = delete;

  private:
    ValueMap& values_;
    const VarNode* var_;
    llvm::Value* previous_ = nullptr;
  };

  template <NodeKind K>
  llvm::Value* emitBinary(NodeKind kind, const BinaryNode<K>& node) {
    llvm::Value* a = emitExpr(node.a);
    llvm::Value* b = emitExpr(node.b);
    DataType type = node.a.dtype();
    switch (kind) {
      case NodeKind::EQ:
      case NodeKind::NE:
      case NodeKind::LT:
      case NodeKind::LE:
      case NodeKind::GT:
      case NodeKind::GE: return emitComparison(kind, a, b, type);
      case NodeKind::And: return builder_.CreateAnd(a, b);
      case NodeKind::Or: return builder_.CreateOr(a, b);
      default: break;
    }
    if (type.isFloat()) return emitFloatArithmetic(kind, a, b);
    if (type.isHandle()) fail("arithmetic on handle values");
    return emitIntegerArithmetic(kind, a, b, type, node.b);
  }

  llvm::Value* emitComparison(NodeKind kind, llvm::Value* a, llvm::Value* b, DataType type) {
    if (type.isFloat()) {
      switch (kind) {
        case NodeKind::EQ: return builder_.CreateFCmpOEQ(a, b);
        case NodeKind::NE: return builder_.CreateFCmpUNE(a, b);  // NaN != NaN is true
        case NodeKind::LT: return builder_.CreateFCmpOLT(a, b);
        case NodeKind::LE: return builder_.CreateFCmpOLE(a, b);
        case NodeKind::GT: return builder_.CreateFCmpOGT(a, b);
        default: return builder_.CreateFCmpOGE(a, b);
      }
    }
    bool isSigned = type.isInt();
    switch (kind) {
      case NodeKind::EQ: return builder_.CreateICmpEQ(a, b);
      case NodeKind::NE: return builder_.CreateICmpNE(a, b);
      case NodeKind::LT: return isSigned ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpULT(a, b);
      case NodeKind::LE: return isSigned ? builder_.CreateICmpSLE(a, b) : builder_.CreateICmpULE(a, b);
      case NodeKind::GT: return isSigned ? builder_.CreateICmpSGT(a, b) : builder_.CreateICmpUGT(a, b);
      default: return isSigned ? builder_.CreateICmpSGE(a, b) : builder_.CreateICmpUGE(a, b);
    }
  }

  llvm::Value* emitFloatArithmetic(NodeKind kind, llvm::Value* a, llvm::Value* b) {
    switch (kind) {
      case NodeKind::Add: return builder_.CreateFAdd(a, b);
      case NodeKind::Sub: return builder_.CreateFSub(a, b);
      case NodeKind::Mul: return builder_.CreateFMul(a, b);
      case NodeKind::Div: return builder_.CreateFDiv(a, b);
      case NodeKind::Mod: return builder_.CreateFRem(a, b);
      case NodeKind::FloorDiv: return unaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(a, b));
      case NodeKind::FloorMod: {
        llvm::Value* quotient = unaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(a, b));
        return builder_.CreateFSub(a, builder_.CreateFMul(quotient, b));
      }
      case NodeKind::Min: return builder_.CreateSelect(builder_.CreateFCmpOLT(a, b), a, b);
      case NodeKind::Max: return builder_.CreateSelect(builder_.CreateFCmpOGT(a, b), a, b);
      default: break;
    }
    TESSEL_ICHECK(false) << "not a float arithmetic node: " << nodeKindName(kind);
    return nullptr;
  }

  llvm::Value* emitIntegerArithmetic(NodeKind kind, llvm::Value* a, llvm::Value* b, DataType type, const Expr& divisor) {
    bool isSigned = type.isInt();
    // Index arithmetic (int64) never wraps; saying so lets LLVM analyse loops and addresses.
    bool noSignedWrap = isSigned && type.bits() == 64;
    switch (kind) {
      case NodeKind::Add: return builder_.CreateAdd(a, b, "", false, noSignedWrap);
      case NodeKind::Sub: return builder_.CreateSub(a, b, "", false, noSignedWrap);
      case NodeKind::Mul: return builder_.CreateMul(a, b, "", false, noSignedWrap);
      case NodeKind::Div: return isSigned ? builder_.CreateSDiv(a, b) : builder_.CreateUDiv(a, b);
      case NodeKind::Mod: return isSigned ? builder_.CreateSRem(a, b) : builder_.CreateURem(a, b);
      case NodeKind::FloorDiv: return isSigned ? floorDivide(a, b, divisor) : builder_.CreateUDiv(a, b);
      case NodeKind::FloorMod: return isSigned ? floorModulo(a, b, divisor) : builder_.CreateURem(a, b);
      case NodeKind::Min:
        return builder_.CreateSelect(isSigned ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpULT(a, b), a, b);
      case NodeKind::Max:
        return builder_.CreateSelect(isSigned ? builder_.CreateICmpSGT(a, b) : builder_.CreateICmpUGT(a, b), a, b);
      default: break;
    }
    TESSEL_ICHECK(false) << "not an integer arithmetic node: " << nodeKindName(kind);
    return nullptr;
  }

  /// log2 of a constant positive power-of-two divisor that fits the type, or -1.
  static int powerOfTwoShift(const Expr& divisor) {
    const int64_t* value = asConstInt(divisor);
    if (!value || *value <= 0 || (*value & (*value - 1)) != 0) return -1;
    int shift = 0;
    while ((int64_t(1) << shift) != *value) ++shift;
    return shift < divisor.dtype().bits() - 1 ? shift : -1;
  }

  /// True when the truncated remainder `r` of a / b is non-zero with the opposite sign of b:
  /// exactly when flooring differs from truncation.
  llvm::Value* floorNeedsAdjustment(llvm::Value* remainder, llvm::Value* b) {
    llvm::Value* zero = llvm::Constant::getNullValue(remainder->getType());
    llvm::Value* nonZero = builder_.CreateICmpNE(remainder, zero);
    llvm::Value* signsDiffer = builder_.CreateICmpSLT(builder_.CreateXor(remainder, b), zero);
    return builder_.CreateAnd(nonZero, signsDiffer);
  }

  llvm::Value* floorDivide(llvm::Value* a, llvm::Value* b, const Expr& divisor) {
    if (int shift = powerOfTwoShift(divisor); shift >= 0)
      return builder_.CreateAShr(a, llvm::ConstantInt::get(a->getType(), shift));
    llvm::Value* quotient = builder_.CreateSDiv(a, b);
    llvm::Value* adjust = floorNeedsAdjustment(builder_.CreateSRem(a, b), b);
    return builder_.CreateSub(quotient, builder_.CreateZExt(adjust, a->getType()));
  }

  llvm::Value* floorModulo(llvm::Value* a, llvm::Value* b, const Expr& divisor) {
    if (int shift = powerOfTwoShift(divisor); shift >= 0)
      return builder_.CreateAnd(a, llvm::ConstantInt::get(a->getType(), (uint64_t(1) << shift) - 1));
    llvm::Value* remainder = builder_.CreateSRem(a, b);
    llvm::Value* adjust = floorNeedsAdjustment(remainder, b);
    return builder_.CreateAdd(remainder, builder_.CreateSelect(adjust, b, llvm::Constant::getNullValue(b->getType())));
  }

  llvm::Value* emitRamp(const RampNode* node) {
    llvm::Value* base = emitExpr(node->base);
    llvm::Value* stride = emitExpr(node->stride);
    std::vector<llvm::Constant*> laneNumbers;
    llvm::Type* element = base->getType();
    for (int lane = 0; lane < node->lanes; ++lane)
      laneNumbers.push_back(element->isFloatingPointTy() ? llvm::ConstantFP::get(element, lane)
                                                         : llvm::ConstantInt::get(element, lane));
    llvm::Value* lanes = llvm::ConstantVector::get(laneNumbers);
    llvm::Value* bases = builder_.CreateVectorSplat(node->lanes, base);
    llvm::Value* strides = builder_.CreateVectorSplat(node->lanes, stride);
    if (element->isFloatingPointTy()) return builder_.CreateFAdd(bases, builder_.CreateFMul(strides, lanes));
    bool noSignedWrap = node->dtype.isInt() && node->dtype.bits() == 64;
    return builder_.CreateAdd(bases, builder_.CreateMul(strides, lanes, "", false, noSignedWrap), "", false,
                              noSignedWrap);
  }

  // --- casts ----------------------------------------------------------------------------

  /// int32(round(x)) for float32 vectors as one x86 conversion (vcvtps2dq, which rounds in
  /// the current mode as round()'s nearbyint does) instead of a round and a truncating
  /// conversion: the requantization of every int8 kernel ends this way. Null where the
  /// pattern or the instruction is missing.
  llvm::Value* emitRoundedConversion(const CastNode* cast) {
    const auto* round = cast->value.as<CallNode>();
    if (!round || round->op != Intrinsic::Round || round->args.size() != 1) return nullptr;
    DataType from = round->args[0].dtype();
    if (from.element() != DataType::float32() || cast->dtype != DataType::int32(from.lanes())) return nullptr;
    // The widest instruction, applied to each of its register's worth of lanes.
    int width = target_.hasFeature("avx512f") && from.lanes() % 16 == 0 ? 16
                : target_.hasFeature("avx") && from.lanes() % 8 == 0   ? 8
                : target_.hasFeature("sse2") && from.lanes() % 4 == 0  ? 4
                                                                       : 0;
    if (width == 0) return nullptr;
    llvm::Value* x = emitExpr(round->args[0]);
    auto convert = [&](llvm::Value* part) -> llvm::Value* {
      if (width == 16) {
        // Mask all ones, rounding 4: the current direction (MXCSR).
        auto* intType = llvm::FixedVectorType::get(builder_.getInt32Ty(), 16);
        return builder_.CreateCall(
            llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_avx512_mask_cvtps2dq_512),
            {part, llvm::Constant::getNullValue(intType), builder_.getInt16(0xFFFF), builder_.getInt32(4)});
      }
      llvm::Intrinsic::ID id = width == 8 ? llvm::Intrinsic::x86_avx_cvt_ps2dq_256 : llvm::Intrinsic::x86_sse2_cvtps2dq;
      return builder_.CreateCall(llvm::Intrinsic::getDeclaration(&module_, id), {part});
    };
    if (from.lanes() == width) return convert(x);
    std::vector<llvm::Value*> parts;
    for (int start = 0; start < from.lanes(); start += width) {
      std::vector<int> lanes(static_cast<size_t>(width));
      for (int i = 0; i < width; ++i) lanes[size_t(i)] = start + i;
      parts.push_back(convert(builder_.CreateShuffleVector(x, lanes)));
    }
    return llvm::concatenateVectors(builder_, parts);
  }

  llvm::Value* emitCast(llvm::Value* value, DataType from, DataType to) {
    if (from == to) return value;
    if (to.isHandle() || from.isHandle()) fail("cast between " + from.toString() + " and " + to.toString());
    // bfloat16 lives in registers as float: converting from it is converting from float32;
    // converting to it is converting to float32 and rounding.
    if (from.code() == DataType::Code::BFloat) return emitCast(value, DataType::float32(from.lanes()), to);
    if (to.code() == DataType::Code::BFloat)
      return roundFloatToBfloat16(emitCast(value, from, DataType::float32(to.lanes())));
    llvm::Type* target = registerType(to);
    if (to.isBool()) {
      llvm::Value* zero = llvm::Constant::getNullValue(value->getType());
      return from.isFloat() ? builder_.CreateFCmpUNE(value, zero) : builder_.CreateICmpNE(value, zero);
    }
    if (from.isBool()) return to.isFloat() ? builder_.CreateUIToFP(value, target) : builder_.CreateZExt(value, target);
    if (from.isIntegral() && to.isIntegral()) return builder_.CreateIntCast(value, target, from.isInt());
    if (from.isIntegral()) return from.isInt() ? builder_.CreateSIToFP(value, target) : builder_.CreateUIToFP(value, target);
    if (to.isIntegral()) return to.isInt() ? builder_.CreateFPToSI(value, target) : builder_.CreateFPToUI(value, target);
    if (from.bits() == 64 && to.bits() == 16) {
      // Through float: LLVM would otherwise call a compiler-runtime helper the JIT may lack.
      return builder_.CreateFPTrunc(builder_.CreateFPTrunc(value, withLanesOf(builder_.getFloatTy(), target)), target);
    }
    return from.bits() < to.bits() ? builder_.CreateFPExt(value, target) : builder_.CreateFPTrunc(value, target);
  }

  // --- intrinsics -----------------------------------------------------------------------

  llvm::Value* unaryIntrinsic(llvm::Intrinsic::ID id, llvm::Value* x) {
    return builder_.CreateCall(intrinsicDeclaration(&module_, id, {x->getType()}), {x});
  }

  /// Calls a C math function lane by lane (no vector form exists in LLVM).
  llvm::Value* callMathLibrary(const char* floatName, const char* doubleName, llvm::Value* x) {
    llvm::Type* scalarType = x->getType()->getScalarType();
    const char* name = scalarType->isDoubleTy() ? doubleName : floatName;
    llvm::FunctionCallee callee = module_.getOrInsertFunction(name, scalarType, scalarType);
    if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      // Pure functions of their argument: LLVM may hoist and share calls.
      function->setDoesNotAccessMemory();
      function->setDoesNotThrow();
      function->setWillReturn();
    }
    auto* vectorType = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
    if (!vectorType) return builder_.CreateCall(callee, {x});
    llvm::Value* result = llvm::PoisonValue::get(vectorType);
    for (unsigned lane = 0; lane < vectorType->getNumElements(); ++lane) {
      llvm::Value* element = builder_.CreateCall(callee, {builder_.CreateExtractElement(x, lane)});
      result = builder_.CreateInsertElement(result, element, lane);
    }
    return result;
  }

  llvm::Value* emitCall(const CallNode* node) {
    const char* name = intrinsicName(node->op);
    if (node->op == Intrinsic::Likely) {
      if (node->args.size() != 1) fail("likely() takes one argument");
      return emitExpr(node->args[0]);
    }
    if (node->op == Intrinsic::Reinterpret) {
      if (node->args.size() != 1 || node->args[0].dtype().bits() * node->args[0].dtype().lanes() !=
                                        node->dtype.bits() * node->dtype.lanes())
        fail("reinterpret() takes one argument of the same width as its result");
      llvm::Value* value = emitExpr(node->args[0]);
      // bfloat16 lives in registers as a float32 whose low 16 bits are zero: its bits are the
      // upper half (no rounding; LLVM folds this into the load it follows).
      if (node->args[0].dtype().code() == DataType::Code::BFloat) {
        llvm::Value* bits = builder_.CreateBitCast(value, withLanesOf(builder_.getInt32Ty(), value->getType()));
        value = builder_.CreateTrunc(builder_.CreateLShr(bits, 16), withLanesOf(builder_.getInt16Ty(), value->getType()));
      }
      return builder_.CreateBitCast(value, registerType(node->dtype));
    }
    if (node->op == Intrinsic::DotU8I8) {
      if (node->args.size() != 3) fail("dot_u8i8() takes three arguments");
      for (auto& arg : node->args)
        if (arg.dtype() != node->dtype || node->dtype.element() != DataType::int32())
          fail("dot_u8i8() works on int32 lanes, got " + arg.dtype().toString());
      return emitIntegerDot(builder_, module_, target_, emitExpr(node->args[0]), emitExpr(node->args[1]),
                            emitExpr(node->args[2]));
    }
    if (node->op == Intrinsic::DotBF16) {
      if (node->args.size() != 3 || node->dtype.element() != DataType::float32() ||
          node->args[0].dtype() != node->dtype || node->args[1].dtype() != DataType::int32(node->dtype.lanes()) ||
          node->args[2].dtype() != node->args[1].dtype())
        fail("dot_bf16() takes float32 sums and two int32 vectors of packed bfloat16 pairs of as many lanes");
      return emitBFloat16Dot(builder_, module_, target_, emitExpr(node->args[0]), emitExpr(node->args[1]),
                             emitExpr(node->args[2]));
    }
    size_t arity = intrinsicArity(node->op);
    if (node->args.size() != arity)
      fail(std::string(name) + "() takes " + std::to_string(arity) + " argument(s), got " +
           std::to_string(node->args.size()));
    DataType type = node->args[0].dtype();
    for (auto& arg : node->args)
      if (arg.dtype() != type) fail(std::string(name) + "() arguments must have one type");
    std::vector<llvm::Value*> args;
    for (auto& arg : node->args) args.push_back(emitExpr(arg));

    if (isBitwiseIntrinsic(node->op)) return emitBitwiseCall(node->op, args, type);
    if (type.isIntegral() || type.isBool()) return emitIntegerCall(node, args[0], type);
    if (!type.isFloat()) fail(std::string(name) + "() of " + type.toString() + " is not supported");

    if (node->op == Intrinsic::IsNan) return builder_.CreateFCmpUNO(args[0], args[0]);
    // float16 is computed in float32 (there are no half-precision math routines), and
    // bfloat16 already lives in registers as float32.
    bool half = type.code() == DataType::Code::Float && type.bits() == 16;
    if (half)
      for (auto& arg : args) arg = builder_.CreateFPExt(arg, withLanesOf(builder_.getFloatTy(), arg->getType()));
    llvm::Value* result = emitFloatMath(node->op, args);
    if (half) result = builder_.CreateFPTrunc(result, registerType(node->dtype));
    return result;
  }

  llvm::Value* emitIntegerCall(const CallNode* node, llvm::Value* x, DataType type) {
    switch (node->op) {
      case Intrinsic::Floor:
      case Intrinsic::Ceil:
      case Intrinsic::Round:
      case Intrinsic::Trunc: return x;  // integers are already whole
      case Intrinsic::IsNan: return llvm::Constant::getNullValue(registerType(node->dtype));
      case Intrinsic::Fabs: {
        if (!type.isInt()) return x;
        llvm::Value* zero = llvm::Constant::getNullValue(x->getType());
        return builder_.CreateSelect(builder_.CreateICmpSLT(x, zero), builder_.CreateNeg(x), x);
      }
      default: break;
    }
    fail(std::string(intrinsicName(node->op)) + "() of " + type.toString() + " is not supported",
         "cast the argument to a float type first");
  }

  /// The bitwise intrinsics, with shifts by the type's width or more defined (LLVM's shl
  /// and shr give poison there): 0, or the sign for an arithmetic shift right.
  llvm::Value* emitBitwiseCall(Intrinsic op, const std::vector<llvm::Value*>& args, DataType type) {
    bool shift = op == Intrinsic::ShiftLeft || op == Intrinsic::ShiftRight;
    if (!(type.isIntegral() || (type.isBool() && !shift)))
      fail(std::string(intrinsicName(op)) + "() of " + type.toString() + " is not supported",
           shift ? "shifts take integer operands" : "bitwise operations take integer or bool operands");
    switch (op) {
      case Intrinsic::BitwiseAnd: return builder_.CreateAnd(args[0], args[1]);
      case Intrinsic::BitwiseOr: return builder_.CreateOr(args[0], args[1]);
      case Intrinsic::BitwiseXor: return builder_.CreateXor(args[0], args[1]);
      case Intrinsic::BitwiseNot: return builder_.CreateNot(args[0]);
      default: break;
    }
    llvm::Value* width = llvm::ConstantInt::get(args[1]->getType(), type.bits());
    // Unsigned comparison: a negative amount of a signed type counts as too wide as well.
    llvm::Value* tooWide = builder_.CreateICmpUGE(args[1], width);
    if (op == Intrinsic::ShiftRight && type.isInt()) {
      llvm::Value* widest = llvm::ConstantInt::get(args[1]->getType(), type.bits() - 1);
      return builder_.CreateAShr(args[0], builder_.CreateSelect(tooWide, widest, args[1]));
    }
    llvm::Value* shifted =
        op == Intrinsic::ShiftLeft ? builder_.CreateShl(args[0], args[1]) : builder_.CreateLShr(args[0], args[1]);
    return builder_.CreateSelect(tooWide, llvm::Constant::getNullValue(shifted->getType()), shifted);
  }

  /// sin or cos of a float32 vector: the inline kernel, or the C library lane by lane for
  /// the rare vector with a lane beyond the kernel's range or infinite.
  llvm::Value* float32SinOrCos(bool cosine, llvm::Value* x) {
    llvm::Value* magnitude = unaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* outside = builder_.CreateOrReduce(
        builder_.CreateFCmpOGT(magnitude, llvm::ConstantFP::get(x->getType(), kFloat32TrigonometricLimit)));
    llvm::Function* function = state_.function;
    llvm::BasicBlock* inline_ = llvm::BasicBlock::Create(context_, "trig.inline", function);
    llvm::BasicBlock* library = llvm::BasicBlock::Create(context_, "trig.library", function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context_, "trig.done", function);
    builder_.CreateCondBr(outside, library, inline_, llvm::MDBuilder(context_).createBranchWeights(1, 1 << 20));
    builder_.SetInsertPoint(inline_);
    llvm::Value* fast = emitFloat32SinOrCos(builder_, x, cosine);
    builder_.CreateBr(done);
    builder_.SetInsertPoint(library);
    llvm::Value* slow = unaryIntrinsic(cosine ? llvm::Intrinsic::cos : llvm::Intrinsic::sin, x);
    builder_.CreateBr(done);
    builder_.SetInsertPoint(done);
    llvm::PHINode* result = builder_.CreatePHI(x->getType(), 2);
    result->addIncoming(fast, inline_);
    result->addIncoming(slow, library);
    return result;
  }

  llvm::Value* emitFloatMath(Intrinsic op, const std::vector<llvm::Value*>& args) {
    llvm::Value* x = args[0];
    llvm::Type* type = x->getType();
    auto one = [&] { return llvm::ConstantFP::get(type, 1.0); };
    // float32 (and float16/bfloat16, computed in float32) gets inline polynomial kernels:
    // libm would be one call per lane, and a loop of calls does not vectorize.
    if (type->getScalarType()->isFloatTy() && hasFloat32MathKernel(op)) return emitFloat32Math(builder_, op, x);
    switch (op) {
      case Intrinsic::Exp: return unaryIntrinsic(llvm::Intrinsic::exp, x);
      case Intrinsic::Log: return unaryIntrinsic(llvm::Intrinsic::log, x);
      case Intrinsic::Sqrt: return unaryIntrinsic(llvm::Intrinsic::sqrt, x);
      case Intrinsic::Rsqrt: return builder_.CreateFDiv(one(), unaryIntrinsic(llvm::Intrinsic::sqrt, x));
      case Intrinsic::Fabs: return unaryIntrinsic(llvm::Intrinsic::fabs, x);
      case Intrinsic::Floor: return unaryIntrinsic(llvm::Intrinsic::floor, x);
      case Intrinsic::Ceil: return unaryIntrinsic(llvm::Intrinsic::ceil, x);
      case Intrinsic::Trunc: return unaryIntrinsic(llvm::Intrinsic::trunc, x);
      // Half to even, as ONNX Round and std::nearbyint in the default rounding mode.
      case Intrinsic::Round: return unaryIntrinsic(llvm::Intrinsic::nearbyint, x);
      case Intrinsic::Sin:
      case Intrinsic::Cos:
        // Scalars keep the C library: the range check's branch would keep the loop from
        // vectorizing anyway, and sinf/cosf are as fast as the kernel one value at a time.
        if (type->isVectorTy() && type->getScalarType()->isFloatTy()) return float32SinOrCos(op == Intrinsic::Cos, x);
        return unaryIntrinsic(op == Intrinsic::Cos ? llvm::Intrinsic::cos : llvm::Intrinsic::sin, x);
      case Intrinsic::Pow:
        return builder_.CreateCall(intrinsicDeclaration(&module_, llvm::Intrinsic::pow, {type}), {x, args[1]});
      case Intrinsic::Fma:
        return builder_.CreateCall(intrinsicDeclaration(&module_, llvm::Intrinsic::fma, {type}), {x, args[1], args[2]});
      case Intrinsic::Tanh: return callMathLibrary("tanhf", "tanh", x);
      case Intrinsic::Erf: return callMathLibrary("erff", "erf", x);
      // Rare in models (ONNX's trigonometric and hyperbolic operators): exact libm values
      // lane by lane rather than inline kernels.
      case Intrinsic::Tan: return callMathLibrary("tanf", "tan", x);
      case Intrinsic::Asin: return callMathLibrary("asinf", "asin", x);
      case Intrinsic::Acos: return callMathLibrary("acosf", "acos", x);
      case Intrinsic::Atan: return callMathLibrary("atanf", "atan", x);
      case Intrinsic::Sinh: return callMathLibrary("sinhf", "sinh", x);
      case Intrinsic::Cosh: return callMathLibrary("coshf", "cosh", x);
      case Intrinsic::Asinh: return callMathLibrary("asinhf", "asinh", x);
      case Intrinsic::Acosh: return callMathLibrary("acoshf", "acosh", x);
      case Intrinsic::Atanh: return callMathLibrary("atanhf", "atanh", x);
      case Intrinsic::Sigmoid: {
        // 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving exactly 0.
        llvm::Value* decay = unaryIntrinsic(llvm::Intrinsic::exp, builder_.CreateFNeg(x));
        return builder_.CreateFDiv(one(), builder_.CreateFAdd(one(), decay));
      }
      default: break;
    }
    TESSEL_ICHECK(false) << "unhandled intrinsic " << intrinsicName(op);
    return nullptr;
  }

  // --- statements -------------------------------------------------------------------------

  /// What an unroll pragma just above a loop asks of LLVM's unroller.
  enum class UnrollPragma { None, Enable, Disable };

  void emitStmt(const Stmt& s) {
    TESSEL_ICHECK(s.defined()) << "undefined statement in " << func_->name;
    // A pragma applies to the loop directly under it, or to each part of it when loop
    // partitioning cut it into a sequence (a main loop and its tail); anything else clears it.
    UnrollPragma unrollHint = std::exchange(pendingUnrollHint_, UnrollPragma::None);
    switch (s->kind()) {
      case NodeKind::For: return emitFor(s.as<ForNode>(), unrollHint);
      case NodeKind::Allocate: return emitAllocate(s.as<AllocateNode>());
      case NodeKind::IfThenElse: return emitIfThenElse(s.as<IfThenElseNode>());
      case NodeKind::SeqStmt:
        for (auto& stmt : s.as<SeqStmtNode>()->seq) {
          if (stmt->kind() == NodeKind::For) pendingUnrollHint_ = unrollHint;
          emitStmt(stmt);
        }
        return;
      case NodeKind::LetStmt: {
        auto* let = s.as<LetStmtNode>();
        llvm::Value* value = emitExpr(let->value);
        ScopedBinding binding(values_, let->var, value);
        return emitStmt(let->body);
      }
      case NodeKind::Evaluate: emitExpr(s.as<EvaluateNode>()->value); return;
      case NodeKind::AttrStmt: {
        auto* attr = s.as<AttrStmtNode>();
        // An unroll pragma of 0 (auto_unroll_max_step = 0) keeps the loop as written: LLVM
        // would otherwise fully unroll a loop of a constant trip count, or widen and
        // interleave it, as it sees fit.
        if (attr->key.rfind("pragma_", 0) == 0 && attr->key.find("unroll") != std::string::npos)
          pendingUnrollHint_ = isConstInt(attr->value, 0) ? UnrollPragma::Disable : UnrollPragma::Enable;
        if (attr->key == kTileDotAttr && hasIntegerTiles(target_)) return emitTileNest(attr);
        return emitStmt(attr->body);
      }
      case NodeKind::BufferStore: return emitStore(s.as<BufferStoreNode>());
      case NodeKind::BufferRealize:
        TESSEL_ICHECK(false) << "a BufferRealize reached codegen in " << func_->name
                             << "; storage flattening must remove it";
        return;
      default: break;
    }
    TESSEL_ICHECK(false) << "codegen does not know statement kind " << nodeKindName(s->kind());
  }

  // A nest TensorizeLoops matched to tile_u8i8, as AMX tiles. The passes after tensorize
  // keep the nest's shape (it has no conditions to partition, no loop to vectorize or unroll).
  void emitTileNest(const AttrStmtNode* attr) {
    const auto* rows = attr->body.as<ForNode>();
    auto nest = rows ? matchTileDotNest(rows) : Expected<TileDotNest>(Diagnostic{"not a loop"});
    TESSEL_ICHECK(nest.ok()) << "the tile_u8i8 nest of " << func_->name << " changed after tensorize: "
                             << nest.error().message;
    auto bytePointer = [&](const Buffer& buffer, const Expr& index) {
      llvm::Type* element = memoryType(buffer.dtype());
      llvm::Value* address = builder_.CreateInBoundsGEP(element, bufferBase(buffer, element), emitIndex(index));
      return builder_.CreatePointerCast(address, pointerTo(builder_.getInt8Ty()));
    };
    emitTileDot(builder_, module_, *nest, bytePointer(nest->acc, nest->accBase), bytePointer(nest->data, nest->dataBase),
                bytePointer(nest->weight, nest->weightBase));
  }

  void emitIfThenElse(const IfThenElseNode* node) {
    llvm::Value* condition = emitExpr(node->condition);
    auto* call = node->condition.as<CallNode>();
    bool likely = call && call->op == Intrinsic::Likely;
    llvm::Function* function = state_.function;
    llvm::BasicBlock* thenBlock = llvm::BasicBlock::Create(context_, "then", function);
    llvm::BasicBlock* elseBlock = node->elseCase.defined() ? llvm::BasicBlock::Create(context_, "else", function) : nullptr;
    llvm::BasicBlock* after = llvm::BasicBlock::Create(context_, "endif", function);
    llvm::MDNode* weights = likely ? llvm::MDBuilder(context_).createBranchWeights(2000, 1) : nullptr;
    builder_.CreateCondBr(condition, thenBlock, elseBlock ? elseBlock : after, weights);
    builder_.SetInsertPoint(thenBlock);
    emitStmt(node->thenCase);
    builder_.CreateBr(after);
    if (elseBlock) {
      builder_.SetInsertPoint(elseBlock);
      emitStmt(node->elseCase);
      builder_.CreateBr(after);
    }
    builder_.SetInsertPoint(after);
  }

  llvm::Value* emitLoopBound(const Expr& e) {
    llvm::Value* value = emitExpr(e);
    if (!value->getType()->isIntegerTy()) fail("loop bounds must be integers, got " + e.dtype().toString());
    return value;
  }

  void emitFor(const ForNode* node, UnrollPragma unrollHint) {
    switch (node->forKind) {
      case ForKind::ThreadBinding:
        fail("bind() needs a GPU target: loop '" + node->loopVar.name() + "' is bound to " +
                 (node->threadTag.empty() ? std::string("a GPU thread") : node->threadTag),
             "compile for CUDA, or schedule the loop with parallel/vectorize for the CPU");
      case ForKind::Parallel:
        if (!state_.insideParallelBody) return emitParallelFor(node);
        break;  // a parallel loop inside a parallel body runs serially on its worker
      default: break;
    }
    llvm::Value* begin = emitLoopBound(node->min);
    llvm::Value* extent = emitLoopBound(node->extent);
    llvm::Value* end = builder_.CreateAdd(begin, extent, "", false, true);
    std::vector<const char*> hints;
    const int64_t* constantExtent = asConstInt(node->extent);
    if (node->forKind == ForKind::Unrolled) hints.push_back(constantExtent ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable");
    else if (unrollHint == UnrollPragma::Enable) hints.push_back("llvm.loop.unroll.enable");
    else if (unrollHint == UnrollPragma::Disable) {
      hints.push_back("llvm.loop.unroll.disable");
      hints.push_back("llvm.loop.isvectorized");  // nor widened or interleaved by the loop vectorizer
    }
    if (node->forKind == ForKind::Vectorized) hints.push_back("llvm.loop.vectorize.enable");
    emitSerialLoop(node->loopVar, begin, end, node->body, hints);
  }

  /// for (var = begin; var < end; ++var) body, with the loop hints as llvm.loop metadata.
  void emitSerialLoop(const Var& var, llvm::Value* begin, llvm::Value* end, const Stmt& body,
                      const std::vector<const char*>& hints) {
    llvm::Function* function = state_.function;
    llvm::BasicBlock* preheader = builder_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(context_, var.name() + ".header", function);
    llvm::BasicBlock* bodyBlock = llvm::BasicBlock::Create(context_, var.name() + ".body", function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(context_, var.name() + ".exit", function);
    builder_.CreateBr(header);

    builder_.SetInsertPoint(header);
    llvm::PHINode* value = builder_.CreatePHI(begin->getType(), 2, var.name());
    value->addIncoming(begin, preheader);
    builder_.CreateCondBr(builder_.CreateICmpSLT(value, end), bodyBlock, exit);

    builder_.SetInsertPoint(bodyBlock);
    {
      ScopedBinding binding(values_, var, value);
      emitStmt(body);
    }
    llvm::Value* next = builder_.CreateAdd(value, llvm::ConstantInt::get(begin->getType(), 1), "", false, true);
    llvm::BranchInst* backEdge = builder_.CreateBr(header);
    value->addIncoming(next, builder_.GetInsertBlock());
    if (!hints.empty()) {
      std::vector<llvm::Metadata*> operands{nullptr};
      for (const char* hint : hints) {
        std::vector<llvm::Metadata*> entry{llvm::MDString::get(context_, hint)};
        if (std::strcmp(hint, "llvm.loop.vectorize.enable") == 0)
          entry.push_back(llvm::ConstantAsMetadata::get(builder_.getTrue()));
        if (std::strcmp(hint, "llvm.loop.isvectorized") == 0)
          entry.push_back(llvm::ConstantAsMetadata::get(builder_.getInt32(1)));
        operands.push_back(llvm::MDNode::get(context_, entry));
      }
      llvm::MDNode* loopId = llvm::MDNode::getDistinct(context_, operands);
      loopId->replaceOperandWith(0, loopId);
      backEdge->setMetadata(llvm::LLVMContext::MD_loop, loopId);
    }
    builder_.SetInsertPoint(exit);
  }

  /// Outlines the loop body into `i32 body(i64 begin, i64 end, i8* closure)`, whose closure
  /// holds the loop's minimum and every variable the body uses from outside, and runs it
  /// with tessel_parallel_for.
  void emitParallelFor(const ForNode* node) {
    llvm::Value* min = emitLoopBound(node->min);
    llvm::Value* extent = builder_.CreateSExtOrTrunc(emitLoopBound(node->extent), builder_.getInt64Ty());

    std::vector<Var> captured = freeVariables(node->body, {node->loopVar});
    std::vector<llvm::Value*> capturedValues;
    std::vector<llvm::Type*> capturedTypes;
    for (auto& var : captured) {
      auto it = values_.find(var.get());
      if (it == values_.end())
        fail("the parallel loop '" + node->loopVar.name() + "' uses '" + var.name() +
                 "', which is not defined where the loop is",
             "every variable must be a loop variable, a let, or a buffer");
      capturedValues.push_back(it->second);
      capturedTypes.push_back(it->second->getType());
    }

    std::vector<llvm::Type*> fieldTypes{min->getType()};
    fieldTypes.insert(fieldTypes.end(), capturedTypes.begin(), capturedTypes.end());
    auto* closureType = llvm::StructType::get(context_, fieldTypes);
    llvm::AllocaInst* closure = entryAlloca(closureType, node->loopVar.name() + ".closure");
    builder_.CreateStore(min, builder_.CreateStructGEP(closureType, closure, 0));
    for (size_t i = 0; i < capturedValues.size(); ++i)
      builder_.CreateStore(capturedValues[i], builder_.CreateStructGEP(closureType, closure, i + 1));

    std::string name = func_->name + "_parallel_" + std::to_string(parallelBodyCount_++);
    llvm::Type* i64 = builder_.getInt64Ty();
    // The computing function takes the chunk, the loop minimum and the captured values as
    // arguments, so captured buffer pointers can be noalias.
    Var minVar("min", node->min.dtype());
    std::vector<Var> computeVars{minVar};
    computeVars.insert(computeVars.end(), captured.begin(), captured.end());
    llvm::Function* compute = createComputeFunction(name + "_compute", {i64, i64}, computeVars, fieldTypes);
    withFunction(compute, /*insideParallelBody=*/true, bindArguments(compute, 2, computeVars), [&] {
      llvm::Value* loopMin = values_.at(minVar.get());
      auto chunkBound = [&](unsigned argument) {
        llvm::Value* offset = builder_.CreateSExtOrTrunc(compute->getArg(argument), loopMin->getType());
        return builder_.CreateAdd(loopMin, offset, "", false, true);
      };
      compute->getArg(0)->setName("begin");
      compute->getArg(1)->setName("end");
      llvm::Value* begin = chunkBound(0);
      llvm::Value* end = chunkBound(1);
      emitSerialLoop(node->loopVar, begin, end, node->body, {});
      builder_.CreateRet(builder_.getInt32(0));
    });

    llvm::Function* body = llvm::Function::Create(parallelBodyType(), llvm::Function::InternalLinkage, name, module_);
    setCommonAttributes(body);
    body->getArg(0)->setName("begin");
    body->getArg(1)->setName("end");
    body->getArg(2)->setName("closure");
    withFunction(body, /*insideParallelBody=*/true, {}, [&] {
      llvm::Value* fields = builder_.CreatePointerCast(body->getArg(2), pointerTo(closureType));
      std::vector<llvm::Value*> arguments{body->getArg(0), body->getArg(1)};
      for (size_t i = 0; i < fieldTypes.size(); ++i)
        arguments.push_back(builder_.CreateLoad(fieldTypes[i], builder_.CreateStructGEP(closureType, fields, i)));
      builder_.CreateRet(callWithDenormalsFlushed(compute, arguments));
    });

    llvm::Value* closurePointer = builder_.CreatePointerCast(closure, bytePointerType(context_));
    llvm::Value* code = builder_.CreateCall(runtimeFunction("tessel_parallel_for"), {extent, body, closurePointer});
    returnIfNonZero(code);
  }

  void emitAllocate(const AllocateNode* node) {
    const Buffer& buffer = node->buffer;
    llvm::Type* element = memoryType(buffer.dtype());
    int64_t elementBytes = static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(element));
    bool constantSize = true;
    int64_t count = 1;
    for (auto& extent : buffer.shape()) {
      const int64_t* value = asConstInt(extent);
      if (!value) {
        constantSize = false;
        continue;
      }
      if (*value < 0) fail("allocates buffer '" + buffer.name() + "' with negative extent " + std::to_string(*value));
      if (*value != 0 && count > (int64_t(1) << 40) / *value)
        fail("allocates buffer '" + buffer.name() + "' larger than 1 TiB");
      count *= *value;
    }

    if (constantSize && count * elementBytes <= kMaxStackAllocationBytes) {
      llvm::AllocaInst* storage = entryAlloca(llvm::ArrayType::get(element, std::max<int64_t>(count, 1)), buffer.name());
      ScopedBinding binding(values_, buffer->data, storage);
      emitStmt(node->body);
      return;
    }

    llvm::Value* bytes = builder_.getInt64(elementBytes);
    for (auto& extent : buffer.shape()) {
      llvm::Value* value = emitExpr(extent);
      if (!value->getType()->isIntegerTy()) fail("allocation extents must be integers");
      bytes = builder_.CreateMul(bytes, builder_.CreateSExtOrTrunc(value, builder_.getInt64Ty()), "", false, true);
    }
    llvm::Value* storage = builder_.CreateCall(runtimeFunction("tessel_workspace_alloc"), {bytes}, buffer.name());
    llvm::Value* missing = builder_.CreateIsNull(storage);
    returnIfNonZero(builder_.CreateSelect(missing, builder_.getInt32(kWorkspaceAllocationFailed), builder_.getInt32(0)));
    {
      ScopedBinding binding(values_, buffer->data, storage);
      emitStmt(node->body);
    }
    builder_.CreateCall(runtimeFunction("tessel_workspace_free"), {storage});
  }

  llvm::Module& module_;
  llvm::LLVMContext& context_;
  const Target& target_;
  llvm::IRBuilder<> builder_;
  const PrimFuncNode* func_ = nullptr;
  FunctionState state_;
  ValueMap values_;
  int parallelBodyCount_ = 0;
  UnrollPragma pendingUnrollHint_ = UnrollPragma::None;
};

Diagnostic badName(const std::string& name, const std::string& why) {
  return Diagnostic{"cannot export a kernel named '" + name + "': " + why, "function " + name, 0, 0,
                    "rename the function"};
}

}  // namespace

Expected<std::unique_ptr<llvm::Module>> emitModule(const std::vector<PrimFunc>& funcs, llvm::LLVMContext& context,
                                                   llvm::TargetMachine& machine, const Target& target) {
  std::set<std::string> names;
  for (auto& func : funcs) {
    TESSEL_ICHECK(func.defined()) << "undefined PrimFunc given to codegen";
    const std::string& name = func->name;
    if (!isCIdentifier(name)) return badName(name, "the name must be a C identifier");
    if (isReservedName(name)) return badName(name, "the name belongs to the runtime or the C library");
    if (!names.insert(name).second) return badName(name, "two functions have this name");
  }

  auto module = std::make_unique<llvm::Module>("tessel", context);
  module->setTargetTriple(machine.getTargetTriple().str());
  module->setDataLayout(machine.createDataLayout());
  // A kernel identical to an earlier one but for its name is compiled once: the others
  // become aliases of it.
  std::vector<size_t> first = firstIdenticalFunction(funcs);
  try {
    ModuleEmitter emitter(*module, target);
    for (size_t i = 0; i < funcs.size(); ++i)
      if (first[i] == i) emitter.declareKernel(funcs[i]);
    for (size_t i = 0; i < funcs.size(); ++i)
      if (first[i] == i) emitter.emitKernel(funcs[i]);
  } catch (const UnsupportedConstruct& unsupported) {
    return unsupported.diagnostic;
  }
  for (size_t i = 0; i < funcs.size(); ++i)
    if (first[i] != i)
      llvm::GlobalAlias::create(llvm::GlobalValue::ExternalLinkage, funcs[i]->name,
                                module->getFunction(funcs[first[i]]->name));

  std::string problems;
  llvm::raw_string_ostream stream(problems);
  bool broken = llvm::verifyModule(*module, &stream);
  TESSEL_ICHECK(!broken) << "codegen produced invalid LLVM IR: " << stream.str();
  return module;
}

}  // namespace tessel
