"""How far the order of requests moves MemoryCache's adaptive policy (the Python model).

Replays a trace in orders like those of threads that claim chunks of 16 requests from one
cursor and run two at a time (`cursor_order`), and each of those with 0.1 % of its requests
run up to 50 places late (`late`), and prints the spread of the hit ratios.

    python3 order_sensitivity.py lirs-sprite 707 12            # the shipped floor, 0.5 %
    python3 order_sensitivity.py lirs-sprite 707 12 0.0005     # the floor before 2026-12-07
    python3 order_sensitivity.py lirs-multi2 1421 12 0.005 "duels=dict(initial_lead=1, bound=0)"

Later `name=value` arguments are `memorycache`'s options, as in variants.py (`bound=0` keeps
the lead it starts with).
"""
import random
import sys

import policies
import traces


def cursor_order(keys, seed, running=2, chunk=16):
    """Chunks claimed in turn from one cursor by `running` threads at once, their requests
    interleaved at random."""
    rnd = random.Random(seed)
    n, claimed, out, chunks = len(keys), 0, [], []

    def claim():
        nonlocal claimed
        if claimed >= n: return None
        c = list(range(claimed, min(n, claimed + chunk))); claimed += chunk
        return c
    for _ in range(running):
        c = claim()
        if c: chunks.append(c)
    while chunks:
        i = rnd.randrange(len(chunks))
        out.append(keys[chunks[i].pop(0)])
        if not chunks[i]:
            c = claim()
            if c: chunks[i] = c
            else: chunks.pop(i)
    return out


def late(keys, seed, share=0.001, span=50):
    """`keys` with `share` of the requests moved 1 to `span` places later."""
    rnd = random.Random(seed); k = list(keys)
    for _ in range(int(len(k) * share)):
        i = rnd.randrange(len(k) - span - 1); d = rnd.randrange(1, span + 1)
        x = k.pop(i); k.insert(i + d, x)
    return k


def main():
    name, C, orders = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    floor = float(sys.argv[4]) if len(sys.argv) > 4 else 0.005
    options = policies.parse_options(sys.argv[5:])
    keys = traces.load(name)

    def ratio(ks):
        return 100 * policies.memorycache(ks, C, smallest_share=floor, **options) / len(keys)
    ratios = []
    for seed in range(1, orders + 1):
        order = cursor_order(keys, seed)
        ratios.append(ratio(order))
        ratios += [ratio(late(order, s)) for s in (1, 2)]
    ratios.sort()
    print(f"{name} at {C}, floor {floor}{' ' + str(options) if options else ''}: natural order {ratio(keys):.2f} %; "
          f"{len(ratios)} replays: worst {ratios[0]:.2f}, tenth percentile {ratios[len(ratios) // 10]:.2f}, "
          f"median {ratios[len(ratios) // 2]:.2f}, best {ratios[-1]:.2f} %")


if __name__ == "__main__":
    main()
