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

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init malformed "$@"
# the cases: NAME.yaml, NAME.args, NAME.expected
cases=$here/malformed
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
    [ -f "$cases/$name.args" ] && read -r -a args <"$cases/$name.args"
    (cd "$dir" && "$tool" --emit=json ${args[@]+"${args[@]}"} "$name.yaml") \
        >"$tmp/out" 2>"$tmp/err" || rc=$?
    if [ -n "${SG_REGEN:-}" ]; then
        cp "$tmp/err" "$cases/$name.expected"
    elif [ ! -f "$cases/$name.expected" ]; then
        fail "$name: no $name.expected (SG_REGEN=1 makes it; read it before keeping it)"
        return
    elif ! diff -u "$cases/$name.expected" "$tmp/err" >"$tmp/diff"; then
        fail "$name: stderr differs from $name.expected:"
        head -c 4000 "$tmp/diff" >&2
    fi
    if [ "$rc" -ne 1 ]; then
        fail "$name: exit status $rc, expected 1"
    fi
    if [ -s "$tmp/out" ]; then
        fail "$name: printed on stdout"
    fi
}

for f in "$cases"/*.yaml; do
    check "$cases" "$(basename "$f" .yaml)"
done
for f in "$gen"/*.yaml; do
    check "$gen" "$(basename "$f" .yaml)"
done

# An expected output with no case is a case that was lost.
for f in "$cases"/*.expected; do
    name=$(basename "$f" .expected)
    if [ ! -f "$cases/$name.yaml" ] && [ ! -f "$gen/$name.yaml" ]; then
        fail "$name.expected has no $name.yaml"
    fi
done

sg_test_done "$count cases passed"
