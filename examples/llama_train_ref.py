#!/usr/bin/env python3
"""llama_train_ref.py: the reference for the training steps of examples/llama_block.c.

    python3 examples/llama_train_ref.py > examples/llama_train.ref

The block, weights and input of llama_block_ref.py; the loss is mean((y - target)^2) against a
target from the same generator (seed 11); each step is forward, loss, backward, then plain SGD
(p.add_(p.grad, alpha=-LR), as torch.optim.SGD does, under no_grad) with the gradients cleared. float32 on the CPU. Prints the loss
of every step and, for step 1, every parameter's gradient: its sum, the sum of absolute values
and its first values (row-major).
"""
import torch

import llama_block_ref as ref

STEPS, LR = 5, 1.0
NAMES = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "norm1", "norm2")


def main():
    w, x, cos, sin = ref.build()
    target = ref.filled(11, 1.0, ref.T, ref.D)
    for p in w.values():
        p.requires_grad_(True)
    print("# made by examples/llama_train_ref.py with torch", torch.__version__)
    print("steps %d lr %.9g" % (STEPS, LR))
    for step in range(1, STEPS + 1):
        y = ref.forward(w, x, cos, sin)
        loss = ((y - target) ** 2).mean()
        loss.backward()
        print("loss %d %.9g" % (step, loss.item()))
        if step == 1:
            for n in NAMES:
                g = w[n].grad.flatten().double()
                print("grad %s %.9g %.9g %s" % (n, g.sum().item(), g.abs().sum().item(),
                                                 " ".join("%.9g" % v for v in g[:8].tolist())))
        with torch.no_grad():
            for p in w.values():
                p.add_(p.grad, alpha=-LR)
                p.grad = None


if __name__ == "__main__":
    main()
