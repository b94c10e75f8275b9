#ifndef KVCACHE_CPREFETCH_H
#define KVCACHE_CPREFETCH_H

// Swift has no prefetch. The memory cache's read replay starts loading the lines it
// will write (links, sketch blocks) for a whole buffer of reads before it uses any:
// the loads overlap, where the replay's own would wait one cache miss after another.

// Starts loading the cache line at `address` for writing, without waiting for it and
// without faulting (any address is allowed).
static inline void kvcache_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
