#!/usr/bin/env bash
# Copies build/ into build-carry/ without what the GPU machine does not need (objects, static
# libraries, CMake's per-target folders), strips the programs, and packs the result into
# build-carry.tar.xz: the device tool carries at most 64 MiB with the working tree, and the
# unpacked build is ~300 MiB (every test program embeds the preloaded files), ~60 MB with gzip and
# ~41 MB with xz. Carry the .tar.xz; scripts/device-env.sh unpacks it there.
# Usage: scripts/make-carry.sh [build] [build-carry]
set -euo pipefail
src=${1:-build}
dst=${2:-build-carry}
# Built first: a carry older than the tree would run other templates than the ones its SOURCE names,
# and the results it measures would carry their hash.
cmake --build "$src" -j"$(nproc)" > /dev/null
rm -rf "$dst"
mkdir -p "$dst"
tar -C "$src" --exclude='*.o' --exclude='*_link_check.so' --exclude='*.a' --exclude='CMakeFiles/*.dir' --exclude='./generated' --exclude='./Testing' -cf - . | tar -C "$dst" -xf -
find "$dst" -type f -executable \( -name "test_*" -o -name "tilemm-*" -o -name dispatch_child \
  -o -name "fuzz_*" -o -name "c_api_smoke" -o -name "*.so*" \) -exec strip --strip-unneeded {} \; 2>/dev/null || true
# Which source the binaries come from, for the reports of the scripts that run them
# (gpu-sanitize-all.sh puts it on its summary's first line).
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ", with uncommitted changes" || true)
echo "source: commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$dirty, carried $(date -u '+%F %T') UTC" > "$dst/SOURCE"
cat "$dst/SOURCE"
rm -f "$dst.tgz"  # an older carry
tar -C "$dst" -cf - . | xz -T0 -9 > "$dst.tar.xz"
du -sh "$dst" "$dst.tar.xz"
