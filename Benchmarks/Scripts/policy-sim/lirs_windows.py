"""The LIRS cells that MemoryCache misses (issue 36): the gap to the best reference policy of
W-TinyLFU with static windows and with the climbed one, with the sketch 64 x wide (as wide as
MemoryCache's 2^18-counter minimum makes it at these sizes) and 8 x wide.
Run: python3 lirs_windows.py (about 10 minutes)."""
import sys
from traces import load
from policies import wtinylfu
# Best reference policy of each cell, from ../shared/traces/README.md.
cells = [('lirs-zigzag', 1000, 48.03), ('lirs-zigzag', 500, 23.99), ('lirs-zigzag', 200, 9.57),
         ('lirs-loop', 505, 49.21), ('lirs-loop', 252, 24.35), ('lirs-cs', 140, 5.90),
         ('lirs-sprite', 707, 86.48), ('lirs-sprite', 1768, 93.25), ('lirs-multi1', 260, 49.30),
         ('lirs-cpp', 122, 80.39)]
for name, C, best in cells:
    keys = load(name); n = len(keys); out = []
    for width in (64, 8):
        for window in (0.01, 0.1, 0.3, 0.6, 0.9):
            hits = wtinylfu(keys, C, window=window, sketch=dict(width=width))
            out.append(f'{int(window * 100)}%/w{width} {100 * hits / n - best:+.2f}')
        hits = wtinylfu(keys, C, adaptive=True, sketch=dict(width=width))
        out.append(f'climbed/w{width} {100 * hits / n - best:+.2f}')
    print(name, C, ' '.join(out)); sys.stdout.flush()
