#!/usr/bin/env python3
"""Turns tilemm-bench's CSV into a PNG: TFLOP/s against problem size, one line per contender;
or, with --table, into the README's Markdown table and geometric mean.

Usage: scripts/plot_bench.py tilemm-bench.csv docs/bench-h200.png ["title"]
       scripts/plot_bench.py --table tilemm-bench.csv
The plot needs matplotlib (pip install matplotlib); the table needs only Python 3.
"""
import csv
import math
import sys
from collections import defaultdict

LABELS = {"cublas_fp32": "cuBLAS SGEMM (FP32, pedantic)", "best_tiled": "best textbook tile",
          "tilemm": "tilemm tuned winner"}


def table(path):
    """The README's table: one row per shape, cuBLAS, tilemm and the best textbook tile."""
    rows = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows[row["shape"]][row["contender"]] = row
    print("| N | cuBLAS TFLOP/s | tilemm winner | tilemm TFLOP/s | cuBLAS/tilemm | same inputs: "
          "cuBLAS/tilemm | err/cuBLAS | best textbook tile TFLOP/s |")
    print("|---|---|---|---|---|---|---|---|")
    ratios, ratios_same = [], []
    for shape, by in rows.items():
        m, n, k = shape.split("x")
        size = m if m == n == k else shape
        cublas, tilemm, tiled = by["cublas_fp32"], by["tilemm"], by["best_tiled"]
        ratios.append(float(tilemm["cublas_over_this"]))
        same = tilemm.get("cublas_over_this_same_inputs") or ""
        if same:
            ratios_same.append(float(same))
        same_text = f"{float(same):.2f}" if same else "-"
        print(f"| {size} | {float(cublas['tflops']):.1f} | {tilemm['variant']} "
              f"| {float(tilemm['tflops']):.1f} | {float(tilemm['cublas_over_this']):.2f} "
              f"| {same_text} | {float(tilemm['err_over_cublas_err']):.2f} "
              f"| {float(tiled['tflops']):.1f} |")

    def geomean(values):
        return math.exp(sum(math.log(r) for r in values) / len(values))
    line = f"\nGeometric mean of cuBLAS time / tilemm time: **{geomean(ratios):.3f}** (rotated inputs, L2-cold)"
    if len(ratios_same) == len(ratios):
        line += f", **{geomean(ratios_same):.3f}** (same inputs, L2-warm)"
    print(line)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        table(sys.argv[2])
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
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
