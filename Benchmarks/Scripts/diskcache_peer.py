#!/usr/bin/env python3
"""The python `diskcache` peer for kvcache-bench's disk workloads.

kvcache-bench starts this script once per run and sends one JSON request per
line on stdin; each request is one run of one value size, the same workload
the in-process strategies run:

    {"directory": "/path/to/empty/dir", "value_size": 1024,
     "operations": 2000, "hit_order": [17, 3, ...]}

set: keys "key-0" ... "key-{n-1}", one value of `value_size` random bytes;
get-hit: the same keys in `hit_order`; get-miss: "missing-0" ... . The cache
is `diskcache.Cache(directory)` with its defaults (SQLite WAL,
synchronous=NORMAL, values of 32 KB and up in their own files).

The reply is one JSON line: for each workload the whole batch in nanoseconds
and every operation's latency (one clock read per operation, like the CLI).
Run by hand: echo '{"directory": "/tmp/x", "value_size": 1024, "operations": 100,
"hit_order": [0]}' | python3 diskcache_peer.py
"""

import json
import random
import sys
import time

import diskcache


def timed(operations):
    """Runs each callable, returning the batch time and per-operation latencies."""
    clock = time.perf_counter_ns
    latencies = []
    start = previous = clock()
    for operation in operations:
        operation()
        now = clock()
        latencies.append(now - previous)
        previous = now
    return previous - start, latencies


def run(request):
    size = request["value_size"]
    count = request["operations"]
    order = request.get("hit_order") or list(range(count))
    if len(order) != count:
        order = [order[i % len(order)] % count for i in range(count)]
    value = random.Random(size).randbytes(size)
    keys = ["key-%d" % i for i in range(count)]
    missing = ["missing-%d" % i for i in range(count)]

    cache = diskcache.Cache(request["directory"])
    try:
        set_ns, set_latencies = timed(lambda key=key: cache.set(key, value) for key in keys)

        read = [0]

        def get(key):
            found = cache.get(key)
            if found is not None:
                read[0] += len(found)

        hit_ns, hit_latencies = timed(lambda key=keys[i]: get(key) for i in order)
        bytes_read = read[0]
        read[0] = 0
        miss_ns, miss_latencies = timed(lambda key=key: get(key) for key in missing)
        found_missing = read[0]
    finally:
        cache.close()

    return {
        "set": {"nanoseconds": set_ns, "latencies": set_latencies},
        "get-hit": {"nanoseconds": hit_ns, "latencies": hit_latencies},
        "get-miss": {"nanoseconds": miss_ns, "latencies": miss_latencies},
        "bytes_read": bytes_read,
        "expected_bytes": size * count,
        "found_missing": found_missing,
    }


def main():
    print(json.dumps({"ready": True, "diskcache": diskcache.__version__,
                      "python": sys.version.split()[0]}), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            reply = run(json.loads(line))
        except Exception as error:  # reported to the CLI, which skips the peer
            reply = {"error": "%s: %s" % (type(error).__name__, error)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
