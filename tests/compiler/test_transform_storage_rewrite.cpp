// storageRewrite: golden IR for memory sharing, unread allocations and hoisting.
#include <QtTest>

#include "compiler/transform/StorageRewrite.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {
QString printed(const PrimFunc& f) { return QString::fromStdString(toString(f)); }

// for (i, 0, extent) { target[i] = value(i) }
template <class Value>
Stmt elementwise(const Var& i, int64_t extent, const Buffer& target, Value value) {
  return ForNode::make(i, 0, Expr(extent), ForKind::Serial, BufferStoreNode::make(target, value(i), {i}));
}
Expr load(const Buffer& b, const Expr& index) { return BufferLoadNode::make(b, {index}); }
}  // namespace

class TestStorageRewrite : public QObject {
  Q_OBJECT
private slots:
  // The nesting lowering produces: each intermediate's scope encloses everything after
  // its producer, although the last read comes much earlier.
  void deadIntermediateMemoryIsReused() {
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(64)}), D("D", DataType::float32(), {Expr(64)});
    Buffer T1("T1", DataType::float32(), {Expr(64)}), T2("T2", DataType::float32(), {Expr(64)});
    Buffer T3("T3", DataType::float32(), {Expr(64)});
    Stmt body = AllocateNode::make(T1, SeqStmtNode::make({
        elementwise(i, 64, T1, [&](Expr x) { return load(A, x) + 1.0f; }),
        AllocateNode::make(T2, SeqStmtNode::make({
            elementwise(i, 64, T2, [&](Expr x) { return load(T1, x) * 2.0f; }),
            AllocateNode::make(T3, SeqStmtNode::make({
                elementwise(i, 64, T3, [&](Expr x) { return load(T2, x) - 1.0f; }),
                elementwise(i, 64, D, [&](Expr x) { return load(T3, x); }),
            })),
        })),
    }));
    QCOMPARE(printed(storageRewrite(PrimFunc("chain", {A, D}, body))),
             QString(R"(func chain(A: float32[64], D: float32[64]) {
  allocate T1: float32[64]
  allocate T2: float32[64]
  for (i, 0, 64) {
    T1[i] = A[i] + 1.0f
  }
  for (i, 0, 64) {
    T2[i] = T1[i]*2.0f
  }
  for (i, 0, 64) {
    T1[i] = T2[i] - 1.0f
  }
  for (i, 0, 64) {
    D[i] = T1[i]
  }
}
)"));
  }

  void siblingAllocationsShareTheLargerSize() {
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(32)}), B("B", DataType::float32(), {Expr(32)});
    Buffer Small("Small", DataType::float32(), {Expr(16)}, "local");
    Buffer Large("Large", DataType::float32(), {Expr(32)}, "local");
    Stmt body = SeqStmtNode::make({
        AllocateNode::make(Small, SeqStmtNode::make({
            elementwise(i, 16, Small, [&](Expr x) { return load(A, x); }),
            elementwise(i, 16, B, [&](Expr x) { return load(Small, x); }),
        })),
        AllocateNode::make(Large, SeqStmtNode::make({
            elementwise(i, 32, Large, [&](Expr x) { return load(A, x) * 3.0f; }),
            elementwise(i, 32, B, [&](Expr x) { return load(Large, x); }),
        })),
    });
    QCOMPARE(printed(storageRewrite(PrimFunc("siblings", {A, B}, body))),
             QString(R"(func siblings(A: float32[32], B: float32[32]) {
  allocate Small: float32[32] in local
  for (i, 0, 16) {
    Small[i] = A[i]
  }
  for (i, 0, 16) {
    B[i] = Small[i]
  }
  for (i, 0, 32) {
    Small[i] = A[i]*3.0f
  }
  for (i, 0, 32) {
    B[i] = Small[i]
  }
}
)"));
  }

  void memoryIsNotSharedWhenItCannotBe_data() {
    QTest::addColumn<int>("which");
    QTest::newRow("lifetimes overlap") << 0;
    QTest::newRow("different dtypes") << 1;
    QTest::newRow("different scopes") << 2;
  }
  void memoryIsNotSharedWhenItCannotBe() {
    QFETCH(int, which);
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(16)}), B("B", DataType::float32(), {Expr(16)});
    Buffer T1("T1", DataType::float32(), {Expr(16)});
    Buffer T2("T2", which == 1 ? DataType::int32() : DataType::float32(), {Expr(16)}, which == 2 ? "local" : "global");
    Stmt produce1 = elementwise(i, 16, T1, [&](Expr x) { return load(A, x); });
    Stmt produce2 = elementwise(i, 16, T2, [&](Expr x) { return cast(T2.dtype(), load(A, x)); });
    Stmt body;
    if (which == 0) {
      // T1 is still read after T2 is written.
      Stmt both = elementwise(i, 16, B, [&](Expr x) { return load(T1, x) + cast(DataType::float32(), load(T2, x)); });
      body = AllocateNode::make(T1, SeqStmtNode::make({produce1, AllocateNode::make(T2, SeqStmtNode::make({produce2, both}))}));
    } else {
      Stmt consume1 = elementwise(i, 16, B, [&](Expr x) { return load(T1, x); });
      Stmt consume2 = elementwise(i, 16, B, [&](Expr x) { return cast(DataType::float32(), load(T2, x)); });
      body = SeqStmtNode::make({AllocateNode::make(T1, SeqStmtNode::make({produce1, consume1})),
                                AllocateNode::make(T2, SeqStmtNode::make({produce2, consume2}))});
    }
    PrimFunc f("f", {A, B}, body);
    PrimFunc result = storageRewrite(f);
    QVERIFY2(result.same(f), qPrintable(printed(result)));
  }

  void allocationNeverReadIsRemovedWithItsStores() {
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(8)}), B("B", DataType::float32(), {Expr(8)});
    Buffer Unused("Unused", DataType::float32(), {Expr(8)});
    Stmt body = AllocateNode::make(Unused, SeqStmtNode::make({
        elementwise(i, 8, Unused, [&](Expr x) { return load(A, x); }),
        elementwise(i, 8, B, [&](Expr x) { return load(A, x) * 2.0f; }),
    }));
    QCOMPARE(printed(storageRewrite(PrimFunc("f", {A, B}, body))), QString(R"(func f(A: float32[8], B: float32[8]) {
  for (i, 0, 8) {
    B[i] = A[i]*2.0f
  }
}
)"));
  }

  void constantAllocationsLeaveSerialLoopsButNotParallelOnes() {
    Var i("i"), j("j"), k("k");
    Buffer A("A", DataType::float32(), {Expr(64)}), B("B", DataType::float32(), {Expr(64)});
    Buffer T("T", DataType::float32(), {Expr(8)}, "local"), U("U", DataType::float32(), {Expr(8)}, "local");
    auto tile = [&](const Buffer& scratch, Expr row) {
      return AllocateNode::make(scratch, SeqStmtNode::make({
          ForNode::make(k, 0, 8, ForKind::Serial, BufferStoreNode::make(scratch, load(A, row * 8 + k), {k})),
          ForNode::make(k, 0, 8, ForKind::Serial, BufferStoreNode::make(B, load(scratch, k) * 2.0f, {row * 8 + k})),
      }));
    };
    Stmt serial = ForNode::make(i, 0, 2, ForKind::Serial, ForNode::make(j, 0, 2, ForKind::Serial, tile(T, i * 2 + j)));
    Stmt parallel = ForNode::make(i, 4, 4, ForKind::Parallel, tile(U, i));
    QCOMPARE(printed(storageRewrite(PrimFunc("tiles", {A, B}, SeqStmtNode::make({serial, parallel})))),
             QString(R"(func tiles(A: float32[64], B: float32[64]) {
  allocate T: float32[8] in local
  for (i, 0, 2) {
    for (j, 0, 2) {
      for (k, 0, 8) {
        T[k] = A[(i*2 + j)*8 + k]
      }
      for (k, 0, 8) {
        B[(i*2 + j)*8 + k] = T[k]*2.0f
      }
    }
  }
  parallel for (i, 4, 4) {
    allocate U: float32[8] in local
    for (k, 0, 8) {
      U[k] = A[i*8 + k]
    }
    for (k, 0, 8) {
      B[i*8 + k] = U[k]*2.0f
    }
  }
}
)"));
  }

  void functionWithNothingToRewriteIsReturnedAsIs() {
    Var i("i"), n("n");
    Buffer A("A", DataType::float32(), {Expr(8)}), B("B", DataType::float32(), {Expr(8)});
    Buffer Dynamic("Dynamic", DataType::float32(), {n});
    Stmt body = AllocateNode::make(Dynamic, SeqStmtNode::make({
        elementwise(i, 8, Dynamic, [&](Expr x) { return load(A, x); }),
        elementwise(i, 8, B, [&](Expr x) { return load(Dynamic, x); }),
    }));
    PrimFunc f("f", {A, B}, ForNode::make(Var("r"), 0, 4, ForKind::Serial, body));
    QVERIFY(storageRewrite(f).same(f));
  }
};

QTEST_GUILESS_MAIN(TestStorageRewrite)
#include "test_transform_storage_rewrite.moc"
