#!/usr/bin/env python3
"""Writes a valid tilemm-tune --import file of N entries, for measuring what an import costs.

Usage: scripts/make-import-file.py N > big.json
Each entry has a distinct shape, its winner and one losing candidate, like an exported entry of a
short tuning; the numbers in docs/cache-format.md ("What size an import handles") come from
N = 200000 and `/usr/bin/time -v build/tilemm-tune --cache /tmp/big.db --import big.json`.
"""
import json
import sys


def entry(i):
    m = 1 + i
    return {
        "device_key": "NVIDIA H200|sm_90|132sm|143771MiB",
        "arch": "sm_90",
        "m": m, "n": 64 + i % 4096, "k": 128,
        "problem_class": "a4-dense",
        "precision": "highest",
        # As if tuned with vendor candidates: the key tilemm-fleet-lookup-bench looks up.
        "candidate_set": "with_vendor",
        "winner": "tiled_t32_p0",
        "median_ms": 0.241, "tflops": 8.91, "margin": 0.043,
        "tuned_at": "2026-11-29T17:02:11Z",
        "tilemm_version": "0.1.0",
        "template_hash": "9363e459f3cabb68",
        "nvrtc_version": 13000, "driver_version": 13000,
        "source": "tuned",
        "candidates": [
            {"variant": "tiled_t32_p0", "status": "ok", "reason": "", "median_ms": 0.241,
             "min_ms": 0.238, "spread": 0.012, "samples": 124, "compile_ms": 19.6},
            {"variant": "naive", "status": "pruned", "reason": "slower than the tiled variants",
             "median_ms": 0.0, "min_ms": 0.0, "spread": 0.0, "samples": 0, "compile_ms": 0.0},
        ],
    }


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: make-import-file.py N > file.json")
    n = int(sys.argv[1])
    out = sys.stdout
    out.write('{\n  "entries": [\n')
    for i in range(n):
        # Laid out like tilemm-tune --export (sorted keys, two-space indent).
        text = json.dumps(entry(i), indent=2, sort_keys=True).replace("\n", "\n    ")
        out.write("    " + text + (",\n" if i + 1 < n else "\n"))
    out.write('  ],\n  "format": "tilemm-tuning",\n  "format_version": 3\n}\n')


if __name__ == "__main__":
    main()
