#!/bin/sh
# Fails when a shared library asks for a glibc symbol version newer than the baseline, which
# would keep it from loading on older Linux distributions.
# Usage: check_glibc.sh <library> <baseline, e.g. 2.17>
set -eu
library=$1
baseline=$2
newest=$(objdump -T "$library" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -u -V | tail -n 1)
if [ -z "$newest" ]; then
    echo "check_glibc: $library names no glibc symbol versions; is it a Linux library?" >&2
    exit 1
fi
highest=$(printf '%s\n%s\n' "$newest" "$baseline" | sort -V | tail -n 1)
if [ "$highest" != "$baseline" ]; then
    echo "check_glibc: $library needs GLIBC_$newest, newer than the baseline $baseline:" >&2
    objdump -T "$library" | grep "GLIBC_$newest" >&2
    exit 1
fi
echo "$library needs at most GLIBC_$newest (baseline $baseline)"
