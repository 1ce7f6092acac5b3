import re, subprocess, sys
rows=[]
txt=open('docs/convergence.md').read()
sec=txt[txt.index('## Every case'):txt.index('## GPU')]
for l in sec.splitlines():
    if not l.startswith('| pgmresfused'): continue
    f=[x.strip() for x in l.strip('|').split('|')]
    if 'yes' not in f[5] and 'no' not in f[5].replace('no (5000)',''): continue
    rows.append(f)
def args(prob):
    t=prob.split()
    if t[0] in ('kept3d','aniso2d','jump2d','convdiff','lap2d'):
        a=['-problem',t[0],'-n',t[2]]
        if len(t)>3:
            if t[3]=='peclet': a+=['-problem_peclet',t[4]]
            elif t[3]=='negate': a+=['-problem_negate']
            elif t[3]=='dirichlet_scale': a+=['-problem_dirichlet_scale',t[4]]
        return a
    return ['-f','tests/data/%s.mtx'%t[0]]
out=[]
for f in rows:
    res=[]
    for np in (1,2,4):
        cmd=['mpiexec','--oversubscribe','-n',str(np),'build/tests/compare','-robust','-method','gmres','-pc_type',f[2]]+args(f[1])
        p=subprocess.run(cmd,capture_output=True,text=True,stdin=subprocess.DEVNULL)
        m=re.findall(r'^\s*(gmres|pgmresfused)\s+its\s+(\d+)\s+reason\s+(\S+)',p.stdout,re.M)
        d={k:(int(i),r) for k,i,r in m}
        ok='PASS' if p.returncode==0 else 'FAIL'
        g=d.get('gmres',(None,'?')); q=d.get('pgmresfused',(None,'?'))
        res.append((g,q,ok))
    line='| %s | %s | %s | %s | %s |'%(f[1],f[2],' / '.join(str(r[0][0]) if r[0][1].startswith('CONVERGED') else r[0][1] for r in res),' / '.join(str(r[1][0]) if r[1][1].startswith('CONVERGED') else r[1][1] for r in res),' / '.join(r[2] for r in res))
    print(line,flush=True)
