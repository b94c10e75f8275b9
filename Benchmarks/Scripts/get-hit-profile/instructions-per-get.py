#!/usr/bin/env python3
"""Instructions (and, with --misses, simulated cache misses) per get, by function, under
valgrind's callgrind (these VMs have no hardware counters):

    Benchmarks/Scripts/get-hit-profile/instructions-per-get.py [--misses] adaptive|lru|floor [zipf] [fresh]

It runs get-hit-profile (built with `swift build -c release` in this folder) with
rounds 1 and rounds 3, and prints the difference per function divided by the 200,000
gets between them: the fill and the set-up cancel. Allocator and teardown functions
(free, dealloc, ...) differ from run to run and are left out of the total. --misses adds
callgrind's cache model (a 48 KB L1 and, as its last level, a 1 MiB L2 like this
machine's) and prints L1 and L2 read misses per get; it does not model prefetches."""
import re, subprocess, sys, tempfile, os

here = os.path.dirname(os.path.abspath(__file__))
program = os.path.join(here, ".build/release/get-hit-profile")
noise = re.compile(r"free|dealloc|consolidate|release'2|malloc")
misses = "--misses" in sys.argv
arguments = [argument for argument in sys.argv[1:] if argument != "--misses"]
events = ["Ir", "D1mr", "DLmr"] if misses else ["Ir"]
number = r"([\d,]+|\.)\s+(?:\([^)]*\)\s+)?"

def profile(rounds, directory):
    out = os.path.join(directory, f"callgrind.{rounds}")
    simulation = ["--cache-sim=yes", "--D1=49152,12,64", "--LL=1048576,8,64"] if misses else []
    subprocess.run(["valgrind", "--tool=callgrind", *simulation, f"--callgrind-out-file={out}", program,
                    *arguments, "rounds", str(rounds)], check=True, capture_output=True,
                   env=dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1"))
    text = subprocess.run(["callgrind_annotate", "--threshold=100", f"--show={','.join(events)}", out],
                          check=True, capture_output=True, text=True).stdout
    counts = {}
    for line in text.splitlines():
        match = re.match(r"\s*" + number * len(events) + r"\S+?:(\S+)", line)
        if match:
            values = [0 if value == "." else int(value.replace(",", "")) for value in match.groups()[:-1]]
            previous = counts.get(match.groups()[-1], [0] * len(events))
            counts[match.groups()[-1]] = [a + b for a, b in zip(previous, values)]
    return counts

with tempfile.TemporaryDirectory() as directory:
    one, three = profile(1, directory), profile(3, directory)
zero = [0] * len(events)
per_get = {name: [(b - a) / 200_000 for a, b in zip(one.get(name, zero), three.get(name, zero))]
           for name in set(one) | set(three)}
kept = {name: values for name, values in per_get.items() if not noise.search(name)}
totals = [sum(values[index] for values in kept.values()) for index in range(len(events))]
print("per get (allocator and teardown left out): " +
      ", ".join(f"{total:.2f} {event}" if event != "Ir" else f"{total:.0f} instructions" for event, total in zip(events, totals)))
print("   ".join(f"{event:>7}" for event in events) + "  function")
for name, values in sorted(kept.items(), key=lambda item: -item[1][0])[:25]:
    print("  ".join(f"{value:8.2f}" if index else f"{value:8.1f}" for index, value in enumerate(values)) + f"  {name[:120]}")
