// What two threads get over one on this machine, with no shared data at all: a thread
// that only computes (a multiply-add chain), a thread that only waits for memory (a chase
// through a 128 MB random cycle of pointers, one miss at a time), and one that keeps 8
// misses in flight (8 chases interleaved), as a hash-table read with its policy's work
// does. All three scale 2x when the two processors are separate cores and the memory
// system is not what limits; the chase also gives the latency of one miss. A yardstick for
// the `memory` scaling targets:
//
//   cc -O2 -pthread Benchmarks/Scripts/core-scaling.c -o /tmp/core-scaling && /tmp/core-scaling
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { computeSteps = 400000000, chaseSteps = 4000000 };
static const size_t slots = (size_t)1 << 24;
static uint64_t *next;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *compute(void *seed) {
    uint64_t x = (uint64_t)(uintptr_t)seed;
    for (long i = 0; i < computeSteps; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (void *)(uintptr_t)x;
}

static void *chase(void *seed) {
    uint64_t at = (uint64_t)(uintptr_t)seed % slots;
    for (long i = 0; i < chaseSteps; i++) at = next[at];
    return (void *)(uintptr_t)at;
}

// The same number of misses, eight chases at a time.
static void *chase8(void *seed) {
    uint64_t at[8];
    for (int c = 0; c < 8; c++) at[c] = ((uint64_t)(uintptr_t)seed * 2654435761u + (uint64_t)c * 1048583u) % slots;
    for (long i = 0; i < chaseSteps / 8; i++)
        for (int c = 0; c < 8; c++) at[c] = next[at[c]];
    uint64_t sum = 0;
    for (int c = 0; c < 8; c++) sum += at[c];
    return (void *)(uintptr_t)sum;
}

// Seconds for `threads` threads each running `body` once.
static double run(void *(*body)(void *), int threads) {
    pthread_t workers[2];
    double start = now();
    for (int i = 0; i < threads; i++) pthread_create(&workers[i], NULL, body, (void *)(uintptr_t)(i * 7919 + 1));
    for (int i = 0; i < threads; i++) pthread_join(workers[i], NULL);
    return now() - start;
}

int main(void) {
    // One random cycle through every slot (Sattolo's shuffle), so the chase never repeats early.
    next = malloc(slots * sizeof *next);
    for (size_t i = 0; i < slots; i++) next[i] = i;
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    for (size_t i = slots - 1; i > 0; i--) {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
        size_t j = state % i;
        uint64_t swap = next[i]; next[i] = next[j]; next[j] = swap;
    }
    for (int round = 1; round <= 3; round++) {
        double one = run(compute, 1), two = run(compute, 2);
        double chaseOne = run(chase, 1), chaseTwo = run(chase, 2);
        double wideOne = run(chase8, 1), wideTwo = run(chase8, 2);
        printf("round %d: compute 2 threads / 1 = %.2fx; memory chase 2 threads / 1 = %.2fx (%.0f ns a miss on one thread); "
               "8 chases at a time 2 threads / 1 = %.2fx (%.0f ns a miss on one thread)\n",
               round, 2 * one / two, 2 * chaseOne / chaseTwo, chaseOne * 1e9 / chaseSteps, 2 * wideOne / wideTwo,
               wideOne * 1e9 / chaseSteps);
    }
    free(next);
    return 0;
}
