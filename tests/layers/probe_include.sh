#!/bin/sh
# Compiles a one-line file that includes HEADER with a layer's include directories, and checks the
# outcome the layering promises: "reaches" (a layer sees the headers of the layers below it) or
# "blocked" (a layer does not see the header of a layer above it: the compiler finds no such file).
# Usage: probe_include.sh COMPILER reaches|blocked HEADER -I... [-I...]
# Exit 0 as promised, 1 otherwise, 77 (skipped) where a system header is missing.
compiler=$1 expect=$2 header=$3
shift 3
out=$(printf '#include "%s"\n' "$header" | "$compiler" -std=c++17 -fsyntax-only "$@" -x c++ - 2>&1)
status=$?
case $expect in
  reaches)
    [ $status -eq 0 ] && { echo "reaches $header"; exit 0; }
    # A system header the build machine had and this one lacks (the GPU machine has no SQLite
    # headers): nothing about the layering can be said here.
    missing=$(echo "$out" | sed -n 's/.*fatal error: \(.*\): No such file.*/\1/p' | head -1)
    if [ -n "$missing" ] && ! find "$(dirname "$0")/../.." -name "$(basename "$missing")" -path "*/$missing" \
        -not -path "*/build*" | grep -q .; then
      echo "skipped: this machine lacks <$missing>, a system header the layer needs"; exit 77
    fi
    echo "expected to reach $header, but it did not compile:"; echo "$out" | head -20; exit 1 ;;
  blocked)
    if [ $status -ne 0 ] && echo "$out" | grep -q "$header: No such file"; then
      echo "blocked: $header is not on this layer's include path"; exit 0
    fi
    echo "expected $header to be out of reach (no such file), got status $status:"; echo "$out" | head -20; exit 1 ;;
esac
echo "usage: probe_include.sh COMPILER reaches|blocked HEADER -I..."; exit 2
