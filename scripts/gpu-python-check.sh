#!/usr/bin/env bash
# The Python package on the GPU machine, which has Python, torch, CuPy, JAX, nanobind and
# scikit-build-core but no package registry: unpacks the Debian packages the library's build needs
# (downloaded here with `apt-get download libsqlite3-dev libsqlite3-0 nlohmann-json3-dev
# libhiredis-dev` into DEBS_DIR and carried), builds and installs tilemm with pip, runs pytest
# and a benchmark.
#   scripts/gpu-python-check.sh DEBS_DIR [python -m tilemm.bench arguments...]
# Logs (build.log, pytest.log, bench.log) go to $OUT (or /tmp/tilemm-python-check); the pytest
# summary and the benchmark table are printed. Steps have time limits: TIME_BUILD, TIME_TESTS,
# TIME_BENCH (seconds).
set -uo pipefail
debs=${1:?usage: scripts/gpu-python-check.sh DEBS_DIR [bench args...]}
shift
out=${OUT:-/tmp/tilemm-python-check}
mkdir -p "$out"
cd "$(dirname "$0")/.."

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import sys, torch, nanobind, scikit_build_core as s; print('python', sys.version.split()[0], 'torch', torch.__version__, 'nanobind', nanobind.__version__, 'scikit-build-core', s.__version__)"

prefix=/tmp/tilemm-debs  # never /: these packages are only the build's headers and libraries
mkdir -p "$prefix"
for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
lib=$prefix/usr/lib/x86_64-linux-gnu
export CMAKE_PREFIX_PATH=$prefix/usr  # nlohmann_json's package file
export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
export CMAKE_GENERATOR=Ninja
start=$(date +%s)
timeout "${TIME_BUILD:-300}" python3 -m pip install --no-build-isolation --no-deps -v . \
  -C cmake.define.SQLite3_INCLUDE_DIR="$prefix/usr/include" \
  -C cmake.define.SQLite3_LIBRARY="$lib/libsqlite3.so" \
  -C cmake.define.TILEMM_HIREDIS_INCLUDE="$prefix/usr/include" \
  -C cmake.define.TILEMM_HIREDIS="$lib/libhiredis.a" \
  -C cmake.define.nanobind_DIR="$(python3 -m nanobind --cmake_dir)" \
  > "$out/build.log" 2>&1
rc=$?
echo "build: exit $rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then tail -40 "$out/build.log"; exit $rc; fi

cd /tmp  # the installed package, not the source tree
export PYTHONUNBUFFERED=1
# One call first: where it crashes, a backtrace (cuda-gdb is the machine's debugger) says more
# than a test log.
smoke='import cupy, tilemm; a = cupy.ones((64, 64), dtype=cupy.float32); print("smoke:", float(tilemm.matmul(a, a)[0, 0]))'
timeout 60 python3 -c "$smoke" > "$out/smoke.log" 2>&1
smoke_rc=$?
tail -5 "$out/smoke.log"
if [ $smoke_rc -ne 0 ]; then
  TILEMM_LOG=debug timeout 120 cuda-gdb -batch -ex "set pagination off" -ex run -ex bt \
    --args python3 -c "$smoke" > "$out/gdb.log" 2>&1
  grep -v "^\[New Thread\|^\[Thread" "$out/gdb.log" | tail -60
  exit 1
fi
start=$(date +%s)
timeout "${TIME_TESTS:-240}" python3 -m pytest "$OLDPWD/python/tests" -q -rs -p no:cacheprovider \
  > "$out/pytest.log" 2>&1
test_rc=$?
echo "pytest: exit $test_rc after $(( $(date +%s) - start )) s"
grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" "$out/pytest.log" | tail -25
[ $test_rc -ne 0 ] && grep -B5 -A40 "^_____" "$out/pytest.log" | head -150

start=$(date +%s)
timeout "${TIME_BENCH:-240}" python3 -m tilemm.bench "$@" > "$out/bench.log" 2>&1
bench_rc=$?
echo "bench: exit $bench_rc after $(( $(date +%s) - start )) s"
tail -30 "$out/bench.log"
exit $(( test_rc != 0 || bench_rc != 0 ))
