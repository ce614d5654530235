#!/usr/bin/env bash
# bench_dsl_figures.sh: bench/run dsl's arithmetic on made-up lines (docs/perf.md, "dsl"):
# the build-cost figures from the export's stderr (the import taken out of the first point,
# sums per kernel), the ratios to the stock kernel and PyTorch with the headline, and the goal
# check (met, NOT MET, not measured, a negative difference).
#
#   bash tests/bench_dsl_figures.sh [SCHEMAGEN] [CORPUS_DIR]   (neither is used)
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init_no_tool bench_dsl_figures
bench=$root/bench
# has_line TEXT LINE: TEXT holds LINE as a whole line
has_line() { grep -qxF -- "$2" <<<"$1" || fail "missing line '$2' in:"$'\n'"$1"; }
hasnt() { ! grep -q -- "$2" <<<"$1" || fail "unexpected '$2' in:"$'\n'"$1"; }

# ---- build cost ----
log='dsl_export: triton 3.6.0 imported in 0.30 s
dsl_export: rms_norm_triton__float32_1024__sm90: 0.50 s, 1000 bytes, symbol rms_norm_fwd, shared 32
dsl_export: rms_norm_triton__bfloat16_1024__sm90: 0.10 s, 2000 bytes, symbol rms_norm_fwd, shared 32
dsl_export: 2 compiled, 0 up to date, 0 failed, of 2; 0.90 s; 3000 bytes of cubin written
dsl_export: triton 3.6.0 imported in 0.20 s
dsl_export: add_rms_norm_triton__float32_1024__sm90: 0.60 s, 4000 bytes, symbol add_rms_norm_fwd, shared 0
dsl_export: 1 compiled, 0 up to date, 0 failed, of 1; 0.70 s; 4000 bytes of cubin written'
out=$(awk -v total=1.75 -f "$bench/dsl_export_cost.awk" <<<"$log")
has_line "$out" "dsl_export_s 1.75 s"
has_line "$out" "dsl_export_points 3 points"
# 0.20, 0.10 and 0.40 s once the imports are out: a mean of 233 ms, the slowest 400 ms
has_line "$out" "dsl_export_point_ms 233 ms"
has_line "$out" "dsl_export_point_max_ms 400 ms"
has_line "$out" "dsl_export_import_s 0.50 s"
has_line "$out" "dsl_export_rms_norm_s 0.30 s"
has_line "$out" "dsl_export_add_rms_norm_s 0.40 s"
has_line "$out" "dsl_cubin_bytes 7000 bytes"
# the summary lines are not points
hasnt "$out" "dsl_export_2_s"
out=$(awk -v total=1 -f "$bench/dsl_export_cost.awk" <<<"dsl_export: error: x: failed" 2>&1)
has_line "$out" "bench/run: the export wrote no artifact lines: no build-cost figures"

# ---- ratios ----
figs='dsl_rms_norm_f32_1024_gbps 2800.0 GB/s
stock_rms_norm_f32_1024_gbps 2000.0 GB/s
torch_rms_norm_f32_1024_gbps 1400.0 GB/s
dsl_rms_norm_f32_4096_gbps 2900.0 GB/s
stock_rms_norm_f32_4096_gbps 3000.0 GB/s
torch_rms_norm_f32_4096_gbps 2000.0 GB/s
dsl_rms_norm_f32_gbps 2900.0 GB/s
dsl_add_rms_norm_bf16_16384_gbps 2500.0 GB/s
torch_add_rms_norm_bf16_16384_gbps 2600.0 GB/s
dsl_softmax_bf16_1024_gbps 1000.0 GB/s
dsl_declined_extra_ns -3.2 ns
dsl_export_s 6.90 s'
ratios=$(awk -f "$bench/dsl_ratios.awk" <<<"$figs")
has_line "$ratios" "dsl_rms_norm_f32_1024_vs_stock 1.400 ratio"
has_line "$ratios" "dsl_rms_norm_f32_1024_vs_torch 2.000 ratio"
has_line "$ratios" "dsl_rms_norm_f32_4096_vs_stock 0.967 ratio"
has_line "$ratios" "dsl_rms_norm_f32_vs_stock 0.967 ratio"
has_line "$ratios" "dsl_rms_norm_f32_vs_torch 1.450 ratio"
has_line "$ratios" "dsl_add_rms_norm_bf16_16384_vs_torch 0.962 ratio"
# one side missing: no ratio; the headline is not a point of its own
hasnt "$ratios" "dsl_add_rms_norm_bf16_16384_vs_stock"
hasnt "$ratios" "dsl_softmax_bf16_1024_vs"
hasnt "$ratios" "dsl_rms_norm_f32_vs_stock_vs"
[ "$(grep -c . <<<"$ratios")" -eq 7 ] || fail "7 ratios expected:"$'\n'"$ratios"
# the copy of the same run, where there is one (sg_bench_dsl's, not PyTorch's)
ratios=$(printf '%s\ncopy_gbps 3200.0 GB/s\ntorch_copy_gbps 3000.0 GB/s\n' "$figs" | awk -f "$bench/dsl_ratios.awk")
has_line "$ratios" "dsl_rms_norm_f32_vs_copy 0.906 ratio"

# ---- goals ----
goals=$(printf '%s\n%s\n' "$figs" "$ratios" | awk -f "$bench/dsl_goals.awk")
has_line "$goals" "bench/run: goal dsl_rms_norm_f32_gbps >= 2800: 2900.0 met"
has_line "$goals" "bench/run: goal dsl_rms_norm_f32_vs_stock >= 1: 0.967 NOT MET"
has_line "$goals" "bench/run: goal dsl_declined_extra_ns <= 50: -3.2 met"
has_line "$goals" "bench/run: goal dsl_taken_extra_us <= 0.5: not measured"
has_line "$goals" "bench/run: goal dsl_rms_norm_f32_1024_vs_torch >= 1: 2.000 met"
has_line "$goals" "bench/run: goal dsl_add_rms_norm_bf16_16384_vs_torch >= 1: 0.962 NOT MET"
goals=$(awk -f "$bench/dsl_goals.awk" <<<"dsl_declined_extra_ns 50.1 ns")
has_line "$goals" "bench/run: goal dsl_declined_extra_ns <= 50: 50.1 NOT MET"

sg_test_done
