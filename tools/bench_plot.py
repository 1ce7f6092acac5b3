#!/usr/bin/env python3
"""Plots the benchmark's CSV (examples/bench -csv): time per iteration against
rows (log-log) per method and run label, and the ratio to the bandwidth floor.

    python3 tools/bench_plot.py results.csv out_prefix
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, prefix):
    rows = [r for r in csv.DictReader(open(path)) if r["label"] != "label"]
    series = defaultdict(list)
    floors = defaultdict(list)
    for r in rows:
        if not r["problem"].startswith("lap"):
            continue
        key = f"{r['method']} ({r['label']})"
        series[key].append((int(r["rows"]), float(r["us_per_iter"]), r["problem"]))
        if float(r["floor_us"]) > 0:
            floors[r["method"]].append((int(r["rows"]), float(r["us_per_iter"]) / float(r["floor_us"]), r["problem"]))
    fig, ax = plt.subplots(figsize=(7, 5))
    for key, pts in sorted(series.items()):
        pts.sort()
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=key)
    ax.set_xlabel("rows (2D and 3D Laplacians)")
    ax.set_ylabel("time per iteration [us]")
    ax.set_title("Time per iteration (Jacobi PC; ViennaCL: none, its CUDA solvers take no PC)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(prefix + "_time.png", dpi=120)
    fig, ax = plt.subplots(figsize=(7, 5))
    for key, pts in sorted(floors.items()):
        pts.sort()
        ax.semilogx([p[0] for p in pts], [p[1] for p in pts], "o-", label=key)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("rows")
    ax.set_ylabel("time / bandwidth floor")
    ax.set_title("Fused methods on the GPU against their bandwidth floor")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(prefix + "_floor.png", dpi=120)
    # each fused method against its fastest PETSc counterpart of the same run
    # label (PETSc's methods on the GPU in a CUDA PETSc), per iteration
    counterparts = {"pcgfused": ("cg", "pipecg"), "pbcgsfused": ("bcgs",), "pgmresfused": ("gmres", "pgmres")}
    times = {(r["label"], r["problem"], r["method"]): (int(r["rows"]), float(r["us_per_iter"])) for r in rows}
    speedups = defaultdict(list)
    for (label, problem, method), (nrows, us) in times.items():
        theirs = [times[(label, problem, c)][1] for c in counterparts.get(method, ()) if (label, problem, c) in times]
        if theirs and us > 0:
            speedups[f"{method} ({label})"].append((nrows, min(theirs) / us, problem))
    if speedups:
        fig, ax = plt.subplots(figsize=(7, 5))
        for key, pts in sorted(speedups.items()):
            pts.sort()
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=key)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xlabel("rows")
        ax.set_ylabel("PETSc's time per iteration / ours")
        ax.set_title("Fused methods against PETSc's fastest counterpart in the same run", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(prefix + "_speedup.png", dpi=120)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
