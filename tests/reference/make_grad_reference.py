#!/usr/bin/env python3
"""make_grad_reference.py: PyTorch's own gradients for the ops that derivatives.yaml
differentiates, as one binary file that tests/unit/test_cpu_grad_reference.c replays through
the boxed dispatcher and the generated Autograd kernels.

    python3 tests/reference/make_grad_reference.py tests/data/grad_reference.bin
    python3 tests/reference/make_grad_reference.py --seed 1234 /tmp/fresh.bin

Needs torch (written against 2.11; CPU only). Every input is made from torch.manual_seed(SEED)
(--seed, default 0: the checked-in file) before any op runs, and each case's upstream gradients
come from a generator seeded with (SEED, the case's number), so running it again gives the same
file with the same torch and seed; another seed gives the same cases with other values (what
.ci/gpu does). Random ops (bernoulli, normal, uniform_) are among the cases: their gradients are
zeros whatever they draw. A case whose torch call raises is left out and named on stderr.

The ops are those of schemas/derivatives_core.yaml (the entries of derivatives.yaml for the ops
of schemas/aten_core.yaml) with an output that is differentiable; the script says which of them
got no case. The arguments are encoded as make_cpu_reference.py encodes them (this script
imports its encoder): the FULL boxed argument list in schema order, defaults filled in.

A case: the op is called on its arguments, the tensors marked below requiring grad (leaves; a
transposed or expanded argument is a leaf view, as torch allows). Where flag 1 is set the op is
in-place, and its first argument is passed as aten::clone of that leaf, as a user of an
in-place op on a leaf must. Each output tensor that is differentiable (or those the case names)
gets an upstream gradient: random values of its shape and dtype. torch.autograd.grad of those
outputs with respect to the leaves (allow_unused: None where torch gives none) are the
expected gradients.

File format (little-endian; str, value and tensor as in make_cpu_reference.py's docstring):

    file    := magic "SGGRDREF" (8 bytes), u32 version (1), u32 ncases, case * ncases
    case    := str family        "unary", "binary", "scalar", "reduce", "linalg", "norm",
                                 "index", "view", "inplace", "random", "list"
               str name          "aten::add"
               str overload      "Tensor"; "" for the default overload
               str label         a note for messages; may be ""
               u8  flags         bit 0: in-place: argument 0 is passed as aten::clone of the
                                 leaf; other bits 0
               f64 rtol, f64 atol  a gradient element passes where
                                 |got - want| <= atol + rtol*|want| (NaN equals NaN, an infinity
                                 only itself); dtypes and shapes must be exact
               u8  nargs, value * nargs     the arguments, in schema order
               u8  grad[nargs]  1: that argument requires grad (a tensor list: each of its
                                 tensors); 0: not
               u8  nout, value * nout       per output tensor, in order (a Tensor[] result's
                                 items one by one): the upstream gradient, a TENSOR, or NONE
                                 where that output gets none
               u8  nwant, value * nwant     torch's gradient of each tensor that requires grad,
                                 in argument order (a list's items one by one): a TENSOR
                                 (layout 0) or NONE where torch gives None

The script prints the count per family and per op, and the ops of derivatives_core.yaml that
have no case (with why where that is known).
"""
import argparse
import os
import re
import sys
from collections import Counter, OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import make_cpu_reference as ref  # noqa: E402  the encoding, schemas and input makers

NC, EX = ref.NC, ref.EX
F32, F64, F16, BF16 = ref.F32, ref.F64, ref.F16, ref.BF16
I64, BOOL = ref.I64, ref.BOOL
DOUBLE = [F32, F64]  # every case family runs in these
HALF = [F16, BF16]   # and these where the CPU kernel has them

FLAG_INPLACE = 1

# ---- derivatives_core.yaml ----------------------------------------------------------------------


def load_derivatives():
    """{op: (differentiable input names, any output differentiable)} of derivatives_core.yaml.

    A line parser (no YAML library needed): entries start with "- name: SCHEMA", their keys are
    indented "key: value" lines; a key naming inputs ("input, weight, bias") gives each of them
    a formula unless its value is non_differentiable."""
    path = os.path.join(HERE, "..", "..", "schemas", "derivatives_core.yaml")
    ops = OrderedDict()
    cur, inputs, outdiff = None, set(), True
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines + ["- name: end("]:
        m = re.match(r"- name: ([\w.]+)\((.*)\) ->", line) or re.match(r"- name: (end)\((.*)", line)
        if m:
            if cur:
                ops[cur] = (inputs, outdiff)
            cur, outdiff = m.group(1), True
            inputs = set()
            names = set(typ_name[1] for typ_name in parse_names(m.group(2)))
            continue
        m = re.match(r"  ([\w, ]+): (.*)$", line)
        if not m or not cur:
            continue
        keys = [k.strip() for k in m.group(1).split(",")]
        if keys == ["output_differentiability"]:
            # [False], [True, False], or a condition (_to_copy's): False only where all are
            outdiff = any(x.strip() != "False" for x in m.group(2).strip("[] ").split(","))
        elif all(k in names for k in keys) and m.group(2).strip() != "non_differentiable":
            inputs.update(keys)
    return ops


def parse_names(arglist):
    """(type, name) of a schema's argument list text."""
    out = []
    for item in ref.split_top(arglist):
        item = item.strip()
        if item and item != "*":
            decl = item.split("=", 1)[0].strip()
            out.append(tuple(decl.rsplit(" ", 1)))
    return out


# ---- cases --------------------------------------------------------------------------------------

CASES = []  # GradCase


class GradCase:
    def __init__(self, fam, opname, args, kwargs, rg, up, label, inplace, tol, ncgrad):
        self.fam, self.opname, self.args, self.kwargs = fam, opname, args, kwargs
        self.rg, self.up, self.label, self.inplace = rg, up, label, inplace
        self.tol, self.ncgrad = tol, ncgrad


def case(fam, opname, *args, _rg=None, _up=None, _label="", _inplace=False, _tol=1.0,
         _ncgrad=False, **kwargs):
    """One case. _rg: the arguments that require grad, by name or position (default: every
    floating tensor argument that derivatives.yaml differentiates). _up: per output tensor
    whether it gets an upstream gradient (default: every one that requires grad). _inplace:
    argument 0 is passed as a clone of the leaf. _tol scales the tolerances. _ncgrad: the
    upstream gradients are passed transposed (non-contiguous) where they have two dims or
    more."""
    CASES.append(GradCase(fam, opname, args, kwargs, _rg, _up, _label, _inplace, _tol, _ncgrad))


def rnd(shape, dt, lo=-2.0, hi=2.0):
    return ref.rnd(shape, dt, lo, hi)


def away(shape, dt, lo=0.5, hi=2.0):
    """Values with |x| in [lo, hi], either sign: divisors, reciprocals."""
    mag = ref.rnd(shape, F64, lo, hi)
    sign = torch.where(torch.rand(shape, dtype=F64) < 0.5, torch.tensor(-1.0, dtype=F64),
                       torch.tensor(1.0, dtype=F64))
    return (mag * sign).to(dt)


def pos(shape, dt, lo=0.5, hi=2.5):
    return ref.rnd(shape, dt, lo, hi)


def distinct(shape, dt):
    """No ties (max, sort, topk pick one element each)."""
    return ref.distinct(shape, dt, scale=0.125)


def tied(shape, dt):
    """Few values, many ties (evenly distributed gradients)."""
    return torch.randint(-2, 3, shape).to(dt)


def unary_cases():
    F = "unary"
    ops = ["abs", "ceil", "cos", "erf", "exp", "floor", "log", "neg", "reciprocal", "round",
           "rsqrt", "sigmoid", "sign", "sin", "sqrt", "tanh", "relu", "silu", "gelu:none",
           "gelu:tanh", "round.decimals:1"]
    positive = {"log", "sqrt", "rsqrt"}
    for op in ops:
        name, kw = op, {}
        if op.startswith("gelu:"):
            name, kw = "gelu", {"approximate": op.split(":")[1]}
        elif op.startswith("round.decimals:"):
            name, kw = "round.decimals", {"decimals": int(op.split(":")[1])}
        if op in positive:
            make = pos
        elif op in ("reciprocal", "abs", "relu"):
            make = away  # away from the kink (abs, relu) and the pole (reciprocal)
        else:
            make = rnd
        for dt in DOUBLE:
            case(F, name, make([3, 4], dt), **kw)
            case(F, name, make([2, 3, 5], dt), _label="3-d, non-contiguous upstream",
                 _ncgrad=True, **kw)
        case(F, name, NC(make([4, 5], F32)), _label="non-contiguous", **kw)
        case(F, name, EX(make([1, 4], F64), [3, 4]), _label="expanded", **kw)
        case(F, name, make([], F64), _label="0-dim", **kw)
        case(F, name, make([0, 3], F32), _label="empty", **kw)
        for dt in HALF:
            case(F, name, make([3, 4], dt), **kw)
    # the kinks, where the convention is the point: abs'(0) = sgn(0) = 0, relu'(0) = 0
    z = torch.tensor([-1.5, -0.0, 0.0, 0.5, 2.0, 0.0], dtype=F64)
    case(F, "abs", z.clone(), _label="at zero")
    case(F, "relu", z.clone(), _label="at zero")
    case(F, "sign", z.clone(), _label="at zero")


def binary_cases():
    F = "binary"
    ops = {"add.Tensor": (rnd, rnd), "sub.Tensor": (rnd, rnd), "mul.Tensor": (rnd, rnd),
           "div.Tensor": (rnd, away), "maximum": (distinct, distinct),
           "minimum": (distinct, distinct), "pow.Tensor_Tensor": (pos, rnd),
           "clamp_min.Tensor": (distinct, distinct), "clamp_max.Tensor": (distinct, distinct),
           "div.Tensor_mode:trunc": (rnd, away), "div.Tensor_mode:floor": (rnd, away)}
    for op, (ma, mb) in ops.items():
        name, kw = op, {}
        if ":" in op:
            name, mode = op.split(":")
            kw = {"rounding_mode": mode}
        # maximum and minimum of two distinct() tensors: shuffled ramps, so no ties
        for dt in DOUBLE:
            case(F, name, ma([3, 4], dt), mb([3, 4], dt), **kw)
            case(F, name, ma([3, 1], dt), mb([4], dt), _label="broadcast", **kw)
        case(F, name, ma([2, 1, 3], F64), mb([4, 1], F64), _label="broadcast 3-d", **kw)
        case(F, name, ma([], F64), mb([2, 3], F64), _label="0-dim self", **kw)
        case(F, name, ma([2, 3], F32), mb([], F32), _label="0-dim other", **kw)
        case(F, name, NC(ma([4, 3], F32)), mb([4, 3], F32), _label="non-contiguous", **kw)
        case(F, name, ma([3, 4], F64), mb([3, 4], F64), _rg=[0], _label="first only", **kw)
        case(F, name, ma([3, 4], F64), mb([4], F64), _rg=[1], _label="second only", **kw)
        case(F, name, ma([3, 4], F32), mb([3, 4], F64), _label="promotion", **kw)
        for dt in HALF:
            case(F, name, ma([3, 4], dt), mb([3, 4], dt), **kw)
    for dt in DOUBLE:
        case(F, "add.Tensor", rnd([3, 4], dt), rnd([4], dt), alpha=0.5, _label="alpha")
        case(F, "sub.Tensor", rnd([3, 4], dt), rnd([3, 1], dt), alpha=-2.25, _label="alpha")
    # ties split the gradient in half
    t = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], dtype=F64)
    case(F, "maximum", t.clone(), torch.tensor([[1.0, 0.0, 3.0], [0.5, 2.0, 4.0]], dtype=F64),
         _label="ties")
    case(F, "minimum", t.clone(), torch.tensor([[1.0, 0.0, 3.0], [0.5, 2.0, 4.0]], dtype=F64),
         _label="ties")
    # where, masked_fill, clamp with tensor bounds
    for dt in DOUBLE:
        case(F, "where.self", rnd([3, 4], BOOL), rnd([3, 4], dt), rnd([3, 4], dt))
        case(F, "where.self", rnd([3, 1], BOOL), rnd([1, 4], dt), rnd([3, 4], dt),
             _label="broadcast")
        case(F, "masked_fill.Scalar", rnd([3, 4], dt), rnd([3, 4], BOOL), 1.5)
        case(F, "masked_fill.Scalar", rnd([3, 4], dt), rnd([4], BOOL), -2, _label="broadcast mask")
        case(F, "masked_fill.Tensor", rnd([3, 4], dt), rnd([3, 4], BOOL), rnd([], dt),
             _label="0-dim value")
        case(F, "clamp.Tensor", distinct([3, 4], dt), distinct([4], dt) - 1.0,
             distinct([3, 1], dt) + 1.0)
        case(F, "clamp.Tensor", distinct([3, 4], dt), None, distinct([3, 4], dt),
             _label="max only")
    case(F, "where.self", rnd([], BOOL), rnd([2, 3], F64), rnd([], F64), _label="0-dim")
    case(F, "where.self", NC(rnd([4, 3], BOOL)), NC(rnd([4, 3], F32)), rnd([4, 3], F32),
         _label="non-contiguous")
    case(F, "masked_fill.Scalar", NC(rnd([4, 3], F32)), rnd([4, 3], BOOL), 0.0,
         _label="non-contiguous")
    for dt in HALF:
        case(F, "where.self", rnd([3, 4], BOOL), rnd([3, 4], dt), rnd([3, 4], dt))
        case(F, "masked_fill.Scalar", rnd([3, 4], dt), rnd([3, 4], BOOL), 1.0)


def scalar_cases():
    F = "scalar"
    for dt in DOUBLE + HALF:
        case(F, "add.Scalar", rnd([3, 4], dt), 2.5, 2)
        case(F, "sub.Scalar", rnd([3, 4], dt), 1, -1.5)
        case(F, "mul.Scalar", rnd([3, 4], dt), -3)
        case(F, "div.Scalar", rnd([3, 4], dt), 0.5)
        case(F, "clamp", distinct([3, 4], dt), -0.5, 0.75)
        case(F, "clamp_min", distinct([3, 4], dt), 0.3)
        case(F, "clamp_max", distinct([3, 4], dt), -0.3)
    for dt in DOUBLE:
        case(F, "div.Scalar_mode", rnd([3, 4], dt), 2.5, rounding_mode="floor")
        case(F, "div.Scalar_mode", rnd([3, 4], dt), -3, rounding_mode="trunc")
        case(F, "clamp", distinct([3, 4], dt), None, 0.5, _label="max only")
        case(F, "clamp", distinct([3, 4], dt), -0.5, None, _label="min only")
        case(F, "clamp", distinct([3, 4], dt), 1.0, -1.0, _label="min > max")
        for e in [2, 3, 0.5, -1, 0, 1.5, -2.5]:
            case(F, "pow.Tensor_Scalar", pos([3, 4], dt), e)
        case(F, "pow.Tensor_Scalar", rnd([3, 4], dt), 2, _label="negative base")
        case(F, "pow.Scalar", 2, rnd([3, 4], dt))
        case(F, "pow.Scalar", 0.5, rnd([3, 4], dt))
        case(F, "pow.Scalar", 3, rnd([3, 4], dt, -1, 1), _label="int base")
    # clamp's bounds met exactly: the gradient passes where min <= x <= max
    b = torch.tensor([-1.0, -0.5, 0.0, 0.75, 1.0, 2.0], dtype=F64)
    case(F, "clamp", b.clone(), -0.5, 0.75, _label="at the bounds")
    case(F, "clamp_min", b.clone(), 0.0, _label="at the bound")
    case(F, "clamp_max", b.clone(), 1.0, _label="at the bound")
    case(F, "mul.Scalar", NC(rnd([4, 3], F32)), 2.0, _label="non-contiguous")
    case(F, "add.Scalar", rnd([], F64), 1.0, _label="0-dim")
    case(F, "pow.Tensor_Scalar", EX(pos([1, 3], F64), [4, 3]), 3, _label="expanded")
    for dt in HALF:
        case(F, "pow.Tensor_Scalar", pos([3, 4], dt), 2)


def reduce_cases():
    F = "reduce"
    x3 = lambda dt: rnd([3, 4, 5], dt)  # noqa: E731
    for dt in DOUBLE + HALF:
        case(F, "sum", x3(dt))
        case(F, "sum.dim_IntList", x3(dt), [1])
        case(F, "mean", x3(dt))
        case(F, "mean.dim", x3(dt), [-1], True)
        case(F, "_softmax", x3(dt), -1, False)
        case(F, "_log_softmax", x3(dt), 1, False)
        case(F, "amax", distinct([3, 4, 5], dt), [1])
        case(F, "max", distinct([3, 4, 5], dt))
    for dt in DOUBLE:
        case(F, "sum.dim_IntList", x3(dt), [0, 2], True)
        case(F, "sum.dim_IntList", x3(dt), [-1, 0], False)
        case(F, "sum.dim_IntList", x3(dt), None, _label="dim None")
        case(F, "sum.dim_IntList", x3(dt), [], True, _label="dim [] keepdim")
        case(F, "mean.dim", x3(dt), [1], False)
        case(F, "mean.dim", x3(dt), [0, -1], True)
        case(F, "mean.dim", x3(dt), None, _label="dim None")
        case(F, "amax", distinct([3, 4, 5], dt), [0, 2], True)
        case(F, "amax", distinct([3, 4, 5], dt), [-1], False)
        case(F, "amin", distinct([3, 4, 5], dt), [1], True)
        case(F, "amin", distinct([3, 4, 5], dt), [], False, _label="all dims")
        case(F, "min", distinct([3, 4, 5], dt))
        for d, keep in [(1, False), (-1, True), (0, True), (-3, False)]:
            case(F, "max.dim", distinct([3, 4, 5], dt), d, keep)
            case(F, "min.dim", distinct([3, 4, 5], dt), d, keep)
        case(F, "prod", pos([3, 4], dt, 0.5, 1.5))
        case(F, "prod.dim_int", pos([3, 4], dt, 0.5, 1.5), 1)
        case(F, "prod.dim_int", pos([3, 4, 2], dt, 0.5, 1.5), -3, True)
        for dims, corr, keep in [(None, None, False), ([1], 0, False), ([0, 2], 2, True),
                                 ([-1], 1, False), ([1], 1.5, True)]:
            case(F, "var.correction", x3(dt), dims, correction=corr, keepdim=keep)
            case(F, "std.correction", x3(dt), dims, correction=corr, keepdim=keep)
        case(F, "logsumexp", x3(dt), [1])
        case(F, "logsumexp", x3(dt), [0, -1], True)
        case(F, "cumsum", x3(dt), 1)
        case(F, "cumsum", x3(dt), -1)
        case(F, "_softmax", x3(dt), 0, False)
        case(F, "_log_softmax", x3(dt), -1, False)
        case(F, "sort", distinct([4, 5], dt))
        case(F, "sort", distinct([4, 5], dt), 0, True, _label="descending")
        case(F, "sort.stable", distinct([3, 6], dt), stable=True, dim=-1, descending=False)
        case(F, "topk", distinct([4, 6], dt), 3)
        case(F, "topk", distinct([4, 6], dt), 2, 0, False, True, _label="smallest, dim 0")
    # ties: the gradient is spread evenly over the tied maxima (max, amax), PyTorch's rule
    case(F, "max", tied([3, 4], F64), _label="ties")
    case(F, "min", tied([3, 4], F64), _label="ties")
    case(F, "amax", tied([3, 4], F64), [1], _label="ties")
    case(F, "amin", tied([3, 4], F64), [0], True, _label="ties")
    # zeros in prod: one zero per row, then two
    p = pos([3, 4], F64, 0.5, 1.5)
    p[0, 1] = 0.0
    p[2, 0] = 0.0
    p[2, 3] = 0.0
    case(F, "prod", p[0].clone(), _label="one zero")
    case(F, "prod.dim_int", p.clone(), 1, _label="zeros")
    case(F, "prod", p.clone(), _label="several zeros")
    # dtype arguments: the gradient comes back in the input's dtype
    case(F, "sum", rnd([3, 4], F32), dtype=F64, _label="dtype float64")
    case(F, "mean.dim", rnd([3, 4], F32), [1], dtype=F64, _label="dtype float64")
    case(F, "cumsum", rnd([3, 4], F32), 0, dtype=F64, _label="dtype float64")
    # layouts and 0-dim
    case(F, "sum.dim_IntList", NC(rnd([4, 5], F32)), [0], _label="non-contiguous")
    case(F, "mean.dim", EX(rnd([1, 5], F64), [4, 5]), [1], _label="expanded")
    case(F, "_softmax", NC(rnd([4, 5], F32)), -1, False, _label="non-contiguous")
    case(F, "sum", rnd([], F64), _label="0-dim")
    case(F, "mean", rnd([], F64), _label="0-dim")
    case(F, "amax", rnd([], F64), [], _label="0-dim")
    case(F, "logsumexp", rnd([2, 3], F32), [1], _ncgrad=False, _label="2-d")
    case(F, "var.correction", rnd([6], F64), None, _label="1-d")
    case(F, "_softmax", rnd([3, 4], F64), 1, False, _ncgrad=True, _label="non-contiguous upstream")


def linalg_cases():
    F = "linalg"
    for dt in DOUBLE:
        case(F, "mm", rnd([3, 4], dt), rnd([4, 5], dt))
        case(F, "mm", NC(rnd([3, 4], dt)), NC(rnd([4, 2], dt)), _label="non-contiguous")
        case(F, "mm", rnd([3, 4], dt), rnd([4, 5], dt), _rg=["mat2"], _label="mat2 only")
        case(F, "bmm", rnd([2, 3, 4], dt), rnd([2, 4, 5], dt))
        case(F, "bmm", NC(rnd([2, 3, 4], dt)), rnd([2, 4, 2], dt), _label="non-contiguous")
        case(F, "addmm", rnd([3, 5], dt), rnd([3, 4], dt), rnd([4, 5], dt))
        case(F, "addmm", rnd([5], dt), rnd([3, 4], dt), rnd([4, 5], dt), beta=0.5, alpha=-2,
             _label="broadcast self, beta, alpha")
        case(F, "baddbmm", rnd([2, 3, 5], dt), rnd([2, 3, 4], dt), rnd([2, 4, 5], dt))
        case(F, "baddbmm", rnd([3, 1], dt), rnd([2, 3, 4], dt), rnd([2, 4, 5], dt), beta=2.0,
             alpha=0.5, _label="broadcast self, beta, alpha")
        case(F, "matmul", rnd([3, 4], dt), rnd([4, 5], dt), _label="2-d @ 2-d")
        case(F, "matmul", rnd([4], dt), rnd([4, 5], dt), _label="1-d @ 2-d")
        case(F, "matmul", rnd([3, 4], dt), rnd([4], dt), _label="2-d @ 1-d")
        case(F, "matmul", rnd([4], dt), rnd([4], dt), _label="1-d @ 1-d")
        case(F, "matmul", rnd([2, 3, 4], dt), rnd([4, 5], dt), _label="3-d @ 2-d")
        case(F, "matmul", rnd([2, 1, 3, 4], dt), rnd([3, 4, 2], dt), _label="batch broadcast")
        case(F, "linear", rnd([3, 4], dt), rnd([5, 4], dt), rnd([5], dt))
        case(F, "linear", rnd([2, 3, 4], dt), rnd([5, 4], dt), None, _label="3-d, no bias")
        case(F, "linear", rnd([3, 4], dt), rnd([5, 4], dt), rnd([5], dt), _rg=["weight", "bias"],
             _label="weight and bias only")
        case(F, "linear", rnd([4], dt), rnd([5, 4], dt), rnd([5], dt), _label="1-d input")
    for dt in HALF:
        case(F, "mm", rnd([3, 4], dt), rnd([4, 5], dt), _tol=2.0)
        case(F, "linear", rnd([2, 3, 4], dt), rnd([5, 4], dt), rnd([5], dt), _tol=2.0)


def norm_cases():
    F = "norm"
    for dt in DOUBLE:
        x = rnd([2, 3, 4], dt)
        case(F, "native_layer_norm", x, [4], rnd([4], dt), rnd([4], dt), 1e-5)
        case(F, "native_layer_norm", rnd([2, 3, 4], dt), [3, 4], rnd([3, 4], dt), None, 1e-5,
             _label="2-d normalized, no bias")
        case(F, "native_layer_norm", rnd([3, 5], dt), [5], None, None, 1e-5,
             _label="no weight or bias")
        case(F, "native_layer_norm", rnd([3, 4], dt), [4], rnd([4], dt), rnd([4], dt), 1e-5,
             _up=[True, True, True], _label="upstream to mean and rstd too")
        case(F, "_fused_rms_norm", rnd([2, 3, 4], dt), [4], rnd([4], dt), 1e-6)
        case(F, "_fused_rms_norm", rnd([3, 4], dt), [4], None, None, _label="no weight, eps None")
        case(F, "_fused_rms_norm", rnd([3, 4], dt), [4], rnd([4], dt), 1e-5, _up=[True, False],
             _label="output only")
        case(F, "native_group_norm", rnd([2, 4, 3], dt), rnd([4], dt), rnd([4], dt), 2, 4, 3, 2,
             1e-5)
        case(F, "native_group_norm", rnd([2, 6, 2, 2], dt), None, None, 2, 6, 4, 3, 1e-5,
             _label="4-d, no weight or bias")
        case(F, "native_group_norm", rnd([2, 4, 3], dt), rnd([4], dt), rnd([4], dt), 2, 4, 3, 4,
             1e-5, _up=[True, False, False], _label="output only")
    for dt in HALF:
        case(F, "native_layer_norm", rnd([2, 3, 8], dt), [8], rnd([8], dt), rnd([8], dt), 1e-5,
             _up=[True, False, False], _tol=2.0)
        case(F, "_fused_rms_norm", rnd([2, 8], dt), [8], rnd([8], dt), 1e-5, _up=[True, False],
             _tol=2.0)


def index_cases():
    F = "index"
    for dt in DOUBLE:
        case(F, "gather", rnd([4, 5], dt), 0, torch.randint(0, 4, [3, 5]))
        case(F, "gather", rnd([3, 4, 5], dt), -1, torch.randint(0, 5, [3, 4, 2]),
             _label="last dim, repeats")
        case(F, "index_select", rnd([5, 4], dt), 0, torch.tensor([4, 0, 4, 2]),
             _label="repeated index")
        case(F, "index_select", rnd([2, 3, 4], dt), -1, torch.tensor([3, 1]))
        # scatter.src with one index per target place: the scattered value is well defined
        idx = torch.stack([torch.randperm(4)[:3] for _ in range(5)], 1)
        case(F, "scatter.src", rnd([4, 5], dt), 0, idx, rnd([3, 5], dt))
        case(F, "scatter.value", rnd([4, 5], dt), 0, idx, 2.5)
        case(F, "scatter_add", rnd([4, 5], dt), 1, torch.randint(0, 5, [4, 7]), rnd([4, 7], dt),
             _label="repeats")
        case(F, "embedding", rnd([10, 4], dt), torch.randint(0, 10, [2, 3]))
        case(F, "embedding", rnd([10, 4], dt), torch.tensor([1, 3, 3, 0, 3]), 3,
             _label="padding_idx, repeats")
        case(F, "embedding", rnd([10, 4], dt), torch.tensor([[1, 3], [3, 3]]), -1, True,
             _label="scale_grad_by_freq")
        for d in [-1, 0, 2]:
            case(F, "tril", rnd([4, 5], dt), d)
            case(F, "triu", rnd([4, 5], dt), d)
        case(F, "tril", rnd([2, 3, 3], dt), _label="batched")
    case(F, "triu", NC(rnd([5, 4], F32)), -1, _label="non-contiguous")
    case(F, "gather", NC(rnd([4, 5], F32)), 1, torch.randint(0, 5, [4, 5]),
         _label="non-contiguous")
    case(F, "embedding", rnd([10, 4], F32), torch.tensor(7), _label="0-dim index")
    for dt in HALF:
        case(F, "index_select", rnd([5, 4], dt), 0, torch.tensor([4, 0, 2]))
        case(F, "embedding", rnd([10, 4], dt), torch.randint(0, 10, [5]))


def view_cases():
    F = "view"
    for dt in DOUBLE:
        x = rnd([2, 3, 4], dt)
        case(F, "alias", x.clone())
        case(F, "view", x.clone(), [6, 4])
        case(F, "view", x.clone(), [-1])
        case(F, "_unsafe_view", x.clone(), [4, 6])
        case(F, "_reshape_alias", x.clone(), [6, 4], [4, 1])
        case(F, "transpose.int", x.clone(), 0, -1)
        case(F, "t", rnd([3, 4], dt))
        case(F, "t", rnd([5], dt), _label="1-d")
        case(F, "permute", x.clone(), [2, 0, 1])
        case(F, "permute", x.clone(), [-1, -3, -2], _label="negative dims")
        case(F, "expand", rnd([3, 1], dt), [2, 3, 4])
        case(F, "expand", rnd([3, 1], dt), [2, -1, 4], _label="-1 size")
        case(F, "expand", rnd([], dt), [2, 2], _label="0-dim")
        case(F, "select.int", x.clone(), 1, -1)
        case(F, "select.int", rnd([5], dt), 0, 2, _label="to 0-dim")
        case(F, "slice.Tensor", x.clone(), 2, 1, None, 2)
        case(F, "slice.Tensor", x.clone(), 0, -1, None, 1)
        case(F, "slice.Tensor", x.clone(), -1, 0, 100, 3, _label="end past the size")
        sq = rnd([1, 3, 1, 4], dt)
        case(F, "squeeze", sq.clone())
        case(F, "squeeze.dim", sq.clone(), 2)
        case(F, "squeeze.dim", sq.clone(), 1, _label="size not 1")
        case(F, "squeeze.dims", sq.clone(), [0, -2])
        case(F, "unsqueeze", x.clone(), 0)
        case(F, "unsqueeze", x.clone(), -1)
        case(F, "unsqueeze", rnd([], dt), 0, _label="0-dim")
        case(F, "as_strided", rnd([12], dt), [3, 3], [3, 1])
        case(F, "as_strided", rnd([3, 4], dt), [2, 2], [4, 1], 5, _label="offset")
        case(F, "as_strided", rnd([12], dt), [3, 4], [1, 2], 2, _label="overlapping")
        case(F, "clone", NC(rnd([3, 4], dt)))
        case(F, "_to_copy", rnd([3, 4], dt), _label="same dtype")
        case(F, "_to_copy", rnd([3, 4], dt), dtype=F64 if dt == F32 else F32, _label="cast")
        case(F, "chunk", rnd([6, 4], dt), 3)
        case(F, "chunk", rnd([5, 4], dt), 2, -1, _label="dim -1")
        case(F, "chunk", rnd([6, 4], dt), 3, 0, _up=[True, False, True],
             _label="middle chunk without gradient")
        case(F, "split.Tensor", rnd([5, 6], dt), 2)
        case(F, "split.Tensor", rnd([5, 6], dt), 4, 1, _up=[False, True], _label="uneven, first "
             "without gradient")
        case(F, "split_with_sizes", rnd([5, 6], dt), [1, 3, 2], 1)
        case(F, "split_with_sizes", rnd([5, 6], dt), [2, 3], 0, _up=[True, False],
             _label="last without gradient")
    case(F, "view", NC(rnd([4, 6], F32)), [2, 2, 6], _label="non-contiguous")
    case(F, "transpose.int", NC(rnd([3, 4], F32)), 0, 1, _label="non-contiguous")
    case(F, "_to_copy", rnd([3, 4], F32), dtype=F16, _label="to float16", _tol=4.0)
    case(F, "_to_copy", rnd([3, 4], BF16), dtype=F32, _label="from bfloat16")
    case(F, "permute", rnd([2, 3, 4], F32), [1, 2, 0], _ncgrad=True,
         _label="non-contiguous upstream")
    for dt in HALF:
        case(F, "transpose.int", rnd([3, 4], dt), 0, 1)
        case(F, "view", rnd([3, 4], dt), [12])
        case(F, "expand", rnd([3, 1], dt), [3, 4])


def list_cases():
    F = "list"
    for dt in DOUBLE:
        case(F, "cat", [rnd([2, 3], dt), rnd([4, 3], dt)])
        case(F, "cat", [rnd([2, 3], dt), rnd([2, 1], dt), rnd([2, 2], dt)], -1, _label="dim -1")
        case(F, "cat", [rnd([2, 3], dt)], 1, _label="one tensor")
        case(F, "stack", [rnd([2, 3], dt), rnd([2, 3], dt)])
        case(F, "stack", [rnd([2, 3], dt), rnd([2, 3], dt), rnd([2, 3], dt)], -1,
             _label="dim -1")
        case(F, "stack", [rnd([], dt), rnd([], dt)], 0, _label="0-dim")
    case(F, "cat", [rnd([2, 3], F32), rnd([2, 3], F64)], 0, _label="promotion")
    for dt in HALF:
        case(F, "cat", [rnd([2, 3], dt), rnd([1, 3], dt)])


def inplace_cases():
    F = "inplace"
    for dt in DOUBLE:
        for cmp in ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"]:
            case(F, cmp + ".Scalar", rnd([3, 4], dt), 0.5, _inplace=True)
            case(F, cmp + ".Tensor", rnd([3, 4], dt), rnd([4], dt), _inplace=True,
                 _label="broadcast other")
        case(F, "squeeze_", rnd([1, 3, 1], dt), _inplace=True)
        case(F, "squeeze_.dim", rnd([3, 1, 4], dt), -2, _inplace=True)
        case(F, "squeeze_.dims", rnd([1, 3, 1], dt), [0, 2], _inplace=True)
        case(F, "unsqueeze_", rnd([3, 4], dt), 1, _inplace=True)
        case(F, "t_", rnd([3, 4], dt), _inplace=True)
        case(F, "transpose_", rnd([2, 3, 4], dt), 0, 2, _inplace=True)
        case(F, "as_strided_", rnd([3, 4], dt), [2, 3], [1, 2], 1, _inplace=True)


def random_cases():
    F = "random"
    for dt in DOUBLE:
        case(F, "bernoulli", pos([3, 4], dt, 0.1, 0.9))
        case(F, "bernoulli_.Tensor", rnd([3, 4], dt), pos([3, 4], dt, 0.1, 0.9), _inplace=True)
        case(F, "bernoulli_.float", rnd([3, 4], dt), 0.3, _inplace=True)
        case(F, "normal_", rnd([3, 4], dt), 1.0, 2.0, _inplace=True)
        case(F, "uniform_", rnd([3, 4], dt), -1.0, 1.0, _inplace=True)
        case(F, "normal.Tensor_float", rnd([3, 4], dt), 0.5)
        case(F, "normal.float_Tensor", 1.0, pos([3, 4], dt))
        case(F, "normal.Tensor_Tensor", rnd([3, 4], dt), pos([3, 4], dt))


def build_cases(seed=0):
    torch.manual_seed(seed)
    unary_cases()
    binary_cases()
    scalar_cases()
    reduce_cases()
    linalg_cases()
    norm_cases()
    index_cases()
    view_cases()
    list_cases()
    inplace_cases()
    random_cases()


# ---- tolerances -------------------------------------------------------------------------------

# (rtol, atol) by gradient dtype. atol is scaled by the largest reference magnitude of the case
# (at least 1): gradients of reductions and products are sums whose rounding grows with them.
GRAD_TOL = {F64: (1e-9, 1e-12), F32: (2e-5, 2e-6), F16: (1e-2, 2e-3), BF16: (5e-2, 1e-2)}


def tolerance(tensors, scale_by):
    rtol, atol = 0.0, 0.0
    for t in tensors:
        if t is not None and t.dtype in GRAD_TOL:
            r, a = GRAD_TOL[t.dtype]
            rtol, atol = max(rtol, r), max(atol, a)
    if rtol == 0.0:
        rtol, atol = GRAD_TOL[F32]
    mag = 1.0
    for t in tensors:
        if t is not None and t.numel():
            f = t.detach().to(F64).abs()
            f = f[torch.isfinite(f)]
            if f.numel():
                mag = max(mag, float(f.max()))
    return rtol * scale_by, atol * scale_by * mag


# ---- writing ----------------------------------------------------------------------------------


def is_float_value(v):
    if isinstance(v, NC):
        return v.t.is_floating_point()
    if isinstance(v, EX):
        return v.small.is_floating_point()
    if isinstance(v, torch.Tensor):
        return v.is_floating_point()
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and all(is_float_value(x) for x in v)
    return False


def flat_tensors(r):
    """An op's results, a Tensor[] result's items one by one."""
    if isinstance(r, torch.Tensor):
        return [r]
    out = []
    for x in r:
        out += flat_tensors(x)
    return out


def emit(w, c, index, seed, derivs):
    op, schema, full = ref.full_arguments(c.opname, c.args, c.kwargs)
    key = schema.name.split("::")[-1] + ("." + schema.overload_name if schema.overload_name else "")
    diff_inputs = derivs[key][0] if key in derivs else set()
    names = [name for typ, name, kw, v in full]
    if c.rg is not None:
        unknown = [k for k in c.rg if k not in names and k not in range(len(names))]
        if unknown:
            raise ValueError("_rg names no argument: %s" % unknown)
    rg = []
    for i, (typ, name, kw, v) in enumerate(full):
        want = (name in c.rg or i in c.rg) if c.rg is not None else name in diff_inputs
        rg.append(bool(want and typ.startswith("Tensor") and v is not None and is_float_value(v)))
    if c.inplace and not rg[0]:
        raise ValueError("an in-place case whose argument 0 does not require grad")
    # encode the arguments before the call (an in-place op writes its inputs)
    aw = ref.Writer()
    for typ, name, kw, v in full:
        ref.encode_value(aw, typ, v)
    values = [ref.materialize(v) for typ, name, kw, v in full]
    leaves = []
    for i, v in enumerate(values):
        if not rg[i]:
            continue
        for t in (v if isinstance(v, list) else [v]):
            t.requires_grad_(True)
            leaves.append(t)
    call = list(values)
    if c.inplace:
        call[0] = values[0].clone()
    pos_args = [call[i] for i, (typ, name, kw, v) in enumerate(full) if not kw]
    kw_args = {name: call[i] for i, (typ, name, kw, v) in enumerate(full) if kw}
    res = op(*pos_args, **kw_args)
    outs = flat_tensors(res)
    if len(outs) > 255:
        raise ValueError("%d outputs" % len(outs))
    if c.up is not None and len(c.up) != len(outs):
        raise ValueError("_up has %d entries for %d outputs" % (len(c.up), len(outs)))
    gen = torch.Generator().manual_seed(seed * 1000003 + index)
    ups = []  # per output: None, or (the stored form, the tensor passed)
    for k, o in enumerate(outs):
        want = c.up[k] if c.up is not None else True
        if not (want and o.requires_grad and o.is_floating_point()):
            ups.append(None)
            continue
        g = (torch.rand(list(o.shape), generator=gen, dtype=F64) * 2 - 1).to(o.dtype)
        stored = NC(g) if c.ncgrad and g.dim() >= 2 else g
        ups.append((stored, ref.materialize(stored)))
    roots = [outs[k] for k in range(len(outs)) if ups[k] is not None]
    if not roots:
        raise ValueError("no output gets a gradient (none requires grad)")
    got = torch.autograd.grad(roots, leaves, [u[1] for u in ups if u is not None],
                              allow_unused=True)
    # the case
    rtol, atol = tolerance(list(got) + [u[1] for u in ups if u is not None], c.tol)
    w.str(c.fam)
    w.str(schema.name)
    w.str(schema.overload_name)
    w.str(c.label)
    w.u8(FLAG_INPLACE if c.inplace else 0)
    w.f64(rtol)
    w.f64(atol)
    w.u8(len(full))
    w.b += aw.b
    for f in rg:
        w.u8(1 if f else 0)
    w.u8(len(outs))
    for u in ups:
        if u is None:
            w.u8(ref.T_NONE)
        else:
            w.u8(ref.T_TENSOR)
            w.tensor(u[0])
    w.u8(len(got))
    for g in got:
        if g is None:
            w.u8(ref.T_NONE)
        else:
            w.u8(ref.T_TENSOR)
            w.tensor(g.detach())
    return key


def main():
    ap = argparse.ArgumentParser(description="PyTorch's gradients for the autograd tests.")
    ap.add_argument("--seed", type=int, default=0,
                    help="torch.manual_seed for every input (default 0: the checked-in file)")
    ap.add_argument("out", help="the file to write (OUT.bin)")
    opts = ap.parse_args()
    torch.set_num_threads(1)
    derivs = load_derivatives()
    build_cases(opts.seed)
    body = ref.Writer()
    n = 0
    fams, ops = Counter(), OrderedDict()
    left_out = []
    for index, c in enumerate(CASES):
        w = ref.Writer()
        try:
            key = emit(w, c, index, opts.seed, derivs)
        except Exception as e:  # torch refused the case (or the harness could not encode it)
            left_out.append("%s [%s]: %s: %s" % (c.opname, c.label, type(e).__name__,
                                                 str(e).splitlines()[0][:200] if str(e) else ""))
            continue
        if key not in derivs:
            print("warning: %s is not in schemas/derivatives_core.yaml" % key, file=sys.stderr)
        body.b += w.b
        n += 1
        fams[c.fam] += 1
        ops[key] = ops.get(key, 0) + 1
    head = ref.Writer()
    head.b += b"SGGRDREF"
    head.u32(1)
    head.u32(n)
    with open(opts.out, "wb") as f:
        f.write(head.b)
        f.write(body.b)
    size = len(head.b) + len(body.b)
    print("torch %s, seed %d: %d cases (%d left out), %d bytes -> %s" % (
        torch.__version__, opts.seed, n, len(left_out), size, opts.out))
    for fam, k in fams.items():
        print("  %-8s %d" % (fam, k))
    print("per op: " + ", ".join("%s %d" % (k, v) for k, v in ops.items()))
    missing = [k for k, (inputs, outdiff) in derivs.items() if k not in ops]
    for k in missing:
        inputs, outdiff = derivs[k]
        why = "its output is not differentiable" if not outdiff else "no case (add one)"
        print("no case: %s: %s" % (k, why))
    if left_out:
        print("left out (torch raised):", file=sys.stderr)
        for s in left_out:
            print("  " + s, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
