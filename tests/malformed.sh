#!/usr/bin/env bash
# malformed.sh: schemagen on malformed inputs. For each tests/malformed/NAME.yaml,
#     cd tests/malformed && schemagen --emit=json [ARGS] NAME.yaml
# (ARGS from NAME.args where present) must exit 1, print nothing on stdout, and print on
# stderr exactly NAME.expected. Two cases are generated rather than committed: long_line (a
# 10 MB line) and deep_nesting (100000 '['); their .expected files are committed.
#
#   bash tests/malformed.sh SCHEMAGEN [CORPUS_DIR]
#   SG_REGEN=1 bash tests/malformed.sh SCHEMAGEN    rewrites the .expected files: read the diff
set -uo pipefail

tool=${1:?usage: bash tests/malformed.sh SCHEMAGEN [CORPUS_DIR]}
case $tool in /*) ;; *) tool=$PWD/$tool ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/malformed" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
count=0

# The generated inputs, written where they run.
gen=$tmp/gen
mkdir -p "$gen"
{
    printf -- '- func: f(Tensor self, str s="'
    head -c 10485760 /dev/zero | tr '\0' x
    printf -- '", int(a) x) -> Tensor\n'
} >"$gen/long_line.yaml"
{
    printf -- '- func: f() -> ()\n  tags: '
    head -c 100000 /dev/zero | tr '\0' '['
    printf '\n'
} >"$gen/deep_nesting.yaml"

# check DIR NAME: runs one case from inside DIR, where NAME.yaml is.
check() {
    local dir=$1 name=$2 rc=0 args=()
    count=$((count + 1))
    [ -f "$here/$name.args" ] && read -r -a args <"$here/$name.args"
    (cd "$dir" && "$tool" --emit=json ${args[@]+"${args[@]}"} "$name.yaml") \
        >"$tmp/out" 2>"$tmp/err" || rc=$?
    if [ -n "${SG_REGEN:-}" ]; then
        cp "$tmp/err" "$here/$name.expected"
    elif [ ! -f "$here/$name.expected" ]; then
        echo "FAIL: $name: no $name.expected (SG_REGEN=1 makes it; read it before keeping it)" >&2
        failures=$((failures + 1))
        return
    elif ! diff -u "$here/$name.expected" "$tmp/err" >"$tmp/diff"; then
        echo "FAIL: $name: stderr differs from $name.expected:" >&2
        head -c 4000 "$tmp/diff" >&2
        failures=$((failures + 1))
    fi
    if [ "$rc" -ne 1 ]; then
        echo "FAIL: $name: exit status $rc, expected 1" >&2
        failures=$((failures + 1))
    fi
    if [ -s "$tmp/out" ]; then
        echo "FAIL: $name: printed on stdout" >&2
        failures=$((failures + 1))
    fi
}

for f in "$here"/*.yaml; do
    check "$here" "$(basename "$f" .yaml)"
done
for f in "$gen"/*.yaml; do
    check "$gen" "$(basename "$f" .yaml)"
done

# An expected output with no case is a case that was lost.
for f in "$here"/*.expected; do
    name=$(basename "$f" .expected)
    if [ ! -f "$here/$name.yaml" ] && [ ! -f "$gen/$name.yaml" ]; then
        echo "FAIL: $name.expected has no $name.yaml" >&2
        failures=$((failures + 1))
    fi
done

if [ "$failures" -ne 0 ]; then
    echo "malformed: $failures failures in $count cases" >&2
    exit 1
fi
echo "malformed: $count cases passed"
