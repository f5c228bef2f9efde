#!/bin/sh
# Compiles a one-line file that includes HEADER with a layer's include directories, and checks the
# outcome the layering promises: "reaches" (a layer sees the headers of the layers below it) or
# "blocked" (a layer does not see the header of a layer above it: the compiler finds no such file).
# Usage: probe_include.sh COMPILER reaches|blocked HEADER -I... [-I...]
compiler=$1 expect=$2 header=$3
shift 3
out=$(printf '#include "%s"\n' "$header" | "$compiler" -std=c++17 -fsyntax-only "$@" -x c++ - 2>&1)
status=$?
case $expect in
  reaches)
    [ $status -eq 0 ] && { echo "reaches $header"; exit 0; }
    echo "expected to reach $header, but it did not compile:"; echo "$out" | head -20; exit 1 ;;
  blocked)
    if [ $status -ne 0 ] && echo "$out" | grep -q "$header: No such file"; then
      echo "blocked: $header is not on this layer's include path"; exit 0
    fi
    echo "expected $header to be out of reach (no such file), got status $status:"; echo "$out" | head -20; exit 1 ;;
esac
echo "usage: probe_include.sh COMPILER reaches|blocked HEADER -I..."; exit 2
