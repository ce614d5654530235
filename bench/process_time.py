#!/usr/bin/env python3
"""Whole-process timings for bench/run frontend: a one-shot schemagen against a one-shot
Python that loads the same file with PyYAML's C loader, beyond the interpreter's start-up.

    python3 bench/process_time.py [--reps N] SCHEMAGEN path/to/native_functions.yaml

Each command runs N times (after one warm-up; the four take turns) with its output sent to
/dev/null; medians, each side beyond its own start-up (the same spawn from this script is in
both):
  frontend_process_ms     schemagen --emit=json FILE, minus schemagen --version
  pyyaml_process_ms       python3 -c 'import yaml; yaml.load(open(FILE), Loader=yaml.CLoader)',
                          minus python3 -c 'import yaml'
  *_startup_ms            the start-ups subtracted
"""
import argparse
import statistics
import subprocess
import sys
import time


def median_ms(cmds, reps):
    """Medians of each command's times; the commands take turns, so that the machine's drift
    over seconds falls on all of them alike."""
    times = [[] for _ in cmds]
    for i in range(reps + 1):
        for k, cmd in enumerate(cmds):
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            if i:
                times[k].append((time.perf_counter() - t) * 1e3)
    return [statistics.median(t) for t in times]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("schemagen")
    ap.add_argument("path")
    a = ap.parse_args()
    load = f"import yaml; yaml.load(open({a.path!r}), Loader=yaml.CLoader)"
    cmds = [[a.schemagen, "--version"], [a.schemagen, "--emit=json", a.path],
            [sys.executable, "-c", "import yaml"], [sys.executable, "-c", load]]
    own_start, ours, start, theirs = median_ms(cmds, a.reps)
    ours -= own_start
    theirs -= start
    print(f"frontend_process_ms {ours:.3f} ms")
    print(f"schemagen_startup_ms {own_start:.3f} ms")
    print(f"python_startup_ms {start:.3f} ms")
    print(f"pyyaml_process_ms {theirs:.3f} ms")
    print(f"frontend_process_vs_pyyaml {ours / theirs:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
