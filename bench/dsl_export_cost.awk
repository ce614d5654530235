# dsl_export_cost.awk: the build-cost figures of bench/run dsl from tools/dsl_export.py's
# stderr (one or more exports, one after the other). -v total=SECONDS: the exports' wall time.
#
#   dsl_export: triton 3.6.0 imported in 0.26 s
#   dsl_export: nvidia-cutlass-dsl 4.8.1 imported in 0.45 s (for sm_90)
#   dsl_export: rms_norm_triton__float32_1024__sm90: 0.52 s, 10280 bytes, symbol ..., shared 32
#
# The first point after an import line counts the import too: it is taken out of that point.
# Prints nothing (and says so) where no point was exported.

$1 == "dsl_export:" && $3 ~ /^[0-9.]+$/ && $4 == "s," && $6 == "bytes," {
    prefix = $2
    sub(/:$/, "", prefix)
    decl = prefix
    sub(/__.*/, "", decl)
    sub(/_(triton|cutedsl)$/, "", decl)
    s = $3 - pending
    pending = 0
    if (s < 0) s = 0
    n++
    sum += s
    if (s > max) max = s
    per[decl] += s
    if (!(decl in seen)) {
        seen[decl] = 1
        order[++nd] = decl
    }
    bytes += $5
}
$1 == "dsl_export:" && ($2 == "triton" || $2 == "nvidia-cutlass-dsl") && $4 == "imported" &&
    $5 == "in" {
    imp += $6
    pending = $6
}
END {
    if (n == 0) {
        print "bench/run: the export wrote no artifact lines: no build-cost figures" > "/dev/stderr"
        exit
    }
    printf "dsl_export_s %.2f s\n", total
    printf "dsl_export_points %d points\n", n
    printf "dsl_export_point_ms %.0f ms\n", sum / n * 1000
    printf "dsl_export_point_max_ms %.0f ms\n", max * 1000
    printf "dsl_export_import_s %.2f s\n", imp
    for (i = 1; i <= nd; i++) printf "dsl_export_%s_s %.2f s\n", order[i], per[order[i]]
    printf "dsl_cubin_bytes %d bytes\n", bytes
}
