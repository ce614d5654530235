#!/usr/bin/env bash
# dsl_objects.sh: object artifacts (CuTeDSL's export_to_c; docs/dsl.md), from a real export of
# kernels/dsl/silu_mul.yaml for sm_90 (no GPU needed) to the generated C: the sidecars are taken
# and LIB_dsl.c includes the headers, calls their entries and compiles with -Werror; each kind of
# mismatch between sidecar, header, object and declaration is refused with a located error.
# Needs SG_DSL_PYTHON with the pinned nvidia-cutlass-dsl (skips without it) and, for the compile,
# the CUDA toolkit's headers (SG_CUDA_INCLUDE).
#
#   bash tests/dsl_objects.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init dsl_objects "$@"
py=${SG_DSL_PYTHON:-}
[ -n "$py" ] && [ -x "$py" ] || sg_test_skip "no SG_DSL_PYTHON (a Python with the DSL compilers)"
"$py" -c "import importlib.metadata as m; m.version('nvidia-cutlass-dsl')" 2>/dev/null ||
    sg_test_skip "$py has no nvidia-cutlass-dsl"

mkdir -p "$tmp/cutedsl"
cp "$root/kernels/dsl/cutedsl/silu_mul.py" "$tmp/cutedsl/"
cp "$root/kernels/dsl/silu_mul.yaml" "$root/kernels/dsl/schemas/fused.yaml" "$tmp/"
cd "$tmp" || exit 1

p=silu_mul_cutedsl__float32__sm90
decl_line=$(grep -n '^- name: silu_mul_cutedsl$' silu_mul.yaml | cut -d: -f1)
t 0 --dsl silu_mul.yaml --dsl-plan plan.json fused.yaml
grep -q '"dsl": "cutedsl", "compiler": "nvidia-cutlass-dsl==' plan.json || fail "the plan: $(cat plan.json)"
grep -q num_warps plan.json && fail "the plan of an object DSL names warps"
"$py" "$root/tools/dsl_export.py" --plan plan.json --out art.good 2>export.log ||
    fail_now "the export failed: $(cat export.log)"
for f in "$p.o" "$p.h" "$p.json" libcuda_dialect_runtime_static.a; do
    [ -f "art.good/$f" ] || fail "the export wrote no $f"
done
fresh() {
    rm -rf art
    cp -r art.good art
}
# edit PYTHON: runs PYTHON on the sidecar of $p as the dict d, and writes it back
edit() {
    "$py" - "art/$p.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
}
# rehash FILE: the sidecar's hash of FILE (binary, header or runtime) made to match its bytes
rehash() {
    edit "import hashlib
for k in ('binary', 'header', 'runtime'):
    if d[k]['file'] == '$1':
        d[k]['sha256'] = hashlib.sha256(open('art/$1', 'rb').read()).hexdigest()"
}
refused() {
    t 1 --dsl silu_mul.yaml --dsl-artifacts art fused.yaml
    for m in "$@"; do has "$err" "$m"; done
    case $err in *"silu_mul.yaml:$decl_line:3: note: artifact '$p' of the declaration 'silu_mul_cutedsl'"*) ;;
    *) fail "no note at the declaration: $err" ;; esac
}

fresh
t 0 --lib fused --dsl silu_mul.yaml --dsl-artifacts art -o gen fused.yaml
c=gen/fused_dsl.c
grep -q "^#define CUTE_DSL_CUDA_ERROR_CHECK(err) sg_dslg_load_check(err)$" $c ||
    fail "no error macro before the headers"
[ "$(grep -n 'CUTE_DSL_CUDA_ERROR_CHECK' $c | head -1 | cut -d: -f1)" -lt \
  "$(grep -n "#include \"$p.h\"" $c | cut -d: -f1)" ] || fail "the macro is defined after the header"
grep -q "return (int)cute_dsl_${p}_wrapper(&sg_dslg_${p}_module," $c || fail "the run hook"
grep -q "\.load = sg_dslg_${p}_load, \.run = sg_dslg_${p}_run}" $c || fail "the table's hooks"
grep -q "image" $c && fail "an object artifact was embedded as an image"
grep -q "sg_dslg_i32(sg_dslg_numel(gate, &sg_ok))" $c || fail "no int32 gate on the tensors' sizes"
grep -q "return fused_same_sizes(gate, up) ? sg_pick : -1;" $c || fail "the when_c call"
cp -r gen gen.first
t 0 --lib fused --dsl silu_mul.yaml --dsl-artifacts art -o gen fused.yaml
diff -r gen gen.first >/dev/null || fail "two runs gave different files"
if [ -n "${SG_CUDA_INCLUDE:-}" ]; then
    $cc -std=c11 -Wall -Wextra -Wshadow -Werror -c -Igen -I"$root/runtime" \
        -I"$root/gen/schema" -isystem art -isystem "$SG_CUDA_INCLUDE" $c -o fused_dsl.o ||
        fail "$c does not compile with -Werror"
else
    echo "note: no SG_CUDA_INCLUDE: the generated C is not compiled"
fi

# an output with sizes of its own: the int32 gate on it is the product of its sizes, each
# multiplication guarded (silu_mul's kernel behind a declaration that says out's sizes)
{
    sed -n '/^- name: silu_mul_cutedsl$/,/^  archs:/p' silu_mul.yaml |
        sed 's/^- name: silu_mul_cutedsl$/- name: silu_mul_sized/'
    cat <<'YAML'
  grid:
    dtype: [float32]
  when: >-
    gate.dtype == dtype && gate.contiguous && up.dtype == dtype && up.contiguous
    && gate.dim == 2 && up.dim == 2 && up.size(0) == gate.size(0) && up.size(1) == gate.size(1)
  outputs:
    - {sizes: [gate.size(0), gate.size(1)], dtype: dtype}
  launch:
    args:
      - [gate, "*dtype", gate]
      - [up, "*dtype", up]
      - [out, "*dtype", out0]
YAML
} >sized.yaml
t 0 --dsl sized.yaml --dsl-plan sized.json fused.yaml
if ! "$py" "$root/tools/dsl_export.py" --plan sized.json --out art.sized 2>export.log; then
    fail "the export of sized.yaml failed: $(cat export.log)"
else
    t 0 --lib fused --dsl sized.yaml --dsl-artifacts art.sized -o gen.sized fused.yaml
    grep -q '&& sg_dslg_i32(sg_dslg_mul(sg_dslg_size(gate, INT64_C(0), &sg_ok), sg_dslg_size(gate, INT64_C(1), &sg_ok), &sg_ok))' \
        gen.sized/fused_dsl.c || fail "no int32 gate on the product of out's sizes: $(grep -n 'sg_dslg_i32' gen.sized/fused_dsl.c)"
    if [ -n "${SG_CUDA_INCLUDE:-}" ]; then
        $cc -std=c11 -Wall -Wextra -Wshadow -Werror -c -Igen.sized -I"$root/runtime" \
            -I"$root/gen/schema" -isystem art.sized -isystem "$SG_CUDA_INCLUDE" \
            gen.sized/fused_dsl.c -o sized_dsl.o || fail "gen.sized/fused_dsl.c does not compile with -Werror"
    fi
fi

# the sidecar against the declaration and the header
fresh; edit 'd["kind"] = "triton-cubin"'
refused "error: the kind: the sidecar says 'triton-cubin', the plan 'cutedsl-obj'"
fresh; edit 'd["compiler"]["name"] = "cutedsl"'
refused "error: the compiler: the sidecar says 'cutedsl', the plan 'nvidia-cutlass-dsl'"
fresh; edit 'd["compiler"]["version"] = "4.4.2"'
refused "error: stale artifact: the compiler's version: the sidecar says '4.4.2', the plan '4.8.1'"
fresh; edit 'd["symbol"] = "cute_dsl_other_wrapper"'
refused "error: the entry: the sidecar says 'cute_dsl_other_wrapper', the plan 'cute_dsl_${p}_wrapper'"
fresh; edit 'd["layouts"][1] = [2, 1]'
refused "error: the tensor 'up' has a layout other than [1, 0]"
fresh; edit 'd["layouts"] = d["layouts"][:2]'
refused "error: the sidecar's layouts list 2 parameters, the plan 3"
fresh; edit 'd["ctypes"][2] = "float *"'
refused "error: the entry's C type of a parameter: the sidecar says 'float *', the plan '${p}_Tensor_out_t *'"
fresh; edit 'del d["header"]'
refused "error: the sidecar lacks 'header'"
fresh; echo "/* edited */" >>"art/$p.h"
refused "error: the header '$p.h' has the SHA-256"
fresh; cp "art/silu_mul_cutedsl__bfloat16__sm90.h" "art/x.h"; edit 'd["header"]["file"] = "x.h"'; rehash x.h
refused "error: the header is 'x.h', not '$p.h'"
fresh; rm "art/libcuda_dialect_runtime_static.a"
refused "error: cannot read the runtime library"
# the runtime library is read and hashed once for all artifacts: one sidecar with another hash,
# or the library altered, is still refused
fresh; edit 'd["runtime"]["sha256"] = "0" * 64'
refused "error: the runtime library 'libcuda_dialect_runtime_static.a' has the SHA-256"
fresh; printf 'x' >>"art/libcuda_dialect_runtime_static.a"
refused "error: the runtime library 'libcuda_dialect_runtime_static.a' has the SHA-256"
# the object: the other point's (no loader named after this prefix), not an object at all
fresh; cp "art/silu_mul_cutedsl__bfloat16__sm90.o" "art/$p.o"; rehash "$p.o"
refused "error: the binary '$p.o' has no symbol '_mlir_${p}_cuda_init'"
fresh; printf 'not an object' >"art/$p.o"; rehash "$p.o"
refused "error: the binary '$p.o' is not an object file"

# declarations: an object DSL's launch has no grid or warps; its compiler is its package
sed 's/^    args:/    num_warps: 4\n    args:/' silu_mul.yaml >warps.yaml
t 1 --dsl warps.yaml --dsl-plan x.json fused.yaml
w=$(grep -n '^    num_warps: 4$' warps.yaml | head -1 | cut -d: -f1)
case $err in *"warps.yaml:$w:5: error: unknown key 'num_warps' in 'launch' of a cutedsl kernel (known: constexprs, args)"*) ;;
*) fail "num_warps for cutedsl: $err" ;; esac
sed 's/^  compiler: .*/  compiler: cutedsl==4.8.1/' silu_mul.yaml >pin.yaml
t 1 --dsl pin.yaml --dsl-plan x.json fused.yaml
case $err in *"error: 'compiler' needs nvidia-cutlass-dsl==VERSION (the exact version), not 'cutedsl==4.8.1'"*) ;;
*) fail "the pin: $err" ;; esac
sed 's/^  dsl: .*/  dsl: helion/' silu_mul.yaml >dsl.yaml
t 1 --dsl dsl.yaml --dsl-plan x.json fused.yaml
case $err in *"error: 'dsl' is triton or cutedsl, not 'helion'"*) ;; *) fail "an unknown DSL: $err" ;; esac

sg_test_done
