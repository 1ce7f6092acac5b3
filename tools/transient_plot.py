"""Bar chart of examples/transient's CSV: milliseconds per time step of each
method, one group per problem size, GPU and CPU runs side by side.
usage: python3 tools/transient_plot.py transient.csv transient.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
sizes = sorted({(int(r["dim"]), int(r["unknowns"])) for r in rows}, key=lambda s: s[1])
bars = []  # (method label) in first-seen order
for r in rows:
    key = "%s, %s (%s)" % (r["method"], r["backend"], r["label"])
    if key not in bars:
        bars.append(key)
fig, ax = plt.subplots(figsize=(10, 5))
width = 0.8 / max(len(bars), 1)
for k, key in enumerate(bars):
    xs, ys = [], []
    for i, (dim, unknowns) in enumerate(sizes):
        for r in rows:
            if "%s, %s (%s)" % (r["method"], r["backend"], r["label"]) == key and int(r["unknowns"]) == unknowns and int(r["dim"]) == dim:
                xs.append(i + k * width)
                ys.append(float(r["ms_per_step"]))
    ax.bar(xs, ys, width, label=key)
ax.set_xticks([i + 0.4 - width / 2 for i in range(len(sizes))])
ax.set_xticklabels(["%dD, %d unknowns" % s for s in sizes])
ax.set_yscale("log")
ax.set_ylabel("ms per time step (one KSPSolve)")
ax.set_title("Backward-Euler heat equation, rtol 1e-8, Jacobi")
ax.legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
