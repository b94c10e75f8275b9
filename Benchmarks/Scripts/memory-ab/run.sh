#!/bin/bash
# Alternates two kvcache-bench builds on `memory --threads 1,2`, saving each run:
#
#   Benchmarks/Scripts/memory-ab/run.sh PAIRS DIR BEFORE_BINARY AFTER_BINARY
#
# writes DIR/before-1.txt, DIR/after-1.txt, DIR/before-2.txt, ... (the machines are
# shared: alternating keeps both builds under the same load). Then summarize.py DIR.
pairs=$1; dir=$2; before=$3; after=$4
mkdir -p "$dir"
for i in $(seq "$pairs"); do
  "$before" memory --threads 1,2 > "$dir/before-$i.txt" 2>/dev/null
  "$after" memory --threads 1,2 > "$dir/after-$i.txt" 2>/dev/null
done
