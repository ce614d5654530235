#!/usr/bin/env bash
# clang_check.sh CLANG GLUE_DIR INCLUDE...: every generated C file of GLUE_DIR compiles with
# clang at -std=c11 -Wall -Wextra -Wpedantic -Werror (syntax and semantics; no code).
set -uo pipefail
clang=$1 glue=$2
shift 2
inc=(-I"$glue")
for d in "$@"; do inc+=(-I"$d"); done
status=0
for f in "$glue"/*.c; do
    "$clang" -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only "${inc[@]}" "$f" || status=1
done
[ "$status" -eq 0 ] && echo "clang_check: $(ls "$glue"/*.c | wc -l) files compile with clang"
exit "$status"
