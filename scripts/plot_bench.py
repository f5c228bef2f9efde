#!/usr/bin/env python3
"""Turns tilemm-bench's CSV into a PNG: TFLOP/s against problem size, one line per contender and
input mode (rotated, L2-cold: solid; the same buffers, L2-warm: dashed); or, with --table, into
the README's Markdown table and geometric mean.

Usage: scripts/plot_bench.py tilemm-bench.csv docs/bench-h200.png ["title"]
       scripts/plot_bench.py --table tilemm-bench.csv
The plot needs matplotlib (pip install matplotlib); the table needs only Python 3.
"""
import csv
import math
import sys
from collections import defaultdict

LABELS = {"cublas_fp32": "cuBLAS SGEMM (FP32, pedantic)", "best_tiled": "best textbook tile",
          "tilemm": "tilemm tuned winner", "tilemm_high": "tilemm high (3xTF32)",
          "tilemm_medium": "tilemm medium (TF32)", "cublas_tf32": "cuBLAS TF32 tensor op"}
# Drawn in this order, with one colour each: the FP32 contenders, then the precision modes'
# (present when tilemm-bench ran with --precision).
CONTENDERS = ("cublas_fp32", "tilemm", "best_tiled", "tilemm_high", "tilemm_medium", "cublas_tf32")


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
    # Per contender, TFLOP/s on rotated inputs (L2-cold) and, where the bench timed it, on the
    # same buffers every launch (L2-warm): a solid and a dashed line of one colour.
    # The shapes are evenly spaced in the CSV's order (4096 and 4097 would fall on one point of a
    # size axis), each labelled N for a square N x N x N, else M x N x K.
    series, series_same = defaultdict(list), defaultdict(list)
    shapes = []
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            m, n, k = (int(x) for x in row["shape"].split("x"))
            if row["shape"] not in shapes:
                shapes.append(row["shape"])
            size = shapes.index(row["shape"])
            series[row["contender"]].append((size, float(row["tflops"])))
            same_ms = row.get("median_ms_same_inputs") or ""
            if same_ms and float(same_ms) > 0:
                series_same[row["contender"]].append((size, 2.0 * m * n * k / (float(same_ms) * 1e9)))
    fig, ax = plt.subplots(figsize=(9, 6.5), dpi=120)
    for name in CONTENDERS:
        if name not in series:
            continue
        points = sorted(series[name])
        line, = ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                        label=LABELS.get(name, name) + ", L2-cold")
        if name in series_same:
            points = sorted(series_same[name])
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", linestyle="--",
                    color=line.get_color(), label=LABELS.get(name, name) + ", L2-warm")
    ax.set_yscale("log")
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([x.split("x")[0] if len(set(x.split("x"))) == 1 else x for x in shapes])
    ax.set_xlabel("N (square N x N x N)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(sys.argv[3] if len(sys.argv) > 3 else "SGEMM on the H200")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncol=2, loc="upper left", bbox_to_anchor=(0, -0.15))
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
