#!/bin/bash
# ncu per-kernel summary of irregular products and solver steps (issue 22 investigation)
mkdir -p /opt && [ -f /opt/ob/env.sh ] || tar -xJf .carry/ob.tar.xz -C /opt
. /opt/ob/env.sh
export LD_LIBRARY_PATH=$PWD/build/petsc-3.26-cuda/lib:$LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$(find / -name 'libcusparse.so.12*' -not -path '/proc/*' 2>/dev/null | head -1); [ -n "$lib" ] && export LD_LIBRARY_PATH=$(dirname "$lib"):$LD_LIBRARY_PATH
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
echo "ncu: $NCU"
out=${OUT:-out}; mkdir -p $out
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
summ() { python3 - "$1" <<'PY'
import csv,sys,collections
rows=list(csv.reader(open(sys.argv[1])))
hdr=None;data=collections.OrderedDict()
for r in rows:
    if r and r[0]=='ID': hdr=r; continue
    if not hdr or len(r)!=len(hdr): continue
    d=dict(zip(hdr,r)); k=d['Kernel Name'][:70]
    m=d['Metric Name']; v=float(d['Metric Value'].replace(',','') or 0)
    key=(d['ID'],k); data.setdefault(key,{})[m]=v
agg=collections.OrderedDict()
for (i,k),m in data.items():
    a=agg.setdefault(k,[]); a.append(m)
print("%-70s %5s %9s %9s %7s %6s %4s %5s"%("kernel","n","us","MB","GB/s","grid","reg","occ%"))
for k,l in agg.items():
    t=sum(x.get('gpu__time_duration.sum',0) for x in l)/len(l)/1e3
    b=sum(x.get('dram__bytes_read.sum',0)+x.get('dram__bytes_write.sum',0) for x in l)/len(l)
    print("%-70s %5d %9.2f %9.2f %7.0f %6d %4d %5.1f"%(k,len(l),t,b/1e6,b/1e3/max(t,1e-9),l[0].get('launch__grid_size',0),l[0].get('launch__registers_per_thread',0),l[0].get('sm__warps_active.avg.pct_of_peak_sustained_active',0)))
PY
}
for m in arrow powerlaw; do
  $NCU --clock-control none --metrics $M --csv build/petsc-3.26-cuda/examples/spmv -sizes2d 0 -sizes3d 0 -$m 1000000 -reps 3 > $out/spmv-$m.csv 2>$out/spmv-$m.err
  echo "== spmv $m 10^6"; summ $out/spmv-$m.csv
done
for meth in pcgfused pbcgsfused; do for m in arrow powerlaw; do
  $NCU --clock-control none --metrics $M --csv build/petsc-3.26-cuda/examples/bench -sizes2d 0 -sizes3d 0 -$m 1000000 -methods $meth -its 4 -reps 1 -ksp_fused_device_loop 0 -mat_type aij -vec_type standard > $out/bench-$meth-$m.csv 2>$out/bench-$meth-$m.err
  echo "== $meth host-driven steps, $m 10^6"; summ $out/bench-$meth-$m.csv | head -30
done; done
# the lap2d-1000 stencil for comparison
$NCU --clock-control none --metrics $M --csv build/petsc-3.26-cuda/examples/bench -sizes2d 1000 -sizes3d 0 -methods pcgfused -its 4 -reps 1 -ksp_fused_device_loop 0 -mat_type aij -vec_type standard > $out/bench-lap.csv 2>$out/bench-lap.err
echo "== pcgfused host-driven steps, lap2d 1000"; summ $out/bench-lap.csv | head -20
