#!/usr/bin/env python3
"""One-process timings for bench/run frontend and codegen: schemagen's whole process against
PyYAML's net load of the same file.

    python3 bench/process_time.py [--rounds N] [--reps K] [--name NAME] YAML SCHEMAGEN [ARG...]

Runs SCHEMAGEN ARG... (default ARG: --emit=json YAML) as benchmark NAME (default frontend),
output to /dev/null, against two Python commands:
    load   python3 -c 'import yaml; yaml.load(open(YAML), Loader=yaml.CSafeLoader)'
    read   python3 -c 'import yaml; open(YAML).read()'
PyYAML's net load is load minus read: the interpreter, the import and reading the file are
on both sides. The three commands take turns, K times each a round (after one warm-up of
each); a round's figure is the median of its K times. Printed: the medians over N rounds of
  NAME_process_ms         schemagen's whole process (its start-up included)
  NAME_process_cpu_ms     the CPU time (user and system) of that process
  pyyaml_net_load_ms      load minus read
  NAME_vs_pyyaml          each round's NAME_process_ms / pyyaml_net_load_ms
Rationale: the host's speed drifts over seconds; alternating puts both sides in each spell.
On a shared host the CPU time moves less than the wall time when others' work comes and goes.
"""
import argparse
import resource
import statistics
import subprocess
import sys
import time


def run_ms(cmd):
    """The command's wall time and its CPU time (user and system), in ms."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall = (time.perf_counter() - t) * 1e3
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--name", default="frontend")
    ap.add_argument("path")
    ap.add_argument("schemagen")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    ours_cmd = [a.schemagen, *(a.args or ["--emit=json", a.path])]
    load = [sys.executable, "-c",
            f"import yaml; yaml.load(open({a.path!r}), Loader=yaml.CSafeLoader)"]
    read = [sys.executable, "-c", f"import yaml; open({a.path!r}).read()"]
    cmds = [ours_cmd, load, read]
    for cmd in cmds:
        run_ms(cmd)
    ours, cpu, net, ratio = [], [], [], []
    for _ in range(a.rounds):
        times = [[] for _ in cmds]
        cpus = []
        for _ in range(a.reps):
            for k, cmd in enumerate(cmds):
                wall, c = run_ms(cmd)
                times[k].append(wall)
                if k == 0:
                    cpus.append(c)
        o, l, r = (statistics.median(t) for t in times)
        ours.append(o)
        cpu.append(statistics.median(cpus))
        net.append(l - r)
        ratio.append(o / (l - r))
    print(f"{a.name}_process_ms {statistics.median(ours):.2f} ms")
    print(f"{a.name}_process_cpu_ms {statistics.median(cpu):.2f} ms")
    print(f"pyyaml_net_load_ms {statistics.median(net):.2f} ms")
    print(f"{a.name}_vs_pyyaml {statistics.median(ratio):.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
