"""The admission duels' evidence on one cell (the Python model): the duels settled for the
candidate (the smaller lead) and for the victim, with the lead fixed at 1, fixed at 2, and
chosen as shipped; options as in variants.py.

    python3 duel_tallies.py lirs-multi2 1421                        # under lead 2, 21 settle
    python3 duel_tallies.py lirs-multi2 1421 "duels=dict(many='once')"
"""
import sys

import policies
import traces


def main():
    name, C = sys.argv[1], int(sys.argv[2])
    options = policies.parse_options(sys.argv[3:])
    duels_options = options.pop('duels', {})
    keys = traces.load(name)
    made = []
    init = policies.Duels.__init__

    def recording_init(self, *arguments, **keywords):
        init(self, *arguments, **keywords)
        made.append(self)
    policies.Duels.__init__ = recording_init
    for fixed in (1, 2, 0):
        made.clear()
        hits = policies.memorycache(keys, C, duels=dict(duels_options, fixed=fixed), **options)
        tally = made[0].tally  # the cache's own; the shadows make none
        print(f"{name} at {C} {duels_options or ''} lead {'fixed at ' + str(fixed) if fixed else 'chosen'}: "
              f"{100 * hits / len(keys):.2f} %; one-use duels settled for the candidate / the victim "
              f"{tally[1][0]} / {tally[1][1]}, two-use {tally[2][0]} / {tally[2][1]}")


if __name__ == "__main__":
    main()
