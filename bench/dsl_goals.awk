# dsl_goals.awk: issue 21's goals for bench/run dsl, met or not, one line each, from the
# figures and ratios ("name value unit" lines); a goal whose figure is missing says so.

{
    v[$1] = $2
    if ($1 ~ /^dsl_.*_vs_torch$/ && $1 != "dsl_rms_norm_f32_vs_torch") t[++n] = $1
}
function g(name, op, want) {
    if (!(name in v)) {
        printf "bench/run: goal %s %s %s: not measured\n", name, op, want
        return
    }
    ok = op == ">=" ? v[name] >= want : v[name] <= want
    printf "bench/run: goal %s %s %s: %s %s\n", name, op, want, v[name], ok ? "met" : "NOT MET"
}
END {
    g("dsl_rms_norm_f32_gbps", ">=", 2800)
    g("dsl_rms_norm_f32_vs_stock", ">=", 1.0)
    g("dsl_declined_extra_ns", "<=", 50)
    g("dsl_taken_extra_us", "<=", 0.5)
    # each shipped kernel faster than PyTorch's own, on every point measured
    for (i = 1; i <= n; i++) g(t[i], ">=", 1.0)
}
