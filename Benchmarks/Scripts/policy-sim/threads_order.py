"""An order written by `kvcache-bench hitratio --threads N` (`KVCACHE_BENCH_ORDER_DIR`, a key a
line) replayed by exact LRU and by MemoryCache's policy (the Python model), shipped and with
options as in variants.py: how much the policy loses on the order threads ran, where the
trace's own order shows nothing.

    KVCACHE_BENCH_ORDER_DIR=/tmp/order kvcache-bench hitratio --threads 8 --trace zigzag
    python3 threads_order.py /tmp/order/order-52001-200.txt 200 "duels=dict(shared=True)"
"""
import sys

import policies


def main():
    path, C = sys.argv[1], int(sys.argv[2])
    options = policies.parse_options(sys.argv[3:])
    keys = [int(line) for line in open(path).read().split()]
    ratio = lambda hits: f'{100 * hits / len(keys):.2f} %'
    print(f'{path} at {C}: exact LRU {ratio(policies.lru(keys, C))}, MemoryCache '
          f'{ratio(policies.memorycache(keys, C))}'
          + (f', with {options} {ratio(policies.memorycache(keys, C, **options))}' if options else ''))


if __name__ == '__main__':
    main()
