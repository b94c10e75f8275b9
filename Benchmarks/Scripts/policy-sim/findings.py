"""The runs behind docs/memory-policy-research.md (issue 15): LRU, static and adaptive
W-TinyLFU on every row of the issue's table, with each cell's gap to the row's best
reference policy. About ten minutes with CPython; run from this folder:

    python3 findings.py          # everything
    python3 findings.py chosen   # only the design that meets the goal, with its hit counts
"""
import sys
from run import evaluate, lru
from policies import (wtinylfu, wtinylfu_ghost, wtinylfu_climb2, wtinylfu_ghost_direction,
                      AdamClimber, memorycache)

def chosen(keys, C):
    """The design that meets issue 15's goal: the plain climber (10 C samples, step 6.25 %,
    decay 0.98, restart at 5 points, first move grows) with a sketch 8 x the next power of
    two of the capacity wide per row (4 x the old width), halved every 10 C additions."""
    return wtinylfu(keys, C, adaptive=True, sketch=dict(width=8))

if sys.argv[1:] == ['chosen']:
    evaluate(chosen, 'W-TinyLFU, climbed, sketch 8 x wide (the chosen design)', counts=True)
    sys.exit()

evaluate(lru, 'LRU')
evaluate(lambda k, C: wtinylfu(k, C), 'W-TinyLFU, static 1 % window')
evaluate(lambda k, C: wtinylfu(k, C, adaptive=True), 'W-TinyLFU, hill-climbed window (10 C samples)')
evaluate(lambda k, C: wtinylfu(k, C, adaptive=True, period_mult=3), 'W-TinyLFU, hill-climbed window (3 C samples)')
evaluate(lambda k, C: wtinylfu_ghost(k, C), 'W-TinyLFU, window moved by ghost hits (ARC-style)')
evaluate(lambda k, C: wtinylfu_climb2(k, C), 'W-TinyLFU, climber samples growing 1 C -> 10 C')
evaluate(lambda k, C: wtinylfu_climb2(k, C, no_first_move=True), 'W-TinyLFU, climber samples growing 1 C -> 10 C, no first move')
evaluate(lambda k, C: wtinylfu_ghost_direction(k, C), 'W-TinyLFU, climber direction from ghost hits')

# 1. The climber's start and small tweaks (the sketch as before: 2 x wide, halved every 10 C).
climbed = lambda **o: (lambda k, C: wtinylfu(k, C, adaptive=True, **o))
evaluate(climbed(first_move=False), '1a. climbed, no first move')
evaluate(climbed(first_move=-1), '1b. climbed, first move shrinks (as Caffeine)')
evaluate(climbed(when_full=True), '1c. climbed, counting only once the cache is full')
evaluate(climbed(period_mult=5), '1d. climbed, 5 C samples')
evaluate(climbed(step=0.1), '1e. climbed, step 10 %')
evaluate(climbed(first_period=5), '1f. climbed, first sample 5 C, then 10 C')
evaluate(climbed(decay=0.95), '1g. climbed, decay 0.95')
evaluate(climbed(window=0.03), '1h. climbed from a 3 % window')
evaluate(lambda k, C: wtinylfu(k, C, window=0.01 if C <= 1000 else 0.1, adaptive=True),
         '1i. climbed from a window by capacity (1 % up to 1,000 entries, else 10 %)')

# 2. Caffeine simulator's gradient climbers, with its defaults (step 0.5 % of the capacity,
# samples of 5 % of it); as Caffeine signs them, and as descent on the window.
for kind in ['adam', 'nadam', 'amsgrad']:
    evaluate(lambda k, C: wtinylfu(k, C, climber=AdamClimber, kind=kind, step=0.005, period_mult=0.05),
             f'2. {kind} (Caffeine\'s signs)')
for kind in ['adam', 'nadam']:
    evaluate(lambda k, C: wtinylfu(k, C, climber=AdamClimber, kind=kind, step=0.005, period_mult=0.05, descent=True),
             f'2. {kind}, descent on the window')

# 3. Sketch variants, static 1 % window and climbed.
evaluate(lambda k, C: wtinylfu(k, C, sketch=dict(doorkeeper=1)), '3a. static 1 %, doorkeeper (8 bits per entry, cleared at each halving)')
for width in [1, 4, 8, 16]:
    evaluate(climbed(sketch=dict(width=width)), f'3b. climbed, sketch {width} x wide')
for period in [5, 20]:
    evaluate(climbed(sketch=dict(period=period)), f'3c. climbed, sketch halved every {period} C')
evaluate(climbed(sketch=dict(width=4, period=5)), '3d. climbed, sketch 4 x wide, halved every 5 C')
evaluate(climbed(sketch=dict(width=8, period=5)), '3e. climbed, sketch 8 x wide, halved every 5 C')
evaluate(climbed(sketch=dict(width=8), decay=0.95), '3f. climbed, decay 0.95, sketch 8 x wide')
evaluate(climbed(sketch=dict(width=8), step=0.08), '3g. climbed, step 8 %, sketch 8 x wide')
for width in [2, 8]:
    evaluate(climbed(sketch=dict(width=width, conservative=True)), f'3h. climbed, sketch {width} x wide, conservative increments')
for start in [0.05, 0.1, 0.2]:
    evaluate(lambda k, C: wtinylfu(k, C, window=0.01 if C <= 1000 else start, adaptive=True, sketch=dict(width=8)),
             f'3i. climbed from 1 % up to 1,000 entries, else {start:.0%}, sketch 8 x wide', counts=start == 0.1)
evaluate(chosen, 'W-TinyLFU, climbed, sketch 8 x wide (the chosen design)', counts=True)
evaluate(memorycache, 'MemoryCache since 2026-12-07: the window by two shadows, the lead by duels', counts=True)
