#!/bin/sh
# Links a probe (a function calling into some layer) together with the objects of a layer and of
# the layers below it, as a shared library that may leave no symbol undefined, and checks the
# outcome the layering promises: "links" (the callee is in reach) or "fails" (the callee lives in
# a higher layer, so the linker reports it undefined: an upward call does not build).
# Usage: link_probe.sh COMPILER links|fails PROBE.cpp SYMBOL -I... -- OBJECTS... -- LIBS...
# Exit 0 as promised, 1 otherwise.
compiler=$1 expect=$2 probe=$3 symbol=$4
shift 4
flags=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags="$flags $1"; shift; done
shift
objects=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do objects="$objects $1"; shift; done
shift
# A build carried to another machine keeps no object files (scripts/make-carry.sh): nothing about
# the layering can be said there.
for object in $objects; do
  [ -f "$object" ] || { echo "skipped: this build has no object files ($object)"; exit 77; }
done
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
# shellcheck disable=SC2086
"$compiler" -std=c++17 -fPIC -c $flags "$probe" -o "$dir/probe.o" || { echo "probe did not compile"; exit 1; }
# shellcheck disable=SC2086
out=$("$compiler" -shared -o "$dir/probe.so" "$dir/probe.o" $objects -Wl,--no-undefined "$@" 2>&1)
status=$?
case $expect in
  links)
    [ $status -eq 0 ] && { echo "links: $symbol is in reach"; exit 0; }
    echo "expected the probe to link, but:"; echo "$out" | head -20; exit 1 ;;
  fails)
    if [ $status -ne 0 ] && echo "$out" | grep -q "undefined reference to .$symbol"; then
      echo "fails as promised: $symbol is undefined below its layer"; exit 0
    fi
    echo "expected an undefined reference to $symbol, got status $status:"; echo "$out" | head -20; exit 1 ;;
esac
echo "usage: link_probe.sh COMPILER links|fails PROBE.cpp SYMBOL -I... -- OBJECTS... -- LIBS..."; exit 2
