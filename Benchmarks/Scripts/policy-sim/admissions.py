"""What MemoryCache's admission does on one cell (the Python model): the candidates admitted
over a victim, by the two keys' counts, the hits against exact LRU's, and the victims of the
one-use duels. Options as in variants.py.

    python3 admissions.py lirs-zigzag 500 two_use=False second_chance=False   # the third lead's cause
    python3 admissions.py gli 1000                                            # one victim, most duels
"""
import collections
import sys

import policies
import traces


def main():
    name, C = sys.argv[1], int(sys.argv[2])
    options = policies.parse_options(sys.argv[3:])
    keys = traces.load(name)
    admitted = collections.Counter(); victims = collections.Counter()
    access, open_duel = policies.WTinyLFU.access, policies.Duels.open

    def counting_access(self, k, count=True):
        main_before = set(self.prob) | set(self.prot)
        full = len(main_before) >= self.C - int(self.window)
        result = access(self, k, count)
        displaced = main_before - set(self.prob) - set(self.prot)
        if count and full and displaced:
            for candidate in (set(self.prob) | set(self.prot)) - main_before:
                admitted[(self.sketch.freq(candidate), min(self.sketch.freq(v) for v in displaced))] += 1
        return result

    def counting_open(self, cand, vict, margin=1):
        if margin == 1: victims[vict] += 1
        return open_duel(self, cand, vict, margin)
    policies.WTinyLFU.access, policies.Duels.open = counting_access, counting_open
    hits = policies.memorycache(keys, C, **options)
    lru = policies.lru(keys, C)
    print(f'{name} at {C} {options}: {hits} hits, exact LRU {lru}; candidates admitted over a victim '
          f'{sum(admitted.values())}, by (candidate, victim) uses after the request: {dict(admitted.most_common(5))}; '
          f'one-use duels {sum(victims.values())}, distinct victims {len(victims)}, most: {victims.most_common(3)}')


if __name__ == '__main__':
    main()
