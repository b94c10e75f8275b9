"""Summarizes `kvcache-bench hitratio --threads N` output, run by run (a file holds one run,
or several after `## run K` lines), as the docs quote it:

- cells within 0.5 points of one thread in the threads' order, and the misses;
- the same with every read under the cache's lock;
- the sum over the cells of |8 threads - one thread in their order|;
- the sum over the cells of the largest move of one thread on that order with requests run
  late (the policy's own sensitivity to order), and the cells it moved by more than 0.3.

    python3 Benchmarks/Scripts/hitratio-threads-summary.py docs/bench/hitratio-8-threads-2026-12-07.txt
"""
import re
import sys

HEADER = re.compile(r"hit ratio · (\S+) · KVCache MemoryCache \(adaptive\), \d+ threads")
CELL = re.compile(r"\s+([\d,]+) entries: .*one thread in the threads' order [\d.]+ %, ([+-][\d.]+) points\)"
                  r".*late: ([^;]+) points; every read under the cache's lock: [\d.]+ %, ([+-][\d.]+) points")


def runs(text):
    parts = re.split(r"^## run \d+\s*$", text, flags=re.M)
    return [part for part in parts if HEADER.search(part)]


def summary(run):
    trace, cells = None, []
    for line in run.splitlines():
        header = HEADER.match(line)
        if header: trace = header.group(1)
        cell = CELL.match(line)
        if cell and trace:
            late = max(abs(float(v)) for v in cell.group(3).split(","))
            cells.append((f"{trace} at {cell.group(1)}", float(cell.group(2)), late, float(cell.group(4))))
    misses = [f"{name} {gap:+.2f}" for name, gap, _, _ in cells if abs(gap) > 0.5]
    locked = [f"{name} {gap:+.2f}" for name, _, _, gap in cells if abs(gap) > 0.5]
    moved = [f"{name} {late:.2f}" for name, _, late, _ in cells if late > 0.3]
    return (f"within 0.5: {len(cells) - len(misses)} of {len(cells)} {misses}; under the lock: "
            f"{len(cells) - len(locked)} of {len(cells)} {locked}; sum of |gaps| "
            f"{sum(abs(gap) for _, gap, _, _ in cells):.2f}; sum of the largest late moves "
            f"{sum(late for _, _, late, _ in cells):.2f}, over 0.3: {moved}")


for path in sys.argv[1:]:
    for index, run in enumerate(runs(open(path).read()), 1):
        print(f"{path} run {index}: {summary(run)}")
