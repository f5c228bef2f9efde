# Sourced by the scripts that run on the GPU machine (device tool, carry: ["build-carry.tgz"]).
# Unpacks the carried build (make-carry.sh packs it: the device tool carries at most 64 MiB with
# the working tree, and the unpacked build is ~62 MiB) and gives it the paths it was built with,
# /work/main and /work/main/build, which CTest's files and the tests' compiled-in paths name.
# Sets `here` (the repository copy) and `out` ($OUT, or /tmp/out).
here=$(pwd)
# Unpacked afresh at every call: a warm machine keeps the last call's build-carry/, which may be
# of another build.
if [ -f "$here/build-carry.tgz" ]; then
  rm -rf "$here/build-carry" && mkdir -p "$here/build-carry" &&
    tar -xzf "$here/build-carry.tgz" -C "$here/build-carry" || { echo "could not unpack build-carry.tgz" >&2; exit 2; }
fi
[ -d "$here/build-carry" ] || { echo "no build-carry/ or build-carry.tgz: run scripts/make-carry.sh and carry it" >&2; exit 2; }
[ -e /work/main ] || { mkdir -p /work && ln -s "$here" /work/main; }
[ -e /work/main/build ] || ln -s "$here/build-carry" /work/main/build
out=${OUT:-/tmp/out}
mkdir -p "$out"
