"""Count-based cache policies for trace replay (research for issue 15, not the shipped code):
exact LRU, W-TinyLFU (1 % LRU window, SLRU main 20/80, count-min sketch of 4-bit counters
halved every 10 x capacity increments) with a static or hill-climbed window, a variant
whose window moves on ghost hits as ARC's target does, and MemoryCache's shipped policy
(`memorycache`: the window moved by two shadows, the lead by duels). Each returns its hit count."""
from collections import OrderedDict

def lru(keys, C):
    d=OrderedDict(); h=0
    for k in keys:
        if k in d: d.move_to_end(k); h+=1
        else:
            d[k]=1
            if len(d)>C: d.popitem(last=False)
    return h

class Sketch:
    """Count-min sketch of 4 rows of 4-bit counters, `width` x the next power of two of the
    capacity (at least 16) wide per row, all counters halved every `period` x capacity
    additions. With `doorkeeper`, a bloom filter of `doorkeeper` x 8 bits per entry of
    capacity (rounded up to a power of two), 3 probes, takes a key's first occurrence before
    the sketch counts it, adds one to its estimate, and is cleared at every halving. With
    `conservative`, an increment raises only the key's counters that hold its minimum."""
    def __init__(self, C, width=2, period=10, doorkeeper=0, conservative=False):
        self.conservative=conservative
        w=1
        while w < max(16, C): w*=2
        self.w=int(w*width); self.mask=self.w-1
        self.t=[[0]*self.w for _ in range(4)]
        self.seeds=[0x9E3779B9,0x85EBCA6B,0xC2B2AE35,0x27D4EB2F]
        self.n=0; self.sample=int(period*C)
        self.dk=None
        if doorkeeper:
            b=1
            while b < doorkeeper*8*max(16, C): b*=2
            self.dk=bytearray(b); self.dkmask=b-1
    def idx(self,k,i):
        x=(k*self.seeds[i]) & 0xffffffff
        x^=x>>15; x=(x*0x2c1b3c6d)&0xffffffff; x^=x>>12
        return x & self.mask
    def dkidx(self,k):
        x=(k*0x165667B1) & 0xffffffff
        x^=x>>16; x=(x*0x85EBCA77)&0xffffffff; x^=x>>13
        h1=x; h2=((x>>16)|1)
        return [(h1+i*h2)&self.dkmask for i in range(3)]
    def inc(self,k):
        if self.dk is not None:
            ix=self.dkidx(k)
            if not all(self.dk[j] for j in ix):
                for j in ix: self.dk[j]=1
                self._count(); return
        added=False
        if self.conservative:
            js=[self.idx(k,i) for i in range(4)]
            m=min(self.t[i][js[i]] for i in range(4))
            if m<15:
                for i in range(4):
                    if self.t[i][js[i]]==m: self.t[i][js[i]]+=1
                added=True
        else:
          for i in range(4):
            j=self.idx(k,i)
            if self.t[i][j]<15: self.t[i][j]+=1; added=True
        if added or self.dk is not None: self._count()
    def _count(self):
        self.n+=1
        if self.n>=self.sample:
            for r in self.t:
                for j in range(self.w): r[j]>>=1
            self.n//=2
            if self.dk is not None: self.dk=bytearray(len(self.dk))
    def freq(self,k):
        f=min(self.t[i][self.idx(k,i)] for i in range(4))
        if self.dk is not None and all(self.dk[j] for j in self.dkidx(k)): f+=1
        return f

class Duels:
    """MemoryCache's AdmissionDuels: a decision two neighbouring leads disagree on (the
    candidate leads the victim by exactly one use, or by two) keeps both keys in the slots
    their hashes choose; the first of the two used again moves the margin's score, bounded by
    `bound` (+1: the candidate, -1: the victim). The one-use score's sign picks lead 1 or 2
    (2 at first, kept while the score is 0); while it picks 2, a two-use score of `turn` or
    more below 0 picks 3. Each margin has a table of its own, half the slots each.
    `two_use=False`: one-use duels only (MemoryCache before 2026-12-07's second session);
    `shared`: one table for both, where a two-use duel takes no slot from a one-use duel
    (MemoryCache before 2026-12-07's third session). Variants tried, not shipped:
    `two_use_takes_slots` (with `shared`, a two-use duel displaces a one-use one, as a newer
    duel does an older), `keep_first` (a duel takes no occupied slot), `initial_lead`,
    `enter_one` (the one-use score that turns lead 2 to 1; 1 shipped), `leave_one` (the score
    at or below minus which lead 1 turns back to 2; 1 shipped), `victim_keeps` (a victim's
    duel is not replaced by a newer one against the same victim: the first candidate it
    turned away stays its rival), `many` (a victim keeps a duel with every candidate it turns
    away, each candidate in its own slot: 'once', its use counts -1 and a candidate's +1;
    'count', its use counts -1 for each duel still open against it; 'first', whichever of
    the victim and its candidates is used first counts, once, and closes them all).
    `fixed=L` keeps lead L and only counts: `tally[margin]` holds the duels settled for the
    candidate and for the victim (`duel_tallies.py`)."""
    def __init__(self, C, bound=32, two_use=True, turn=2, two_use_takes_slots=False, keep_first=False,
                 initial_lead=2, enter_one=1, shared=False, leave_one=1, victim_keeps=False, many=None, fixed=0):
        n = 256
        while n < min(C, 4096): n *= 2
        if not shared: n //= 2  # a table of n / 2 slots for each margin
        self.mask = n - 1; self.slots = {}; self.score = 0; self.score2 = 0; self.bound = bound
        self.lead = initial_lead; self.two_use = two_use; self.turn = turn
        self.two_use_takes_slots = two_use_takes_slots; self.keep_first = keep_first
        self.enter_one = enter_one; self.shared = shared; self.leave_one = leave_one
        self.victim_keeps = victim_keeps; self.many = many
        self.fixed = fixed; self.tally = {1: [0, 0], 2: [0, 0]}
        if fixed: self.lead = fixed
    # With `many`, a candidate's entry is (key, True, its victim's slot, margin, the victim's
    # key) and a victim's (key, False, its open duels, margin).
    def drop_many(self, s):
        e = self.slots.pop(s, None)
        if not e or not e[1]: return
        v = self.slots.get(e[2])
        if v and not v[1] and v[0] == e[4]:
            if v[2] <= 1: self.slots.pop(e[2])
            else: self.slots[e[2]] = (v[0], False, v[2] - 1, v[3])
    def open_many(self, cand, vict, margin):
        c, v = self.place(cand, margin), self.place(vict, margin)
        if c == v: return
        self.drop_many(c)
        e = self.slots.get(v)
        if e and not e[1] and e[0] == vict: self.slots[v] = (vict, False, e[2] + 1, margin)
        else:
            self.drop_many(v)
            self.slots[v] = (vict, False, 1, margin)
        self.slots[c] = (cand, True, v, margin, vict)
    def use_many(self, k):
        for s in self.places(k):
            e = self.slots.get(s)
            if not e or e[0] != k: continue
            if e[1]:
                v = self.slots.get(e[2])
                self.drop_many(s)
                if not (v and not v[1] and v[0] == e[4]): continue  # its victim left first
                if self.many == 'first': self.slots.pop(e[2], None)
                self.settled(e[3], 1)
            else:
                self.slots.pop(s)
                self.settled(e[3], -e[2] if self.many == 'count' else -1)
    def settled(self, margin, change):
        self.tally[margin][0 if change > 0 else 1] += abs(change)
        if self.fixed: return
        if margin == 1: self.score = max(-self.bound, min(self.bound, self.score + change))
        else: self.score2 = max(-self.bound, min(self.bound, self.score2 + change))
        one = 1 if self.score >= self.enter_one else 2 if self.score <= -self.leave_one else (1 if self.lead == 1 else 2)
        self.lead = 1 if one == 1 else 3 if self.score2 <= -self.turn else 2
    def slot(self, k): return (k * 0x9E3779B1 & 0xffffffff) & self.mask
    def place(self, k, margin):
        """`k`'s slot in `margin`'s table, or in the one table when `shared`."""
        return self.slot(k) if self.shared else (margin, self.slot(k))
    def places(self, k): return (self.slot(k),) if self.shared else (self.place(k, 1), self.place(k, 2))
    def forget(self, s):
        e = self.slots.pop(s, None)
        if e: self.slots.pop(e[2], None)
    def open(self, cand, vict, margin=1):
        if margin not in ((1, 2) if self.two_use else (1,)): return
        if self.many: return self.open_many(cand, vict, margin)
        c, v = self.place(cand, margin), self.place(vict, margin)
        if c == v: return
        if self.keep_first and (c in self.slots or v in self.slots): return
        if self.victim_keeps and (e := self.slots.get(v)) and e[0] == vict and not e[1]: return
        if margin == 2 and not self.two_use_takes_slots and self.shared \
                and any(self.slots.get(s, (0, 0, 0, 2))[3] == 1 for s in (c, v)): return
        self.forget(c); self.forget(v)
        self.slots[c] = (cand, True, v, margin); self.slots[v] = (vict, False, c, margin)
    def use(self, k):
        if self.many: return self.use_many(k)
        for s in self.places(k):
            e = self.slots.get(s)
            if not e or e[0] != k: continue
            self.forget(s)
            self.settled(e[3], 1 if e[1] else -1)


class WTinyLFU:
    """A 1 % LRU window in front of an SLRU main space (20 % probation, 80 % protected),
    admitting a window victim into the main space only if the sketch counts it more often
    than the main space's victim. `window` is the window's target size (a float, so that
    adaptations may move it by less than one entry); with `ghosts`, rejected candidates and
    main victims are remembered (as many as the capacity) so their return can be seen."""

    def __init__(self, C, window=0.01, ghosts=False, sketch={}, lead=1, duels=False, second_chance=False,
                 patience=0):
        self.C = C
        # With `second_chance`, under lead 1 a victim that turns a candidate away goes to its
        # segment's recent end (MemoryCache's rule); 'always': under every lead (tried).
        self.second_chance = second_chance
        # Tried: with `patience` R, a victim that has turned away R candidates in a row is
        # evicted for the next one (the cache's own decisions only).
        self.patience = patience; self.held = (None, 0)
        # A candidate needs this many more counted uses than the victim; with `duels`, the
        # lead Duels picks (MemoryCache's rule).
        self.lead = lead
        self.duels = Duels(C, **duels) if isinstance(duels, dict) else Duels(C) if duels else None
        self.sketch = Sketch(C, **sketch)
        self.win = OrderedDict(); self.prob = OrderedDict(); self.prot = OrderedDict()
        self.window = max(1.0, C * window)
        self.ghosts = ghosts
        self.ghost_window = OrderedDict(); self.ghost_main = OrderedDict()

    def full(self):
        return len(self.win) + len(self.prob) + len(self.prot) >= self.C

    def resize(self, delta):
        self.window = min(self.C - 1.0, max(1.0, self.window + delta))

    def set_window(self, w, transfer=False):
        """Sets the window's target. With `transfer` the contents follow at once, as Caffeine's
        increaseWindow / decreaseWindow: main's oldest (probation's, then protected's) to the
        window's recent end, or the window's oldest to probation's recent end."""
        self.window = w
        if not transfer: return
        wmax = int(w)
        win, prob, prot = self.win, self.prob, self.prot
        while len(win) < wmax and (prob or prot):
            k, _ = (prob if prob else prot).popitem(last=False)
            win[k] = 1
        while len(win) > wmax:
            k, _ = win.popitem(last=False)
            prob[k] = 1
        while len(prot) > int((self.C - wmax) * 0.8):
            v, _ = prot.popitem(last=False); prob[v] = 1

    def _remember(self, ghosts, key):
        if self.ghosts:
            ghosts[key] = 1
            if len(ghosts) > self.C: ghosts.popitem(last=False)

    def access(self, k, count=True):
        """Returns (hit, ghost): ghost is 'window' or 'main' when a miss returns a key that
        the admission rejected or that the main space evicted. Without `count` the sketch and
        the duels are left alone (a shadow's access: the cache counted the request)."""
        if count:
            self.sketch.inc(k)
            if self.duels: self.duels.use(k)
        wmax = int(self.window)
        win, prob, prot = self.win, self.prob, self.prot
        if k in win:
            win.move_to_end(k); return True, None
        if k in prob:
            del prob[k]; prot[k] = 1
            while len(prot) > int((self.C - wmax) * 0.8):
                v, _ = prot.popitem(last=False); prob[v] = 1
            return True, None
        if k in prot:
            prot.move_to_end(k); return True, None
        ghost = None
        if k in self.ghost_window: ghost = 'window'; del self.ghost_window[k]
        elif k in self.ghost_main: ghost = 'main'; del self.ghost_main[k]
        win[k] = 1
        while len(win) > wmax:
            cand, _ = win.popitem(last=False)
            if len(prob) + len(prot) < self.C - wmax:
                prob[cand] = 1; continue
            src = prob if prob else prot
            vict = next(iter(src))
            fc, fv = self.sketch.freq(cand), self.sketch.freq(vict)
            lead = self.lead
            if self.duels:
                if fc > fv: self.duels.open(cand, vict, fc - fv)
                lead = self.duels.lead
            held = self.held[1] if self.held[0] == vict else 0
            if fc >= fv + lead or (count and self.patience and held >= self.patience):
                del src[vict]; prob[cand] = 1
                self._remember(self.ghost_main, vict)
                self.held = (None, 0)
            else:
                self._remember(self.ghost_window, cand)
                self.held = (vict, held + 1)
                if self.second_chance == 'always' or (self.second_chance and lead == 1):
                    src.move_to_end(vict)
        while len(win) + len(prob) + len(prot) > self.C:  # after the window shrank
            src = prob if prob else (prot if prot else win)
            v, _ = src.popitem(last=False)
            if src is not win: self._remember(self.ghost_main, v)
        return False, ghost


class HillClimber:
    """Caffeine's climber: every sample of `period` x capacity requests, step the window in
    the direction that raised the hit rate (reversing when it fell); the step decays, and a
    change of `restart` or more restores it. `first_move`: the step after the first sample,
    before any comparison: 1 (or True) grows the window, -1 shrinks it (as Caffeine does),
    0 (or False) holds it. With `when_full`, requests are counted only once the cache is full
    (so the first sample does not mix the cold start in). `first_period`: the length of the
    first sample (x capacity), when it differs from `period`. `first_step`: the size of the
    first (blind) move (x capacity), when it differs from `step`; later steps are `step`."""

    def __init__(self, C, step=0.0625, decay=0.98, restart=0.05, period=10, first_move=True,
                 when_full=False, first_period=None, first_step=None):
        self.C = C; self.size = step * C; self.step = step * C; self.decay = decay
        self.restart = restart; self.period = period; self.first_move = int(first_move)
        self.when_full = when_full; self.first_period = first_period
        self.first_step = first_step
        self.hits = 0; self.n = 0; self.previous = None

    def record(self, hit, full=True):
        """Returns the window change due after this request (0 mostly). `full`: whether the
        cache is full."""
        if self.when_full and not full: return 0.0
        self.hits += hit; self.n += 1
        period = self.period
        if self.previous is None and self.first_period is not None: period = self.first_period
        if self.n < period * self.C: return 0.0
        rate = self.hits / self.n
        self.hits = 0; self.n = 0
        previous, self.previous = self.previous, rate
        if previous is None:
            if self.first_move < 0: self.step = -self.step
            if not self.first_move: return 0.0
            if self.first_step is not None:
                return self.first_step * self.C * (1 if self.step > 0 else -1)
            return self.step
        delta = rate - previous
        if delta < 0: self.step = -self.step
        self.step *= self.decay
        if abs(delta) >= self.restart:
            self.step = self.size if self.step >= 0 else -self.size
            self.restarted()
        else:
            self.settled()
        return self.step

    def restarted(self): pass
    def settled(self): pass


class GrowingClimber(HillClimber):
    """Samples of `first` x capacity, doubling up to `last` while the rate settles."""
    def __init__(self, C, first=1.0, last=10.0, **options):
        super().__init__(C, period=first, **options); self.first = first; self.last = last
    def restarted(self): self.period = self.first
    def settled(self): self.period = min(self.last, self.period * 2)


class WindowGradient:
    """MemoryCache's WindowGradient: two shadows of the cache (W-TinyLFU on a sample of the
    keys, using the cache's sketch and admission lead) at the cache's window share x e^-spread
    and x e^spread; after each period (the shadows' capacity in sampled requests) the log
    share moves by gain x clamp((larger's hits - smaller's) / (scale x requests), -1, 1),
    within `smallest_share` (0.5 % since 2026-12-07, 0.05 % before) to 99.9 %, and the shadows
    follow. At most `sampled_entries` a shadow: every key of a cache that small. The sample
    is not MemoryCache's (another hash of the key)."""
    def __init__(self, cache, C, share=0.01, sampled_entries=1024, spread=1.0, gain=0.5, scale=0.04,
                 transfer=False, smallest_share=0.005, lead_shadows=None):
        import math
        self.math = math; self.cache = cache; self.transfer = transfer; self.smallest = smallest_share
        rate = min(1.0, sampled_entries / C)
        self.threshold = math.ceil(rate * 2**32)
        self.sampled = min(sampled_entries, max(2, round(C * self.threshold / 2**32)))
        self.spread, self.gain, self.scale = spread, gain, scale
        self.log = math.log(share); self.n = 0
        self.smaller = WTinyLFU(self.sampled); self.larger = WTinyLFU(self.sampled)
        for shadow in (self.smaller, self.larger):
            shadow.sketch = cache.sketch; shadow.second_chance = cache.second_chance
        self.hits = [0, 0]; self.place()
        self.leads = None
        if lead_shadows is not None:
            self.leads = LeadShadows(self, **lead_shadows)
            cache.duels.fixed = cache.duels.lead = self.leads.lead
    def place(self):
        cap = float(self.sampled); e = self.math.exp
        below = max(1.0, cap * e(self.log - self.spread))
        above = max(below + 1, cap * e(self.log + self.spread))
        self.smaller.set_window(max(1.0, min(cap - 2, below)), self.transfer)
        self.larger.set_window(max(1.0, min(cap - 1, above)), self.transfer)
    def samples(self, k):
        h = (k * 0x85EBCA6B + 0x27D4EB2F) & 0xffffffff
        h ^= h >> 15
        return (h * 0x9E3779B1 & 0xffffffff) < self.threshold
    def record(self, k):
        """After the cache's access of `k`: returns the window's new share at a period's end."""
        if not self.samples(k): return None
        lead = self.cache.duels.lead if self.cache.duels else self.cache.lead
        for i, shadow in enumerate((self.smaller, self.larger)):
            shadow.lead = lead
            self.hits[i] += shadow.access(k, count=False)[0]
        self.n += 1
        if self.leads: self.leads.record(k)
        if self.n < self.sampled: return None
        step = max(-1.0, min(1.0, (self.hits[1] - self.hits[0]) / (self.scale * self.n)))
        self.n = 0; self.hits = [0, 0]
        log = self.math.log
        self.log = min(log(0.999), max(log(self.smallest), self.log + self.gain * step))
        self.place()
        if self.leads: self.cache.duels.lead = self.leads.end_period()
        return self.math.exp(self.log)


class LeadShadows:
    """Tried (2026-12-08): the admission lead chosen by shadows instead of duels. Three
    shadows on the gradient's sample, at the cache's window share, one for each lead (1, 2,
    3); after each of the gradient's periods their hits are added to scores decayed by
    `decay`, and the cache takes the lead of the highest score once it passes the current
    lead's by `margin` of the decayed sampled requests. Unlike the duels, a shadow's evidence
    does not depend on the lead the cache chose."""
    def __init__(self, gradient, decay=0.9, margin=0.005, initial=2):
        self.g = gradient; cap = gradient.sampled
        self.shadows = [WTinyLFU(cap) for _ in range(3)]
        for i, s in enumerate(self.shadows):
            s.sketch = gradient.cache.sketch; s.second_chance = gradient.cache.second_chance; s.lead = i + 1
        self.scores = [0.0] * 3; self.hits = [0] * 3; self.requests = 0.0; self.n = 0
        self.decay, self.margin, self.lead = decay, margin, initial
        self.place()
    def place(self):
        cap = float(self.g.sampled)
        for s in self.shadows: s.set_window(max(1.0, min(cap - 1, cap * self.g.math.exp(self.g.log))))
    def record(self, k):
        for i, s in enumerate(self.shadows): self.hits[i] += s.access(k, count=False)[0]
        self.n += 1
    def end_period(self):
        self.scores = [x * self.decay + h for x, h in zip(self.scores, self.hits)]
        self.requests = self.requests * self.decay + self.n
        self.hits = [0] * 3; self.n = 0
        best = max(range(3), key=lambda i: self.scores[i])
        if self.scores[best] - self.scores[self.lead - 1] > self.margin * self.requests: self.lead = best + 1
        self.place()
        return self.lead


def parse_options(arguments):
    """`memorycache`'s options from command-line arguments `name=value` (values are Python:
    `duels=dict(shared=True)`)."""
    return {k: eval(v, {'dict': dict}) for k, v in (a.split('=', 1) for a in arguments)}


def memorycache_width(C):
    """The sketch's width (x the next power of two of C, a row) that MemoryCache's has: 8
    counters an entry, at least 2^18 (2^16 a row)."""
    n = 16
    while n < C: n *= 2
    return max(2, 65536 // n)


def memorycache(keys, C, transfer=False, smallest_share=0.005, two_use=True, second_chance=True,
                duels={}, **options):
    """MemoryCache's adaptive policy under a count limit, as shipped since 2026-12-07: the
    window moved by two shadows, the admission lead (1, 2 or 3; `two_use=False`: 1 or 2, as
    before) chosen by duels (a table of slots for each margin; `duels=dict(shared=True)`:
    one for both, as before; a victim keeps its first duel, `duels=dict(victim_keeps=False)`:
    its latest, as before), a second chance for a victim that holds under lead 1
    (`second_chance=False`: none, as before), its sketch's width. Within a few hits of the
    pinned counts where every key is sampled (1,024 entries or fewer; the sample of a larger
    cache is another one). `transfer`: contents follow the window's moves
    (`WTinyLFU.set_window`; not shipped). `smallest_share`: the window share's floor.
    `duels`: options of `Duels`; `options`: of `WindowGradient` (gain, scale, ...) and
    `WTinyLFU` (patience)."""
    return wtinylfu(keys, C, gradient=True, duels={'two_use': two_use, 'victim_keeps': True, **duels},
                    sketch=dict(width=memorycache_width(C)), transfer=transfer,
                    smallest_share=smallest_share, second_chance=second_chance, **options)


def wtinylfu(keys, C, window=0.01, adaptive=False, period_mult=10, first_move=True, sketch={},
             climber=None, lead=1, duels=False, gradient=False, transfer=False, second_chance=False,
             patience=0, **options):
    """W-TinyLFU with a static window, or with the window moved by a climber: `climber` (a
    HillClimber subclass) if given, else the plain HillClimber when `adaptive`; or, with
    `gradient`, by two shadows as MemoryCache's count limit has (WindowGradient). `lead`: the
    uses a candidate needs over the victim (1, the paper's); `duels`: chosen as MemoryCache
    does; `second_chance` and `patience`: as WTinyLFU's."""
    cache = WTinyLFU(C, window, sketch=sketch, lead=lead, duels=duels, second_chance=second_chance,
                     patience=patience)
    if climber is None and adaptive and not gradient: climber = HillClimber
    climber = climber(C, period=period_mult, first_move=first_move, **options) if climber else None
    shadows = WindowGradient(cache, C, share=window, transfer=transfer, **options) if gradient else None
    h = 0
    for k in keys:
        hit, _ = cache.access(k)
        h += hit
        if climber: cache.resize(climber.record(hit, cache.full()))
        if shadows:
            share = shadows.record(k)
            if share is not None: cache.set_window(min(C - 1.0, max(1.0, C * share)), transfer)
    return h


def wtinylfu_climb2(keys, C, first_period=1.0, max_period=10.0, no_first_move=False):
    """W-TinyLFU whose climber samples short periods while the hit rate moves and longer
    ones (up to max_period x C) once it settles."""
    cache = WTinyLFU(C)
    climber = GrowingClimber(C, first=first_period, last=max_period, first_move=not no_first_move)
    h = 0
    for k in keys:
        hit, _ = cache.access(k)
        h += hit
        cache.resize(climber.record(hit))
    return h


def wtinylfu_ghost(keys, C):
    """The window moved on every ghost hit, as ARC moves its target: a rejected candidate
    returning grows it, a main victim returning shrinks it, by the ratio of the ghost lists."""
    cache = WTinyLFU(C, ghosts=True)
    h = 0
    for k in keys:
        hit, ghost = cache.access(k)
        h += hit
        gw, gm = len(cache.ghost_window), len(cache.ghost_main)
        if ghost == 'window': cache.resize(max(1.0, gm / max(1, gw)))
        elif ghost == 'main': cache.resize(-max(1.0, gw / max(1, gm)))
    return h


def wtinylfu_ghost_direction(keys, C, period_mult=10, step=0.0625, decay=0.98):
    """A climber that takes its next step's direction from the sample's ghost hits (more
    rejected candidates returning: grow; more main victims: shrink), and from the hit rate
    when they tie."""
    cache = WTinyLFU(C, ghosts=True)
    h = 0; hits = 0; n = 0; previous = None; size = step * C; counts = {'window': 0, 'main': 0}
    stepsize = size
    for k in keys:
        hit, ghost = cache.access(k)
        h += hit; hits += hit; n += 1
        if ghost: counts[ghost] += 1
        if n >= period_mult * C:
            rate = hits / n
            if counts['window'] != counts['main']:
                stepsize = abs(stepsize) * decay * (1 if counts['window'] > counts['main'] else -1)
            elif previous is not None:
                stepsize = (-stepsize if rate < previous else stepsize) * decay
            cache.resize(stepsize)
            previous = rate; hits = 0; n = 0; counts = {'window': 0, 'main': 0}
    return h


class AdamClimber(HillClimber):
    """Caffeine simulator's Adam climber (`kind` 'adam'; 'nadam' and 'amsgrad' its variants):
    every sample of `period` x capacity requests (0.05 by default), the gradient is the change
    in the miss rate, and the window moves by `step` x capacity x the bias-corrected moment over
    the root of the velocity (so about one step per sample, in the direction of the smoothed
    gradient, as Caffeine's simulator signs it). With `descent`, the gradient is taken with
    respect to the window instead (the miss rate's change times the sign of the last move, the
    first sample only setting the reference and moving the window up by one step), and the
    window moves against it."""

    def __init__(self, C, step=0.005, period=0.05, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 kind='adam', first_move=True, when_full=False, descent=False, **_):
        super().__init__(C, step=step, period=period, when_full=when_full)
        self.stepsize = int(step * C); self.b1 = beta1; self.b2 = beta2; self.eps = epsilon
        self.kind = kind; self.t = 1; self.m = 0.0; self.v = 0.0; self.vmax = 0.0
        self.previous = None if descent else 0.0; self.descent = descent; self.last = 1.0

    def record(self, hit, full=True):
        if self.when_full and not full: return 0.0
        self.hits += hit; self.n += 1
        if self.n < max(1, int(self.period * self.C)): return 0.0
        rate = self.hits / self.n
        self.hits = 0; self.n = 0
        if self.previous is None:
            self.previous = rate; return float(self.stepsize)
        g = (1 - rate) - (1 - self.previous)
        self.previous = rate
        if self.descent: g = g * (1 if self.last > 0 else -1)
        b1, b2, t = self.b1, self.b2, self.t
        self.m = b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * g * g
        self.t += 1
        if self.kind == 'amsgrad':
            self.vmax = max(self.vmax, self.v)
            move = self.stepsize * self.m / ((self.vmax ** 0.5) + self.eps)
        else:
            mhat = self.m / (1 - b1 ** t); vhat = self.v / (1 - b2 ** t)
            if self.kind == 'nadam':
                mhat = b1 * mhat + (1 - b1) / (1 - b1 ** t) * g
            move = self.stepsize * mhat / ((vhat ** 0.5) + self.eps)
        if self.descent:
            move = -move
            if move: self.last = move
        return move
