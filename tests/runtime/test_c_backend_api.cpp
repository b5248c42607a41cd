// The C ABI that generated kernels call: tessel_parallel_for and the workspace allocator.
#include <QtTest>

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/c_backend_api.h"

namespace {

/// What an outlined loop body of `out[i] = 3 * in[i] + 1` captures.
struct ScaleClosure {
  const int64_t* in;
  int64_t* out;
  std::atomic<int>* calls;
};

int32_t scaleBody(int64_t begin, int64_t end, void* closure) {
  auto* captured = static_cast<ScaleClosure*>(closure);
  captured->calls->fetch_add(1);
  for (int64_t i = begin; i < end; ++i) captured->out[i] = 3 * captured->in[i] + 1;
  return 0;
}

int32_t failFromIndex40(int64_t begin, int64_t end, void*) { return end > 40 ? 5 : 0; }

struct NestedClosure {
  std::atomic<int> innerCallsCoveringAll{0};
};

int32_t innerBody(int64_t begin, int64_t end, void* closure) {
  auto* captured = static_cast<std::pair<NestedClosure*, std::thread::id>*>(closure);
  if (begin == 0 && end == 16 && std::this_thread::get_id() == captured->second)
    captured->first->innerCallsCoveringAll.fetch_add(1);
  return 0;
}

int32_t outerBody(int64_t begin, int64_t end, void* closure) {
  for (int64_t i = begin; i < end; ++i) {
    std::pair<NestedClosure*, std::thread::id> inner{static_cast<NestedClosure*>(closure), std::this_thread::get_id()};
    if (int32_t status = tessel_parallel_for(16, innerBody, &inner)) return status;
  }
  return 0;
}

}  // namespace

class TestCBackendAPI : public QObject {
  Q_OBJECT
private slots:
  void parallelForComputesEveryElement() {
    const int64_t extent = 10007;
    std::vector<int64_t> in(extent), out(extent, -1);
    for (int64_t i = 0; i < extent; ++i) in[i] = i * i;
    std::atomic<int> calls{0};
    ScaleClosure closure{in.data(), out.data(), &calls};
    for (int repeat = 0; repeat < 200; ++repeat) QCOMPARE(tessel_parallel_for(extent, scaleBody, &closure), 0);
    for (int64_t i = 0; i < extent; ++i) QCOMPARE(out[i], 3 * i * i + 1);
    QVERIFY(calls.load() >= 200);
  }

  void parallelForOverNothingRunsNothing() {
    std::atomic<int> calls{0};
    ScaleClosure closure{nullptr, nullptr, &calls};
    QCOMPARE(tessel_parallel_for(0, scaleBody, &closure), 0);
    QCOMPARE(calls.load(), 0);
  }

  void parallelForReturnsTheBodyFailure() {
    QCOMPARE(tessel_parallel_for(100, failFromIndex40, nullptr), 5);
  }

  void nestedParallelForRunsOnTheCallingThread() {
    NestedClosure closure;
    QCOMPARE(tessel_parallel_for(6, outerBody, &closure), 0);
    QCOMPARE(closure.innerCallsCoveringAll.load(), 6);
  }

  void workspaceIsAlignedAndWritable_data() {
    QTest::addColumn<qlonglong>("bytes");
    for (qlonglong bytes : {0LL, 1LL, 63LL, 64LL, 65LL, 4096LL, 1LL << 20, (1LL << 26) + 3})
      QTest::addRow("%lld bytes", bytes) << bytes;
  }
  void workspaceIsAlignedAndWritable() {
    QFETCH(qlonglong, bytes);
    void* pointer = tessel_workspace_alloc(bytes);
    QVERIFY(pointer != nullptr);
    QCOMPARE(reinterpret_cast<uintptr_t>(pointer) % 64, uintptr_t(0));
    std::memset(pointer, 0xAB, bytes);
    if (bytes > 0) QCOMPARE(static_cast<unsigned char*>(pointer)[bytes - 1], static_cast<unsigned char>(0xAB));
    tessel_workspace_free(pointer);
  }

  void negativeWorkspaceSizeFails() { QCOMPARE(tessel_workspace_alloc(-8), static_cast<void*>(nullptr)); }

  void entryPointsAreExportedUnderTheirCNames() {
    // A JIT resolves these by name in the running process.
    for (const char* name : {"tessel_parallel_for", "tessel_workspace_alloc", "tessel_workspace_free"})
      QVERIFY2(dlsym(RTLD_DEFAULT, name) != nullptr, name);
  }
};

QTEST_GUILESS_MAIN(TestCBackendAPI)
#include "test_c_backend_api.moc"
