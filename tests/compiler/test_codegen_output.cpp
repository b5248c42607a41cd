// LLVM backend: IR, assembly and object output, target description, module API and diagnostics.
#include <QtTest>

#include <elf.h>

#include <cstdlib>
#include <atomic>
#include <cstring>
#include <thread>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/ir/IR.h"

#include "CodegenTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

/// C[i*16 : i*16+16] = A[...] * B[...] + C[...], 16 lanes at a time.
PrimFunc vectorMultiplyAdd(const std::string& name, int lanes = 16, ForKind outer = ForKind::Serial) {
  const int64_t n = 1024;
  Buffer A("A", DataType::float32(), {Expr(n)}), B("B", DataType::float32(), {Expr(n)}), C("C", DataType::float32(), {Expr(n)});
  Var i("i");
  Expr ramp = RampNode::make(i * lanes, Expr(1), lanes);
  return PrimFunc(name, {A, B, C}, loop(i, 0, n / lanes, store(C, load(A, ramp) * load(B, ramp) + load(C, ramp), ramp), outer));
}

bool hasAvx512(const Target& target) { return target.hasFeature("avx512f"); }

/// The defined global symbols of an ELF64 relocatable object, and its undefined ones.
struct ElfSymbols {
  QStringList defined, undefined;
};

ElfSymbols readElfSymbols(const QByteArray& file) {
  ElfSymbols out;
  if (file.size() < qsizetype(sizeof(Elf64_Ehdr))) return out;
  const char* base = file.constData();
  auto* header = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64) return out;
  auto* sections = reinterpret_cast<const Elf64_Shdr*>(base + header->e_shoff);
  for (int s = 0; s < header->e_shnum; ++s) {
    if (sections[s].sh_type != SHT_SYMTAB) continue;
    const char* names = base + sections[sections[s].sh_link].sh_offset;
    auto* symbols = reinterpret_cast<const Elf64_Sym*>(base + sections[s].sh_offset);
    size_t count = sections[s].sh_size / sizeof(Elf64_Sym);
    for (size_t k = 0; k < count; ++k) {
      if (ELF64_ST_BIND(symbols[k].st_info) != STB_GLOBAL) continue;
      QString name = QString::fromUtf8(names + symbols[k].st_name);
      if (symbols[k].st_shndx == SHN_UNDEF) out.undefined << name;
      else if (ELF64_ST_TYPE(symbols[k].st_info) == STT_FUNC) out.defined << name;
    }
  }
  return out;
}

template <class T>
QString errorOf(const Expected<T>& result) {
  return result ? QString() : QString::fromStdString(result.error().toString());
}

}  // namespace

class TestCodegenOutput : public QObject {
  Q_OBJECT
private slots:
  void hostTargetDescribesThisMachine() {
    Target host = hostTarget();
    QVERIFY(!host.triple.empty());
    QVERIFY(!host.cpu.empty());
    QCOMPARE(host.vectorBits, hasAvx512(host) ? 512 : host.hasFeature("avx") ? 256 : 128);
    QString text = QString::fromStdString(host.toString());
    QVERIFY(text.startsWith("llvm -mtriple=" + QString::fromStdString(host.triple)));
    QVERIFY(text.contains("-mcpu=" + QString::fromStdString(host.cpu)));
    QVERIFY(!text.contains(",-"));  // only enabled features are listed
    QCOMPARE(QString::fromStdString(hostTarget().toString()), text);  // stable
    auto parsed = Target::parse(host.toString());  // and read back as the same machine
    QVERIFY(parsed);
    QVERIFY(*parsed == host);
  }

  void optimizedIrUsesTheWidestHostVectors() {
    Target host = hostTarget();
    if (!hasAvx512(host)) QSKIP("the host has no AVX-512");
    QString ir = QString::fromStdString(emitLLVMIR({vectorMultiplyAdd("vma")}, host));
    QVERIFY2(ir.contains("define i32 @vma("), qPrintable(ir.left(2000)));
    QVERIFY(ir.contains("<16 x float>"));
    QVERIFY(ir.contains("contract"));
    QVERIFY(ir.contains("\"prefer-vector-width\"=\"512\""));
  }

  void unoptimizedIrShowsTheLoopAsWritten() {
    QString ir = QString::fromStdString(emitLLVMIR({vectorMultiplyAdd("vma", 8)}, hostTarget(), false));
    QVERIFY(ir.contains("define i32 @vma("));
    QVERIFY(ir.contains("define internal i32 @vma_compute("));
    QVERIFY(ir.contains("noalias"));
    QVERIFY(ir.contains("i.header:"));
    QVERIFY(ir.contains("<8 x float>"));
    QVERIFY(ir.contains("fmul contract <8 x float>"));
  }

  void unrollPragmaOfZeroKeepsTheLoopAsWritten() {
    // auto_unroll_max_step = 0 over a loop already in vectors, and over the two parts loop
    // partitioning cut it into: LLVM fully unrolled such loops of a constant trip count (a
    // 25-input fused Concat: 600 vector stores, 1 s of its optimizer for one kernel).
    const int64_t n = 192;
    Buffer A("A", DataType::float32(), {Expr(n)}), C("C", DataType::float32(), {Expr(n)});
    Var i("i"), k("k");
    Expr ramp = RampNode::make(i * 8, Expr(1), 8);
    Stmt main = loop(i, 0, 20, store(C, load(A, ramp) * 2.0f, ramp));
    Stmt tail = loop(i, 20, 4, store(C, load(A, ramp) * 3.0f, ramp));
    Stmt kept = AttrStmtNode::make("pragma_auto_unroll_max_step", Expr(0), SeqStmtNode::make({main, tail}));
    Stmt free = loop(k, 0, 24, store(C, load(A, RampNode::make(k * 8, Expr(1), 8)) + 1.0f, RampNode::make(k * 8, Expr(1), 8)));
    QString ir = QString::fromStdString(emitLLVMIR({PrimFunc("scale", {A, C}, SeqStmtNode::make({kept, free}))},
                                                   hostTarget(), false));
    QCOMPARE(ir.count("!\"llvm.loop.unroll.disable\"}"), 1);  // one metadata node, shared
    QCOMPARE(ir.count(QRegularExpression("br label %i\\.header[0-9]*, !llvm\\.loop")), 2);
    QVERIFY2(!ir.contains(QRegularExpression("br label %k\\.header[0-9]*, !llvm\\.loop")), qPrintable(ir));
  }

  void localScratchWithConstantIndicesLivesInRegisters() {
    // Four accumulators in a "local" buffer, summed over a loop: after SROA no memory remains.
    const int64_t n = 256;
    Buffer A("A", DataType::float32(), {Expr(n * 4)}), C("C", DataType::float32(), {Expr(4)});
    Buffer acc("acc", DataType::float32(), {Expr(4)}, "local");
    Var k("k");
    std::vector<Stmt> init, update, write;
    for (int r = 0; r < 4; ++r) {
      init.push_back(store(acc, Expr(0.0f), Expr(r)));
      update.push_back(store(acc, load(acc, Expr(r)) + load(A, k * 4 + r), Expr(r)));
      write.push_back(store(C, load(acc, Expr(r)), Expr(r)));
    }
    Stmt body = AllocateNode::make(acc, SeqStmtNode::make({SeqStmtNode::make(init), loop(k, 0, n, SeqStmtNode::make(update)),
                                                            SeqStmtNode::make(write)}));
    PrimFunc func("accumulate", {A, C}, body);
    QString before = QString::fromStdString(emitLLVMIR({func}, hostTarget(), false));
    QString after = QString::fromStdString(emitLLVMIR({func}, hostTarget(), true));
    QVERIFY(before.contains("alloca [4 x float], align 64"));
    // The only stack slots left hold the floating-point mode (MXCSR) the entry point saves.
    for (const QString& line : after.split('\n'))
      if (line.contains("alloca")) QVERIFY2(line.contains(".mxcsr"), qPrintable(after.left(3000)));
  }

  void assemblyUsesFusedMultiplyAdd() {
    Target host = hostTarget();
    QString assembly = QString::fromStdString(emitAssembly({vectorMultiplyAdd("vma")}, host));
    QVERIFY(!assembly.isEmpty());
    QVERIFY(!assembly.startsWith("# error"));
    QVERIFY(assembly.contains("vma:"));
    if (host.hasFeature("fma")) QVERIFY(assembly.contains("vfmadd"));
    if (hasAvx512(host)) QVERIFY(assembly.contains("zmm"));
  }

  void objectFileExportsEveryKernel() {
    QTemporaryDir directory;
    QVERIFY(directory.isValid());
    std::string path = directory.filePath("kernels.o").toStdString();
    auto written = emitObjectFile({vectorMultiplyAdd("first"), vectorMultiplyAdd("second", 8, ForKind::Parallel)},
                                  hostTarget(), path);
    QVERIFY2(written, qPrintable(errorOf(written)));
    QFile file(QString::fromStdString(path));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QByteArray bytes = file.readAll();
    QVERIFY(bytes.startsWith("\x7f" "ELF"));
    ElfSymbols symbols = readElfSymbols(bytes);
    QVERIFY2(symbols.defined.contains("first"), qPrintable(symbols.defined.join(",")));
    QVERIFY(symbols.defined.contains("second"));
    // Helpers stay internal; the runtime is called, not contained.
    QVERIFY(!symbols.defined.contains("second_parallel_0"));
    QVERIFY(symbols.undefined.contains("tessel_parallel_for"));
  }

  // Kernels identical but for their names (a model's repeated layers) compile once; the
  // others are aliases of it, exported and callable under their own names.
  void identicalKernelsCompileOnceAsAliases() {
    std::vector<PrimFunc> funcs = {vectorMultiplyAdd("a"), vectorMultiplyAdd("b"), vectorMultiplyAdd("c", 8),
                                   vectorMultiplyAdd("d"), vectorMultiplyAdd("e", 8, ForKind::Parallel)};
    QCOMPARE(firstIdenticalFunction(funcs), (std::vector<size_t>{0, 0, 2, 0, 4}));
    QCOMPARE(groupIdenticalFunctions(funcs), (std::vector<std::vector<size_t>>{{0, 1, 3}, {2}, {4}}));

    QTemporaryDir directory;
    std::string path = directory.filePath("kernels.o").toStdString();
    auto written = emitObjectFile(funcs, hostTarget(), path);
    QVERIFY2(written, qPrintable(errorOf(written)));
    QFile file(QString::fromStdString(path));
    QVERIFY(file.open(QIODevice::ReadOnly));
    ElfSymbols symbols = readElfSymbols(file.readAll());
    for (const char* name : {"a", "b", "c", "d", "e"}) QVERIFY2(symbols.defined.contains(name), name);

    auto built = buildJIT(funcs);
    QVERIFY2(built, qPrintable(errorOf(built)));
    const JITModule& module = **built;
    QVERIFY(module.getKernel("a"));
    QVERIFY(module.getKernel("b") == module.getKernel("a"));
    QVERIFY(module.getKernel("d") == module.getKernel("a"));
    QVERIFY(module.getKernel("c") && module.getKernel("c") != module.getKernel("a"));
    QVERIFY(module.getKernel("e") && module.getKernel("e") != module.getKernel("a"));
  }

  void objectFileReportsUnwritablePath() {
    auto written = emitObjectFile({vectorMultiplyAdd("k")}, hostTarget(), "/nonexistent-directory/k.o");
    QVERIFY(!written);
    QVERIFY(errorOf(written).contains("/nonexistent-directory/k.o"));
  }

  void moduleListsAndFindsItsKernels() {
    auto built = buildJIT({vectorMultiplyAdd("zeta"), vectorMultiplyAdd("alpha", 4)});
    QVERIFY2(built, qPrintable(errorOf(built)));
    const JITModule& module = **built;
    QCOMPARE(module.functionNames(), (std::vector<std::string>{"zeta", "alpha"}));
    QVERIFY(module.getKernel("zeta"));
    QVERIFY(module.getKernel("alpha"));
    QVERIFY(module.getKernel("zeta") != module.getKernel("alpha"));
    QVERIFY(!module.getKernel("zeta_compute"));
    QVERIFY(!module.getKernel("missing"));
    QCOMPARE(module.target().cpu, hostTarget().cpu);
  }

  void threadBindingIsADiagnostic() {
    const int64_t n = 64;
    Buffer A("A", DataType::float32(), {Expr(n)});
    Var tx("tx");
    PrimFunc func("gpu_only", {A}, ForNode::make(tx, 0, n, ForKind::ThreadBinding, store(A, Expr(1.0f), tx), "threadIdx.x"));
    auto built = buildJIT({func});
    QVERIFY(!built);
    QVERIFY(errorOf(built).contains("bind() needs a GPU target"));
    QVERIFY(errorOf(built).contains("threadIdx.x"));
    QCOMPARE(QString::fromStdString(built.error().location), QString("function gpu_only"));
    QVERIFY(QString::fromStdString(emitLLVMIR({func}, hostTarget())).startsWith("; error:"));
    QVERIFY(QString::fromStdString(emitAssembly({func}, hostTarget())).startsWith("# error:"));
    QTemporaryDir directory;
    QVERIFY(!emitObjectFile({func}, hostTarget(), directory.filePath("gpu.o").toStdString()));
  }

  void unsupportedInputsAreDiagnostics_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("message");
    QTest::newRow("undefined variable") << 0 << "uses variable 'n'";
    QTest::newRow("unknown buffer") << 1 << "accesses buffer 'T'";
    QTest::newRow("exp of an integer") << 2 << "exp() of int32 is not supported";
    QTest::newRow("reserved name") << 3 << "cannot export a kernel named 'expf'";
    QTest::newRow("not an identifier") << 4 << "the name must be a C identifier";
    QTest::newRow("duplicate names") << 5 << "two functions have this name";
    QTest::newRow("parallel loop over an undefined variable") << 6 << "uses 'n'";
    QTest::newRow("one buffer passed twice") << 7 << "shares its memory with an earlier parameter";
  }
  void unsupportedInputsAreDiagnostics() {
    QFETCH(int, which);
    QFETCH(QString, message);
    Buffer A("A", DataType::float32(), {Expr(16)}), I("I", DataType::int32(), {Expr(16)});
    Buffer T("T", DataType::float32(), {Expr(16)});
    Var i("i"), n("n");
    Stmt fine = loop(i, 0, 16, store(A, Expr(0.0f), i));
    std::vector<PrimFunc> funcs;
    switch (which) {
      case 0: funcs = {PrimFunc("f", {A}, loop(i, 0, n, store(A, Expr(0.0f), i)))}; break;
      case 1: funcs = {PrimFunc("f", {A}, loop(i, 0, 16, store(A, load(T, i), i)))}; break;
      case 2: funcs = {PrimFunc("f", {I}, loop(i, 0, 16, store(I, exp(load(I, i)), i)))}; break;
      case 3: funcs = {PrimFunc("expf", {A}, fine)}; break;
      case 4: funcs = {PrimFunc("my kernel", {A}, fine)}; break;
      case 5: funcs = {PrimFunc("f", {A}, fine), PrimFunc("f", {A}, fine)}; break;
      case 6: funcs = {PrimFunc("f", {A}, loop(i, 0, 16, store(A, cast(DataType::float32(), n), i), ForKind::Parallel))}; break;
      case 7: funcs = {PrimFunc("f", {A, A}, fine)}; break;
    }
    auto built = buildJIT(funcs);
    QVERIFY(!built);
    QVERIFY2(errorOf(built).contains(message), qPrintable(errorOf(built)));
  }

  void contractViolationsAreInternalErrors() {
    Buffer A("A", DataType::float32(), {Expr(4), Expr(4)});
    Var i("i");
    IterVar k(Var("k"), Range::fromMinExtent(Expr(0), Expr(4)), IterVarType::Reduce);
    PrimFunc flatIndex("f", {A}, store(A, Expr(1.0f), Expr(0)));
    PrimFunc twoIndices("f", {A}, BufferStoreNode::make(A, Expr(1.0f), {Expr(0), Expr(1)}));
    PrimFunc withReduce("f", {A}, store(A, ReduceNode::make(Reducer::Sum, Expr(1.0f), {k}), Expr(0)));
    PrimFunc withRealize("f", {A}, BufferRealizeNode::make(A, {Range::fromMinExtent(Expr(0), Expr(4)), Range::fromMinExtent(Expr(0), Expr(4))},
                                                        store(A, Expr(1.0f), Expr(0))));
    QVERIFY(buildJIT({flatIndex}));
    QVERIFY_THROWS_EXCEPTION(InternalError, buildJIT({twoIndices}));
    QVERIFY_THROWS_EXCEPTION(InternalError, buildJIT({withReduce}));
    QVERIFY_THROWS_EXCEPTION(InternalError, buildJIT({withRealize}));
  }

  void genericTargetRunsWithoutHostFeatures() {
    // What an exported library for any x86-64 machine gets: SSE2 only, 128-bit vectors.
    Target generic;
    QString assembly = QString::fromStdString(emitAssembly({vectorMultiplyAdd("vma")}, generic));
    QVERIFY(assembly.contains("vma:"));
    QVERIFY(!assembly.contains("ymm"));
    QVERIFY(!assembly.contains("zmm"));
    auto built = buildJIT({vectorMultiplyAdd("vma")}, generic);
    QVERIFY2(built, qPrintable(errorOf(built)));
    const int64_t n = 1024;
    std::vector<float*> arrays;
    for (int k = 0; k < 3; ++k) arrays.push_back(static_cast<float*>(std::aligned_alloc(64, n * sizeof(float))));
    for (int64_t e = 0; e < n; ++e) arrays[0][e] = float(e), arrays[1][e] = 0.5f, arrays[2][e] = 1.0f;
    void* args[] = {arrays[0], arrays[1], arrays[2]};
    QCOMPARE((*built)->getKernel("vma")(args), 0);
    bool correct = true;
    for (int64_t e = 0; e < n; ++e) correct = correct && arrays[2][e] == float(e) * 0.5f + 1.0f;
    for (float* array : arrays) std::free(array);
    QVERIFY(correct);
  }

  void compilesFromSeveralThreadsAtOnce() {
    // The tuner compiles candidates concurrently.
    std::vector<std::thread> workers;
    std::atomic<int> failures{0};
    for (int w = 0; w < 4; ++w)
      workers.emplace_back([&, w] {
        std::string name = "kernel_";
        name.append(std::to_string(w));
        for (int repeat = 0; repeat < 3; ++repeat) {
          auto built = buildJIT({vectorMultiplyAdd(name, 8 << (repeat % 2), ForKind::Parallel)});
          if (!built || !(*built)->getKernel(name)) ++failures;
        }
      });
    for (auto& worker : workers) worker.join();
    QCOMPARE(failures.load(), 0);
  }

  void unknownTargetIsADiagnostic() {
    Target target = hostTarget();
    target.triple = "nonsense-unknown-nowhere";
    auto built = buildJIT({vectorMultiplyAdd("k")}, target);
    QVERIFY(!built);
    QVERIFY(errorOf(built).contains("nonsense-unknown-nowhere"));
  }
};

QTEST_GUILESS_MAIN(TestCodegenOutput)
#include "test_codegen_output.moc"
