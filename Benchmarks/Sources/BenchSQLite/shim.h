#ifndef KVCACHE_BENCH_SQLITE_SHIM_H
#define KVCACHE_BENCH_SQLITE_SHIM_H

#include <sqlite3.h>

// Swift cannot import SQLITE_TRANSIENT / SQLITE_STATIC (function-pointer casts).
static inline sqlite3_destructor_type bench_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
static inline sqlite3_destructor_type bench_sqlite_static(void) {
    return SQLITE_STATIC;
}

#endif
