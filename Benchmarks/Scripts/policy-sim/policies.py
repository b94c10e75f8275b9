"""Count-based cache policies for trace replay (research for issue 15, not the shipped code):
exact LRU, W-TinyLFU (1 % LRU window, SLRU main 20/80, count-min sketch of 4-bit counters
halved every 10 x capacity increments) with a static or hill-climbed window, and a variant
whose window moves on ghost hits as ARC's target does. Each returns its hit count."""
from collections import OrderedDict
import random

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

def wtinylfu(keys, C, window=0.01, adaptive=False, step=0.0625, decay=0.98, restart=0.05, period_mult=10, ghost=False, first_move=True, min_period=0):
    sk=Sketch(C)
    win=OrderedDict(); prob=OrderedDict(); prot=OrderedDict()
    wmax=max(1,int(C*window))
    h=0
    # hill climber
    sample_hits=0; sample_n=0; prev_rate=None; stepsz=step*C; period=max(min_period,period_mult*C)
    for k in keys:
        sk.inc(k)
        hit=True
        if k in win: win.move_to_end(k)
        elif k in prob:
            del prob[k]; prot[k]=1
            pmax=int((C-wmax)*0.8)
            while len(prot)>pmax:
                v,_=prot.popitem(last=False); prob[v]=1
        elif k in prot: prot.move_to_end(k)
        else:
            hit=False
            win[k]=1
            while len(win)>wmax:
                cand,_=win.popitem(last=False)
                mainmax=C-wmax
                if len(prob)+len(prot)<mainmax:
                    prob[cand]=1; continue
                if prob: vict=next(iter(prob)); src=prob
                else: vict=next(iter(prot)); src=prot
                if sk.freq(cand)>sk.freq(vict):
                    del src[vict]; prob[cand]=1
            # main overflow after window shrink
            while len(win)+len(prob)+len(prot)>C:
                if prob: prob.popitem(last=False)
                elif prot: prot.popitem(last=False)
                else: win.popitem(last=False)
        if hit: h+=1
        if adaptive:
            sample_n+=1; sample_hits+=hit
            if sample_n>=period:
                rate=sample_hits/sample_n
                if prev_rate is not None:
                    delta=rate-prev_rate
                    if delta<0: stepsz=-stepsz
                    stepsz*=decay
                    if abs(delta)>=restart: stepsz=(step*C) if stepsz>=0 else -(step*C)
                    wnew=min(C-1,max(1,int(wmax+stepsz)))
                    wmax=wnew
                elif first_move:
                    wmax=min(C-1,max(1,int(wmax+stepsz)))
                prev_rate=rate; sample_hits=0; sample_n=0
    return h

def wtinylfu_ghost(keys, C, window=0.01, ghost_scale=1.0, min_window=1, gain=1.0, climb=False, step=0.0625, decay=0.98, restart=0.05, period_mult=10):
    sk=Sketch(C)
    win=OrderedDict(); prob=OrderedDict(); prot=OrderedDict()
    gW=OrderedDict(); gM=OrderedDict()
    wf=max(1.0,C*window)  # float target
    h=0
    gcap=int(C*ghost_scale)
    sample_hits=0; sample_n=0; prev_rate=None; stepsz=step*C; period=period_mult*C
    for k in keys:
        sk.inc(k)
        if climb:
            sample_n+=1
            if sample_n>=period:
                rate=sample_hits/sample_n
                if prev_rate is not None:
                    delta=rate-prev_rate
                    if delta<0: stepsz=-stepsz
                    stepsz*=decay
                    if abs(delta)>=restart: stepsz=(step*C) if stepsz>=0 else -(step*C)
                wf=min(C-1.0,max(1.0,wf+stepsz))
                prev_rate=rate; sample_hits=0; sample_n=0
        wmax=int(wf)
        if k in win: win.move_to_end(k); h+=1; sample_hits+=1; continue
        if k in prob:
            del prob[k]; prot[k]=1; h+=1; sample_hits+=1
            pmax=int((C-wmax)*0.8)
            while len(prot)>pmax:
                v,_=prot.popitem(last=False); prob[v]=1
            continue
        if k in prot: prot.move_to_end(k); h+=1; sample_hits+=1; continue
        # miss: adapt
        if k in gW:
            d=gain*max(1.0, len(gM)/max(1,len(gW)))
            wf=min(C-1.0, wf+d); del gW[k]
        elif k in gM:
            d=gain*max(1.0, len(gW)/max(1,len(gM)))
            wf=max(float(min_window), wf-d); del gM[k]
        wmax=int(wf)
        win[k]=1
        while len(win)>wmax:
            cand,_=win.popitem(last=False)
            mainmax=C-wmax
            if len(prob)+len(prot)<mainmax:
                prob[cand]=1; continue
            if prob: vict=next(iter(prob)); src=prob
            else: vict=next(iter(prot)); src=prot
            if sk.freq(cand)>sk.freq(vict):
                del src[vict]; prob[cand]=1
                gM[vict]=1
                if len(gM)>gcap: gM.popitem(last=False)
            else:
                gW[cand]=1
                if len(gW)>gcap: gW.popitem(last=False)
        while len(win)+len(prob)+len(prot)>C:
            if prob: v,_=prob.popitem(last=False)
            elif prot: v,_=prot.popitem(last=False)
            else: v,_=win.popitem(last=False)
            gM[v]=1
            if len(gM)>gcap: gM.popitem(last=False)
    return h

def wtinylfu_climb2(keys, C, window=0.01, step=0.0625, decay=0.98, restart=0.05,
                    first_period=1.0, max_period=10.0, grow=2.0, no_first_move=False):
    """W-TinyLFU whose hill climber samples short periods while the hit rate moves and
    longer ones (up to max_period x C) once it settles."""
    sk=Sketch(C)
    win=OrderedDict(); prob=OrderedDict(); prot=OrderedDict()
    wf=max(1.0,C*window); h=0
    period_mult=first_period; sample_hits=0; sample_n=0; prev=None; stepsz=step*C
    for k in keys:
        sk.inc(k)
        wmax=int(wf)
        hit=True
        if k in win: win.move_to_end(k)
        elif k in prob:
            del prob[k]; prot[k]=1
            pmax=int((C-wmax)*0.8)
            while len(prot)>pmax:
                v,_=prot.popitem(last=False); prob[v]=1
        elif k in prot: prot.move_to_end(k)
        else:
            hit=False
            win[k]=1
            while len(win)>wmax:
                cand,_=win.popitem(last=False)
                if len(prob)+len(prot)<C-wmax:
                    prob[cand]=1; continue
                if prob: vict=next(iter(prob)); src=prob
                else: vict=next(iter(prot)); src=prot
                if sk.freq(cand)>sk.freq(vict):
                    del src[vict]; prob[cand]=1
            while len(win)+len(prob)+len(prot)>C:
                if prob: prob.popitem(last=False)
                elif prot: prot.popitem(last=False)
                else: win.popitem(last=False)
        h+=hit; sample_hits+=hit; sample_n+=1
        if sample_n>=period_mult*C:
            rate=sample_hits/sample_n
            if prev is not None:
                delta=rate-prev
                if delta<0: stepsz=-stepsz
                stepsz*=decay
                if abs(delta)>=restart:
                    stepsz=(step*C) if stepsz>=0 else -(step*C); period_mult=first_period
                else:
                    period_mult=min(max_period, period_mult*grow)
                wf=min(C-1.0,max(1.0,wf+stepsz))
            elif not no_first_move:
                wf=min(C-1.0,max(1.0,wf+stepsz))
            prev=rate; sample_hits=0; sample_n=0
    return h

def wtinylfu_ghost_direction(keys, C, window=0.01, step=0.0625, decay=0.98, period_mult=10, min_ghost_hits=1):
    """W-TinyLFU whose climber takes the direction of its next step from the sample's ghost
    hits (rejected window candidates asked again: grow; main victims asked again: shrink),
    and the climber's own rule when the sample had too few."""
    sk=Sketch(C)
    win=OrderedDict(); prob=OrderedDict(); prot=OrderedDict(); gW=OrderedDict(); gM=OrderedDict()
    wf=max(1.0,C*window); h=0; stepsz=step*C; prev=None; sample_hits=0; sample_n=0; gw_hits=0; gm_hits=0
    for k in keys:
        sk.inc(k)
        wmax=int(wf); hit=True
        if k in win: win.move_to_end(k)
        elif k in prob:
            del prob[k]; prot[k]=1
            pmax=int((C-wmax)*0.8)
            while len(prot)>pmax:
                v,_=prot.popitem(last=False); prob[v]=1
        elif k in prot: prot.move_to_end(k)
        else:
            hit=False
            if k in gW: gw_hits+=1; del gW[k]
            elif k in gM: gm_hits+=1; del gM[k]
            win[k]=1
            while len(win)>wmax:
                cand,_=win.popitem(last=False)
                if len(prob)+len(prot)<C-wmax:
                    prob[cand]=1; continue
                if prob: vict=next(iter(prob)); src=prob
                else: vict=next(iter(prot)); src=prot
                if sk.freq(cand)>sk.freq(vict):
                    del src[vict]; prob[cand]=1; gM[vict]=1
                    if len(gM)>C: gM.popitem(last=False)
                else:
                    gW[cand]=1
                    if len(gW)>C: gW.popitem(last=False)
            while len(win)+len(prob)+len(prot)>C:
                if prob: v,_=prob.popitem(last=False)
                elif prot: v,_=prot.popitem(last=False)
                else: v,_=win.popitem(last=False)
        h+=hit; sample_hits+=hit; sample_n+=1
        if sample_n>=period_mult*C:
            rate=sample_hits/sample_n
            size=abs(stepsz)*decay
            if gw_hits+gm_hits>=min_ghost_hits and gw_hits!=gm_hits:
                stepsz=size if gw_hits>gm_hits else -size
            elif prev is not None:
                stepsz=(-stepsz if rate<prev else stepsz)*decay
            wf=min(C-1.0,max(1.0,wf+stepsz))
            prev=rate; sample_hits=0; sample_n=0; gw_hits=0; gm_hits=0
    return h
