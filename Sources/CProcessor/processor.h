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

// Starts loading the cache line at `address` for reading (other cores keep their
// copies), without waiting and without faulting. A prefetch is not a load: a lock
// taken after it does not wait for it.
static inline void kvcache_prefetch_for_reading(const void *address) {
    __builtin_prefetch(address, 0, 3);
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

// Swift's atomics live only in stored properties; the read lanes' shared words live in
// memory the lanes allocate, one cache line each. Relaxed: they say where work waits,
// while the locks guard the work itself.

#include <stdint.h>

static inline uint64_t kvcache_atomic_load(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

static inline void kvcache_atomic_store(uint64_t *word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

// Returns the value before.
static inline uint64_t kvcache_atomic_or(uint64_t *word, uint64_t bits) {
    return __atomic_fetch_or(word, bits, __ATOMIC_RELAXED);
}

// Returns the value before.
static inline uint64_t kvcache_atomic_and(uint64_t *word, uint64_t bits) {
    return __atomic_fetch_and(word, bits, __ATOMIC_RELAXED);
}

// Returns the value before.
static inline uint64_t kvcache_atomic_add(uint64_t *word, uint64_t amount) {
    return __atomic_fetch_add(word, amount, __ATOMIC_RELAXED);
}

// A full fence: stores before it are visible to every thread before loads after it run
// (the two halves of a grace period that skips lanes no reader has used).
static inline void kvcache_full_fence(void) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

// Returns the value before.
static inline uint64_t kvcache_atomic_exchange(uint64_t *word, uint64_t value) {
    return __atomic_exchange_n(word, value, __ATOMIC_RELAXED);
}

// Monotonic nanoseconds: for the measurements of serialized sections that a benchmark
// turns on (`MemoryCache`), and for the waits of a reader whose lane lock was busy.

#include <time.h>

static inline uint64_t kvcache_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

#endif
