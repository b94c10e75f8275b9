#ifndef KVCACHE_CPROCESSOR_H
#define KVCACHE_CPROCESSOR_H

// What the memory cache needs from the processor that Swift does not offer.

// Swift has no prefetch. The memory cache's read replay starts loading the lines it
// will write (links, sketch blocks) for a whole buffer of reads before it uses any:
// the loads overlap, where the replay's own would wait one cache miss after another.

// Starts loading the cache line at `address` for writing, without waiting for it and
// without faulting (any address is allowed).
static inline void kvcache_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

// Swift has no thread-local variables. The memory cache gives each thread a number
// once, which picks the read lane (lock and read buffers) the thread's reads use.
// A header-only module cannot define a variable, so it is a function's static; call
// this only from KVCache's own (non-inlinable) code, so that one copy exists.

// This thread's number: 0 until the memory cache gives it one.
static inline unsigned *kvcache_thread_number(void) {
    static _Thread_local unsigned number;
    return &number;
}

#endif
