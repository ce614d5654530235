#!/usr/bin/env python3
"""autograd_torch.py: PyTorch eager doing bench/autograd.c's training step of the demo's block
(examples/llama_block_ref.py's forward, mean squared error, backward, SGD with lr 1e-3 as
torch.optim.SGD updates, p.add_(p.grad, alpha=-lr), under no_grad, gradients cleared), timed
the same way: the median of REPS steps after 3 warm-up steps, the device synchronized at each
step's end; then the bytes its saved tensors hold once the forward is recorded
(saved_tensors_hooks: numel x element size of each saved tensor), and the forward alone under
no_grad.

    python3 bench/autograd_torch.py [--reps N] [--smoke]

Figures: torch_autograd_step_{cpu,cuda}_ms, torch_autograd_saved_{cpu,cuda}_bytes,
torch_autograd_forward_{cpu,cuda}_ms (cuda where torch sees a GPU).
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import llama_block_ref as ref  # noqa: E402

LR = 1e-3


def out(name, value, unit):
    print("torch_%s %s %s" % (name, value, unit), flush=True)


def run(dev, reps):
    w, x, cos, sin = ref.build()
    w = {k: v.to(dev).requires_grad_(True) for k, v in w.items()}
    x, cos, sin = x.to(dev), cos.to(dev), sin.to(dev)
    target = ref.filled(11, 1.0, ref.T, ref.D).to(dev)

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    def loss_of():
        y = ref.forward(w, x, cos, sin)
        return ((y - target) ** 2).mean()

    def step():
        loss_of().backward()
        with torch.no_grad():
            for p in w.values():
                p.add_(p.grad, alpha=-LR)
                p.grad = None
        sync()

    for _ in range(3):
        step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    out("autograd_step_%s_ms" % dev, "%.4f" % statistics.median(times), "ms")
    saved = [0]

    def pack(t):
        saved[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = loss_of()
    out("autograd_saved_%s_bytes" % dev, saved[0], "bytes")
    del loss
    times = []
    with torch.no_grad():
        for _ in range(reps):
            t0 = time.perf_counter()
            ref.forward(w, x, cos, sin)
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
    out("autograd_forward_%s_ms" % dev, "%.4f" % statistics.median(times), "ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    reps = 1 if a.smoke else max(1, a.reps)
    run("cpu", reps)
    if torch.cuda.is_available():
        run("cuda", reps)


if __name__ == "__main__":
    main()
