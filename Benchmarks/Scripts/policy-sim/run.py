"""Evaluates a policy on every row of issue 15's table; prints hit ratios and gaps to the best reference."""
import sys, time
from traces import load
from policies import *
rows={'oltp':[250,1000,2000,4000],'web07':[250,1000,4000],'web12':[250,1000,4000],'gli':[250,1000]}
best={('oltp',250):22.65,('oltp',1000):40.84,('oltp',2000):47.01,('oltp',4000):53.45,('web07',250):45.33,('web07',1000):54.11,('web07',4000):62.64,('web12',250):50.54,('web12',1000):69.07,('web12',4000):80.32,('gli',250):15.30,('gli',1000):50.71}
def evaluate(fn, label, counts=False):
    """Prints the row's hit ratio and gap; with `counts`, each row's hit count too."""
    worst=0; out=[]
    for t,cs in rows.items():
        keys=load(t)
        for C in cs:
            h=fn(keys,C); r=100*h/len(keys)
            gap=best[(t,C)]-r; worst=max(worst,gap)
            out.append(f"{t}@{C}:{r:.2f}({gap:+.2f})"+(f"[{h} hits]" if counts else ''))
    print(label,'worst gap %.2f'%worst); print('  '+' '.join(out)); sys.stdout.flush()
if __name__=='__main__':
    k=load('oltp'); print('LRU oltp@1000', lru(k,1000), 'expect 300122')
