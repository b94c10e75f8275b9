"""Count-based cache policies for trace replay (research for issue 15, not the shipped code):
exact LRU, W-TinyLFU (1 % LRU window, SLRU main 20/80, count-min sketch of 4-bit counters
halved every 10 x capacity increments) with a static or hill-climbed window, and a variant
whose window moves on ghost hits as ARC's target does. Each returns its hit count."""
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
    def __init__(self, C):
        w=1
        while w < max(16, C): w*=2
        self.w=w*2; self.mask=self.w-1
        self.t=[[0]*self.w for _ in range(4)]
        self.seeds=[0x9E3779B9,0x85EBCA6B,0xC2B2AE35,0x27D4EB2F]
        self.n=0; self.sample=10*C
    def idx(self,k,i):
        x=(k*self.seeds[i]) & 0xffffffff
        x^=x>>15; x=(x*0x2c1b3c6d)&0xffffffff; x^=x>>12
        return x & self.mask
    def inc(self,k):
        added=False
        for i in range(4):
            j=self.idx(k,i)
            if self.t[i][j]<15: self.t[i][j]+=1; added=True
        if added:
            self.n+=1
            if self.n>=self.sample:
                for r in self.t:
                    for j in range(self.w): r[j]>>=1
                self.n//=2
    def freq(self,k):
        return min(self.t[i][self.idx(k,i)] for i in range(4))

class WTinyLFU:
    """A 1 % LRU window in front of an SLRU main space (20 % probation, 80 % protected),
    admitting a window victim into the main space only if the sketch counts it more often
    than the main space's victim. `window` is the window's target size (a float, so that
    adaptations may move it by less than one entry); with `ghosts`, rejected candidates and
    main victims are remembered (as many as the capacity) so their return can be seen."""

    def __init__(self, C, window=0.01, ghosts=False):
        self.C = C
        self.sketch = Sketch(C)
        self.win = OrderedDict(); self.prob = OrderedDict(); self.prot = OrderedDict()
        self.window = max(1.0, C * window)
        self.ghosts = ghosts
        self.ghost_window = OrderedDict(); self.ghost_main = OrderedDict()

    def resize(self, delta):
        self.window = min(self.C - 1.0, max(1.0, self.window + delta))

    def _remember(self, ghosts, key):
        if self.ghosts:
            ghosts[key] = 1
            if len(ghosts) > self.C: ghosts.popitem(last=False)

    def access(self, k):
        """Returns (hit, ghost): ghost is 'window' or 'main' when a miss returns a key that
        the admission rejected or that the main space evicted."""
        self.sketch.inc(k)
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
            if self.sketch.freq(cand) > self.sketch.freq(vict):
                del src[vict]; prob[cand] = 1
                self._remember(self.ghost_main, vict)
            else:
                self._remember(self.ghost_window, cand)
        while len(win) + len(prob) + len(prot) > self.C:  # after the window shrank
            src = prob if prob else (prot if prot else win)
            v, _ = src.popitem(last=False)
            if src is not win: self._remember(self.ghost_main, v)
        return False, ghost


class HillClimber:
    """Caffeine's climber: every sample of `period` x capacity requests, step the window in
    the direction that raised the hit rate (reversing when it fell); the step decays, and a
    change of `restart` or more restores it. `first_move`: step before any comparison."""

    def __init__(self, C, step=0.0625, decay=0.98, restart=0.05, period=10, first_move=True):
        self.C = C; self.size = step * C; self.step = step * C; self.decay = decay
        self.restart = restart; self.period = period; self.first_move = first_move
        self.hits = 0; self.n = 0; self.previous = None

    def record(self, hit):
        """Returns the window change due after this request (0 mostly)."""
        self.hits += hit; self.n += 1
        if self.n < self.period * self.C: return 0.0
        rate = self.hits / self.n
        self.hits = 0; self.n = 0
        previous, self.previous = self.previous, rate
        if previous is None:
            return self.step if self.first_move else 0.0
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


def wtinylfu(keys, C, window=0.01, adaptive=False, period_mult=10, first_move=True, **options):
    cache = WTinyLFU(C, window)
    climber = HillClimber(C, period=period_mult, first_move=first_move, **options) if adaptive else None
    h = 0
    for k in keys:
        hit, _ = cache.access(k)
        h += hit
        if climber: cache.resize(climber.record(hit))
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
