#!/usr/bin/env python3
"""Medians and ranges of the memory figures of alternating kvcache-bench runs:

    Benchmarks/Scripts/memory-ab/summarize.py DIR            (run.sh's before-N.txt, after-N.txt)
    Benchmarks/Scripts/memory-ab/summarize.py FILE.txt       (a file of runs in sections headed
                                                             "======== series B, NAME, run N", "-- NAME, run N" or
                                                             "======== NAME, run N", as docs/bench/memory-in-place-writes-2026-11-27.txt)
    Benchmarks/Scripts/memory-ab/summarize.py FILE.txt --pool  (the same, each build's runs pooled over the series
                                                             sN-: "s4-interleaved" and "s5-interleaved" as "interleaved")
    Benchmarks/Scripts/memory-ab/summarize.py FILE.txt --pool --series s3,s4,s6
                                                             (pooled over the series named only)

For each build: the target figures of the adaptive MemoryCache (one-thread ratios to the
floor, two threads ÷ one) and the 2 ÷ 1 scaling of the ceiling row in the same runs. Runs that
timed 1 and 2 threads in pairs (PairedScaling) also give the 2 ÷ 1 of the two tables' medians
(the figure earlier runs' target line gave), the ceiling's paired figure, the adaptive
cache's paired figure ÷ the ceiling's, round by round, and the LRU policy's and the floor's
paired figures. The LRU policy's one-thread targets are printed too."""
import glob, os, re, statistics, sys

CEILING = "Dictionary, unlocked reads (ceiling)"
SUBJECT = "KVCache MemoryCache"
TARGETS = [("1 thread uniform ÷ floor", "get-hit uniform, KVCache MemoryCache ÷"),
           ("1 thread Zipf ÷ floor", "get-hit zipf0.9, KVCache MemoryCache ÷"),
           ("set-with-eviction ÷ insert", "set-with-eviction, KVCache MemoryCache ÷"),
           ("heap per entry ÷ floor", "heap per entry, KVCache MemoryCache ÷"),
           ("uniform 2 ÷ 1 threads", "get-hit uniform, 2 threads ÷ 1 thread throughput, KVCache MemoryCache "),
           ("Zipf 2 ÷ 1 threads", "get-hit zipf0.9, 2 threads ÷ 1 thread throughput, KVCache MemoryCache "),
           ("LRU 1 thread uniform ÷ floor", "get-hit uniform, KVCache MemoryCache (LRU) ÷"),
           ("LRU 1 thread Zipf ÷ floor", "get-hit zipf0.9, KVCache MemoryCache (LRU) ÷"),
           ("LRU set-with-eviction ÷ insert", "set-with-eviction, KVCache MemoryCache (LRU) ÷"),
           ("LRU heap per entry ÷ floor", "heap per entry, KVCache MemoryCache (LRU) ÷")]

def runs(path):
    """{build: [run text, ...]} in run order."""
    found = {}
    if os.path.isdir(path):
        for name in glob.glob(os.path.join(path, "*-*.txt")):
            build, number = re.match(r"(.+)-(\d+)\.txt$", os.path.basename(name)).groups()
            found.setdefault(build, []).append((int(number), open(name).read()))
    else:
        # Series B: whole runs; series A: "-- NAME, run N" then that run's target lines.
        parts = re.split(r"^(?:======== (?:series B, )?|-- )(\S+), run (\d+)\n", open(path).read(), flags=re.M)
        for build, number, text in zip(parts[1::3], parts[2::3], parts[3::3]):
            found.setdefault(build, []).append((int(number), text))
    return {build: [text for _, text in sorted(items)] for build, items in found.items()}

def median_ns(text, group, workload, strategy):
    table = re.search(re.escape(f"memory · {group} · {workload}  (") + r".*?\n\n", text, re.S)
    line = table and re.search(r"^\s+" + re.escape(strategy) + r"\s{2,}([0-9.]+)\s", table.group(0), re.M)
    return float(line.group(1)) if line else None

def figures(text):
    values = {}
    for label, target in TARGETS:
        match = re.search(re.escape(target) + r"[^\n]*?([0-9.]+)×", text)
        values[label] = float(match.group(1)) if match else None
    for workload, name in (("get-hit uniform", "uniform"), ("get-hit zipf0.9", "Zipf")):
        one, two = median_ns(text, "1 thread", workload, CEILING), median_ns(text, "2 threads", workload, CEILING)
        values[f"ceiling {name} 2 ÷ 1"] = one / two if one and two else None
        # Since the paired rounds (PairedScaling), the target line gives their median;
        # the tables' medians give the figure the earlier runs' target lines gave.
        paired = median_ns(text, "2 threads ÷ 1 thread, paired", workload, SUBJECT)
        if paired:
            one, two = median_ns(text, "1 thread", workload, SUBJECT), median_ns(text, "2 threads", workload, SUBJECT)
            values[f"{name} 2 ÷ 1, tables"] = one / two if one and two else None
            values[f"ceiling {name} 2 ÷ 1, paired"] = median_ns(text, "2 threads ÷ 1 thread, paired", workload, CEILING)
            values[f"{name} ÷ ceiling, paired"] = median_ns(
                text, "2 threads ÷ 1 thread, paired, ÷ the ceiling's", workload, SUBJECT)
            for label, strategy in (("LRU", "KVCache MemoryCache (LRU)"), ("floor", "Dictionary+mutex")):
                values[f"{label} {name} 2 ÷ 1, paired"] = median_ns(
                    text, "2 threads ÷ 1 thread, paired", workload, strategy)
    return values

builds = runs(sys.argv[1])
if "--series" in sys.argv[2:]:
    named = sys.argv[sys.argv.index("--series") + 1].split(",")
    builds = {build: texts for build, texts in builds.items() if build.split("-")[0] in named}
if "--pool" in sys.argv[2:]:
    # Pools the runs of each build over the series: "s4-interleaved" and "s5-interleaved" count as "interleaved".
    pooled = {}
    for build, texts in builds.items():
        pooled.setdefault(re.sub(r"^s\d+-", "", build), []).extend(texts)
    builds = pooled
for build, texts in builds.items():
    print(f"{build} ({len(texts)} runs)")
    table = [figures(text) for text in texts]
    for label in dict.fromkeys(label for row in table for label in row):
        values = [row[label] for row in table if row.get(label) is not None]
        if values:
            print(f"  {label:34} median {statistics.median(values):.2f}  range {min(values):.2f}–{max(values):.2f}"
                  f"  ({' '.join(f'{v:.2f}' for v in values)})")
