# one-off profile of pgmresfused's device loop on the GPU host (run through tools/gpu-session.sh cmd)
for n in 100 1000; do
  /usr/local/cuda/bin/ncu --graph-profiling node -k regex:PGMRES -c 64 --csv --page raw --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum build/examples/solve -problem lap2d -n $n -methods pgmresfused -compare 0 -pc_type jacobi -ksp_max_it 62 -ksp_rtol 0 -ksp_atol 0 2>&1 | grep -E "PGMRES|Kernel Name" | awk -F'","' '{print $5" | "$(NF-2)" | "$(NF-1)" | "$NF}' | cut -c1-200
done
