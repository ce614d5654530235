# dsl_ratios.awk: bench/run dsl's ratios from the figures of sg_bench_dsl and dsl_torch.py
# ("name value unit" lines): each dsl_BASE_gbps (or _tflops) against stock_BASE_gbps and
# torch_BASE_gbps,
# and the issue's headline, rms_norm float32 at 16384 x 4096 (the N = 4096 point), also against
# the device-to-device copy of the same run (copy_gbps). A ratio whose sides are not both there
# is left out.

{
    v[$1] = $2
    if ($1 ~ /^dsl_.*_(gbps|tflops)$/ && $1 != "dsl_rms_norm_f32_gbps") order[++n] = $1
}
function r(name, a, b) {
    if ((a in v) && (b in v) && v[b] > 0) printf "%s %.3f ratio\n", name, v[a] / v[b]
}
END {
    for (i = 1; i <= n; i++) {
        f = order[i]
        unit = f ~ /_gbps$/ ? "_gbps" : "_tflops"
        base = substr(f, 5, length(f) - 4 - length(unit)) # dsl_BASE_gbps, dsl_BASE_tflops
        r("dsl_" base "_vs_stock", f, "stock_" base unit)
        r("dsl_" base "_vs_torch", f, "torch_" base unit)
    }
    r("dsl_rms_norm_f32_vs_stock", "dsl_rms_norm_f32_4096_gbps", "stock_rms_norm_f32_4096_gbps")
    r("dsl_rms_norm_f32_vs_torch", "dsl_rms_norm_f32_4096_gbps", "torch_rms_norm_f32_4096_gbps")
    r("dsl_rms_norm_f32_vs_copy", "dsl_rms_norm_f32_4096_gbps", "copy_gbps")
}
