// Whether this test was compiled with AddressSanitizer (scripts/sanitize.sh builds the suite
// so): a few facts of the release build differ there, and the tests that state them say what
// the instrumented build does instead.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define TESSEL_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSEL_SANITIZED_BUILD 1
#endif
#endif
#ifndef TESSEL_SANITIZED_BUILD
#define TESSEL_SANITIZED_BUILD 0
#endif
