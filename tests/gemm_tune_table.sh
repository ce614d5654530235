#!/usr/bin/env bash
# gemm_tune_table.sh: the tuner's tables written from records alone (bench/gemm_tune.c --from,
# docs/gemm.md), no GPU: per shape the right candidate that beats the heuristic of its own run
# most, by the margin at least; a later measurement replacing an earlier one, M buckets of one
# choice merged, batch buckets for bmm, float32 behind tf32, one entry per op; schemagen takes the table and its C
# compiles; cuBLAS's choice where it wins; records of two devices, a malformed line or one of
# an unknown kind, and a point the template lacks are refused with the file and line; a stopped
# run's cut last line is left out; this run's records may not be a file it reads.
# Skips where the build has no tuner (no DSL kernels).
#
#   bash tests/gemm_tune_table.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init gemm_tune_table "$@"
tune=$(dirname "$tool")/bench/sg_gemm_tune
[ -x "$tune" ] || sg_test_skip "no $tune (the build has no DSL kernels)"
cd "$tmp" || exit 1

header() {
    printf '# sg_gemm_tune records: op layout dtype batch M N K candidate ms status\n'
    printf '# device: %s\n# capability: 90\n# driver: 13000\n# cuda: 13000\n' "$1"
    printf '# cublaslt: 130100\n# method: a test'"'"'s\n'
}
lt=lt:66/10/35/-1/2/0/1/0/4
{
    header "GPU A"
    # mm nn, n 64 k 32: M 1 and 8 pick the same algorithm (merged), M 16 the template; M 32
    # has a faster candidate that was wrong and one within the margin: the heuristic
    echo "mm nn bfloat16 1 1 64 32 heuristic 0.01000 ok"
    echo "mm nn bfloat16 1 1 64 32 $lt 0.00900 ok"
    echo "mm nn bfloat16 1 8 64 32 heuristic 0.01000 ok"
    echo "mm nn bfloat16 1 8 64 32 $lt 0.00950 ok"
    echo "mm nn bfloat16 1 16 64 32 heuristic 0.01000 ok"
    echo "mm nn bfloat16 1 16 64 32 $lt 0.00990 ok"
    echo "mm nn bfloat16 1 16 64 32 mm_tpl:1 0.00500 ok"
    echo "mm nn bfloat16 1 32 64 32 heuristic 0.01000 ok"
    echo "mm nn bfloat16 1 32 64 32 $lt -1.00000 wrong"
    echo "mm nn bfloat16 1 32 64 32 mm_tpl:0 0.00990 ok"
    # M 64: the persistent template, a second template of aten::mm
    echo "mm nn bfloat16 1 64 64 32 heuristic 0.01000 ok"
    echo "mm nn bfloat16 1 64 64 32 mm_tpl:0 0.00800 ok"
    echo "mm nn bfloat16 1 64 64 32 mm_persist_tpl:1 0.00500 ok"
    # addmm nt float32: the first measurement is replaced by the second file's
    echo "addmm nt float32 1 4 128 64 heuristic 0.02000 ok"
    echo "addmm nt float32 1 4 128 64 $lt 0.03000 ok"
    # bmm: two batches of one (n, k)
    echo "bmm nt float16 32 128 128 64 heuristic 0.03000 ok"
    echo "bmm nt float16 32 128 128 64 $lt 0.02000 ok"
    echo "bmm nt float16 256 128 128 64 heuristic 0.03000 ok"
    echo "bmm nt float16 256 128 128 64 $lt 0.03000 ok"
    echo "bmm nt float16 256 128 128 64 cublas 0.02500 ok"
} >r1.txt
{
    header "GPU A"
    echo "addmm nt float32 1 4 128 64 $lt 0.01000 ok"
} >r2.txt

"$tune" --from r1.txt --from r2.txt --out t.yaml 2>err || fail_now "the tuner failed: $(cat err)"
grep -q "^sg_gemm_tune: 8 shapes, 7 with a choice other than the heuristic" err ||
    fail "the summary: $(cat err)"
[ "$(grep -c '^- name: ' t.yaml)" = 3 ] || fail "not one entry per op"
rules() { sed -n "/^- name: $1\$/,/^- name/p" t.yaml | grep -- '- {'; }
rules mm_tuned >mm
[ "$(wc -l <mm)" = 4 ] || fail "mm's buckets: $(cat mm)"
grep -q "m: \[1, 8\], n: 64, k: 32, use: cublaslt, algo: {algo: 66, tile: 10, stages: 35, splitk: -1," mm ||
    fail "M 1 and 8 not merged into one cuBLASLt class"
grep -q "m: \[9, 16\], n: 64, k: 32, use: mm_tpl, point: {" mm || fail "M 16 is not the template's"
grep -q "m: \[17, 32\], n: 64, k: 32, use: heuristic, gain: 1.000}" mm ||
    fail "a wrong or marginal candidate was chosen"
grep -q "m: \[33, 64\], n: 64, k: 32, use: mm_persist_tpl, point: {dtype: bfloat16, .*gain: 2.000}" mm ||
    fail "M 64 is not the persistent template's: $(cat mm)"
rules addmm_tuned >addmm
grep -q "dtype: float32, layout: nt, m: \[1, 4\], n: 128, k: 64, use: cublaslt, .*gain: 2.000}" addmm ||
    fail "the later measurement did not replace the earlier: $(cat addmm)"
sed -n '/^- name: addmm_tuned$/,$p' t.yaml | grep -q "^    tf32: sg_cuda_allow_tf32$" ||
    fail "float32 rules without tf32"
rules bmm_tuned >bmm
grep -q "batch: \[1, 32\], m: \[1, 128\], n: 128, k: 64, use: cublaslt" bmm || fail "bmm's first batch bucket"
grep -q "batch: \[33, 256\], m: \[1, 128\], n: 128, k: 64, use: cublas, gain: 1.200}" bmm ||
    fail "bmm's second batch bucket"
sed -n '/^- name: bmm_tuned$/,$p' t.yaml | grep -q "^    cublas: sg_cuda_bmm_cublas$" ||
    fail "bmm's cuBLAS function"
sed -n '/^- name: mm_tuned$/,/^- name: addmm/p' t.yaml | grep -q "cublas:" &&
    fail "a table without cuBLAS classes names its function"
grep -q "^    batch: self.size(0)$" t.yaml || fail "bmm's batch expression"
grep -q '^      device: "GPU A"$' t.yaml || fail "the device"

# schemagen reads the tables (the template's rule left out: it needs the template's artifacts)
grep -v "use: mm_tpl\|use: mm_persist_tpl" t.yaml >tables.yaml
cat >ops.yaml <<'YAML'
- func: mm(Tensor self, Tensor mat2) -> Tensor
- func: addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
- func: bmm(Tensor self, Tensor mat2) -> Tensor
YAML
mkdir art
t 0 --lib tt --dsl tables.yaml --dsl-artifacts art -o gen ops.yaml
grep -q ".splitk = -1," gen/tt_dsl.c || fail "a negative configuration value"
sg_test_compile gen gen/tt_dsl.c

# a candidate against the heuristic of its own run: a later run that measured the heuristic
# again (faster at n 96, slower at n 128) neither hides nor makes a gain
{
    header "GPU A"
    echo "mm nn bfloat16 1 1 96 32 heuristic 0.01000 ok"
    echo "mm nn bfloat16 1 1 96 32 $lt 0.00950 ok"
    echo "mm nn bfloat16 1 1 128 32 heuristic 0.01000 ok"
    echo "mm nn bfloat16 1 1 128 32 cublas 0.00990 ok"
} >ra.txt
{
    header "GPU A"
    echo "mm nn bfloat16 1 1 96 32 heuristic 0.00900 ok"
    echo "mm nn bfloat16 1 1 128 32 heuristic 0.01200 ok"
    echo "mm nn bfloat16 1 1 128 32 mm_tpl:0 0.01190 ok"
} >rb.txt
"$tune" --from ra.txt --from rb.txt --out w.yaml 2>err || fail_now "the tuner failed: $(cat err)"
grep -q "m: \[1, 1\], n: 96, k: 32, use: cublaslt, .*gain: 1.053}" w.yaml ||
    fail "a gain in its own run hidden by a later run's heuristic: $(cat w.yaml)"
grep -q "m: \[1, 1\], n: 128, k: 32, use: heuristic, gain: 1.000}" w.yaml ||
    fail "a gain made by a later run's slower heuristic: $(cat w.yaml)"

# refused: two devices, a malformed line; nothing written
{ header "GPU B"; echo "mm nn bfloat16 1 1 64 32 heuristic 0.01000 ok"; } >r3.txt
"$tune" --from r1.txt --from r3.txt --out u.yaml 2>err && fail "records of two devices taken"
grep -q "r3.txt:2: device 'GPU B' differs from 'GPU A'" err || fail "the message: $(cat err)"
{ header "GPU A"; echo "mm nn bfloat16 1 1 64"; } >r4.txt
"$tune" --from r4.txt --out u.yaml 2>err && fail "a malformed line taken"
grep -q "r4.txt:8: expected 'op layout dtype batch M N K candidate ms status'" err ||
    fail "the message: $(cat err)"
# a record not of the tables' kinds: refused, not written as a rule without a backend
for bad in "mm nn bfloat16 1 1 64 32 cutlass 0.01 ok" "mm nn bfloat16 1 1 64 32 mm_nope:1 0.01 ok" \
    "mm nn bfloat16 1 1 64 32 mm_tpl:x 0.01 ok" "mm nn bfloat16 1 1 64 32 mm_tpl:-1 0.01 ok" \
    "mm nn bfloat16 2 1 64 32 heuristic 0.01 ok" \
    "mm nn int8 1 1 64 32 heuristic 0.01 ok" "mm nn bfloat16 1 1 64 32 heuristic 0.01 o"; do
    { header "GPU A"; echo "$bad"; } >r5.txt
    "$tune" --from r5.txt --out u.yaml 2>err && fail "'$bad' taken"
    grep -q "r5.txt:8: expected 'op layout dtype batch M N K" err || fail "'$bad': $(cat err)"
    grep -q "a template of this build: mm_tpl, mm_persist_tpl" err || fail "the templates not named: $(cat err)"
done
# a template point this build's template does not have
{ header "GPU A"; echo "mm nn bfloat16 1 1 64 32 heuristic 0.01 ok"
  echo "mm nn bfloat16 1 1 64 32 mm_tpl:100000 0.001 ok"; } >r6.txt
"$tune" --from r6.txt --out u.yaml 2>err && fail "a point the template lacks taken"
grep -q "mm_tpl:100000: this build's mm_tpl has no such point" err || fail "the message: $(cat err)"
# a stopped run's last line, cut short: left out, the rest read
{ header "GPU A"; echo "mm nn bfloat16 1 1 64 32 heuristic 0.01000 ok"
  printf 'mm nn bfloat16 1 1 64 32 cub'; } >r7.txt
"$tune" --from r7.txt --out v.yaml 2>err || fail "a cut last line refused the file: $(cat err)"
grep -q "r7.txt:9: the last line has no end" err || fail "the cut line not said: $(cat err)"
# this run's records may not be a file it reads
"$tune" --job mm:nn:bfloat16 --from r1.txt --records r1.txt --out u.yaml 2>err &&
    fail "--records over a --from file taken"
grep -q "records r1.txt is also read with --from" err || fail "the message: $(cat err)"
grep -q "^mm nn bfloat16 1 1 64 32 heuristic" r1.txt || fail "r1.txt was overwritten"
[ -e u.yaml ] || [ -e u.yaml.tmp ] && fail "a refused run wrote a table"
sg_test_done
