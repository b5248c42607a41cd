// Loop linking and completion on known text: which schedule line made which loop, where loops
// sit in the printed loop nest, which LLVM IR blocks and outlined functions belong to them, and
// what completion offers at a cursor.
#include <QtTest>

#include "compiler/schedule/TraceText.h"
#include "views/schedule/LoopLinking.h"
#include "views/schedule/ScheduleCompletion.h"

using namespace tessel;
using namespace tessel::views;

namespace {

// A matmul with C's j split and B packed per jo, as the IR printer prints it (the second
// variable named "jo" and "k" print as "jo_1", "k_1").
const char* kSchedule =
    "# tile C\n"
    "io, ii = split(C, i, factor=32)\n"
    "jo, ji = split(C, j, factor=16)\n"
    "reorder(C, io, jo, k, ii, ji)\n"
    "vectorize(C, ji)\n"
    "parallel(C, io)\n";

const char* kLoopNest =
    "func matmul(A: float32[64, 64], B: float32[64, 64], C: float32[64, 64]) {\n"  // 0
    "  allocate B.packed: float32[4096]\n"                                         // 1
    "  for (jo, 0, 2) {\n"                                                         // 2
    "    for (k, 0, 64) {\n"                                                       // 3
    "      B.packed[jo*2048 + k] = B[k*64 + jo]\n"                                 // 4
    "    }\n"                                                                      // 5
    "  }\n"                                                                        // 6
    "  parallel for (io, 0, 2) {\n"                                                // 7
    "    for (jo_1, 0, 4) {\n"                                                     // 8
    "      for (k_1, 0, 64) {\n"                                                   // 9
    "        for (ii, 0, 32) {\n"                                                  // 10
    "          if (ii < 30) {\n"                                                   // 11
    "            C[io] = C[io] + 1.0f\n"                                           // 12
    "          } else {\n"                                                         // 13
    "            C[io] = 0.0f\n"                                                   // 14
    "          }\n"                                                                // 15
    "        }\n"                                                                  // 16
    "      }\n"                                                                    // 17
    "    }\n"                                                                      // 18
    "  }\n"                                                                        // 19
    "}\n";

const char* kLlvmIR =
    "define i32 @matmul(i8** %args) {\n"                                   // 0
    "entry:\n"                                                             // 1
    "  br label %jo.header\n"                                              // 2
    "jo.header:                       ; preds = %entry\n"                  // 3
    "  %jo = phi i64 [ 0, %entry ]\n"                                      // 4
    "kx.body:\n"                                                           // 5
    "  ret i32 0\n"                                                        // 6
    "}\n"                                                                  // 7
    "\n"                                                                   // 8
    "define internal i32 @matmul_parallel_0(i64 %begin, i64 %end, i8* %closure) {\n"  // 9
    "entry:\n"                                                             // 10
    "  ret i32 0\n"                                                        // 11
    "}\n"                                                                  // 12
    "define internal i32 @matmul_parallel_0_compute(i64 %begin) {\n"      // 13
    "ii.body2.i:\n"                                                        // 14
    "  ret i32 0\n"                                                        // 15
    "}\n";                                                                 // 16

LoopLinking exampleLinking() {
  auto trace = parseTraceText(kSchedule);
  if (!trace) qFatal("%s", trace.error().toString().c_str());
  QSet<QString> loops{"i", "j", "k", "io", "ii", "jo", "ji"};
  return LoopLinking(*trace, kLoopNest, loops, "matmul");
}

}  // namespace

class TestScheduleLinking : public QObject {
  Q_OBJECT
private slots:
  void loopsComeFromTheLinesThatMadeThem() {
    LoopLinking linking = exampleLinking();
    QCOMPARE(linking.originLine("io"), 2);
    QCOMPARE(linking.originLine("ii"), 2);
    QCOMPARE(linking.originLine("ji"), 3);
    QCOMPARE(linking.originLine("k"), 0);  // the operator's own axis
    QCOMPARE(linking.loopsOfLine(2), (QStringList{"io", "ii"}));
    QCOMPARE(linking.loopsOfLine(5), QStringList{"ji"});
    QCOMPARE(linking.loopsOfLine(1), QStringList{});
  }

  void derivedLoopsFollowTheirParent() {
    auto trace = parseTraceText("io, ii = split(C, i, factor=32)\niio, iii = split(C, ii, factor=4)\nf = fuse(C, io, iio)\n");
    QVERIFY(trace.ok());
    LoopLinking linking(*trace, "", {}, "f");
    QCOMPARE(linking.loopsOfLine(1), (QStringList{"io", "ii", "f", "iio", "iii"}));
    QCOMPARE(linking.originLine("f"), 3);
  }

  void printedLoopsKeepTheirScheduleNamesAndExtents() {
    LoopLinking linking = exampleLinking();
    const auto& loops = linking.printedLoops();
    QCOMPARE(loops.size(), qsizetype(6));
    QCOMPARE(loops[3].printedName, QString("jo_1"));
    QCOMPARE(loops[3].name, QString("jo"));
    QCOMPARE(loops[3].lines, (LineRange{8, 18}));
    QCOMPARE(loops[2].name, QString("io"));
    QCOMPARE(loops[2].parallelIndex, 0);
    QCOMPARE(loops[0].parallelIndex, -1);
    // The if/else inside ii does not end ii early.
    QCOMPARE(loops[5].lines, (LineRange{10, 16}));
    QCOMPARE(linking.loopAtLine(12)->name, QString("ii"));
    QCOMPARE(linking.loopAtLine(4)->name, QString("k"));
    QVERIFY(!linking.loopAtLine(1));
    // "jo" names a loop of B.packed and one of C: both are linked.
    QCOMPARE(linking.loopNestRanges({"jo"}), (QList<LineRange>{{2, 6}, {8, 18}}));
  }

  void llvmBlocksAndOutlinedFunctionsMatch() {
    LoopLinking linking = exampleLinking();
    QCOMPARE(linking.llvmRanges(kLlvmIR, {"jo"}), (QList<LineRange>{{3, 4}}));
    QCOMPARE(linking.llvmRanges(kLlvmIR, {"ii"}), (QList<LineRange>{{14, 15}}));
    // A parallel loop is its outlined function (and its compute part).
    QCOMPARE(linking.llvmRanges(kLlvmIR, {"io"}), (QList<LineRange>{{9, 11}, {13, 15}}));
    QCOMPARE(linking.llvmRanges(kLlvmIR, {"ji"}), QList<LineRange>{});
    // And back: a line of the LLVM IR names the loop whose code it is.
    QStringList lines = QString(kLlvmIR).split('\n');
    QCOMPARE(linking.loopOfLlvmLine(lines, 4), QString("jo"));
    QCOMPARE(linking.loopOfLlvmLine(lines, 15), QString("ii"));
    QCOMPARE(linking.loopOfLlvmLine(lines, 11), QString("io"));  // the outlined parallel loop
    QCOMPARE(linking.loopOfLlvmLine(lines, 6), QString());       // a block of no loop
    QCOMPARE(linking.loopOfLlvmLine(lines, 8), QString());       // between functions
    const char* assembly = "matmul:\n\tretq\n.Lfunc_end0:\nmatmul_parallel_0:\n\tpushq %rbp\n\tretq\n.Lfunc_end1:\n";
    QCOMPARE(linking.assemblyRanges(assembly, {"io"}), (QList<LineRange>{{3, 5}}));
    QCOMPARE(linking.assemblyRanges(assembly, {"ii"}), QList<LineRange>{});
    QStringList assemblyLines = QString(assembly).split('\n');
    QCOMPARE(linking.loopOfAssemblyLine(assemblyLines, 4), QString("io"));
    QCOMPARE(linking.loopOfAssemblyLine(assemblyLines, 1), QString());  // the kernel itself
  }

  void verboseAssemblyBlocksNameTheirLoops() {
    LoopLinking linking = exampleLinking();
    // What emitAssembly writes: block labels carry their IR block's name, fall-through blocks
    // as comments, loop nesting as comment lines.
    const char* assembly =
        "matmul_parallel_0_compute:\n"              // 0
        "# %bb.0:                                # %entry\n"
        "\tpushq %rbp\n"
        ".LBB1_2:                                # %jo.header.preheader.i\n"
        "                                        # =>This Loop Header: Depth=1\n"
        "\tmovq %r8, %r10\n"                         // 5
        ".LBB1_3:                                # %ii.body.i\n"
        "                                        # =>  This Inner Loop Header: Depth=2\n"
        "\tvfmadd231ps %zmm18, %zmm19, %zmm9\n"
        "\tjne .LBB1_3\n"
        "# %bb.4:                                # %after.i\n"  // 10
        "\tretq\n"
        ".Lfunc_end1:\n";
    QCOMPARE(linking.assemblyRanges(assembly, {"ii"}), (QList<LineRange>{{6, 9}}));
    QCOMPARE(linking.assemblyRanges(assembly, {"jo"}), (QList<LineRange>{{3, 5}}));
    // The parallel loop is its whole outlined function; the serial ones inside it stay theirs.
    QCOMPARE(linking.assemblyRanges(assembly, {"io"}), (QList<LineRange>{{0, 11}}));
    QStringList lines = QString(assembly).split('\n');
    QCOMPARE(linking.loopOfAssemblyLine(lines, 8), QString("ii"));
    QCOMPARE(linking.loopOfAssemblyLine(lines, 5), QString("jo"));
    QCOMPARE(linking.loopOfAssemblyLine(lines, 11), QString("io"));  // a block of no loop
    QCOMPARE(linking.loopOfAssemblyLine(lines, 2), QString("io"));
  }

  void completionKnowsWhereTheCursorIs_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<QStringList>("candidates");
    QTest::newRow("start of line") << "vec" << "vec" << primitiveNames();
    QTest::newRow("after results") << "a, b = sp" << "sp" << primitiveNames();
    QTest::newRow("naming results") << "a, b" << "b" << QStringList{};
    QTest::newRow("stage") << "split(" << "" << QStringList{"C", "D"};
    QTest::newRow("loop of the stage") << "split(C, " << "" << QStringList{"io", "ii", "k"};
    QTest::newRow("loop of another stage") << "vectorize(D, x" << "x" << QStringList{"x"};
    QTest::newRow("split keyword") << "split(C, io, " << "" << QStringList{"factor=", "nparts="};
    QTest::newRow("number") << "split(C, io, factor=1" << "1" << QStringList{};
    QTest::newRow("reorder skips listed") << "reorder(C, io, " << "" << QStringList{"ii", "k"};
    QTest::newRow("compute_at target loop") << "compute_at(D, C, " << "" << QStringList{"io", "ii", "k"};
    QTest::newRow("cache_read source") << "cache_read(" << "" << QStringList{"A", "C", "D"};
    QTest::newRow("cache_read readers") << "AA = cache_read(A, local, [" << "" << QStringList{"C", "D"};
    QTest::newRow("comment") << "# split(C, " << "" << QStringList{};
    QTest::newRow("after the call") << "vectorize(C, ii) " << "" << QStringList{};
  }
  void completionKnowsWhereTheCursorIs() {
    QFETCH(QString, line);
    QFETCH(QString, prefix);
    QFETCH(QStringList, candidates);
    std::vector<driver::StageLoops> stages(3);
    stages[0].stage = "A";
    stages[0].placeholder = true;
    stages[1].stage = "C";
    stages[1].loops = {"io", "ii", "k"};
    stages[2].stage = "D";
    stages[2].loops = {"x"};
    CompletionContext context = completionsAt(line, int(line.size()), stages);
    QCOMPARE(context.prefix, prefix);
    QCOMPARE(context.candidates, candidates);
  }
};

QTEST_GUILESS_MAIN(TestScheduleLinking)
#include "test_schedule_linking.moc"
