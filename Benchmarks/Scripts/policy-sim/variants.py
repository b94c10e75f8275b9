"""MemoryCache's policy (the Python model, `policies.memorycache`) with options changed, against
the shipped one, on every cell of the shared traces: each cell's gap to the best reference
policy (`../shared/traces/README.md`) before and after, and the cells more than 1 point behind.

    python3 variants.py "second_chance='always'"                 # every cell (about 8 minutes)
    python3 variants.py "duels=dict(shared=True, two_use_takes_slots=True)" cpp multi1 zigzag
    python3 variants.py "patience=64" "duels=dict(turn=1)"       # several options at once

Options are `memorycache`'s keyword arguments; later arguments that are not `name=value` pick
traces by name (`cpp` for lirs-cpp). `base.name=value` changes the policy compared against
(`base.duels=dict(shared=True)`: one table of duel slots, as before 2026-12-07's third
session, which the research notes' earlier model figures used).
"""
import os
import re
import sys

import policies
import run
import traces

BEST = dict(run.best)  # issue 15's rows; the LIRS rows from the traces' README
README = os.path.join(traces.D, 'README.md')
for line in open(README):
    row = re.match(r'\| (lirs-[\w_]+) \| ([\d,]+) \| [\d,]+ \| [\d,]+ \|(.*)\|\s*$', line)
    if row:
        BEST[(row.group(1), int(row.group(2).replace(',', '')))] = max(
            float(v.strip().strip('*')) for v in row.group(3).split('|'))


def main():
    options = {}
    base = {}
    names = []
    for argument in sys.argv[1:]:
        if '=' in argument:
            (key, value), = policies.parse_options([argument]).items()
            if key.startswith('base.'): base[key[5:]] = value
            else: options[key] = value
        else:
            names.append(argument)
    cells = sorted(c for c in BEST if not names or c[0] in names or c[0] in ('lirs-' + n for n in names))
    off = [0, 0]; total = 0.0
    for name, C in cells:
        keys = traces.load(name)
        ratios = [100 * policies.memorycache(keys, C, **o) / len(keys) for o in (base, {**base, **options})]
        gaps = [r - BEST[(name, C)] for r in ratios]
        off = [o + (g < -1) for o, g in zip(off, gaps)]; total += ratios[1] - ratios[0]
        print(f'{name} @ {C}: {gaps[0]:+.2f} -> {gaps[1]:+.2f} ({ratios[1] - ratios[0]:+.2f})', flush=True)
    print(f'{options} against {base or "shipped"}: cells more than 1 point behind {off[0]} -> {off[1]}; summed change {total:+.2f} points')


if __name__ == '__main__':
    main()
