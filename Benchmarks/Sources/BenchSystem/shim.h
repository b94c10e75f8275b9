#ifndef KVCACHE_BENCH_SYSTEM_SHIM_H
#define KVCACHE_BENCH_SYSTEM_SHIM_H

// statfs(2) for the file-system type, and mallinfo2(3) for heap footprints;
// Glibc's Swift module includes neither header.
#if defined(__linux__)
#include <sys/vfs.h>
#include <malloc.h>
#endif

#endif
