#!/usr/bin/env python3
"""Whole-process timings for bench/run frontend and codegen: a one-shot schemagen against a
one-shot Python that loads the same file with PyYAML's C loader.

    python3 bench/process_time.py [--reps N] [--name NAME] YAML SCHEMAGEN [ARG...]

Runs SCHEMAGEN ARG... (default ARG: --emit=json YAML) as the benchmark NAME (default
frontend). Each command runs N times (after one warm-up; they take turns) with its output sent
to /dev/null; the figures are medians, each side beyond its own start-up (the same spawn from
this script is in all of them):
  NAME_process_ms         schemagen ARG..., minus schemagen --version
  pyyaml_process_ms       python3 -c 'import yaml; yaml.load(open(YAML), Loader=yaml.CLoader)'
                          minus python3 -c 'import yaml': the load alone
  pyyaml_import_load_ms   the same minus python3 -c pass: the load with PyYAML's import, which
                          is what a program that loads the file pays beyond the interpreter's
                          start-up (the way the issues state PyYAML's time: ~0.19 s here)
  NAME_process_vs_pyyaml  NAME_process_ms / pyyaml_process_ms (the stricter ratio)
  NAME_process_vs_pyyaml_import_load   NAME_process_ms / pyyaml_import_load_ms
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
    ap.add_argument("--name", default="frontend")
    ap.add_argument("path")
    ap.add_argument("schemagen")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args or ["--emit=json", a.path]
    load = f"import yaml; yaml.load(open({a.path!r}), Loader=yaml.CLoader)"
    cmds = [[a.schemagen, "--version"], [a.schemagen, *args], [sys.executable, "-c", "pass"],
            [sys.executable, "-c", "import yaml"], [sys.executable, "-c", load]]
    own_start, ours, start, imported, loaded = median_ms(cmds, a.reps)
    ours -= own_start
    theirs, with_import = loaded - imported, loaded - start
    print(f"{a.name}_process_ms {ours:.3f} ms")
    print(f"schemagen_startup_ms {own_start:.3f} ms")
    print(f"python_startup_ms {start:.3f} ms")
    print(f"python_yaml_import_ms {imported - start:.3f} ms")
    print(f"pyyaml_process_ms {theirs:.3f} ms")
    print(f"pyyaml_import_load_ms {with_import:.3f} ms")
    print(f"{a.name}_process_vs_pyyaml {ours / theirs:.3f} ratio")
    print(f"{a.name}_process_vs_pyyaml_import_load {ours / with_import:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
