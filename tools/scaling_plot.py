#!/usr/bin/env python3
"""Plots of the multi-GPU runs of tools/gpu-scaling.sh (issue 5).
usage: python3 tools/scaling_plot.py scaling.csv out.png
Left: strong scaling on 400^3 (speed-up over 1 GPU, with the ideal line).
Right: weak scaling at 16M rows per GPU (us per iteration against GPUs;
at 4 GPUs the weak case is the strong run on 400^3)."""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
methods = sorted({r["method"] for r in rows})
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
for m in methods:
    strong = {int(r["ranks"]): float(r["us_per_iter"]) for r in rows if r["method"] == m and r["label"].startswith("strong")}
    weak = {int(r["ranks"]): float(r["us_per_iter"]) for r in rows if r["method"] == m and r["label"].startswith("weak")}
    if 4 in strong:
        weak[4] = strong[4]  # 64M rows on 4 GPUs is 16M per GPU
    if 1 in strong:
        n = sorted(strong)
        ax1.plot(n, [strong[1] / strong[k] for k in n], "o-", label=f"{m} ({strong[1]:.0f} us on 1 GPU)")
    n = sorted(weak)
    ax2.plot(n, [weak[k] for k in n], "o-", label=m)
most = max(int(r["ranks"]) for r in rows)
ax1.plot([1, most], [1, most], "k--", lw=0.8, label="ideal")
ax1.set(xlabel="GPUs", ylabel="speed-up over 1 GPU", title="strong scaling, 3D Laplacian 400^3 (64M rows)")
ax2.set(xlabel="GPUs", ylabel="us per iteration", title="weak scaling, 16M rows per GPU", ylim=(0, None))
for ax in (ax1, ax2):
    ax.set_xticks(range(1, most + 1))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle(f"{rows[0]['device']}, one rank per GPU, Jacobi", fontsize=10)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
