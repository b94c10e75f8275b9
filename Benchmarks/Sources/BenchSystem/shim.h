#ifndef KVCACHE_BENCH_SYSTEM_SHIM_H
#define KVCACHE_BENCH_SYSTEM_SHIM_H

// statfs(2) for the file-system type; Glibc's Swift module does not include it.
#if defined(__linux__)
#include <sys/vfs.h>
#endif

#endif
