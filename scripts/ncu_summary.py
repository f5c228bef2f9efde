#!/usr/bin/env python3
"""Summarizes `ncu --csv --page raw` output: one line per kernel name (launches, median duration,
SM and DRAM throughput, achieved occupancy, registers, grid, block, dynamic and static shared
memory) and its three largest warp-stall reasons. Usage: ncu_summary.py FILE.csv"""
import csv
import re
import statistics
import sys

# Each column: the first of its metric names that the file has (ncu versions name some apart).
WANTED = {
    "us": ["gpu__time_duration.sum"],
    "sm%": ["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
    "dram%": ["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
              "dram__throughput.avg.pct_of_peak_sustained_elapsed"],
    "occ%": ["sm__warps_active.avg.pct_of_peak_sustained_active"],
    "regs": ["launch__registers_per_thread"],
    "grid": ["launch__grid_size"],
    "block": ["launch__block_size"],
    "dsmem": ["launch__shared_mem_per_block_dynamic"],
    "ssmem": ["launch__shared_mem_per_block_static"],
}
# Warp-stall metrics: "...issue_stalled_<reason>[_per_...].ratio".
STALL = re.compile(r"issue_stalled_([a-z_]+?)(?:_per_[a-z_]+)?\.ratio$")


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main(path):
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own lines come first
    rows = list(csv.reader(lines))
    if len(rows) < 3:
        print(f"{path}: no kernels profiled")
        return 1
    header, units, data = rows[0], rows[1], rows[2:]
    column = {name: i for i, name in enumerate(header)}
    name_at = column.get("Kernel Name")
    kernels = {}
    for row in data:
        kernels.setdefault(row[name_at][:60], []).append(row)
    stalls = [(n, STALL.search(n).group(1)) for n in header if STALL.search(n)]
    print(f"{'kernel':60} {'n':>3} " + " ".join(f"{k:>8}" for k in WANTED))
    for name, launches in sorted(kernels.items()):
        cells = []
        for key, names in WANTED.items():
            i = next((column[n] for n in names if n in column), None)
            values = [number(r[i]) for r in launches] if i is not None else []
            values = [v for v in values if v is not None]
            value = statistics.median(values) if values else float("nan")
            if key == "us" and i is not None and units[i] == "nsecond":
                value /= 1000.0
            if key == "us" and i is not None and units[i] == "msecond":
                value *= 1000.0
            cells.append(f"{value:8.1f}")
        print(f"{name:60} {len(launches):3d} " + " ".join(cells))
        ranked = []
        for metric, why in stalls:
            values = [number(r[column[metric]]) for r in launches]
            values = [v for v in values if v is not None]
            if values:
                ranked.append((statistics.median(values), why))
        ranked.sort(reverse=True)
        if ranked:
            print("    stalls: " + ", ".join(f"{why} {v:.1f}" for v, why in ranked[:3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
