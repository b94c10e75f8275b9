"""Contents that follow the window (docs/memory-policy-research.md, "Contents that follow the
window"): MemoryCache's shipped policy in the model, without and with Caffeine's transfer of
entries when the window's target moves, on 14 cells; gap to the best reference policy.
Run: python3 window_transfer.py (about two minutes)."""
import sys
from traces import load
from policies import memorycache
best = {('lirs-zigzag', 500): 23.99, ('lirs-zigzag', 1000): 48.03, ('lirs-sprite', 707): 86.48,
        ('lirs-sprite', 1768): 93.25, ('lirs-cpp', 122): 80.39, ('lirs-cpp', 305): 85.56,
        ('lirs-multi1', 260): 49.30, ('gli', 1000): 50.79, ('lirs-loop', 252): 24.35,
        ('lirs-multi2', 1421): 61.71, ('lirs-cs', 140): 5.90, ('lirs-ps', 308): 53.24,
        ('web07', 4000): 62.64, ('web07', 250): 45.33}
for (name, C), b in best.items():
    keys = load(name); n = len(keys)
    shipped, moved = (100 * memorycache(keys, C, transfer=t) / n for t in (False, True))
    print(f'{name} @ {C}: {shipped - b:+.2f} -> {moved - b:+.2f}'); sys.stdout.flush()
