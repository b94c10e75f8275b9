"""python-diskcache get-hit throughput with 1 and 2 processes (kvcache-bench concurrency).

Usage: python3 diskcache_read_scaling.py DIRECTORY VALUE_SIZE KEYS READS_PER_PROCESS RUNS
Prints one JSON line: {"diskcache": version, "rates": {"1": reads/s, "2": reads/s}}, each
the median of RUNS runs. Each process opens its own Cache on DIRECTORY (default settings)
and reads random keys; the clock runs from all processes ready to the last one done.
"""
import json
import multiprocessing as mp
import random
import sys
import time

import diskcache


def reader(directory, keys, reads, seed, ready, start, done):
    cache = diskcache.Cache(directory)
    rng = random.Random(seed)
    names = ["k%d" % rng.randrange(keys) for _ in range(reads)]
    cache.get(names[0])
    ready.release()
    start.wait()
    missing = 0
    for name in names:
        if cache.get(name) is None:
            missing += 1
    done.put(missing)
    cache.close()


def rate(directory, keys, reads, processes):
    ready = mp.Semaphore(0)
    start = mp.Event()
    done = mp.Queue()
    workers = [mp.Process(target=reader, args=(directory, keys, reads, index + 1, ready, start, done))
               for index in range(processes)]
    for worker in workers:
        worker.start()
    for _ in workers:
        ready.acquire()
    began = time.perf_counter()
    start.set()
    missing = sum(done.get() for _ in workers)
    elapsed = time.perf_counter() - began
    for worker in workers:
        worker.join()
    if missing:
        raise SystemExit("%d reads missed" % missing)
    return reads * processes / elapsed


def main():
    directory, size, keys, reads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    cache = diskcache.Cache(directory)
    value = bytes((index * 31) & 0xFF for index in range(size))
    for index in range(keys):
        cache.set("k%d" % index, value)
    cache.close()
    rates = {}
    for processes in (1, 2):
        samples = sorted(rate(directory, keys, reads, processes) for _ in range(runs))
        rates[str(processes)] = samples[len(samples) // 2]
    print(json.dumps({"diskcache": diskcache.__version__, "rates": rates}))


if __name__ == "__main__":
    main()
