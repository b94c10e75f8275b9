#!/usr/bin/env python3
"""Instructions per get, by function, under valgrind's callgrind (these VMs have no
hardware counters):

    Benchmarks/Scripts/get-hit-profile/instructions-per-get.py adaptive|lru|floor [zipf] [fresh]

It runs get-hit-profile (built with `swift build -c release` in this folder) with
rounds 1 and rounds 3, and prints the difference per function divided by the 200,000
gets between them: the fill and the set-up cancel. Allocator and teardown functions
(free, dealloc, ...) differ from run to run and are left out of the total."""
import re, subprocess, sys, tempfile, os

here = os.path.dirname(os.path.abspath(__file__))
program = os.path.join(here, ".build/release/get-hit-profile")
noise = re.compile(r"free|dealloc|consolidate|release'2|malloc")

def profile(rounds, directory):
    out = os.path.join(directory, f"callgrind.{rounds}")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", program,
                    *sys.argv[1:], "rounds", str(rounds)], check=True, capture_output=True,
                   env=dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1"))
    text = subprocess.run(["callgrind_annotate", "--threshold=100", out],
                          check=True, capture_output=True, text=True).stdout
    counts = {}
    for line in text.splitlines():
        match = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+\S+?:(\S+)", line)
        if match:
            counts[match.group(2)] = counts.get(match.group(2), 0) + int(match.group(1).replace(",", ""))
    return counts

with tempfile.TemporaryDirectory() as directory:
    one, three = profile(1, directory), profile(3, directory)
per_get = {name: (three.get(name, 0) - one.get(name, 0)) / 200_000 for name in set(one) | set(three)}
kept = {name: value for name, value in per_get.items() if not noise.search(name)}
print(f"instructions per get: {sum(kept.values()):.0f} (allocator and teardown left out)")
for name, value in sorted(kept.items(), key=lambda item: -item[1])[:25]:
    print(f"{value:8.1f}  {name[:140]}")
