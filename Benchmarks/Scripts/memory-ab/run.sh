#!/bin/bash
# Alternates two kvcache-bench builds on `memory` (default `--threads 1,2`), saving each run:
#
#   Benchmarks/Scripts/memory-ab/run.sh PAIRS DIR BEFORE_BINARY AFTER_BINARY [memory options]
#
# writes DIR/before-1.txt, DIR/after-1.txt, DIR/before-2.txt, ... (the machines are
# shared: alternating keeps both builds under the same load). Options after the binaries
# replace `--threads 1,2` (e.g. `--threads 1,2,16 --runs 1`). Then summarize.py DIR.
pairs=$1; dir=$2; before=$3; after=$4
shift 4
options=("$@")
[ ${#options[@]} -gt 0 ] || options=(--threads 1,2)
mkdir -p "$dir"
for i in $(seq "$pairs"); do
  "$before" memory "${options[@]}" > "$dir/before-$i.txt" 2>/dev/null
  "$after" memory "${options[@]}" > "$dir/after-$i.txt" 2>/dev/null
done
