#!/bin/bash
# Interleaved runs of the floor and a cache, with the ratio of each pair:
#
#   Benchmarks/Scripts/get-hit-profile/interleave.sh PAIRS adaptive|lru [zipf] [fresh] [rounds R]
#
# The machines are shared: alternating the two keeps them under the same load.
pairs=$1; mode=$2; shift 2
program="$(dirname "$0")/.build/release/get-hit-profile"
for _ in $(seq "$pairs"); do
  floor=$("$program" floor "$@" | grep -o "[0-9.]* ns" | cut -d' ' -f1)
  cache=$("$program" "$mode" "$@" | grep -o "[0-9.]* ns" | cut -d' ' -f1)
  echo "floor $floor ns, $mode $cache ns, ratio $(echo "scale=2; $cache / $floor" | bc)"
done
