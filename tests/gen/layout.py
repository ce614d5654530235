#!/usr/bin/env python3
"""layout.py: the generator's files stay small and their calls go one way.

    layout.py SRC_DIR NM ARCHIVE...

Fails where a .c or .h file under SRC_DIR/gen is over MAX_LINES lines, or where two files of
the generator call each other, directly or around a longer circle: the archives' members (one
object per source file) are read with nm, an edge drawn from each member to the members that
define what it uses, and every strongly connected set of more than one member named.
"""
import os
import subprocess
import sys

MAX_LINES = 850  # "about 800": a file past this does more than one job


def too_long(src):
    bad = []
    for root, _, files in os.walk(os.path.join(src, "gen")):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                path = os.path.join(root, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    n = sum(1 for _ in fh)
                if n > MAX_LINES:
                    bad.append("%s has %d lines (at most %d)" % (os.path.relpath(path, src), n, MAX_LINES))
    return bad


def graph(nm, archives):
    defs, uses = {}, {}
    for a in archives:
        out = subprocess.run([nm, "-A", a], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            # ARCHIVE:MEMBER:[ADDRESS] KIND SYMBOL
            if not line.startswith(a + ":"):
                continue
            member, _, rest = line[len(a) + 1:].partition(":")
            fields = rest.split()
            if len(fields) < 2:
                continue
            kind, sym = fields[-2], fields[-1]
            if kind == "U":
                uses.setdefault(member, set()).add(sym)
            elif kind in "TDRBC":
                defs[sym] = member
                uses.setdefault(member, set())
    return {m: {defs[s] for s in us if s in defs and defs[s] != m} for m, us in uses.items()}


def circles(g):
    """Tarjan's strongly connected components, without recursion."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src, nm, archives = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = too_long(src)
    g = graph(nm, archives)
    if len(g) < 10:
        bad.append("only %d objects in %s: not the generator's archives" % (len(g), " ".join(archives)))
    for comp in circles(g):
        bad.append("these files call each other: " + ", ".join(comp))
    for b in bad:
        print("FAIL: " + b)
    print("layout: %s (%d objects)" % ("%d failure(s)" % len(bad) if bad else "all checks passed", len(g)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
