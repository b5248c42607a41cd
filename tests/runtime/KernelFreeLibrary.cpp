// A shared library that loads but defines no kernel, for tests/runtime/test_graph_executor.cpp:
// a module whose nodes name kernels the library lacks. (A copy of libtessel_runtime.so served
// once, but it put a second runtime in the test's process, which AddressSanitizer reports.)
extern "C" int tessel_test_kernel_free_library() { return 0; }
