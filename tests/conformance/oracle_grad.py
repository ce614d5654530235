#!/usr/bin/env python3
"""oracle_grad.py: PyTorch's gradients for the cases of a case plan, for
test_cpu_grad_conformance (tests/unit/test_cpu_grad_reference.c built with
SG_REF_GRAD_CONFORMANCE) to replay without PyTorch.

    build/schemagen --emit=cases --case-overrides tests/conformance/overrides.txt \\
        schemas/aten_core.yaml > plan.txt
    python3 tests/conformance/oracle_grad.py plan.txt tests/data/conformance_grad.tar.xz

The plan and its inputs are oracle.py's (docs/conformance.md; this script imports it): the same
line gives the same inputs. A case is recorded where the op can be differentiated on it:

- the line's family is not `random` and the op is not tagged nondeterministic_seeded;
- the op has no out= argument (aten's out= ops refuse to run under autograd);
- it has a floating tensor input (a Tensor, or a floating item of a Tensor[] or Tensor?[]) that
  it does not write, or it is in-place on a floating self: every such input is made a leaf that
  requires grad (an in-place op is called, as a user must call it, on aten::clone of its
  self's leaf, which stays unwritten);
- torch runs the forward without grad (a case torch refuses is test_cpu_conformance's); a case
  torch refuses only under grad is recorded as raised;
- some floating result requires grad (one that does not, or an integer result, gets no upstream
  gradient; a case with none is left out);
- its tensor inputs hold at most LARGE (1,024) elements in all: the larger cases are the
  override file's shapes for the GPU's DSL kernels (a row of 1,024 to 4,096), whose gradients
  would grow the file tenfold and check no formula the small cases do not.

Each floating result that requires grad (a Tensor[] result's items one by one) gets an upstream
gradient drawn as inputs are (`n` values, contiguous, the result's dtype and sizes) from the
stream of key (256 + k) * 256 for the k-th result tensor: seed = mix(H ^ mix(key * G)), H the
line's hash (oracle.py's docstring). torch.autograd.backward of those results, then each leaf's
.grad (None where torch gives it none), are the expected gradients, values and geometry: .grad
is laid out by AccumulateGrad's layout contract, which the library's engine follows too; where
the backward raises (or the forward raises only under grad) the case records the error
instead.

File format: tests/data/grad_reference.bin's (make_grad_reference.py's docstring has it; the
value encoder is make_cpu_reference.py's, as oracle.py's version 3 extends it: tensor layouts 3
and 4, value tags 16 and 17) at version 3, which adds

    case    := str family, str name, str overload, str label (the plan line), u8 flags,
               [str error, where flags bit 1 is set], f64 rtol, f64 atol,
               u8 nargs, value * nargs, u8 grad[nargs], u8 nout, value * nout,
               u8 nwant, value * nwant
    flags   bit 0: in-place: argument 0 is passed as aten::clone of its leaf (as version 1)
            bit 1: torch raised, in the backward or in the forward under grad; error is
                   "ExceptionType: the message's first line", nwant is 0, rtol and atol are 0
    grad    1: the argument's floating tensors require grad (a list: each floating item; an
            integer or bool item never does)
    want    the leaves' .grad, each a tensor of layout 4 (its strides and storage offset as
            torch's .grad had them) or NONE

Tolerances (rtol, atol) by the loosest floating dtype among the leaves, the upstream gradients
and the gradients, as make_grad_reference.py's (that script's GRAD_TOL, atol scaled by the
largest finite magnitude among the gradients and upstream gradients, at least 1), times a factor
by the family: 1 for pointwise, view and factory, 2 for reduction, 4 for other (matmuls, norms,
softmax: sums in another order):

    float64 1e-9, 1e-12    float32 2e-5, 2e-6    float16 1e-2, 2e-3    bfloat16 5e-2, 1e-2

The output depends only on the plan (and torch's version): the same plan gives the same bytes.
stderr has a summary per family: cases recorded, of which torch raised, and the lines left out
by reason.
"""
import argparse
import os
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import oracle  # noqa: E402  the plan's tokens, values, encoding and forked batches
import make_grad_reference as gref  # noqa: E402  the gradients' tolerances

import torch  # noqa: E402

ref = oracle.ref
FLAG_INPLACE, FLAG_RAISED = 1, 2
LARGE = 1024  # tensor input elements of a case, at most
SCALE = {"pointwise": 1.0, "view": 1.0, "factory": 1.0, "reduction": 2.0}


class Skip(Exception):
    """A line with nothing to differentiate: counted by reason, not named."""


def floating(t):
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def leaves_of(v):
    """The floating tensors of an argument value (a list's items one by one)."""
    if isinstance(v, torch.Tensor):
        return [v] if floating(v) else []
    if isinstance(v, list):
        return [x for x in v if floating(x)]
    return []


def error_text(e):
    msg = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, msg[0] if msg else "")


def run_grad_line(line):
    """The case's bytes and whether torch raised; PlanError where the line cannot be run, Skip
    where it has nothing to differentiate."""
    fields = line.split(" ")
    if len(fields) < 3:
        raise oracle.PlanError("fewer than 3 fields")
    fam, name, overload = fields[0], fields[1], fields[2]
    if fam == "random":
        raise Skip("random")
    overload = "" if overload == "-" else overload
    tokens = fields[3:]
    op = oracle.resolve(name, overload)
    if torch.Tag.nondeterministic_seeded in op.tags:
        raise Skip("random")
    schema = op._schema
    sargs = schema.arguments
    if any(a.kwarg_only and a.alias_info and a.alias_info.is_write for a in sargs):
        raise Skip("out=")
    inplace = bool(sargs and sargs[0].alias_info and sargs[0].alias_info.is_write)
    text = str(schema)
    parsed = ref.parse_args(text)
    if len(parsed) != len(sargs):
        raise oracle.PlanError("schema parse: %d arguments, torch says %d"
                               % (len(parsed), len(sargs)))
    if len(tokens) != len(sargs):
        raise oracle.PlanError("%d arguments, the schema has %d" % (len(tokens), len(sargs)))
    line_hash = oracle.fnv1a64(line.encode())
    values = []
    aw = ref.Writer()
    for i, (tok, (typ, aname, _kw, _d), a) in enumerate(zip(tokens, parsed, sargs)):
        if a.name != aname:
            raise oracle.PlanError("schema parse: argument %d is %s, torch says %s"
                                   % (i, aname, a.name))
        try:
            v, enc = oracle.parse_token(tok, typ, line_hash, i)
            oracle.encode_arg(aw, typ, enc)
        except oracle.PlanError:
            raise
        except Exception as e:
            raise oracle.PlanError("argument %s (%s): %s: %s" % (aname, typ, type(e).__name__, e))
        values.append(v)
    if sum(t.numel() for v in values for t in (v if isinstance(v, list) else [v])
           if isinstance(t, torch.Tensor)) > LARGE:
        raise Skip("large")
    # which arguments require grad: the floating ones it reads; an in-place op's self too
    rg = []
    for i, (v, a) in enumerate(zip(values, sargs)):
        written = a.alias_info is not None and a.alias_info.is_write
        rg.append(bool(leaves_of(v)) and (not written or (inplace and i == 0)))
    if inplace and not rg[0]:
        raise Skip("integer result")
    if not any(rg):
        raise Skip("no floating input")

    def call(grad):
        """Calls the op on fresh views of the inputs (an in-place op writes them); returns
        (result, leaves)."""
        vals, leaves = [], []
        for i, v in enumerate(values):
            if isinstance(v, torch.Tensor):
                v = v.detach()
            elif isinstance(v, list):
                v = [x.detach() if isinstance(x, torch.Tensor) else x for x in v]
            if grad and rg[i]:
                for t in leaves_of(v):
                    t.requires_grad_(True)
                    leaves.append(t)
            vals.append(v)
        if inplace:
            vals[0] = vals[0].clone()
        args, kwargs = [], {}
        for v, a in zip(vals, sargs):
            if a.kwarg_only:
                kwargs[a.name] = v
            else:
                args.append(v)
        torch.manual_seed(line_hash & 0x7FFFFFFFFFFFFFFF)
        with torch.set_grad_enabled(grad):
            return op(*args, **kwargs), leaves

    # the inputs are views of storage no call writes: an in-place op writes a clone
    try:
        res, leaves = call(True)
    except Exception as e:
        try:
            call(False)
        except Exception:
            raise Skip("torch refuses the forward")
        return finish(fam, schema, line, aw, rg, inplace, [], [], [], error_text(e))
    rtypes = oracle.return_types(text)
    items = [] if not rtypes else [res] if len(rtypes) == 1 else list(res)
    outs = []
    for r in items:
        if isinstance(r, torch.Tensor):
            outs.append(r)
        elif isinstance(r, (list, tuple)) and all(isinstance(x, torch.Tensor) for x in r):
            outs += list(r)
    if len(outs) > 255:
        raise oracle.PlanError("%d result tensors" % len(outs))
    ups = []
    for k, o in enumerate(outs):
        if not (floating(o) and o.requires_grad):
            ups.append(None)
            continue
        seed = oracle.stream_seed(line_hash, (256 + k) * 256)
        ups.append(oracle.make_storage("n", o.dtype, list(o.shape), seed))
    roots = [(o, u) for o, u in zip(outs, ups) if u is not None]
    if not roots:
        raise Skip("no result requires grad")
    try:
        torch.autograd.backward([o for o, _ in roots], [u for _, u in roots])
    except Exception as e:
        return finish(fam, schema, line, aw, rg, inplace, ups, [], leaves, error_text(e))
    got = [t.grad for t in leaves]
    if any(g is not None and g.layout != torch.strided for g in got):
        raise Skip("sparse gradient")  # embedding(sparse=True), gather(sparse_grad=True)
    return finish(fam, schema, line, aw, rg, inplace, ups, list(got), leaves, None)


def finish(fam, schema, line, aw, rg, inplace, ups, got, leaves, err):
    """The case's bytes (version 3 of make_grad_reference.py's format) and whether it raised."""
    flags = (FLAG_INPLACE if inplace else 0) | (FLAG_RAISED if err is not None else 0)
    rtol = atol = 0.0
    if err is None:
        tensors = [g for g in got if g is not None] + [u for u in ups if u is not None]
        rtol, atol = gref.tolerance(tensors + leaves, SCALE.get(fam, 4.0))
    w = ref.Writer()
    for s in (fam, schema.name, schema.overload_name, line):
        if len(s.encode()) > 0xFFFF:
            raise oracle.PlanError("a string longer than 65535 bytes")
        w.str(s)
    w.u8(flags)
    if err is not None:
        w.str(err.encode()[:1000].decode(errors="ignore"))
    w.f64(rtol)
    w.f64(atol)
    w.u8(len(rg))
    w.b += aw.b
    for f in rg:
        w.u8(1 if f else 0)
    # the upstream gradients (layout 0), then the leaves' .grad with their geometry (layout 4);
    # None: no tensor
    for items, put in ((ups, ref.Writer.tensor),
                       ([None if g is None else g.detach() for g in got],
                        oracle.ResultWriter.tensor)):
        w.u8(len(items))
        for t in items:
            if t is None:
                w.u8(ref.T_NONE)
            else:
                w.u8(ref.T_TENSOR)
                put(w, t)
    return bytes(w.b), err is not None


def run_one(line):
    try:
        return run_grad_line(line)
    except Skip as e:
        return "skip: " + str(e)
    except oracle.PlanError:
        raise
    except Exception as e:  # the harness's fault: named on stderr, the run goes on
        return "harness: %s" % error_text(e)


def main():
    ap = argparse.ArgumentParser(description="PyTorch's gradients for a case plan.")
    ap.add_argument("plan", help="the case plan (schemagen --emit=cases)")
    ap.add_argument("out", help="the file to write (conformance_grad.bin, or .tar.xz)")
    opts = ap.parse_args()
    torch.set_num_threads(1)
    fams = OrderedDict()  # family -> [cases, raised]
    skipped = OrderedDict()  # why -> lines
    body = bytearray()
    n = 0
    left_out = []
    with open(opts.plan, encoding="utf-8") as f:
        items = [(lineno, raw.rstrip("\r\n")) for lineno, raw in enumerate(f, 1)]
    items = [(k, line) for k, line in items if line.strip() and not line.startswith("#")]
    for b in range(0, len(items), oracle.BATCH):
        for lineno, line, outcome in oracle.run_lines(items[b:b + oracle.BATCH], run_one):
            stat = fams.setdefault(line.split(" ", 1)[0], [0, 0])
            if isinstance(outcome, str):
                if outcome.startswith("skip: "):
                    why = outcome[len("skip: "):]
                    skipped[why] = skipped.get(why, 0) + 1
                else:
                    left_out.append("%s:%d: %s: %s" % (opts.plan, lineno, line, outcome))
                continue
            data, raised = outcome
            body += data
            n += 1
            stat[0] += 1
            stat[1] += raised
    head = ref.Writer()
    head.b += b"SGGRDREF"
    head.u32(3)
    head.u32(n)
    oracle.write_output(opts.out, "conformance_grad.bin", bytes(head.b) + bytes(body))
    for s in left_out:
        print("left out: " + s, file=sys.stderr)
    print("torch %s: %d cases, %d bytes -> %s" % (torch.__version__, n, len(head.b) + len(body),
                                                  opts.out), file=sys.stderr)
    print("  %-10s %6s %6s" % ("family", "cases", "raised"), file=sys.stderr)
    for fam, (c, r) in fams.items():
        print("  %-10s %6d %6d" % (fam, c, r), file=sys.stderr)
    print("  not recorded: " + ", ".join("%s %d" % kv for kv in skipped.items()) +
          ", left out %d" % len(left_out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
