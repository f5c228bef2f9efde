#!/usr/bin/env bash
# The fleet on one GPU machine (device tool, carry: ["build-carry.tar.xz", ".carry-redis"]):
#   scripts/gpu-fleet-check.sh [folder of redis .deb files]   (default: .carry-redis)
# The build it runs: $TILEMM_BUILD when set (a build already unpacked where it was built, e.g.
# the carry of another checkout), else the carried build-carry.tar.xz that device-env.sh unpacks
# at /work/main/build.
# Unpacks redis-server from the Debian packages (dpkg -x: the machine has no package registry),
# starts it on a free loopback port without persistence, and checks (one PASS/FAIL line each):
#   1. 8 processes with separate local caches miss the same new shape at once: 1 tuning;
#   2. a 9th process with an empty local cache serves that shape with 0 tunings;
#   3. tilemm-tune --shapes-file with 24 shapes on 4 processes: each shape tuned once, all 24
#      in Redis.
# Exits non-zero when a check fails. Logs in $OUT. Budgeted searches keep it near a minute.
set -uo pipefail
if [ -n "${TILEMM_BUILD:-}" ]; then
  build=$TILEMM_BUILD
  here=$(pwd)
  out=${OUT:-/tmp/out}
  mkdir -p "$out"
  [ -x "$build/tilemm-tune" ] || { echo "FAIL: no tilemm-tune in TILEMM_BUILD=$build"; exit 2; }
else
  # shellcheck source=device-env.sh
  source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
  build=/work/main/build
fi
debs=${1:-$here/.carry-redis}
root=$(mktemp -d)
# dpkg -x, or the same in Python where dpkg is missing (a .deb is an ar archive holding data.tar.*).
unpack() {
  if command -v dpkg > /dev/null; then dpkg -x "$1" "$2"; return; fi
  python3 - "$1" "$2" <<'PY'
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
at = 8  # after "!<arch>\n"
while at < len(data):
    name = data[at:at + 16].decode().strip().rstrip("/")
    size = int(data[at + 48:at + 58].decode().strip())
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(data[at + 60:at + 60 + size])).extractall(sys.argv[2])
    at += 60 + size + (size % 2)
PY
}
for deb in "$debs"/*.deb; do unpack "$deb" "$root" || { echo "FAIL: cannot unpack $deb"; exit 2; }; done
server=$root/usr/bin/redis-server
client=$root/usr/bin/redis-cli
libs=$root/usr/lib/x86_64-linux-gnu
[ -x "$server" ] || { echo "FAIL: no redis-server in $debs"; exit 2; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LD_LIBRARY_PATH=$libs "$server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$root" --daemonize no > "$out/redis.log" 2>&1 &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null' EXIT
for _ in $(seq 100); do
  LD_LIBRARY_PATH=$libs "$client" -p "$port" ping 2>/dev/null | grep -q PONG && break
  sleep 0.1
done
LD_LIBRARY_PATH=$libs "$client" -p "$port" ping | grep -q PONG || { echo "FAIL: redis-server did not start"; cat "$out/redis.log"; exit 2; }
url=redis://127.0.0.1:$port
nodes=$(mktemp -d)
export TILEMM_REMOTE_CACHE=$url TILEMM_TUNE_BUDGET_MS=300 TILEMM_LOG=info
failed=0
verdict() {  # name, condition result (0 = pass), detail
  if [ "$2" -eq 0 ]; then echo "PASS: $1 ($3)"; else echo "FAIL: $1 ($3)"; failed=1; fi
}
head -1 "$build/SOURCE" 2>/dev/null

# 1. Eight processes, each with its own cache, miss one new shape at the same moment.
shape=419x283x157
start=$SECONDS
pids=()
for i in $(seq 1 8); do
  TILEMM_CACHE=$nodes/node$i.db "$build/tests/dispatch_child" --may-tune $shape \
    > "$nodes/node$i.out" 2> "$nodes/node$i.err" &
  pids+=($!)
done
wait "${pids[@]}"  # not redis-server, also a job of this shell
cat "$nodes"/node*.out "$nodes"/node*.err > "$out/check1.log"
tuners=$(grep -l "tunings=[1-9]" "$nodes"/node?.out | wc -l)
tuning_lines=$(grep -hE "^tilemm: info: tuning ${shape} \(.*\) on " "$nodes"/node?.err | wc -l)
wrong=$(grep -h "wrong=" "$nodes"/node?.out | grep -vc "wrong=0 ")
ended=$(grep -l "tunings=" "$nodes"/node?.out | wc -l)
[ "$tuners" -eq 1 ] && [ "$tuning_lines" -eq 1 ] && [ "$wrong" -eq 0 ] && [ "$ended" -eq 8 ]
verdict "8 processes miss $shape at once: one tunes" $? \
  "processes that tuned: $tuners, tuning lines: $tuning_lines, ended: $ended/8, wrong results: $wrong, $((SECONDS - start)) s"

# 2. A ninth process with an empty cache is served by the fleet.
TILEMM_CACHE=$nodes/node9.db "$build/tests/dispatch_child" --may-tune $shape \
  > "$nodes/node9.out" 2> "$nodes/node9.err"
cat "$nodes/node9.out" "$nodes/node9.err" > "$out/check2.log"
grep -q "tunings=0" "$nodes/node9.out" && grep -q "wrong=0 " "$nodes/node9.out" &&
  grep -q "served from the fleet's store" "$nodes/node9.err"
verdict "a 9th process with an empty cache" $? "$(grep -h tunings= "$nodes/node9.out")"

# 3. Four tilemm-tune processes share a list of 24 shapes (two in worker processes, two in-process).
shapes=$nodes/shapes.txt
for m in 136 200 264 328 392 456; do for n in 152 280; do for k in 72 104; do
  echo "${m}x${n}x${k}"; done; done; done > "$shapes"
start=$SECONDS
pids=()
for i in 1 2 3 4; do
  mode=""; [ "$i" -gt 2 ] && mode=--in-process
  "$build/tilemm-tune" --shapes-file "$shapes" --remote "$url" --cache "$nodes/tune$i.db" \
    --budget-ms 300 $mode > "$nodes/tune$i.out" 2> "$nodes/tune$i.err" &
  pids+=($!)
done
wait "${pids[@]}"
cat "$nodes"/tune?.out "$nodes"/tune?.err > "$out/check3.log"
"$build/tilemm-tune" --list --remote "$url" > "$out/fleet-list.txt" 2>&1
once=0 in_redis=0
while read -r s; do
  [ "$(grep -h "^tuning $s (fleet lease taken)" "$nodes"/tune?.out | wc -l)" -eq 1 ] && once=$((once + 1))
  grep -Eq " $s +a4-dense +highest " "$out/fleet-list.txt" && in_redis=$((in_redis + 1))
done < "$shapes"
per_process=$(for i in 1 2 3 4; do grep -c "fleet lease taken" "$nodes/tune$i.out"; done | tr '\n' ' ')
[ "$once" -eq 24 ] && [ "$in_redis" -eq 24 ]
verdict "tilemm-tune --shapes-file, 24 shapes on 4 processes" $? \
  "tuned once: $once/24, in Redis: $in_redis/24, per process: $per_process, $((SECONDS - start)) s"
exit $failed
