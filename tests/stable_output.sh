#!/usr/bin/env bash
# stable_output.sh: adding or editing one op changes only the files that op belongs to (its
# shard's header and .c, the op table, the registrations listing: at most 4), so an incremental
# build recompiles that shard and the table alone (docs/cli.md, "Outputs").
#
#   bash tests/stable_output.sh SCHEMAGEN [CORPUS_DIR]
#
# Over the corpus where it is present, and always over the golden case's schemas (whose glue is
# also compiled at -Werror before and after). The new op goes first in the file, so that a
# sharding by position would move every other op; it has a C signature no other op has, so it
# brings a boxing adapter of its own.
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init stable_output "$@"

NEW='- func: stable_probe(Tensor self, str mode, float[] w, Dimname d, int k=3) -> (Tensor, int)'

# changed A B: the files that differ between folders A and B by content (added and removed too).
changed() {
    (cd "$1" && ls) >"$tmp/la"
    (cd "$2" && ls) >"$tmp/lb"
    sort -u "$tmp/la" "$tmp/lb" | while read -r f; do
        cmp -s "$1/$f" "$2/$f" || echo "$f"
    done
}

# shard_of DIR LIB CNAME: the shard whose header declares the op with C name CNAME.
shard_of() {
    grep -s -l "^extern sg_op \*$3_op;$" "$1/$2"_[0-9]*.h | sed -n "s|^$1/$2_\([0-9]*\)\.h$|\1|p"
}

# compile DIR: every generated .c of DIR at -Werror.
compile() {
    local f ok=0
    for f in "$1"/*.c; do
        cc -std=c11 -Wall -Wextra -Wshadow -Werror -fsyntax-only -I"$1" -I"$root/runtime" \
            -I"$root/gen/schema" "$f" || { fail "$f does not compile"; ok=1; }
    done
    return $ok
}

# check NAME LIB CNAME BEFORE AFTER: what one op's change did to the generated files.
check() {
    local name=$1 lib=$2 cname=$3 before=$4 after=$5 k files n
    k=$(shard_of "$after" "$lib" "$cname")
    [ -n "$k" ] || k=$(shard_of "$before" "$lib" "$cname")
    [ -n "$k" ] || { fail "$name: no shard header declares $cname"; k='?'; }
    files=$(changed "$before" "$after")
    n=$(printf '%s\n' "$files" | grep -c .)
    [ "$n" -le 4 ] || fail "$name: $n files changed (at most 4): $(echo $files)"
    local f
    for f in $files; do
        case $f in
            "${lib}_$k.h" | "${lib}_$k.c" | "${lib}_table.c" | "${lib}_registrations.json") ;;
            *) fail "$name: $f changed, which is not the files of $cname (shard $k)" ;;
        esac
    done
    printf '%s\n' "$files" | grep -qx "${lib}_$k.c" || fail "$name: ${lib}_$k.c did not change"
    echo "$name: $(echo $files) (shard $k)"
}

# run_case NAME DIR INPUT EDIT_FROM EDIT_TO EDITED_CNAME ARGS...: generates INPUT, then INPUT
# with NEW first, then INPUT with one default edited, and checks each against the first.
run_case() {
    local name=$1 dir=$2 input=$3 from=$4 to=$5 edited=$6
    shift 6
    local w=$tmp/$name
    mkdir -p "$w/in"
    cp "$dir"/*.yaml "$w/in/"
    local base
    base=$(basename "$input")
    "$tool" "$@" -o "$w/gen0" "$w/in/$base" || { fail "$name: the first run failed"; return; }
    # a shard's .c includes its own header alone (a group, generated kernels and the ops they
    # call included, is one shard's), never the aggregate $lib.h
    local f
    for f in "$w/gen0/${lib}"_[0-9]*.c; do
        [ "$(grep '^#include' "$f")" = "#include \"$(basename "${f%.c}").h\"" ] ||
            fail "$name: $(basename "$f") includes $(grep '^#include' "$f" | tr '\n' ' ')"
    done
    # one op added, first in the file
    { echo "$NEW"; echo; cat "$w/in/$base"; } >"$w/add.yaml"
    cp "$w/add.yaml" "$w/in/$base"
    cp -a "$w/gen0" "$w/gen1"
    "$tool" "$@" -o "$w/gen1" "$w/in/$base" || { fail "$name: the run with an op added failed"; return; }
    check "$name: one op added" "$lib" "aten_stable_probe" "$w/gen0" "$w/gen1"
    # one default edited
    cp "$dir/$base" "$w/in/$base"
    grep -qF -- "$from" "$w/in/$base" || { fail "$name: '$from' is not in $base"; return; }
    local esc_from esc_to
    esc_from=$(printf '%s' "$from" | sed 's/[][\.*^$|/]/\\&/g')
    esc_to=$(printf '%s' "$to" | sed 's/[\&|/]/\\&/g')
    sed -i "s/$esc_from/$esc_to/" "$w/in/$base"
    cp -a "$w/gen0" "$w/gen2"
    "$tool" "$@" -o "$w/gen2" "$w/in/$base" || { fail "$name: the run with a default edited failed"; return; }
    check "$name: one default edited" "$lib" "$edited" "$w/gen0" "$w/gen2"
    GEN0=$w/gen0 GEN1=$w/gen1 GEN2=$w/gen2
}

lib=golden
run_case golden "$here/golden/codegen" ops.yaml 'float p=0.5,' 'float p=0.25,' aten_bernoulli_p \
    --lib golden --shards 2
if [ -n "${GEN0:-}" ] && command -v cc >/dev/null; then
    compile "$GEN0" && compile "$GEN1" && compile "$GEN2" && echo "golden: the glue compiles before and after"
fi

# a variant autogen makes goes with the op it comes from, though its base name differs
# (_nbl_functional from _nbl): the kernel the generator writes for it calls that op
mkdir -p "$tmp/fn"
cat >"$tmp/fn/fn.yaml" <<'EOF'
- func: _nbl(Tensor input, Tensor(a!) running_mean, float momentum) -> (Tensor, Tensor)
  dispatch:
    CPU: nbl_cpu
  autogen: _nbl_functional, _nbl.out
EOF
if "$tool" --shards 8 -o "$tmp/fn/gen" "$tmp/fn/fn.yaml"; then
    k=$(shard_of "$tmp/fn/gen" ops aten__nbl)
    for c in aten__nbl_functional aten__nbl_out; do
        [ "$(shard_of "$tmp/fn/gen" ops $c)" = "$k" ] || fail "$c is not in the shard of aten__nbl ($k)"
    done
    [ "$(grep -h '^#include' "$tmp/fn/gen/ops_$k.c")" = "#include \"ops_$k.h\"" ] ||
        fail "ops_$k.c includes another shard's header"
    echo "autogen: _nbl, _nbl_functional, _nbl.out in shard $k"
else
    fail "the autogen case did not generate"
fi

lib=ops
if [ -n "$corpus" ] && [ -r "$corpus/native_functions.yaml" ]; then
    run_case corpus "$corpus" native_functions.yaml \
        'cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08)' \
        'cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-07)' \
        aten_cosine_similarity --tags "$tmp/corpus/in/tags.yaml"
else
    echo "corpus: skipped (no native_functions.yaml given)"
fi

sg_test_done
