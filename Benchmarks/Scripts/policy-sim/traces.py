'''Loads the shared traces (../shared/traces beside the repository, or $KVCACHE_TRACES) as lists of keys.'''
import gzip, lzma, struct, os
D=os.environ.get('KVCACHE_TRACES', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../../shared/traces'))
def load(name):
    if name in ('web07','web12'):
        b=lzma.open(f'{D}/{name}.trace.xz').read()
        keys=list(struct.unpack('>%di'%(len(b)//4),b))
    elif name=='oltp':
        keys=[]
        for line in gzip.open(f'{D}/oltp.gz','rt'):
            p=line.split()
            if not p: continue
            s,c=int(p[0]),int(p[1])
            keys.extend(range(s,s+c))
    else:  # gli and the LIRS traces (lirs-zigzag, ...): one integer per line, '*' lines skipped
        f=f'{D}/{name}.trace.gz'
        keys=[int(s) for s in (l.strip() for l in gzip.open(f,'rt')) if s and s!='*']
    return keys
if __name__=='__main__':
    for n in ['web07','web12','oltp','gli']:
        k=load(n); print(n,len(k),len(set(k)))
