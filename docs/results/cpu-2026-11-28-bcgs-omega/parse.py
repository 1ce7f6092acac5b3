import re,sys
def load(f):
    d={}
    for line in open(f):
        if '::' not in line: continue
        key,out=line.split('::',1)
        m=re.search(r'bcgs\s+its\s+(\d+)\s+reason (\S+)\s+true rel. residual (\S+).*?pbcgsfused\s+its\s+(\d+)\s+reason (\S+)\s+true rel. residual (\S+)',out)
        if not m: d[key.strip()]=None; continue
        d[key.strip()]=(int(m[1]),m[2],float(m[3]),int(m[4]),m[5],float(m[6]),'FAIL' in out)
    return d
files=sys.argv[1:]
ds=[load(f) for f in files]
keys=list(ds[0].keys())
tot=[[0,0] for _ in ds]
for k in keys:
    row=[]
    for i,d in enumerate(ds):
        v=d.get(k)
        if v is None: row.append('??'); continue
        bi,br,bt,fi,fr,ft,fail=v
        conv = br.startswith('CONVERGED')
        if conv:
            tot[i][1]+=1
            ok = fr.startswith('CONVERGED') and fi <= bi+max(2,int(0.15*bi)) 
            tot[i][0]+=ok
        row.append(f"{bi if br.startswith('CONV') else br[:8]:>8}/{fi if fr.startswith('CONV') else fr[:12]:>12}{'' if not conv else (' ok' if ok else ' MISS')}")
    print(f"{k[:70]:70s} | "+" | ".join(row))
print("met:", tot)
