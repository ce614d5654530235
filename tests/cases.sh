#!/usr/bin/env bash
# cases.sh: the conformance case plan (--emit=cases, docs/conformance.md): every op of
# aten_core.yaml covered, the same bytes on every run, one line per case with a token per
# argument, and the cases each rule must give.
#
#   bash tests/cases.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init cases "$@"
core=$root/schemas/aten_core.yaml

t 0 --emit=cases "$core"
plan=$out
[ -n "$plan" ] || fail_now "no plan"
"$tool" --emit=cases "$core" | cmp -s - "$tmp/out" || fail "two runs gave different plans"

# the banner names the input; the last line counts
has "$(head -n1 <<<"$plan")" "aten_core.yaml"
nops=$(grep -c '^- func:' "$core")
has "$(tail -n1 <<<"$plan")" "$nops of $nops ops covered"
ncases=$(grep -vc '^#' <<<"$plan")
[ "$ncases" -ge 20000 ] || fail "$ncases cases, fewer than 20000"
[ "$(grep -v '^#' <<<"$plan" | sort | uniq -d | wc -l)" -eq 0 ] || fail "a case twice"

# every line: a family, a qualified op, an overload (or -), then arguments
bad=$(grep -v '^#' <<<"$plan" |
    grep -Ev '^(pointwise|reduction|view|factory|random|other) [a-z_]+::[A-Za-z0-9_]+ [A-Za-z0-9_-]+( [^ ]+)*$' |
    head -n3)
[ -z "$bad" ] || fail "malformed lines: $bad"

# one token per schema argument: add.out has four (self, other, alpha, out)
while read -r line; do
    set -- $line
    [ $# -eq 7 ] || fail "add.out: $((${#} - 3)) arguments in: $line"
done < <(grep '^pointwise aten::add out ' <<<"$plan" | head -n5)

# what the rules must give (one line each)
want() { grep -qxF "$1" <<<"$plan" || fail "no case: $1"; }
want 'pointwise aten::add Tensor tfloat32:2x3:c:n tfloat32:2x3:c:n si1'     # primary
want 'pointwise aten::add Tensor tbfloat16:2x3:c:n tbfloat16:2x3:c:n si1'   # every dtype
want 'pointwise aten::add Tensor tint64:2x3:e:n tint64:2x3:c:n si1'         # expanded
want 'pointwise aten::add Tensor tfloat32:2x1:c:n tfloat32:1x3:c:n si1'     # broadcast
want 'pointwise aten::add Tensor tfloat32:2x3:c:n tint64:2x3:c:n si1'       # promotion
want 'pointwise aten::add Tensor tint8:2x3:c:n tint8:2x3:c:n si300'         # Scalar overflow
want 'pointwise aten::add Tensor tfloat32:2x3:c:n tfloat32:2x3:c:n sf0.5'   # Scalar kinds
want 'pointwise aten::add out tfloat16:2x3:c:n tfloat16:2x3:c:n si1 tfloat32:0:c:z' # wider out
want 'pointwise aten::sin - tfloat32:1x2x1x2x1x2:c:n'                       # rank 6
want 'reduction aten::sum dim_IntList tfloat32:2x3x4:c:n l1,-2 b0 N'        # a dim twice
want 'reduction aten::sum dim_IntList tfloat32:2x3x4:c:n N b1 N'            # keepdim
want 'reduction aten::sum dim_IntList tfloat32:2x3x4:c:n N b0 dfloat64'     # dtype=
want 'other aten::gather - tint32:2x3:c:n i1 tint32:2x3:c:x2 b0'            # index dtype
want 'other aten::eq_ Scalar tfloat32:2x3:c:n si2'                          # in-place

t 2 --emit=plans "$core"
has "$err" "unknown --emit kind 'plans'"
sg_test_done "$ncases cases, $nops ops"
