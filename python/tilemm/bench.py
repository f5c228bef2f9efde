"""python -m tilemm.bench: tilemm against torch.matmul FP32 and torch.compile, timed alike.

For each shape: random CUDA float32 inputs; each contender's first call is timed as its tuning
(or start-up) time, then it runs `--warmup` times and is timed `--reps` times, each call between
two CUDA events on the current stream; the median is reported. Errors are max |C - C64| /
(|A| |B|)_ij against a float64 product, in units of FP32's bound (tuner/error_bound.cpp: 2 (K + 3)
2^-24): below 1 is within it. torch.matmul runs with allow_tf32 off (true FP32); torch.compile
runs mode="max-autotune-no-cudagraphs" (its autotuning is its tuning time).

--overhead measures host time per warm call at 512 (tilemm.matmul(a, b, out=c) against
torch.matmul(a, b, out=c)), over batches short enough that the GPU queue never fills.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch

import tilemm

STANDARD_SIZES = [512, 1000, 1024, 2048, 3000, 4096, 4097, 8192]
SKINNY_SHAPES = [(16, 4096, 4096), (4096, 16, 4096), (128, 8192, 8192), (4096, 4096, 64)]
Shape = Tuple[int, int, int]


def _events_median(fn: Callable[[], object], warmup: int, reps: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _first_call_s(fn: Callable[[], object]) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def _error_units(c: torch.Tensor, ref: torch.Tensor, scale: torch.Tensor, k: int) -> float:
    unit = 2.0 * (k + 3) * 2.0 ** -24
    return float(((c.double() - ref).abs() / scale.clamp_min(1e-300)).max()) / unit


def bench_shape(shape: Shape, compile_too: bool, warmup: int, reps: int) -> Dict[str, object]:
    m, n, k = shape
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    ref = a.double() @ b.double()
    scale = a.double().abs() @ b.double().abs()
    row: Dict[str, object] = {"shape": shape}
    contenders: List[Tuple[str, Callable[[], torch.Tensor]]] = [
        ("tilemm", lambda: tilemm.matmul(a, b, precision="highest")),
        ("tilemm-high", lambda: tilemm.matmul(a, b, precision="high")),
        ("torch", lambda: torch.matmul(a, b)),
    ]
    if compile_too:
        torch._dynamo.reset()
        compiled = torch.compile(lambda x, y: x @ y, mode="max-autotune-no-cudagraphs", dynamic=False)
        contenders.append(("compile", lambda: compiled(a, b)))
    for name, fn in contenders:
        row[name + "_first_s"] = _first_call_s(fn)
        row[name + "_ms"] = _events_median(fn, warmup, reps)
        row[name + "_err"] = _error_units(fn(), ref, scale, k)
    return row


def host_overhead_us(size: int = 512, batches: int = 30, calls: int = 200) -> Dict[str, float]:
    """Median host microseconds per warm call, tilemm.matmul and torch.matmul with out=."""
    a = torch.randn(size, size, device="cuda")
    b = torch.randn(size, size, device="cuda")
    c = torch.empty(size, size, device="cuda")
    result = {}
    for name, fn in (("tilemm", lambda: tilemm.matmul(a, b, out=c)),
                     ("torch", lambda: torch.matmul(a, b, out=c))):
        fn()
        per_call = []
        for _ in range(batches):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            per_call.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
        result[name] = statistics.median(per_call)
    return result


def _header(compile_too: bool) -> str:
    head = ["shape", "tilemm ms", "TF/s", "high ms", "TF/s", "torch ms", "TF/s", "x torch",
            "high x torch"]
    if compile_too:
        head += ["compile ms", "x compile"]
    head += ["err tilemm", "err high", "err torch"] + (["err compile"] if compile_too else [])
    head += ["first tilemm s", "first high s", "first torch s"]
    return " | ".join(head + (["compile tuning s"] if compile_too else []))


def _row(r: Dict[str, object], compile_too: bool) -> str:
    s = r["shape"]

    def tf(ms: float) -> str:
        return f"{2.0 * s[0] * s[1] * s[2] / (ms * 1e-3) / 1e12:.1f}"

    def opt(key: str, fmt: str) -> List[str]:
        return ([fmt.format(r[key]) if key in r else "-"] if compile_too else [])

    cells = ["x".join(map(str, s)), f"{r['tilemm_ms']:.4f}", tf(r["tilemm_ms"]),
             f"{r['tilemm-high_ms']:.4f}", tf(r["tilemm-high_ms"]), f"{r['torch_ms']:.4f}",
             tf(r["torch_ms"]), f"{r['torch_ms'] / r['tilemm_ms']:.2f}",
             f"{r['torch_ms'] / r['tilemm-high_ms']:.2f}"]
    if compile_too:
        cells += ([f"{r['compile_ms']:.4f}", f"{r['compile_ms'] / r['tilemm_ms']:.2f}"]
                  if "compile_ms" in r else ["-", "-"])
    cells += [f"{r['tilemm_err']:.3f}", f"{r['tilemm-high_err']:.3f}", f"{r['torch_err']:.3f}"]
    cells += opt("compile_err", "{:.3f}")
    cells += [f"{r['tilemm_first_s']:.2f}", f"{r['tilemm-high_first_s']:.2f}",
              f"{r['torch_first_s']:.2f}"]
    cells += opt("compile_first_s", "{:.1f}")
    return " | ".join(cells)


def _shapes(text: Optional[str]) -> List[Shape]:
    if not text:
        return []
    shapes = []
    for item in text.split(","):
        dims = [int(d) for d in item.lower().split("x")]
        shapes.append((dims[0], dims[0], dims[0]) if len(dims) == 1 else (dims[0], dims[1], dims[2]))
    return shapes


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tilemm.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", help="shapes: N (N x N x N) or MxNxK, comma-separated; "
                        "default: the 8 standard sizes and the skinny shapes")
    parser.add_argument("--quick", action="store_true", help="512, 1024 and 4096 only, fewer reps")
    parser.add_argument("--compile-sizes", help="shapes to time torch.compile on (its tuning takes "
                        "10-40 s a shape); default: all; 'none' for none")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--overhead", action="store_true", help="also the host time per call at 512")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("tilemm.bench: no CUDA device")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    shapes = _shapes(args.sizes)
    if args.quick:
        shapes = shapes or [(s, s, s) for s in (512, 1024, 4096)]
        args.reps = min(args.reps, 15)
    shapes = shapes or [(s, s, s) for s in STANDARD_SIZES] + SKINNY_SHAPES
    if args.compile_sizes == "none":
        compile_shapes: List[Shape] = []
    else:
        compile_shapes = _shapes(args.compile_sizes) or shapes
    print(f"tilemm {tilemm.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}; "
          f"cache {tilemm.cache_path()}; median of {args.reps} after {args.warmup} warm-up calls")
    compile_too = bool(compile_shapes)
    print(_header(compile_too), flush=True)
    for shape in shapes:  # a row as soon as it is measured: a run cut short keeps its rows
        print(_row(bench_shape(shape, shape in compile_shapes, args.warmup, args.reps), compile_too),
              flush=True)
    print("x torch, x compile: their time / tilemm's (above 1: tilemm faster); err: max normalized "
          "error in units of FP32's bound; first: first call's seconds (tuning, loading, start-up)")
    if args.overhead:
        host = host_overhead_us()
        print(f"host time per warm call at 512 with out=: tilemm.matmul {host['tilemm']:.2f} us, "
              f"torch.matmul {host['torch']:.2f} us")
        for shape in shapes:
            r = tilemm.autotune(*shape)
            print(f"  {'x'.join(map(str, shape))}: the library's own timing of its winner "
                  f"{r.winner}: {r.median_ms:.4f} ms (source {r.source})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
