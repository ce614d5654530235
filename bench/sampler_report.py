#!/usr/bin/env python3
"""sampler_report.py FILE [TOP]: where bench/sampler.c's samples fell, by object and by function.

Addresses are mapped through the memory map the sampler saved, then to each object's symbols
(nm, its symbol table and its dynamic one). In an object without a symbol table (a stripped
driver) a sample is named after the nearest exported symbol below it, marked "near": the
object's share is right, the name only says where."""
import bisect
import collections
import subprocess
import sys


def read(path):
    maps, samples = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("M "):
                p = line[2:].split()
                if len(p) >= 6:
                    lo, hi = (int(x, 16) for x in p[0].split("-"))
                    maps.append((lo, hi, int(p[2], 16), p[5]))
            elif line.startswith("S "):
                samples.append(int(line[2:], 16))
    maps.sort()
    return maps, samples


def loads(path):
    """(file offset, virtual address, file size) of each LOAD segment."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    segs = []
    for line in out.splitlines():
        p = line.split()
        if p and p[0] == "LOAD":
            segs.append((int(p[1], 16), int(p[2], 16), int(p[4], 16)))
    return segs


def symbols(path):
    """Sorted addresses, their names, and whether the object has a symbol table."""
    table = {}
    full = False
    for extra in ([], ["-D"]):
        out = subprocess.run(["nm", "-n", "--defined-only"] + extra + [path],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwWiI":
                table.setdefault(int(p[0], 16), p[2])
                full = full or not extra
    keys = sorted(table)
    return keys, [table[k] for k in keys], full


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: sampler_report.py FILE [TOP]")
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    maps, samples = read(sys.argv[1])
    if not samples:
        sys.exit(f"sampler_report.py: {sys.argv[1]} holds no samples")
    starts = [m[0] for m in maps]
    offsets = collections.defaultdict(list)
    outside = 0
    for a in samples:
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and maps[i][0] <= a < maps[i][1] and maps[i][3].startswith("/"):
            lo, _, off, path = maps[i]
            offsets[path].append(a - lo + off)
        else:
            outside += 1
    by_fn = collections.Counter()
    for path, offs in offsets.items():
        name = path.rsplit("/", 1)[-1]
        segs = loads(path)
        keys, names, full = symbols(path)
        for o in offs:
            va = next((o - fo + v for fo, v, n in segs if fo <= o < fo + n), o)
            i = bisect.bisect_right(keys, va) - 1
            fn = names[i] if i >= 0 else "?"
            by_fn[(name, fn if full else f"near {fn}")] += 1
    total = len(samples)
    by_obj = collections.Counter()
    for (obj, _), c in by_fn.items():
        by_obj[obj] += c
    print(f"{total} samples; {outside} outside any file (vdso, anonymous code)")
    for obj, c in by_obj.most_common():
        print(f"{100 * c / total:6.2f}%  {obj}")
    print()
    for (obj, fn), c in by_fn.most_common(top):
        print(f"{100 * c / total:6.2f}%  {obj}: {fn}")


if __name__ == "__main__":
    main()
