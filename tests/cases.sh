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
want 'pointwise aten::add Tensor tfloat32:2x3:c:n tfloat32:2x3:t:n si1'     # second transposed
want 'reduction aten::sum dim_IntList tfloat32:2x3x4:p:n N b0 N'            # 3-d permuted
want 'pointwise aten::add Tensor tbfloat16:2x67:c:n tbfloat16:2x67:c:n si1' # long rows
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

# ---- the override file (--case-overrides, docs/conformance.md "The overrides") ----
over=$root/tests/conformance/overrides.txt
t 0 --emit=cases --case-overrides "$over" "$core"
oplan=$out
"$tool" --emit=cases --case-overrides "$over" "$core" | cmp -s - "$tmp/out" ||
    fail "overrides: two runs gave different plans"
has "$(head -n1 <<<"$oplan")" "aten_core.yaml with overrides.txt"
has "$(tail -n1 <<<"$oplan")" "$nops of $nops ops covered"
[ "$(grep -v '^#' <<<"$oplan" | sort | uniq -d | wc -l)" -eq 0 ] || fail "overrides: a case twice"
owant() { grep -qxF "$1" <<<"$oplan" || fail "overrides: no case: $1"; }
onot() { ! grep -qxF "$1" <<<"$oplan" || fail "overrides: a case the facts replace: $1"; }
owant 'other aten::mm - tfloat32:2x3:c:n tfloat32:3x4:c:n'             # sizes=
onot 'other aten::mm - tfloat32:2x3:c:n tfloat32:2x3:c:n'
owant 'other aten::mm - tfloat32:2x3:t:n tfloat32:3x4:c:n'             # the layouts still vary
owant 'other aten::mm - tfloat32:0x3:c:n tfloat32:3x4:c:n'             # ... and the first's sizes
owant 'other aten::mm - tint64:2x3:c:n tint64:3x4:c:n'                 # ... and the dtypes
owant 'other aten::mm out tfloat32:2x3:c:n tfloat32:3x4:c:n tfloat32:0:c:z' # every overload
owant 'pointwise aten::log - tfloat32:2x3:c:p'                          # values=
owant 'pointwise aten::log_ - tfloat32:2x3:c:p'                         # the in-place form too
owant 'other aten::sort values tfloat32:2x3:c:n i-1 b0 tfloat32:0:c:z tint64:0:c:z' # dtype=
ln='other aten::layer_norm - tfloat32:2x3:c:n l3 tfloat32:3:c:n tfloat32:3:c:n'
owant "$ln f1.0000000000000001e-05 b1"                                  # token=
owant "$ln f0.25 b1"                                                    # ... and its variants
sc='T[tfloat32:1x3:c:z,tfloat32:1x3:c:z]'                                # a Tensor[]'s sizes
owant "other aten::split_copy Tensor_out tfloat32:2x3:c:n i1 i0 $sc"
owant 'other aten::_softmax - tfloat32:1x2048:c:n i-1 b0'               # an extra case
owant 'pointwise aten::clamp_ - tfloat32:2x3:c:n N N'                       # ... for NAME_ too
owant 'pointwise aten::clamp - tfloat32:2x3:c:n si-2 si2'
owant 'pointwise aten::clamp - tfloat32:2x3:c:n sf0.5 si2'
owant 'other aten::mm dtype tfloat32:2x3:c:n tfloat32:3x4:c:n dfloat64' # a refusal kept
# the facts and cases of a file written here, and each mistake at its line and column
cat >"$tmp/o.txt" <<'EOF2'
# a comment, then blank lines

aten::mm.-   mat2  sizes=3x5   values=u
aten::mm.-   case  tfloat64:1x8:c:p tfloat64:8x2:c:x3
aten::mm.out out   dtype=float64
EOF2
t 0 --emit=cases --case-overrides "$tmp/o.txt" "$core"
grep -qxF 'other aten::mm - tfloat32:2x3:c:n tfloat32:3x5:c:u' <<<"$out" ||
    fail "o.txt: sizes, values"
grep -qxF 'other aten::mm - tfloat64:1x8:c:p tfloat64:8x2:c:x3' <<<"$out" || fail "o.txt: case"
grep -qxF 'other aten::mm out tint64:2x3:c:n tint64:2x3:c:n tfloat64:0:c:z' <<<"$out" ||
    fail "o.txt: an out= dtype"
! grep -q '^other aten::mm out .*3x5' <<<"$out" || fail "o.txt: mm.out took mm.-'s facts"
bad() { # LINE WANT: the file of LINE alone is refused with WANT, at o.txt:1
    printf '%s\n' "$1" >"$tmp/bad.txt"
    t 1 --emit=cases --case-overrides "$tmp/bad.txt" "$core"
    has "$err" "bad.txt:1:$2"
    [ -z "$out" ] || fail "a bad file gave a plan: $1"
}
bad 'aten::nope x sizes=2'              "1: error: unknown op 'aten::nope'"
bad 'aten::mm.nope mat2 sizes=2'        "1: error: unknown op 'aten::mm.nope'"
bad 'mm mat2 sizes=2'                   "1: error: 'mm' names no op"
bad 'aten::mm mat3 sizes=2'             "10: error: no op that 'aten::mm' names has an argument"
bad 'aten::mm mat2 size=2'              "15: error: unknown fact 'size'"
bad 'aten::mm mat2 sizes=2y3'           "21: error: sizes= takes sizes"
bad 'aten::mm mat2 values=q'            "22: error: values= takes a value kind"
bad 'aten::mm mat2 values=x0'           "22: error: values= takes a value kind"
bad 'aten::mm mat2 dtype=float8'        "21: error: dtype= takes a dtype"
bad 'aten::mm mat2 sizes=2 sizes=3'     "23: error: 'sizes' given twice"
bad 'aten::mm mat2 sizes=2,3'           "10: error: 'mat2' of aten::mm is one tensor"
bad 'aten::mm mat2 token=i1'            "10: error: 'mat2' of aten::mm is a tensor"
bad 'aten::mm.out out values=p'         "14: error: 'out' of aten::mm is written (out=)"
bad 'aten::softmax.int dim sizes=2'     "19: error: 'dim' of aten::softmax is no tensor (int)"
bad 'aten::softmax.int dim token=l1'    "19: error: token 'l1' does not fit 'dim' of aten::softmax"
bad 'aten::softmax.int dim token=i1 sizes=2' "19: error: token= is for an argument"
bad 'aten::mm case tfloat32:2x3:c:n'    "15: error: 1 tokens, but no op that 'aten::mm' names"
bad 'aten::mm.- case tfloat32:2x3:c:n i1' "34: error: token 'i1' does not fit 'mat2' of aten::mm"
bad 'aten::mm.- case tfloat32:2x3:q:n tfloat32:2x3:c:n' "17: error: token 'tfloat32:2x3:q:n'"
bad 'aten::mm'                          "1: error: a line is 'OP ARG KEY=VALUE...'"
printf 'aten::mm mat2 sizes=3x4\naten::mm mat2 sizes=3x5\n' >"$tmp/bad.txt"
t 1 --emit=cases --case-overrides "$tmp/bad.txt" "$core"
has "$err" "bad.txt:2:10: error: sizes= of 'mat2' given before, at line 1"
t 1 --emit=cases --case-overrides "$tmp/missing.txt" "$core"
has "$err" "cannot read '$tmp/missing.txt'"
t 2 --case-overrides "$over" "$core"
has "$err" "--case-overrides needs --emit=cases"

# the runner's typed calls (docs/conformance.md, "The typed path"): the tests' templates alone,
# the same bytes on every run, a banner that names the input and the template, and a call for
# every op, each through its wrapper
typed() {
    (cd "$root" && "$tool" --lib aten --no-builtin-templates \
        --templates tests/conformance/templates -o "$1" schemas/aten_core.yaml) ||
        fail "the typed calls: schemagen failed"
}
typed "$tmp/typed1"
typed "$tmp/typed2"
[ "$(ls "$tmp/typed1")" = "$(printf 'aten_typed_calls.c\naten_typed_calls.h')" ] ||
    fail "the typed calls: other files than the two: $(ls "$tmp/typed1")"
diff -r "$tmp/typed1" "$tmp/typed2" >/dev/null || fail "the typed calls: two runs differ"
has "$(grep -m1 'Generated by' "$tmp/typed1/aten_typed_calls.c")" \
    "from schemas/aten_core.yaml with tests/conformance/templates/typed_calls.c.tpl"
ncalls=$(grep -c '^static sg_status call_aten_' "$tmp/typed1/aten_typed_calls.c")
nwrapped=$(grep -c '    sg_status sg_st = aten_[A-Za-z0-9_]*(' "$tmp/typed1/aten_typed_calls.c")
[ "$ncalls" -ge "$nops" ] && [ "$ncalls" -eq "$nwrapped" ] ||
    fail "the typed calls: $ncalls calls, $nwrapped wrappers called, for $nops ops"
sg_test_done "$ncases cases, $nops ops"
