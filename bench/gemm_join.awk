# gemm_join.awk: joins bench/gemm.c's records (first file: M N K dtype ours lt tuned rank
# config) with PyTorch's, from the peer (second file: M N K dtype ms) by shape; writes the
# per-shape table to TABLE and prints the figures. Ratios are speeds (time of the other /
# ours), so above 1 is ours ahead; geometric means over the shapes both measured. The files
# are told apart by name: an empty first file leaves no records of ours.
#   awk -v TABLE=FILE -f gemm_join.awk OURS TORCH
FILENAME == ARGV[1] { ours[$1 " " $2 " " $3 " " $4] = $0; order[++n] = $1 " " $2 " " $3 " " $4; next }
{ torch[$1 " " $2 " " $3 " " $4] = $5 }
END {
    printf "%-22s %-6s %10s %10s %10s %10s %8s %8s %8s  %s\n", "M N K", "dtype", "ours_ms",
           "lt_ms", "torch_ms", "tuned_ms", "TFLOP/s", "vs_lt", "vs_torch", "tuned lt config" > TABLE
    lt_n = t_n = 0; lt_min = t_min = 1e30
    for (i = 1; i <= n; i++) {
        key = order[i]; split(ours[key], f, " ")
        m = f[1]; nn = f[2]; k = f[3]; ours_ms = f[5]; lt = f[6]; tuned = f[7]
        tf = 2.0 * m * nn * k / (ours_ms * 1e-3) * 1e-12
        vlt = lt / ours_ms; lt_log += log(vlt); lt_n++; if (vlt < lt_min) { lt_min = vlt; lt_at = key }
        vt = "-"
        if (key in torch) {
            vt = torch[key] / ours_ms; t_log += log(vt); t_n++
            if (vt < t_min) { t_min = vt; t_at = key }
            tt = torch[key]
        } else tt = "-"
        printf "%-22s %-6s %10.4f %10.4f %10s %10.4f %8.1f %8.3f %8s  rank %s %s\n",
               m " " nn " " k, f[4], ours_ms, lt, tt, tuned, tf, vlt, vt == "-" ? "-" : sprintf("%.3f", vt),
               f[8], f[9] > TABLE
    }
    if (lt_n) {
        printf "gemm_geomean_vs_cublaslt %.3f ratio\n", exp(lt_log / lt_n)
        printf "gemm_min_vs_cublaslt %.3f ratio\n", lt_min
        printf "gemm: lowest against cuBLASLt at %s\n", lt_at > "/dev/stderr"
    }
    if (t_n) {
        printf "gemm_geomean_vs_torch %.3f ratio\n", exp(t_log / t_n)
        printf "gemm_min_vs_torch %.3f ratio\n", t_min
        printf "gemm: lowest against PyTorch at %s\n", t_at > "/dev/stderr"
    }
}
