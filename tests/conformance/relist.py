#!/usr/bin/env python3
"""relist.py: remakes a list of the conformance cases that differ (differ_*.txt) from a runner's
verbose log, keeping the reasons written for the deliberate differences.

    SG_REF_VERBOSE=1 build/tests/test_cpu_conformance build/tests/conformance.bin /dev/null > log
    python3 tests/conformance/relist.py log tests/conformance/differ_cpu.txt [OTHER_LIST...]

The list's first comment block (its header) stays. Each group under a comment that starts
"# deliberate" keeps the cases of it that still differ; a deliberate group with none left goes.
A group under "# deliberate, nondeterministic:" keeps all its cases: what they give is not fixed
(the runner lets them agree or differ).
A case that differs and sits in a deliberate group of an OTHER_LIST (differ_cpu.txt, for the GPU's
list) joins that group, with its reason. Every other case that differs joins a "# to fix:"
group named by what differs (numbers replaced by N). The list is rewritten in place; stdout says how many cases are in each kind.
"""
import re
import sys

UNORDERED = "# deliberate, nondeterministic:"  # tests/unit/ref_data.h's REF_UNORDERED
FAIL = re.compile(r"^FAIL \[(\w+)\] .*? (\1 \w+::\S+ .*)$")


def read_list(path):
    """(header lines, [(comment lines, [case lines])]) of a list file."""
    header, groups, comment, cases = [], [], [], None
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        header.append(lines[i])
        i += 1
    for line in lines[i:]:
        if line.startswith("#"):
            if cases is not None:
                groups.append((comment, cases))
                comment, cases = [], None
            comment.append(line)
        elif line.strip():
            if cases is None:
                cases = []
            cases.append(line)
    if cases is not None:
        groups.append((comment, cases))
    return header, groups


def read_log(path):
    """{plan line: why} of the cases the log says differ."""
    with open(path) as f:
        lines = f.read().split("\n")
    failing = {}
    for i, line in enumerate(lines):
        m = FAIL.match(line)
        if m:
            failing[m.group(2)] = lines[i + 1].strip() if i + 1 < len(lines) else ""
    return failing


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: relist.py LOG LIST [OTHER_LIST...]")
    log, path = sys.argv[1], sys.argv[2]
    header, groups = read_list(path)
    for other in sys.argv[3:]:
        groups += [g for g in read_list(other)[1] if g[0] and g[0][0].startswith("# deliberate")]
    failing = read_log(log)
    out = header + [""]
    kept = set()
    ndeliberate = 0
    merged = {}  # the deliberate groups, by their comment, in order
    for comment, cases in groups:
        if comment and comment[0].startswith("# deliberate"):
            merged.setdefault(tuple(comment), set()).update(cases)
    for comment, cases in merged.items():
        comment = list(comment)
        # an unordered group's cases may agree in one run and differ in the next: all stay
        unordered = comment[0].startswith(UNORDERED)
        still = sorted(c for c in cases if (unordered or c in failing) and c not in kept)
        if still:
            out += comment + still + [""]
            kept.update(still)
            ndeliberate += len(still)
    tofix = {}
    for case, why in failing.items():
        if case not in kept:
            key = re.sub(r"[0-9]+(\.[0-9]+)?(e-?[0-9]+)?", "N", why)[:88]
            tofix.setdefault(key, []).append(case)
    for key in sorted(tofix):
        out += ["# to fix: " + key] + sorted(tofix[key]) + [""]
    with open(path, "w") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")
    nfix = sum(len(v) for v in tofix.values())
    print("%s: %d deliberate, %d to fix in %d groups" % (path, ndeliberate, nfix, len(tofix)))


if __name__ == "__main__":
    main()
