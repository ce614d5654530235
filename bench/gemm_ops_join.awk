# gemm_ops_join.awk: joins bench/gemm_ops.c's records (first file: op batch M N K ours_ms
# heuristic_ms) with PyTorch's, from the peer (second file: op batch M N K ms) by product;
# writes the per-product table to TABLE and prints, per op (bmm_nn and bmm_nt together as
# bmm), the geometric mean and the minimum of ours against PyTorch and the geometric mean
# against the library's heuristic (what the tables gain). Ratios are speeds: above 1 is ours
# ahead.
#   awk -v TABLE=FILE -f gemm_ops_join.awk OURS TORCH
FILENAME == ARGV[1] { key = $1 " " $2 " " $3 " " $4 " " $5; ours[key] = $6; heur[key] = $7
                      order[++n] = key; next }
{ torch[$1 " " $2 " " $3 " " $4 " " $5] = $6 }
function group(op) { return op ~ /^bmm/ ? "bmm" : op }
END {
    printf "%-12s %-24s %10s %10s %10s %8s %8s %8s\n", "op", "batch M N K", "ours_ms",
           "heur_ms", "torch_ms", "TFLOP/s", "vs_heur", "vs_torch" > TABLE
    for (i = 1; i <= n; i++) {
        key = order[i]; split(key, f, " "); g = group(f[1])
        if (!(g in seen)) { seen[g] = 1; groups[++ng] = g; tmin[g] = 1e30 }
        vh = heur[key] / ours[key]; hlog[g] += log(vh); hn[g]++
        vt = "-"; tt = "-"
        if (key in torch) {
            tt = torch[key]; vt = tt / ours[key]; tlog[g] += log(vt); tn[g]++
            if (vt < tmin[g]) { tmin[g] = vt; tat[g] = key }
        }
        tf = 2.0 * f[2] * f[3] * f[4] * f[5] / (ours[key] * 1e-3) * 1e-12
        printf "%-12s %-24s %10.4f %10.4f %10s %8.1f %8.3f %8s\n", f[1],
               f[2] " " f[3] " " f[4] " " f[5], ours[key], heur[key], tt, tf, vh,
               vt == "-" ? "-" : sprintf("%.3f", vt) > TABLE
    }
    for (i = 1; i <= ng; i++) {
        g = groups[i]
        printf "gemm_%s_geomean_vs_heuristic %.3f ratio\n", g, exp(hlog[g] / hn[g])
        if (tn[g]) {
            printf "gemm_%s_geomean_vs_torch %.3f ratio\n", g, exp(tlog[g] / tn[g])
            printf "gemm_%s_min_vs_torch %.3f ratio\n", g, tmin[g]
            printf "gemm: %s lowest against PyTorch at %s\n", g, tat[g] > "/dev/stderr"
        }
    }
}
