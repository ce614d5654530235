#!/usr/bin/env bash
# compile_fail.sh CC SOURCE GLUE_DIR INCLUDE...: SOURCE must compile with -DRIGHT and must fail
# to compile without it, for an incompatible pointer type (not for any other reason).
set -uo pipefail
cc=$1 src=$2 glue=$3
shift 3
inc=(-I"$glue")
for d in "$@"; do inc+=(-I"$d"); done
flags=(-std=c11 -Wall -Wextra -Wpedantic -Werror -Werror=incompatible-pointer-types -fsyntax-only)
if ! "$cc" "${flags[@]}" "${inc[@]}" -DRIGHT "$src"; then
    echo "FAIL: the control (the right kernel type) does not compile" >&2
    exit 1
fi
if out=$("$cc" "${flags[@]}" "${inc[@]}" "$src" 2>&1); then
    echo "FAIL: a kernel of the wrong C type compiled" >&2
    exit 1
fi
if ! grep -q "incompatible pointer type" <<<"$out"; then
    echo "FAIL: it failed, but not for the kernel's type:" >&2
    echo "$out" >&2
    exit 1
fi
echo "compile_fail: the wrong kernel type is refused at compile time"
