#!/usr/bin/env python3
"""Turns tilemm-bench's CSV into a PNG: TFLOP/s against problem size, one line per contender.

Usage: scripts/plot_bench.py tilemm-bench.csv docs/bench-h200.png ["title"]
Needs matplotlib (pip install matplotlib).
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LABELS = {"cublas_fp32": "cuBLAS SGEMM (FP32, pedantic)", "best_tiled": "best textbook tile",
          "tilemm": "tilemm tuned winner"}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    series = defaultdict(list)
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            m, n, k = (int(x) for x in row["shape"].split("x"))
            size = round((m * n * k) ** (1 / 3))
            series[row["contender"]].append((size, float(row["tflops"])))
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    for name in ("cublas_fp32", "tilemm", "best_tiled"):
        if name in series:
            points = sorted(series[name])
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                    label=LABELS.get(name, name))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N (square N x N x N; cube root of M*N*K otherwise)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(sys.argv[3] if len(sys.argv) > 3 else "SGEMM on the H200")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
