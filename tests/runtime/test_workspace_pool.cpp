// The workspace pool: aligned blocks, reuse of freed blocks, and a bounded cache.
#include <QtTest>

#include <cstring>

#include "runtime/WorkspacePool.h"

using namespace tessel::runtime;

class TestWorkspacePool : public QObject {
  Q_OBJECT
private slots:
  void blocksAreAlignedAndWritable() {
    WorkspacePool pool;
    for (size_t bytes : {size_t(0), size_t(1), size_t(63), size_t(4097), size_t(5) << 20}) {
      void* p = pool.allocate(bytes);
      QVERIFY(p);
      QCOMPARE(reinterpret_cast<uintptr_t>(p) % 64, uintptr_t(0));
      std::memset(p, 0xab, bytes);
      pool.free(p);
    }
  }

  void aFreedBlockServesTheNextRequestOfItsSize() {
    WorkspacePool pool;
    void* first = pool.allocate(4 << 20);
    pool.free(first);
    QVERIFY(pool.cachedBytes() >= size_t(4) << 20);
    void* second = pool.allocate(4 << 20);
    QCOMPARE(second, first);  // no new pages from the system
    QCOMPARE(pool.cachedBytes(), size_t(0));
    void* other = pool.allocate(1 << 20);  // another size gets its own block
    QVERIFY(other != first);
    pool.free(second);
    pool.free(other);
  }

  void liveBlocksAreDistinct() {
    WorkspacePool pool;
    void* a = pool.allocate(1000);
    void* b = pool.allocate(1000);
    QVERIFY(a != b);
    pool.free(a);
    pool.free(b);
    void* c = pool.allocate(1000);
    void* d = pool.allocate(1000);
    QVERIFY(c != d);
    QVERIFY((c == a || c == b) && (d == a || d == b));
    pool.free(c);
    pool.free(d);
  }

  void theCacheIsBounded() {
    WorkspacePool pool(size_t(1) << 20);
    void* big = pool.allocate(size_t(2) << 20);
    pool.free(big);  // over the limit: goes back to the system
    QCOMPARE(pool.cachedBytes(), size_t(0));
    void* small = pool.allocate(1000);
    pool.free(small);
    QVERIFY(pool.cachedBytes() > 0 && pool.cachedBytes() <= size_t(1) << 20);
  }

  void freeOfNullIsIgnored() {
    WorkspacePool pool;
    pool.free(nullptr);
    QCOMPARE(pool.cachedBytes(), size_t(0));
  }
};

QTEST_GUILESS_MAIN(TestWorkspacePool)
#include "test_workspace_pool.moc"
