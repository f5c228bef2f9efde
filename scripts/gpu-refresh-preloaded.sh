#!/usr/bin/env bash
# Re-tunes every shape of a shipped preloaded file on this GPU and writes the refreshed file, for
# when a template change has made its entries stale (the test
# Preloaded.ShippedFilesAreFreshForThisBuild says so).
# Usage (device tool, carry: ["build-carry.tar.xz"]):
#   scripts/gpu-refresh-preloaded.sh [preloaded file]   (default: cache/preloaded/nvidia-h200-sm90.json)
# Tunes highest first, then high and medium in the same cache, so that their tunings also time the
# shape's FP32 winner. Writes under $OUT: the export, the refreshed file, and each tuning's log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2  # device-env.sh finds the carried build in the repository root
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
shipped=$here/${1:-cache/preloaded/nvidia-h200-sm90.json}
# A private folder: CUBINs in a folder others can write are never loaded.
TILEMM_CACHE=${TILEMM_CACHE:-$(mktemp -d)/refresh.db}
export TILEMM_CACHE
for precision in highest high medium; do
  shapes=$(python3 - "$shipped" "$precision" <<'PY'
import json, sys
entries = json.load(open(sys.argv[1]))["entries"]
print(",".join(sorted({f"{e['m']}x{e['n']}x{e['k']}" for e in entries if e["precision"] == sys.argv[2]})))
PY
)
  [ -n "$shapes" ] || continue
  start=$(date +%s)
  /work/main/build/tilemm-tune --shapes "$shapes" --precision "$precision" > "$out/refresh-$precision.txt" 2>&1
  echo "tune $precision rc=$? ($(( $(date +%s) - start )) s, $(echo "$shapes" | tr ',' '\n' | wc -l) shapes)"
done
/work/main/build/tilemm-tune --export "$out/refresh-export.json"; echo "export rc=$?"
cp "$shipped" "$out/preloaded.json"
python3 "$here/scripts/splice_preloaded.py" "$out/preloaded.json" "$out/refresh-export.json" highest,high,medium
echo "splice rc=$?"
