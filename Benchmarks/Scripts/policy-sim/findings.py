"""The runs behind docs/memory-policy-research.md (issue 15): LRU, static and adaptive
W-TinyLFU on every row of the issue's table, with each cell's gap to the row's best
reference policy. About two minutes with CPython; run from this folder:

    python3 findings.py
"""
from run import evaluate, lru
from policies import wtinylfu, wtinylfu_ghost, wtinylfu_climb2, wtinylfu_ghost_direction

evaluate(lru, 'LRU')
evaluate(lambda k, C: wtinylfu(k, C), 'W-TinyLFU, static 1 % window')
evaluate(lambda k, C: wtinylfu(k, C, adaptive=True), 'W-TinyLFU, hill-climbed window (10 C samples)')
evaluate(lambda k, C: wtinylfu(k, C, adaptive=True, period_mult=3), 'W-TinyLFU, hill-climbed window (3 C samples)')
evaluate(lambda k, C: wtinylfu_ghost(k, C), 'W-TinyLFU, window moved by ghost hits (ARC-style)')
evaluate(lambda k, C: wtinylfu_climb2(k, C), 'W-TinyLFU, climber samples growing 1 C -> 10 C')
evaluate(lambda k, C: wtinylfu_climb2(k, C, no_first_move=True), 'W-TinyLFU, climber samples growing 1 C -> 10 C, no first move')
evaluate(lambda k, C: wtinylfu_ghost_direction(k, C), 'W-TinyLFU, climber direction from ghost hits')
