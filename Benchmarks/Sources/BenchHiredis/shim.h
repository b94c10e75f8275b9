#ifndef KVCACHE_BENCH_HIREDIS_SHIM_H
#define KVCACHE_BENCH_HIREDIS_SHIM_H

// The raw hiredis floor of `kvcache-bench remote`. The root package's CHiredis is a
// target, not a product, so the benchmark has its own module (as BenchSQLite does).
// No pkgConfig: hiredis's .pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM warns about;
// the headers are under the default include path (<hiredis/hiredis.h>).
#include <hiredis/hiredis.h>

/// The reply's i-th element (Swift does not import the `element` array's C type well).
static inline redisReply *bench_reply_element(redisReply *reply, size_t index) {
    return reply->element[index];
}
#endif
