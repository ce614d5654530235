#!/usr/bin/env python3
"""gemm_plot.py: the picture of bench/run gemm's per-shape table: TFLOP/s against M for each
model product N x K, ours against PyTorch's torch.mm, one panel each. Plain SVG, no plotting
library; the same table gives the same bytes.

    python3 bench/gemm_plot.py TABLE OUT.svg [TITLE]
"""
import math
import sys
from html import escape

PANEL_W, PANEL_H, COLS, PAD = 300, 190, 4, 44
OURS, TORCH = "#1f77b4", "#d62728"


def read_table(path):
    """{(N, K): [(M, ours_tflops, torch_tflops or None)]} for the products run at several M."""
    rows = {}
    with open(path) as f:
        next(f)  # the header
        for line in f:
            w = line.split()
            if len(w) < 8:
                continue
            m, n, k = int(w[0]), int(w[1]), int(w[2])
            ours = float(w[4])
            flop = 2.0 * m * n * k
            torch = None if w[6] == "-" else flop / (float(w[6]) * 1e-3) * 1e-12
            group = rows.setdefault((n, k), {})
            group.setdefault(m, (m, flop / (ours * 1e-3) * 1e-12, torch))  # a shape listed twice: once
    return {nk: sorted(v.values()) for nk, v in rows.items() if len(v) >= 4}


def path(points, x0, y0, xs, ys):
    return " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", x0 + xs(x), y0 + ys(y))
                    for i, (x, y) in enumerate(points))


def panel(out, nk, rows, x0, y0, ymax):
    n, k = nk
    w, h = PANEL_W - PAD - 10, PANEL_H - PAD - 16
    mlo, mhi = math.log2(rows[0][0]), math.log2(rows[-1][0])
    xs = lambda m: (math.log2(m) - mlo) / max(mhi - mlo, 1) * w  # noqa: E731
    ys = lambda t: h - t / ymax * h  # noqa: E731
    ox, oy = x0 + PAD, y0 + 16
    out.append('<text x="%d" y="%d" font-size="12">N %d, K %d</text>' % (ox, y0 + 12, n, k))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' %
               (ox, oy, w, h))
    for t in range(0, int(ymax) + 1, 200):
        y = oy + ys(t)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (ox, y, ox + w, y))
        out.append('<text x="%d" y="%.1f" font-size="9" text-anchor="end">%d</text>' %
                   (ox - 3, y + 3, t))
    for m, _, _ in rows:
        x = ox + xs(m)
        if m in (1, 16, 256, 4096, 16384):
            out.append('<text x="%.1f" y="%d" font-size="9" text-anchor="middle">%d</text>' %
                       (x, oy + h + 11, m))
    torch = [(m, t) for m, _, t in rows if t is not None]
    if torch:
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="1.5" '
                   'stroke-dasharray="4,3"/>' % (path(torch, ox, oy, xs, ys), TORCH))
    out.append('<path d="%s" fill="none" stroke="%s" stroke-width="1.5"/>' %
               (path([(m, o) for m, o, _ in rows], ox, oy, xs, ys), OURS))


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: gemm_plot.py TABLE OUT.svg [TITLE]", file=sys.stderr)
        return 2
    groups = read_table(argv[0])
    if not groups:
        print("gemm_plot.py: %s has no product run at several M" % argv[0], file=sys.stderr)
        return 1
    title = argv[2] if len(argv) == 3 else "bfloat16 matrix products: TFLOP/s against M"
    ymax = max(max(o, t or 0) for v in groups.values() for _, o, t in v)
    ymax = math.ceil(ymax / 200.0) * 200
    keys = sorted(groups, key=lambda nk: (nk[1] * nk[0], nk))
    rows_n = (len(keys) + COLS - 1) // COLS
    width, height = COLS * PANEL_W + 24, rows_n * PANEL_H + 50
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="14">%s</text>' % escape(title),
           '<text x="10" y="36" font-size="11"><tspan fill="%s">ours (aten::mm), solid</tspan>'
           '  <tspan fill="%s">PyTorch torch.mm, dashed</tspan>  x: M (log scale), '
           'y: TFLOP/s</text>' % (OURS, TORCH)]
    for i, nk in enumerate(keys):
        panel(out, nk, groups[nk], (i % COLS) * PANEL_W, 44 + (i // COLS) * PANEL_H, ymax)
    out.append("</svg>")
    with open(argv[1], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
