#!/usr/bin/env bash
# golden.sh: compares the front end's outputs with the expected files under tests/golden/.
#
#   bash tests/golden.sh SCHEMAGEN [CORPUS_DIR]     compare (what ctest runs)
#   bash tests/golden.sh --update SCHEMAGEN         rewrite the expected files from the tool
#
# A case is a folder tests/golden/CASE/. Its inputs are every *.yaml in the folder, in name
# order, given by plain file name from inside the folder, so outputs that name their inputs do
# not depend on where the checkout lives. Expected outputs:
#   ops.json       schemagen --emit=json *.yaml            (front-end cases)
#   ops.canonical  schemagen --emit=canonical *.yaml
#   expected/      schemagen $(cat args) -o DIR *.yaml     (code-generation cases: every
#                  generated file, compared byte for byte; `args` holds the options)
# An updated expected file is reviewed like code: read the diff before committing it.
set -uo pipefail

update=0
if [ "${1:-}" = "--update" ]; then
    update=1
    shift
fi
if [ $# -lt 1 ]; then
    echo "usage: bash tests/golden.sh [--update] SCHEMAGEN [CORPUS_DIR]" >&2
    exit 2
fi
# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init golden "$@"
cases=0

# check CASE_DIR NAME EMIT INPUTS...: runs the tool and compares with (or updates) CASE_DIR/NAME.
check() {
    local dir=$1 name=$2 emit=$3
    shift 3
    local got=$tmp/$name rc=0
    (cd "$dir" && "$tool" --emit="$emit" "$@") >"$got" 2>"$tmp/stderr" || rc=$?
    if [ "$rc" -ne 0 ] || [ -s "$tmp/stderr" ]; then
        fail "$dir: schemagen --emit=$emit exited $rc"
        cat "$tmp/stderr" >&2
    elif [ "$update" -eq 1 ]; then
        cmp -s "$got" "$dir/$name" || { cp "$got" "$dir/$name" && echo "updated $dir/$name"; }
    elif ! diff -u "$dir/$name" "$got" >"$tmp/diff"; then
        fail "$dir/$name differs from the tool's output:"
        head -n 60 "$tmp/diff" >&2
    fi
}

# check_gen CASE_DIR INPUTS...: generates into a fresh folder and compares it with expected/.
check_gen() {
    local dir=$1 rc=0
    shift
    local -a args
    read -r -a args <"$dir/args"
    rm -rf "$tmp/gen"
    (cd "$dir" && "$tool" "${args[@]}" -o "$tmp/gen" "$@") >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
    if [ "$rc" -ne 0 ] || [ -s "$tmp/stderr" ]; then
        fail "$dir: schemagen ${args[*]} -o exited $rc"
        cat "$tmp/stderr" >&2
    elif [ "$update" -eq 1 ]; then
        if ! diff -r -q "$dir/expected" "$tmp/gen" >/dev/null 2>&1; then
            rm -rf "$dir/expected" && cp -r "$tmp/gen" "$dir/expected" && echo "updated $dir/expected"
        fi
    elif ! diff -ru "$dir/expected" "$tmp/gen" >"$tmp/diff"; then
        fail "$dir/expected differs from the generated files:"
        head -n 80 "$tmp/diff" >&2
    fi
}

for dir in "$here"/golden/*/; do
    dir=${dir%/}
    if [ -f "$dir/args" ]; then
        inputs=()
        for f in "$dir"/*.yaml; do inputs+=("$(basename "$f")"); done
        cases=$((cases + 1))
        check_gen "$dir" "${inputs[@]}"
        continue
    fi
    [ -f "$dir/ops.json" ] || continue
    inputs=()
    for f in "$dir"/*.yaml; do inputs+=("$(basename "$f")"); done
    cases=$((cases + 1))
    check "$dir" ops.json json "${inputs[@]}"
    check "$dir" ops.canonical canonical "${inputs[@]}"
done

[ "$cases" -ne 0 ] || sg_test_skip "no golden cases under $here/golden"
[ "$failures" -eq 0 ] || [ "$update" -eq 1 ] ||
    echo "(if the change is intended: bash tests/golden.sh --update $1)" >&2
sg_test_done "$cases case(s) match"
