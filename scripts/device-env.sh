# Sourced by the scripts that run on the GPU machine (device tool, carry: ["build-carry.tar.xz"]).
# Unpacks the carried build (make-carry.sh packs it: the device tool carries at most 64 MiB with
# the working tree, and the unpacked build is ~300 MiB) and gives it the paths it was built with,
# /work/main and /work/main/build, which CTest's files and the tests' compiled-in paths name.
# Sets `here` (the repository copy) and `out` ($OUT, or /tmp/out).
here=$(pwd)
# Unpacked afresh at every call: a warm machine keeps the last call's build-carry/, which may be
# of another build. (GNU tar recognizes the compression.)
for packed in "$here/build-carry.tar.xz" "$here/build-carry.tgz"; do
  [ -f "$packed" ] || continue
  rm -rf "$here/build-carry" && mkdir -p "$here/build-carry" &&
    tar -xf "$packed" -C "$here/build-carry" || { echo "could not unpack $packed" >&2; exit 2; }
  break
done
[ -d "$here/build-carry" ] || { echo "no build-carry/ or build-carry.tar.xz: run scripts/make-carry.sh and carry it" >&2; exit 2; }
[ -e /work/main ] || { mkdir -p /work && ln -s "$here" /work/main; }
[ -e /work/main/build ] || ln -s "$here/build-carry" /work/main/build
out=${OUT:-/tmp/out}
mkdir -p "$out"
