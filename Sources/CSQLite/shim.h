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

// The WAL-index header (https://www.sqlite.org/walformat.html, "The WAL-Index
// Header"): SQLite rewrites it on every commit, WAL reset and recovery. A reader
// that copies it before starting a read transaction and finds it unchanged later
// knows a new transaction would read exactly what its open one reads, so it can
// keep the open one (no lock, no fstat). `out` receives the first copy (48 bytes).
// Returns 0 when the connection has no mapped WAL index (not in WAL mode, or no
// read yet): the caller then starts a read transaction per read.
static inline int kvcache_sqlite_wal_index_header(sqlite3 *db, void *out) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK) return 0;
    if (!file || !file->pMethods || file->pMethods->iVersion < 2 || !file->pMethods->xShmMap) return 0;
    volatile void *region = 0;
    // bExtend = 0: never creates or grows the file, only returns region 0 if mapped.
    if (file->pMethods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK || !region) return 0;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const volatile unsigned char *from = (const volatile unsigned char *)region;
    unsigned char *to = (unsigned char *)out;
    for (int i = 0; i < 48; i++) to[i] = from[i];
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return 1;
}

#endif
