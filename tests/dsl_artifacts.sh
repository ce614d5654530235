#!/usr/bin/env bash
# dsl_artifacts.sh: the exporter's sidecars and binaries checked by schemagen --dsl-artifacts
# (docs/dsl.md): a complete, matching set is taken; each kind of mismatch is refused with the
# sidecar's file:line:col and a note at the declaration. The artifacts come from
# tests/dsl/make_artifacts.py (a stand-in exporter: tiny ELF files, no compiler), so this
# needs python3 and skips without it.
#
#   bash tests/dsl_artifacts.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init dsl_artifacts "$@"
command -v python3 >/dev/null 2>&1 || sg_test_skip "no python3 to make artifacts"

cp -r "$here/dsl/triton" "$tmp/triton"
cp "$here/dsl/ops.yaml" "$here/dsl/rms_norm.yaml" "$tmp/"
cd "$tmp" || exit 1

p=rms_norm_triton__float32_1024__sm90
fresh() {
    rm -rf art
    python3 "$here/dsl/make_artifacts.py" plan.json art || fail "make_artifacts.py failed"
}
# edit PYTHON: runs PYTHON on the sidecar of $p as the dict d, and writes it back
edit() {
    python3 - "art/$p.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
}
# refused MESSAGE...: the artifacts are refused with each message, and a note at the
# declaration names the artifact
refused() {
    t 1 --dsl rms_norm.yaml --dsl-artifacts art ops.yaml
    for m in "$@"; do has "$err" "$m"; done
    case $err in *"rms_norm.yaml:1:3: note: artifact '$p' of the declaration 'rms_norm_triton'"*) ;;
    *) fail "no note at the declaration: $err" ;; esac
}

t 0 --dsl rms_norm.yaml --dsl-plan plan.json ops.yaml
fresh
t 0 --dsl rms_norm.yaml --dsl-artifacts art ops.yaml
[ -z "$(cat out)" ] || fail "--dsl-artifacts alone printed: $(cat out)"

# stale: the compiler's version, the source's bytes
fresh; edit 'd["compiler"]["version"] = "3.5.0"'
refused "art/$p.json:" "error: stale artifact: the compiler's version: the sidecar says '3.5.0', the plan '3.6.0'"
fresh; echo "# changed" >>triton/rms_norm.py
t 1 --dsl rms_norm.yaml --dsl-artifacts art ops.yaml
case $err in *"error: stale artifact: the SHA-256 of the source"*) ;; *) fail "stale source: $err" ;; esac
cp "$here/dsl/triton/rms_norm.py" triton/rms_norm.py
# no arch; an arch the declaration does not list; another listed arch than the plan's
fresh; edit 'del d["arch"]'
refused "art/$p.json:1:1: error: the sidecar names no arch"
fresh; edit 'd["arch"] = "sm_80"'
refused "art/$p.json:" "error: the sidecar's arch 'sm_80' is not one the declaration lists"
fresh; edit 'd["capability"] = [8, 0]'
refused "error: the capability's major: the sidecar says '8', the plan '9'"
# the binary: its hash, its symbol (absent, or not a function), not an ELF file at all
fresh; printf 'x' >>"art/$p.cubin"
refused "error: the binary '$p.cubin' has the SHA-256"
fresh; edit 'd["symbol"] = "rms_norm_fwd_0d1d2d"'
refused "error: the binary '$p.cubin' has no symbol 'rms_norm_fwd_0d1d2d'"
fresh; edit 'd["symbol"] = "a_variable"'
refused "error: the binary '$p.cubin' has a symbol that is not a function named 'a_variable'"
fresh; head -c 100 "art/$p.cubin" >"art/$p.cubin.cut"; mv "art/$p.cubin.cut" "art/$p.cubin"
edit 'import hashlib; d["binary"]["sha256"] = hashlib.sha256(open("art/'"$p"'.cubin","rb").read()).hexdigest()'
refused "error: the binary '$p.cubin' is not a cubin: its section headers lie outside the file"
fresh; rm "art/$p.cubin"
refused "error: cannot read the binary 'art/$p.cubin'"
fresh; edit 'd["binary"]["file"] = "../elsewhere.cubin"'
refused "error: the binary's file is a name in the artifacts folder"
# scratch memory, clusters, launch facts and parameters that differ from the plan
fresh; edit 'd["hidden"][0]["size"] = 128'
refused "error: the hidden parameter 'global_scratch' needs 128 bytes of scratch memory per program: not supported yet"
fresh; edit 'd["num_ctas"] = 2'
refused "error: num_ctas 2: clusters are not supported yet"
fresh; edit 'd["num_warps"] = 4'
refused "error: the sidecar's num_warps 4 and num_stages 1 are not the plan's 8 and 1"
fresh; edit 'd["params"][4][1] = "fp64"'
refused "error: the type of a parameter: the sidecar says 'fp64', the plan 'fp32'"
fresh; edit 'd["params"].pop()'
refused "error: the sidecar lists 4 parameters, the plan 5"
fresh; edit 'd["assumes"]["int32"] = ["nope"]'
refused "error: int32 names 'nope', which is not a parameter"
fresh; edit 'd["prefix"] = "other"'
refused "error: the prefix: the sidecar says 'other'"
fresh; edit 'd["symbol"] = "k\\\"); int x = (\""'
refused "error: the sidecar's symbol 'k\\\"); int x = (\"' is not a plain name"
fresh; edit 'del d["symbol"]'
refused "art/$p.json:1:1: error: the sidecar lacks 'symbol'"
fresh; printf '{"version": 1,' >"art/$p.json"
refused "art/$p.json:" "error: invalid YAML"
# a planned artifact without its sidecar: all or none
fresh; rm "art/$p.json"
t 1 --dsl rms_norm.yaml --dsl-artifacts art ops.yaml
case $err in *"rms_norm.yaml:1:3: error: artifact '$p' was not exported: cannot read 'art/$p.json'"*) ;;
*) fail "a missing sidecar: $err" ;; esac

# ---- generation ------------------------------------------------------------------------------

sg_test_runtime
fresh
t 0 --lib dslt --dsl rms_norm.yaml --dsl-artifacts art -o gen ops.yaml
[ -f gen/dslt_dsl.c ] && [ -f gen/dslt_dsl.h ] || fail "no dslt_dsl.c or dslt_dsl.h"
grep -q "sg_status dslt_dsl_init(void);" gen/dslt_dsl.h && grep -q "^#ifndef SG_GEN_DSLT_DSL_H$" gen/dslt_dsl.h ||
    fail "dslt_dsl.h does not declare dslt_dsl_init under its guard"
grep -q "^ \* Generated by schemagen .* from ops.yaml and the DSL declarations rms_norm.yaml with schemagen --dsl. Do not edit. \*/" gen/dslt_dsl.c ||
    fail "the banner: $(sed -n 3p gen/dslt_dsl.c)"
grep -q "$tmp\|/tmp/" gen/dslt_dsl.c gen/dslt_dsl.h && fail "an absolute path in the generated files"
# the binary embedded byte for byte
python3 - "art/$p.cubin" gen/dslt_dsl.c "$p" <<'PY' || fail "the image is not the binary's bytes"
import re, sys
want = open(sys.argv[1], "rb").read()
text = open(sys.argv[2]).read()
body = re.search(r"static const unsigned char sg_dslg_%s_image\[\d+\] = \{(.*?)\};" % sys.argv[3], text, re.S)
got = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body.group(1)))
sys.exit(0 if got == want else 1)
PY
grep -q "\.block_x = 256, \.shared = 0,$" gen/dslt_dsl.c && grep -q "\.nparams = 7, " gen/dslt_dsl.c ||
    fail "the launch facts (8 warps, 5 + 2 hidden parameters)"
grep -q "sg_st = aten__fused_rms_norm_override(SG_KEY_CUDA, 0, sg_dslg_rms_norm_triton_pred, sg_dslg_rms_norm_triton_impl, NULL, NULL);" gen/dslt_dsl.c ||
    fail "the override's registration"
# _when tests what its four points share once (contiguity, the list's length, the capability),
# and at each point what sets it apart (N, the dtype)
for c in "sg_dslg_contiguous(input, &sg_ok)" "(sg_dslg_len(normalized_shape) == INT64_C(1))" \
    "(sg_cap >= INT64_C(90))" "sg_dslg_contiguous(weight, &sg_ok)"; do
    [ "$(grep -cF "$c" gen/dslt_dsl.c)" = 1 ] || fail "_when: '$c' not tested once: $(grep -cF "$c" gen/dslt_dsl.c)"
done
[ "$(grep -cF "(sg_dslg_size(input, sg_dslg_sub(0, INT64_C(1), &sg_ok), &sg_ok) == INT64_C(1024))" gen/dslt_dsl.c)" = 2 ] ||
    fail "_when: N=1024 not tested at its two points"
[ "$(grep -cF "(sg_dslg_dtype(input, &sg_ok) == SG_BFLOAT16)" gen/dslt_dsl.c)" = 2 ] ||
    fail "_when: bfloat16 not tested at its two points"
# the same inputs, the same bytes
cp -r gen gen.first
t 0 --lib dslt --dsl rms_norm.yaml --dsl-artifacts art -o gen ops.yaml
diff -r gen gen.first >/dev/null || fail "two runs gave different files"
# a run without --dsl removes the files a run with it wrote
cp -r gen gen.keep
t 0 --lib dslt -o gen.keep ops.yaml
[ ! -e gen.keep/dslt_dsl.c ] && [ ! -e gen.keep/dslt_dsl.h ] || fail "stale dslt_dsl.* left behind"
# without --dsl, the files are those of a run that never knew of DSL kernels
cmp -s gen.keep/dslt_0.c gen/dslt_0.c && cmp -s gen.keep/dslt.h gen/dslt.h || fail "--dsl changed the glue"

# it compiles with -Werror against the runtime's sg_dsl.h, and the predicates run on CPU tensors
sg_test_compile gen gen/*.c
# names: an op whose arguments are named like what generated code declares for itself (p, i,
# ok, st, device, grid, sizes, stream, args, capability, ...), a custom op dsl::add, two archs,
# a dtype-typed output and every parameter type: it must compile at -Wshadow -Werror
cp "$here/dsl/hostile.yaml" .
t 0 --dsl hostile.yaml --dsl-plan hplan.json ops.yaml
rm -rf hart && python3 "$here/dsl/make_artifacts.py" hplan.json hart
t 0 --lib dslh --dsl hostile.yaml --dsl-artifacts hart -o hgen ops.yaml
[ "$(grep -c 'sg_dslg_hostile__' hgen/dslh_dsl.c)" -ge 8 ] || fail "hostile: not 4 artifacts"
grep -q "return hostile_gate(p, ok, sizes, i, st, device, grid, capability, stream, args, g, d, k) ? sg_pick : -1;" \
    hgen/dslh_dsl.c || fail "hostile: its when_c is not called with its arguments"
# two archs: the predicate tests at the device's capability, read once
sed -n '/^static bool sg_dslg_hostile_pred/,/^}/p' hgen/dslh_dsl.c >hpred.c
[ "$(grep -c 'int32_t sg_cap = sg_dsl_capability(sg_dev);' hpred.c)" = 1 ] &&
    grep -q "sg_dslg_hostile_when(.*, sg_cap)) >= 0" hpred.c ||
    fail "hostile: two archs, and the capability not read once: $(cat hpred.c)"
sg_test_compile hgen hgen/*.c

# a parameter's value may name the capability: the implementation has it as the predicate does
sed 's/eps == None ? 1.1920929e-07 : eps/eps == None ? capability : eps/' rms_norm.yaml >cap.yaml
t 0 --lib dslk --dsl cap.yaml --dsl-artifacts art -o kgen ops.yaml
grep -q "float sg_v4 = (float)(((eps == NULL) ? (double)sg_cap : " kgen/dslk_dsl.c ||
    fail "capability in a parameter's value: $(grep -m1 'sg_v4 =' kgen/dslk_dsl.c)"
sg_test_compile kgen kgen/dslk_dsl.c

# declarations of one op at one priority share one override, whose predicate tests each in
# order; another priority keeps an override of its own
{
    cat rms_norm.yaml
    sed -e 's/name: rms_norm_triton$/name: rms_norm_second/' -e 's/N: \[1024, 2048\]/N: [4096]/' \
        rms_norm.yaml
    sed -e 's/name: rms_norm_triton$/name: rms_norm_later/' -e 's/N: \[1024, 2048\]/N: [8192]/' \
        -e 's/^  key: CUDA$/  key: CUDA\n  priority: 1/' rms_norm.yaml
} >group.yaml
t 0 --dsl group.yaml --dsl-plan gplan.json ops.yaml
rm -rf gart && python3 "$here/dsl/make_artifacts.py" gplan.json gart
t 0 --lib dslg --dsl group.yaml --dsl-artifacts gart -o ggen ops.yaml
g=ggen/dslg_dsl.c
[ "$(grep -c '_override(SG_KEY_CUDA' $g)" = 2 ] || fail "group: not two overrides registered"
grep -q "aten__fused_rms_norm_override(SG_KEY_CUDA, 0, sg_dslg_rms_norm_triton_pred, sg_dslg_rms_norm_triton_impl, NULL, NULL);" $g &&
    grep -q "aten__fused_rms_norm_override(SG_KEY_CUDA, 1, sg_dslg_rms_norm_later_pred, sg_dslg_rms_norm_later_impl, NULL, NULL);" $g ||
    fail "group: the registrations: $(grep '_override(SG_KEY_CUDA' $g)"
sed -n '/^static bool sg_dslg_rms_norm_triton_pred/,/^}/p' $g >gpred.c
# one arch each: tested at its capability (readiness settles the device's), none read
grep -q 'sg_dsl_capability' gpred.c && fail "group: the capability read: $(cat gpred.c)"
grep -A1 "sg_dslg_rms_norm_triton_when(input, normalized_shape, weight, eps, 90)" gpred.c |
    grep -q "sg_dslg_artifacts\[0 + sg_i\]" &&
    grep -A1 "sg_dslg_rms_norm_second_when(input, normalized_shape, weight, eps, 90)" gpred.c |
    grep -q "sg_dslg_artifacts\[4 + sg_i\]" ||
    fail "group: the members' points not tested in order against their artifacts: $(cat gpred.c)"
grep -q "sg_dslg_rms_norm_second_pred\|sg_dslg_rms_norm_second_impl" $g &&
    fail "group: a member kept a predicate or implementation of its own"
sg_test_compile ggen $g

if [ -f "$build/libsg_runtime.a" ]; then
    sg_test_link gen dslt when_test "$here/dsl/when_test.c" || fail "when_test does not build"
    [ -x when_test ] && { ./when_test || fail "the generated predicates on CPU tensors"; }
else
    fail "no $build/libsg_runtime.a: build the sg_runtime target first"
fi

# outputs with their own sizes (tests/dsl/mm.yaml): aten::mm's self.size(0) x mat2.size(1),
# allocated on self's device; sizes that differ between points are evaluated per point
cp "$here/dsl/mm.yaml" .
t 0 --dsl mm.yaml --dsl-plan mplan.json ops.yaml
rm -rf mart && python3 "$here/dsl/make_artifacts.py" mplan.json mart
t 0 --lib dslm --dsl mm.yaml --dsl-artifacts mart -o mgen ops.yaml
grep -q "sg_st = sg_tensor_empty(sg_sizes, 2, sg_out0_dtype, self->device, &sg_out0);" mgen/dslm_dsl.c ||
    fail "mm: its output is not allocated with its own sizes on self's device"
grep -q "&& (sg_dslg_mul(cols, INT64_C(2), &sg_ok)) >= 0 /\* out0's size 1 \*/" mgen/dslm_dsl.c ||
    fail "mm_cols: no size >= 0 in the predicate at the point S=2"
sed -n '/^static sg_status sg_dslg_mm_cols_triton_launch/,/^}/p' mgen/dslm_dsl.c >mcols.c
[ "$(grep -c 'sg_sizes\[1\] = sg_dslg_mul(cols, INT64_C([12]), &sg_ok);' mcols.c)" = 2 ] ||
    fail "mm_cols: its sizes are not evaluated per point"
sed -n '/^static sg_status sg_dslg_mm_triton_launch/,/^}/p' mgen/dslm_dsl.c >mmm.c
[ "$(grep -c 'sg_sizes\[0\] = ' mmm.c)" = 1 ] || fail "mm: sizes the same at every point not evaluated once"
# a sidecar that says the compiler assumed an int32 numel for the output: the product of its
# sizes, each multiplication guarded
python3 - mart/mm_cols_triton__2__sm90.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["assumes"]["int32"] = ["c"]
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
t 0 --lib dslm --dsl mm.yaml --dsl-artifacts mart -o mgen ops.yaml
[ "$(grep -c '&& sg_dslg_i32(sg_dslg_mul(sg_dslg_mul(sg_dslg_size(self, INT64_C(0), &sg_ok), sg_dslg_mul(cols, INT64_C(2), &sg_ok), &sg_ok), INT64_C(1), &sg_ok))$' mgen/dslm_dsl.c)" = 1 ] ||
    fail "mm_cols: no int32 gate on the product of its sizes at the point S=2 (only)"
sg_test_compile mgen mgen/*.c
if [ -f "$build/libsg_runtime.a" ]; then
    sg_test_link mgen dslm mm_test "$here/dsl/mm_test.c" || fail "mm_test does not build"
    [ -x mm_test ] && { ./mm_test || fail "the predicates of outputs with their own sizes"; }
fi

# when_c: the escape hatch. A C function in a user's .c file (tests/dsl/when_c_gate.c), declared
# in LIB_dsl.h, ANDed into the predicate after `when` and the point's tests (once, for the point
# found), linked beside the generated code
sed 's/^  outputs:/  when_c: rms_gate\n  outputs:/' rms_norm.yaml >when_c.yaml
t 0 --lib dslc --dsl when_c.yaml --dsl-artifacts art -o cgen ops.yaml
grep -q "^extern bool rms_gate(sg_tensor \*input, sg_int_list normalized_shape, sg_tensor \*weight, const double \*eps);$" \
    cgen/dslc_dsl.h || fail "when_c: no prototype in dslc_dsl.h"
[ "$(grep -c 'return rms_gate(input, normalized_shape, weight, eps) ? sg_pick : -1;' cgen/dslc_dsl.c)" = 1 ] ||
    fail "when_c: not called once, for the point found"
# the same declarations without it: the same file but for the calls (and the names)
sed -e 's/return rms_gate(input, normalized_shape, weight, eps) ? sg_pick : -1;/return sg_pick;/' \
    -e 's/dslc/dslt/g' -e 's/when_c\.yaml/rms_norm.yaml/' cgen/dslc_dsl.c >cgen.plain
cmp -s cgen.plain gen/dslt_dsl.c || fail "when_c changed more than the calls: $(diff cgen.plain gen/dslt_dsl.c | head)"
sg_test_compile cgen cgen/*.c
# two declarations of one op share one function: one prototype
sed -e 's/^- name: rms_norm_triton$/- name: rms_other/' -e 's/N: \[1024, 2048\]/N: [4096]/' when_c.yaml >when_c2.yaml
t 0 --dsl when_c.yaml --dsl when_c2.yaml --dsl-plan c2plan.json ops.yaml
rm -rf c2art && python3 "$here/dsl/make_artifacts.py" c2plan.json c2art
t 0 --lib dslc2 --dsl when_c.yaml --dsl when_c2.yaml --dsl-artifacts c2art -o c2gen ops.yaml
[ "$(grep -c '^extern bool rms_gate(' c2gen/dslc2_dsl.h)" = 1 ] || fail "when_c: not one prototype for two declarations"
[ "$(grep -c 'return rms_gate(' c2gen/dslc2_dsl.c)" = 2 ] || fail "when_c: not called in each of the 2 declarations"
sg_test_compile c2gen c2gen/dslc2_dsl.c
if [ -f "$build/libsg_runtime.a" ]; then
    # the int32 range of an i32 parameter, on hostile.yaml's predicate
    sg_test_link hgen dslh hostile_test "$here/dsl/hostile_test.c" || fail "hostile_test does not build"
    [ -x hostile_test ] && { ./hostile_test || fail "the int32 gate of an i32 parameter"; }
    # without the user's file, the function is missing at link time: nothing stands in for it
    sg_test_link cgen dslc when_c_nolink "$here/dsl/when_c_test.c" 2>cerr &&
        fail "when_c: linked without the user's function"
    grep -q "rms_gate" cerr || fail "when_c: the link error does not name rms_gate: $(head -3 cerr)"
    sg_test_link cgen dslc when_c_test "$here/dsl/when_c_test.c" "$here/dsl/when_c_gate.c" ||
        fail "when_c_test does not build"
    [ -x when_c_test ] && { ./when_c_test || fail "the when_c function in the predicates"; }
fi

sg_test_done "all checks passed"
