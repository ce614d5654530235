#!/usr/bin/env bash
# dsl_table.sh: decision tables and templates (docs/gemm.md): a table over a template read, its
# classes found by the generated finder (tests/dsl/table_test.c, on CPU tensors), and each kind
# of bad table refused at file:line:col with nothing written. Artifacts come from
# tests/dsl/make_artifacts.py (no compiler), so this needs python3 and skips without it.
#
#   bash tests/dsl_table.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init dsl_table "$@"
command -v python3 >/dev/null 2>&1 || sg_test_skip "no python3 to make artifacts"
sg_test_runtime

cp -r "$here/dsl/triton" "$tmp/triton"
cp "$here/dsl/ops.yaml" "$here/dsl/table.yaml" "$tmp/"
cd "$tmp" || exit 1

# the plan holds the template's points only (a table exports nothing), each with its warps
t 0 --dsl table.yaml --dsl-plan plan.json ops.yaml
[ "$(grep -c '"prefix"' plan.json)" = 16 ] || fail "not 8 points x 2 archs in the plan"
grep -q '"prefix": "mm_tpl__float16_128_8__sm100"' plan.json || fail "the last artifact's prefix"
grep -q '"num_warps": 8, "num_stages": 4}' plan.json || fail "per-point warps and stages"
python3 "$here/dsl/make_artifacts.py" plan.json art || fail "make_artifacts.py failed"

t 0 --lib dslt --dsl table.yaml --dsl-artifacts art -o gen ops.yaml
c=gen/dslt_dsl.c
grep -q "sg_st = aten_mm_override(SG_KEY_CUDA, 0, sg_dslg_mm_table_pred, sg_dslg_mm_table_impl" $c ||
    fail "the table is not registered"
grep -q "sg_dslg_mm_tpl_pred" $c && fail "the template registered an override of its own"
grep -q "^sg_status dslt_dsl_run_mm_tpl(int32_t point, sg_tensor \*self, sg_tensor \*mat2, sg_tensor \*\*ret);$" \
    gen/dslt_dsl.h || fail "no entry by point in dslt_dsl.h"
grep -q "^const char \*dslt_dsl_point_mm_tpl(int32_t point);$" gen/dslt_dsl.h ||
    fail "no point names in dslt_dsl.h"
# each op's templates as one list, for tuners and tests
grep -q "^extern const dslt_dsl_template_aten_mm dslt_dsl_templates_aten_mm\[1\];$" gen/dslt_dsl.h ||
    fail "no list of aten::mm's templates in dslt_dsl.h"
grep -q '^    {"mm_tpl", dslt_dsl_run_mm_tpl, dslt_dsl_point_mm_tpl, [0-9]*},$' $c ||
    fail "mm_tpl is not in the list"
grep -q "{.algo = 21, .tile = 18, .stages = 8, .splitk = 2, .reduction = 1, .swizzle = 0, .custom = 0, .inner = 0, .cluster = 0}," $c ||
    fail "the cuBLASLt configurations"
grep -q "tuned: device: a test's; capability: 90; driver: 13000" $c || fail "the table's provenance"
# rules sorted by dtype (the runtime's enum), layout, n, k, m
sed -n '/^static const sg_gemm_rule sg_dslg_mm_table_rules/,/^};/p' $c >mm_rules
[ "$(grep -o '^    {.dtype = SG_[A-Z0-9]*, .layout = SG_GEMM_[NT]*' mm_rules | cut -c15- | tr '\n' ' ')" = \
  "SG_FLOAT16, .layout = SG_GEMM_NN SG_BFLOAT16, .layout = SG_GEMM_NN SG_BFLOAT16, .layout = SG_GEMM_NN SG_BFLOAT16, .layout = SG_GEMM_NN SG_BFLOAT16, .layout = SG_GEMM_NT " ] ||
    fail "rules not in order: $(grep -o '^    {.dtype = SG_[A-Z0-9]*, .layout = SG_GEMM_[NT]*' mm_rules)"
# a table without `batch`: every class is batch 1, and the finder passes 1
[ "$(grep -c '.batch_lo = 1, .batch_hi = 1, ' mm_rules)" = 5 ] || fail "mm's classes are not batch 1"
grep -q "return sg_gemm_rule_find(sg_dslg_mm_table_rules, 5, self, mat2, 1, sg_m, sg_n, sg_k);" $c ||
    fail "mm's finder does not pass batch 1"
# bmm's: sorted by (dtype, layout, n, k, batch_lo, m_lo), a class without `batch` holds every
# batch, and the finder passes the table's batch; float32 asks my_allow_tf32, declared once
sed -n '/^static const sg_gemm_rule sg_dslg_bmm_table_rules/,/^};/p' $c >bmm_rules
[ "$(grep -o '/\* line [0-9]*' bmm_rules | cut -c9- | tr '\n' ' ')" = "85 81 83 82 84 " ] ||
    fail "bmm's rules not in order: $(grep -o '/\* line [0-9]*' bmm_rules)"
grep -q ".batch_lo = 5, .batch_hi = 64, .m_lo = 1, .m_hi = 64, .use = SG_GEMM_USE_HEURISTIC" bmm_rules ||
    fail "a class's batch range"
grep -q ".layout = SG_GEMM_NT, .n = 256, .k = 128, .batch_lo = 1, .batch_hi = INT64_MAX, " bmm_rules ||
    fail "a class without 'batch' does not hold every batch"
grep -q "int64_t sg_batch = sg_dslg_size(self, INT64_C(0), &sg_ok);" $c || fail "the batch expression"
grep -q "return sg_gemm_rule_find(sg_dslg_bmm_table_rules, 5, self, mat2, sg_batch, sg_m, sg_n, sg_k);" $c ||
    fail "bmm's finder does not pass the batch"
[ "$(grep -c '^extern bool my_allow_tf32(void);$' $c)" = 1 ] || fail "my_allow_tf32 not declared once"
grep -q "if (self->dtype == SG_FLOAT32 && !my_allow_tf32()) return NULL;" $c ||
    fail "bmm's finder does not ask my_allow_tf32"
[ "$(grep -c 'my_allow_tf32()' $c)" = 1 ] || fail "a table without float32 classes asks my_allow_tf32"
grep -q "^_Static_assert(SG_FLOAT16 < SG_BFLOAT16, " $c ||
    fail "no check that the rules' dtype order is the runtime's"
# cuBLAS's classes call the table's cublas function with the op's arguments
grep -q "^extern sg_status my_cols_cublas(sg_keyset ks, sg_tensor \*self, sg_tensor \*mat2, int64_t cols, sg_tensor \*\*ret);$" $c ||
    fail "my_cols_cublas is not declared"
grep -A1 "case SG_GEMM_USE_CUBLAS:$" $c | grep -q "return my_cols_cublas(ks, self, mat2, cols, ret);" ||
    fail "a cuBLAS class does not call my_cols_cublas"
[ "$(grep -c 'SG_GEMM_USE_CUBLAS:' $c)" = 2 ] || fail "cuBLAS is not in cols_table's predicate and implementation alone"
sg_test_compile gen gen/*.c
if [ -f "$build/libsg_runtime.a" ]; then
    sg_test_link gen dslt table_test "$here/dsl/table_test.c" || fail "table_test does not build"
    [ -x table_test ] && { ./table_test || fail "the generated table on CPU tensors"; }
else
    fail "no $build/libsg_runtime.a: build the sg_runtime target first"
fi

# refuse SED_SCRIPT MESSAGE...: table.yaml edited by SED_SCRIPT is refused with each MESSAGE
refuse() {
    local script=$1
    shift
    sed "$script" table.yaml >bad.yaml
    rm -rf bgen
    t 1 --lib dslt --dsl bad.yaml --dsl-artifacts art -o bgen ops.yaml
    for m in "$@"; do has "$err" "$m"; done
    [ ! -e bgen/dslt_dsl.c ] || fail "'$script': LIB_dsl.c was written"
}
refuse 's/use: heuristic/use: cutlass/' "bad.yaml:55:75: error: unknown backend 'cutlass'"
refuse 's/use: mm_tpl, point: {dtype: float16/use: mm_tp, point: {dtype: float16/' "bad.yaml:56:73: error: unknown backend 'mm_tp'"
refuse 's/m: \[17, 64\]/m: [16, 64]/' "bad.yaml:54:9: error: this class overlaps the one at line 53 (bfloat16 nn, n 256, k 128, m [1, 16] and [16, 64])"
refuse 's/{dtype: bfloat16, BM: 64, W: 8}/{dtype: bfloat16, BM: 32, W: 8}/' \
    "bad.yaml:54:88: error: 'mm_tpl' has no such point: its grid (the artifacts exported) does not hold it"
refuse 's/capability: 90/capability: 80/' "error: 'mm_tpl' is not built for capability 80"
refuse 's/use: mm_tpl, point: {dtype: bfloat16/use: mm_tpl, point: {dtyp: bfloat16/' \
    "error: 'dtyp' is not a grid variable of 'mm_tpl'"
refuse 's/  template: true/  template: false/' "error: 'mm_tpl' is not a template (it needs 'template: true')"
refuse 's/    cublaslt: my_mm_lt//' "error: 'use: cublaslt' needs the table's 'cublaslt' function"
refuse 's/    cublas: my_cols_cublas//' "error: 'use: cublas' needs the table's 'cublas' function"
refuse 's/    cublas: my_cols_cublas/    cublas: my_cols_lt/' "bad.yaml:99:13: error: 'cublas' names 'my_cols_lt', the table's 'cublaslt' function"
refuse 's/    cublaslt: my_cols_lt/    cublaslt: my_mm_lt/' "bad.yaml:100:15: error: 'cublaslt' names 'my_mm_lt', which table 'mm_table' (bad.yaml:35) names as its 'cublaslt' function for another op"
refuse 's/    cublas: my_cols_cublas/    cublas: my_bmm_lt/' "bad.yaml:99:13: error: 'cublas' names 'my_bmm_lt', which table 'bmm_table' (bad.yaml:61) names as its 'cublaslt' function"
refuse 's/splitk: 2, reduction: 1/splitk: -2, reduction: 1/' "error: 'splitk' needs an integer from -1 to"
refuse 's/inner: 0, cluster: 4}/inner: 70000, cluster: 4}/' "error: 'inner' needs an integer from 0 to 65535"
refuse 's/algo: {algo: 66, tile: 10/algo: {algo: -66, tile: 10/' "error: 'algo' needs an integer from 0 to"
refuse 's/use: cublas, gain/use: cublas, algo: {algo: 1}, gain/' "error: 'algo' is for 'use: cublaslt', not for 'use: cublas'"
refuse 's/use: heuristic}/use: heuristic, algo: {algo: 1}}/' "error: 'algo' is for 'use: cublaslt', not for 'use: heuristic'"
refuse 's/custom: 1, inner: 0, cluster: 4}/custom: 1, inner: 0}/' "error: 'algo' lacks the key 'cluster'"
refuse 's/layout: nt/layout: nx/' "error: 'layout' is nn, nt, tn or tt (A's and B's), not 'nx'"
refuse 's/m: \[65, 1000\]/m: [65, 6]/' "error: 'm' is an empty range: 65 > 6"
refuse 's/    b: mat2/    b: nope/' "error: 'b' needs a Tensor argument of aten::mm, not 'nope'"
refuse 's/    k: self.size(1)/    k: self.dtype/' "error: 'k'"
refuse 's/      method: none (written by hand)//' "error: 'tuned' lacks the key 'method'"
# batch ranges: two classes overlap where their batch and M ranges both meet, whatever lies
# between them in the sorted order (here line 83, whose M range meets neither)
refuse 's/batch: \[5, 64\]/batch: [4, 64]/' "bad.yaml:82:9: error: this class overlaps the one at line 81 (bfloat16 nn, n 256, k 128, batch [1, 4] and [4, 64], m [1, 64] and [1, 64])"
refuse 's/m: \[65, 512\]/m: [64, 512]/' "bad.yaml:83:9: error: this class overlaps the one at line 81 (bfloat16 nn, n 256, k 128, batch [1, 4] and [1, 64], m [1, 64] and [64, 512])"
# a class without its own batch range holds every batch
refuse 's/layout: nt, m: \[1, 512\]/layout: nt, batch: [9, 9], m: [500, 600]/; /layout: nt, batch/a\      - {dtype: bfloat16, layout: nt, m: [1, 500], n: 256, k: 128, use: heuristic}' \
    "bad.yaml:85:9: error: this class overlaps the one at line 84 (bfloat16 nt, n 256, k 128, batch [1, 9223372036854775807] and [9, 9], m [1, 500] and [500, 600])"
refuse 's/batch: \[5, 64\]/batch: [5, 4]/' "bad.yaml:82:46: error: 'batch' is an empty range: 5 > 4"
refuse 's/batch: \[5, 64\]/batch: [0, 64]/' "bad.yaml:82:47: error: 'batch' needs an integer from 1 to"
refuse 's/batch: \[5, 64\]/batch: 5/' "bad.yaml:82:46: error: 'batch' is a range [first, last]"
refuse 's/    batch: self.size(0)//' "bad.yaml:81:46: error: a class's 'batch' needs the table's 'batch'"
refuse 's/    batch: self.size(0)/    batch: self.dtype/' "bad.yaml:74:12: error: 'batch' must be an int, not a dtype"
# float32 classes need the table's tf32 function, a C function name of its own
refuse 's/    tf32: my_allow_tf32//' "bad.yaml:85:17: error: a float32 class needs the table's 'tf32' function"
refuse 's/    tf32: my_allow_tf32/    tf32: int/' "bad.yaml:79:11: error: 'tf32' needs a C function name, not 'int'"
refuse 's/    tf32: my_allow_tf32/    tf32: aten_bmm_op/' "error: 'tf32' names 'aten_bmm_op', among the names the generated code declares for aten::bmm"
refuse 's/    tf32: my_allow_tf32/    tf32: my_bmm_lt/' "bad.yaml:79:11: error: 'tf32' names 'my_bmm_lt', the table's 'cublaslt' function"
refuse 's/gain: 1.05/gain: fast/' "error: 'gain' is a positive number, not 'fast'"
refuse 's/    cublaslt: my_mm_lt/    cublaslt: self_/' "error: 'cublaslt' names 'self_', the C name an argument of aten::mm may have"
refuse 's/    cublaslt: my_mm_lt/    cublaslt: aten_mm_out/' "error: 'cublaslt' names 'aten_mm_out', among the names the generated code declares for aten::mm"
refuse 's/    cublaslt: my_mm_lt/    cublaslt: int/' "error: 'cublaslt' needs a C function name, not 'int'"
refuse 's/- name: mm_table/- name: mm_tpl/' "error: a declaration named 'mm_tpl' exists already"
python3 - <<'PY'
s = open("table.yaml").read()
open("empty.yaml", "w").write(s[:s.index("    rules:")] + "    rules: []\n")
PY
t 1 --lib dslt --dsl empty.yaml --dsl-artifacts art -o egen ops.yaml
has "$err" "error: 'rules' lists no class"
# a table that names its cuBLASLt function but sends no class to it: no call of it, and it compiles
sed -e '/use: cublaslt/d' table.yaml >nolt.yaml
t 0 --lib dslt --dsl nolt.yaml --dsl-artifacts art -o ngen ops.yaml
grep -q "my_mm_lt" ngen/dslt_dsl.c && fail "a table without cuBLASLt classes calls its function"
sg_test_compile ngen ngen/dslt_dsl.c
# a table that names its tf32 function but has no float32 class: neither declared nor called
sed -e '/dtype: float32/d' table.yaml >nof32.yaml
t 0 --lib dslt --dsl nof32.yaml --dsl-artifacts art -o fgen ops.yaml
grep -q "my_allow_tf32" fgen/dslt_dsl.c && fail "a table without float32 classes names its tf32 function"
sg_test_compile fgen fgen/dslt_dsl.c
# a table before its template, in another file: found all the same, the same rules out
python3 - <<'PY'
s = open("table.yaml").read()
i = s.index("- name: mm_table")
open("a_table.yaml", "w").write(s[i:])
open("b_tpl.yaml", "w").write(s[:i])
PY
t 0 --lib dslt --dsl a_table.yaml --dsl b_tpl.yaml --dsl-artifacts art -o lgen ops.yaml
[ "$(grep -o '^    {SG_[^/]*' lgen/dslt_dsl.c)" = "$(grep -o '^    {SG_[^/]*' gen/dslt_dsl.c)" ] ||
    fail "a table read before its template has other rules"

sg_test_done "all checks passed"
