#ifndef KVCACHE_CSQLITE_SHIM_H
#define KVCACHE_CSQLITE_SHIM_H

#include <sqlite3.h>

// Swift cannot import SQLITE_TRANSIENT / SQLITE_STATIC (function-pointer casts).
static inline sqlite3_destructor_type kvcache_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
static inline sqlite3_destructor_type kvcache_sqlite_static(void) {
    return SQLITE_STATIC;
}

// sqlite3_config is variadic, which Swift cannot call. Turning memory statistics
// off removes a process-wide mutex that every SQLite allocation takes, which
// serializes readers on separate connections. Must run before sqlite3_initialize;
// afterwards it returns SQLITE_MISUSE and changes nothing.
static inline int kvcache_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
