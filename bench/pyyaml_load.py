#!/usr/bin/env python3
"""The reference for bench/run frontend: PyYAML's C loader over the same file.

    python3 bench/pyyaml_load.py [--reps N] path/to/native_functions.yaml

Reads the file once, then times yaml.load(text, Loader=yaml.CLoader) (libyaml's parser plus
PyYAML's C-accelerated constructor: what torchgen uses when it is available) N times after one
warm-up, and prints the median and the minimum, one figure a line: "name value unit".

Exit status: 0; 77 when the file is absent; 3 when PyYAML or its C loader is missing.
"""
import argparse
import statistics
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions (default 7)")
    ap.add_argument("path")
    args = ap.parse_args()

    try:
        import yaml
        loader = yaml.CLoader
    except (ImportError, AttributeError):
        print("pyyaml_load: PyYAML with its C loader (python3-yaml) is missing", file=sys.stderr)
        return 3

    try:
        with open(args.path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print(f"skipped: cannot read {args.path} ({e.strerror}); the corpus is optional",
              file=sys.stderr)
        return 77

    entries = yaml.load(text, Loader=loader)  # warm-up
    times = []
    for _ in range(max(1, args.reps)):
        t0 = time.perf_counter()
        yaml.load(text, Loader=loader)
        times.append((time.perf_counter() - t0) * 1e3)

    print(f"pyyaml_cload_ms {statistics.median(times):.3f} ms")
    print(f"pyyaml_cload_min_ms {min(times):.3f} ms")
    print(f"pyyaml_entries {len(entries)} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
