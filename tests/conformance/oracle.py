#!/usr/bin/env python3
"""oracle.py: runs every case of a case plan through PyTorch and records what it gives, for
test_cpu_conformance (tests/unit/test_cpu_reference.c) to replay without PyTorch.

    build/schemagen --emit=cases --case-overrides tests/conformance/overrides.txt \\
        schemas/aten_core.yaml > plan.txt
    python3 tests/conformance/oracle.py plan.txt tests/data/conformance.bin

docs/conformance.md specifies the plan (one case per line: FAMILY OP OVERLOAD ARG...) and the
recorded file: the format of tests/data/cpu_reference.bin (make_cpu_reference.py's docstring;
its encoder is reused from there) at version 3, which adds

    case    := str family, str name, str overload, str label (the plan line), u8 flags,
               [str error, where flags bit 0 is set], f64 rtol, f64 atol,
               u8 nargs, value * nargs, u8 nrets, value * nrets
    flags   bit 0: torch raised; error is "ExceptionType: the message's first line", nrets is 0
                   and rtol, atol are 0
            bit 1: the results' values are not compared, only their dtypes and shapes (an op
                   tagged nondeterministic_seeded, or one that returns uninitialised memory:
                   empty*, new_empty*, resize*); their data is recorded as zeros
    value   += 16 OPT_TENSOR_LIST: u32 n, then per item u8 0 (None) or u8 1 and a tensor
               17 LIST             u32 n, then n strings (a Dimname[])
    tensor  layout 3: i64 strides[ndim], i64 storage offset, u64 base numel, then u64 nbytes and
            the base's elements: the argument is base.as_strided(sizes, strides, offset)
            layout 4 (every result tensor): i64 strides[ndim], i64 storage offset, then u64
            nbytes and the elements in index order, as layout 0: the values and the geometry
            torch gave (a result's strides and offset are compared where they matter: see
            docs/conformance.md)

Inputs. A tensor token tDTYPE:SIZES:LAYOUT:VALUES is built as:

    c  contiguous                                            layout 0
    t  a contiguous tensor with the last two sizes swapped,  layout 1
       transposed (-2, -1)
    s  a contiguous tensor twice as long in the last dim,    layout 3
       sliced [..., ::2]
    o  a 1-d buffer of numel + 3 elements, viewed with       layout 3
       contiguous strides at storage offset 3
    e  a contiguous tensor of size 1 in dim 0, expanded      layout 2
    p  a contiguous tensor whose first dim is innermost in    layout 3
       memory: sizes[1:] + sizes[:1], its dims rotated back

Values are drawn for the elements of what is stored (the base, in memory order), so the
elements a view skips are drawn too. Each tensor has its own stream: seed = mix(H ^ mix(key *
G)), with H the 64-bit FNV-1a hash of the plan line's bytes, key = argument position * 256 (+ 1
+ the item's index for an item of a Tensor[]), G = 0x9E3779B97F4A7C15 and mix the splitmix64
finaliser; element i draws r = mix(seed + (i + 1) * G) (mod 2**64). So a case's inputs depend
on its line alone, never on other cases or on torch's generator. From r:

    n  floats -3 + (r % 49) / 8; ints -5 + r % 11 (uint8: r % 11); bools r & 1
    p  floats 1/4 + (r % 31) / 8; ints 1 + r % 5; bools true
    u  floats (-15 + r % 31) / 16; ints and bools as n
    xN r % N (in the tensor's dtype)
    w  floats: element i is NaN, inf, -inf, 0, -0 for k = (i + seed % 8) % 8 = 0..4 and n
       otherwise; ints and bools as n
    z  zeros

Lists: an `l` token's items are read as the schema's element type (int, float or bool 0/1).

The call: torch.ops.<ns>.<name>.<overload or default>, with the schema's keyword-only arguments
(out= ones included) passed by keyword and the rest positionally, one thread. For an in-place
or out= op the result recorded is the tensor torch returns (the argument written); a view
result is recorded by its values and its geometry (layout 4), as every result is. A case whose
line cannot be built or whose results cannot be encoded (a dtype without a code, a non-tensor
result the format has no tag for) is left out and named on stderr; where torch raises, the case
is recorded with flag bit 0.

Tolerances (rtol, atol) by the family's class and the result's dtype; where a case has several
floating results the loosest applies, and a result wider than its floating inputs gets the
widest input's row (make_cpu_reference.tolerance):

    class (families)                 float64        float32         float16       bfloat16
    pw  (pointwise, view, factory)   1e-10, 1e-12   1.3e-6, 1e-5    1e-3, 1e-5    1.6e-2, 1e-5
    red (reduction)                  1e-10, 1e-10   1e-5, 1e-5      2e-3, 1e-3    1.6e-2, 1e-2
    mm  (other)                      1e-9, 1e-9     1e-4, 1e-4      2e-3, 2e-3    1.6e-2, 1.6e-2

Integer and bool results, dtypes and shapes are exact. The output depends only on the plan
(and torch's version): the same plan gives the same bytes. stderr has a summary per family:
cases recorded, of which torch raised, and lines left out.
"""
import argparse
import io
import pickle
import signal
import os
import re
import sys
import tarfile
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import make_cpu_reference as ref  # noqa: E402  (the value encoder and the schema parser)

import torch  # noqa: E402

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
T_OPT_TENSOR_LIST = 16  # sg_any_tag's number; v1's encoder has no Tensor?[] with None items
T_LIST = 17  # sg_any_tag's LIST: here a list of strings (Dimname[]), u32 n then n strings


class StrList(list):
    """A string list argument as encoded (tag 17)."""


F64, F32, F16, BF16 = torch.float64, torch.float32, torch.float16, torch.bfloat16
TOL = {
    "pw":  {F64: (1e-10, 1e-12), F32: (1.3e-6, 1e-5), F16: (1e-3, 1e-5), BF16: (1.6e-2, 1e-5)},
    "red": {F64: (1e-10, 1e-10), F32: (1e-5, 1e-5), F16: (2e-3, 1e-3), BF16: (1.6e-2, 1e-2)},
    "mm":  {F64: (1e-9, 1e-9), F32: (1e-4, 1e-4), F16: (2e-3, 2e-3), BF16: (1.6e-2, 1.6e-2)},
}
FAMILY_CLASS = {"pointwise": "pw", "view": "pw", "factory": "pw", "reduction": "red"}

DTYPES = {str(d).split(".")[1]: d for d in ref.DTYPE_CODE}
SPECIALS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0]


class PlanError(Exception):
    """A line the oracle cannot build (the plan's fault, or a type the format lacks)."""


# ---- drawing values ---------------------------------------------------------------------------

def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def stream_seed(line_hash, key):
    return mix64(line_hash ^ mix64((key * GOLDEN) & MASK))


def draw_values(kind, dtype, n, seed):
    """n elements of a VALUES kind as Python numbers (see the docstring)."""
    fl = dtype.is_floating_point
    if kind == "z":
        return [0] * n
    bound = None
    if kind.startswith("x"):
        try:
            bound = int(kind[1:])
        except ValueError:
            raise PlanError("values %r" % kind)
        if bound <= 0 and n:
            raise PlanError("values %r: an empty range" % kind)
    elif kind not in ("n", "p", "u", "w"):
        raise PlanError("values %r" % kind)
    out = []
    for i in range(n):
        r = mix64((seed + (i + 1) * GOLDEN) & MASK)
        if bound is not None:
            out.append(r % bound)
        elif dtype == torch.bool:
            out.append(kind == "p" or bool(r & 1))
        elif not fl:
            if kind == "p":
                out.append(1 + r % 5)
            else:
                out.append(r % 11 - (0 if dtype == torch.uint8 else 5))
        elif kind == "p":
            out.append(0.25 + (r % 31) / 8.0)
        elif kind == "u":
            out.append((r % 31 - 15) / 16.0)
        elif kind == "w" and (i + seed % 8) % 8 < 5:
            out.append(SPECIALS[(i + seed % 8) % 8])
        else:
            out.append(-3.0 + (r % 49) / 8.0)
    return out


def make_storage(kind, dtype, sizes, seed):
    n = 1
    for s in sizes:
        n *= s
    vals = draw_values(kind, dtype, n, seed)
    if dtype == torch.bool:
        t = torch.tensor(vals, dtype=torch.bool)
    elif dtype.is_floating_point:
        t = torch.tensor(vals, dtype=F64).to(dtype)
    else:
        t = torch.tensor(vals, dtype=torch.int64).to(dtype)
    return t.reshape(sizes)


def build_tensor(tok, seed):
    """(the tensor torch gets, what the encoder writes) for a tDTYPE:SIZES:LAYOUT:VALUES token."""
    parts = tok[1:].split(":")
    if len(parts) != 4:
        raise PlanError("tensor token %r" % tok)
    dname, stext, layout, kind = parts
    if dname not in DTYPES:
        raise PlanError("dtype %r" % dname)
    dtype = DTYPES[dname]
    try:
        sizes = [] if stext == "-" else [int(s) for s in stext.split("x")]
    except ValueError:
        raise PlanError("sizes %r" % stext)
    if any(s < 0 for s in sizes):
        raise PlanError("sizes %r" % stext)
    nd = len(sizes)
    if layout == "c":
        t = make_storage(kind, dtype, sizes, seed)
        return t, t
    if layout == "t":
        if nd < 2:
            raise PlanError("layout t needs 2 dims: %r" % tok)
        base = make_storage(kind, dtype, sizes[:-2] + [sizes[-1], sizes[-2]], seed)
        view = base.transpose(-2, -1)
        return view, ref.NC(view)
    if layout == "s":
        if nd < 1:
            raise PlanError("layout s needs a dim: %r" % tok)
        base = make_storage(kind, dtype, sizes[:-1] + [2 * sizes[-1]], seed)
        view = base[..., ::2]
    elif layout == "o":
        numel = 1
        for s in sizes:
            numel *= s
        base = make_storage(kind, dtype, [numel + 3], seed)
        strides, k = [0] * nd, 1
        for d in range(nd - 1, -1, -1):
            strides[d] = k
            k *= max(sizes[d], 1)
        view = base.as_strided(sizes, strides, 3)
    elif layout == "p":
        if nd < 3:
            raise PlanError("layout p needs 3 dims: %r" % tok)
        base = make_storage(kind, dtype, sizes[1:] + sizes[:1], seed)
        view = base.permute([nd - 1] + list(range(nd - 1)))
    elif layout == "e":
        if nd < 1:
            raise PlanError("layout e needs a dim: %r" % tok)
        small = make_storage(kind, dtype, [1] + sizes[1:], seed)
        return small.expand(sizes), ref.EX(small, sizes)
    else:
        raise PlanError("layout %r" % layout)
    return view, ref.SV(base, view.shape, view.stride(), view.storage_offset())


# ---- reading a line ---------------------------------------------------------------------------

def list_elem(typ):
    """The element type of a list type ("int[2]" -> "int", "Tensor?[]" -> "Tensor?"), or None."""
    m = re.fullmatch(r"(\w+\??)\[\d*\]\??", typ)
    return m.group(1) if m else None


def parse_token(tok, typ, line_hash, pos):
    """(the value torch gets, the value the encoder writes) for one argument token."""
    if tok == "N":
        return None, None
    c, rest = tok[0], tok[1:]
    try:
        if c == "t":
            return build_tensor(tok, stream_seed(line_hash, pos * 256))
        if c == "T":
            if not (rest.startswith("[") and rest.endswith("]")):
                raise PlanError("tensor list %r" % tok)
            items = [x for x in rest[1:-1].split(",")] if rest != "[]" else []
            if len(items) > 255:
                raise PlanError("more than 255 tensors in %r" % tok)
            vals, encs = [], []
            for k, x in enumerate(items):
                if x == "N":
                    if list_elem(typ) != "Tensor?":
                        raise PlanError("None in a %s" % typ)
                    vals.append(None)
                    encs.append(None)
                    continue
                v, e = build_tensor(x, stream_seed(line_hash, pos * 256 + 1 + k))
                vals.append(v)
                encs.append(e)
            return vals, encs
        if c == "b" and rest in ("0", "1"):
            return rest == "1", rest == "1"
        if c == "i":
            return int(rest), int(rest)
        if c == "f":
            return float(rest), float(rest)
        if c == "s" and rest[:1] in ("i", "f", "b"):
            v = int(rest[1:]) if rest[0] == "i" else float(rest[1:]) if rest[0] == "f" \
                else {"0": False, "1": True}[rest[1:]]
            return v, v
        if c == "l":
            elem = list_elem(typ) or "int"
            conv = {"float": float, "bool": lambda x: {"0": False, "1": True}[x]}.get(elem, int)
            v = [conv(x) for x in rest.split(",")] if rest else []
            return v, list(v)
        if c == "d":
            if rest not in DTYPES:
                raise PlanError("dtype %r" % rest)
            return DTYPES[rest], DTYPES[rest]
        if c == "m":
            v = getattr(torch, rest, None)
            if not isinstance(v, torch.memory_format):
                raise PlanError("memory format %r" % rest)
            return v, v
        if c == "y":
            v = getattr(torch, rest, None)
            if not isinstance(v, torch.layout):
                raise PlanError("layout %r" % rest)
            return v, v
        if c == "v":
            if rest != "cpu":
                raise PlanError("device %r: the oracle runs on the CPU" % rest)
            return torch.device("cpu"), "cpu"
        if c == "q":
            return rest, rest
        if c == "w":
            v = rest.split(",") if rest else []
            return v, StrList(v)
    except (ValueError, KeyError) as e:
        raise PlanError("token %r: %s" % (tok, e))
    raise PlanError("token %r" % tok)


def resolve(name, overload):
    if "::" not in name:
        raise PlanError("op %r is not qualified" % name)
    ns, base = name.split("::", 1)
    try:
        return getattr(getattr(getattr(torch.ops, ns), base), overload or "default")
    except (AttributeError, RuntimeError):
        raise PlanError("torch has no %s.%s" % (name, overload or "default"))


def return_types(schema_text):
    """The schema's return types as parse_args writes types ("Tensor", "Tensor[]", ...)."""
    text = schema_text.rsplit("->", 1)[1].strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    out = []
    for item in ref.split_top(text):
        item = re.sub(r"\([^)]*\)", "", item.strip())
        out.append(item.split(" ")[0])
    return [t for t in out if t]


# ---- encoding ---------------------------------------------------------------------------------

def encode_arg(w, typ, enc):
    if isinstance(enc, StrList):
        w.u8(T_LIST)
        w.u32(len(enc))
        for x in enc:
            w.str(x)
        return
    if enc is not None and list_elem(typ) == "Tensor?":
        # Tensor?[] gets its own tag so that None items survive (v1 has none such)
        w.u8(T_OPT_TENSOR_LIST)
        w.u32(len(enc))
        for x in enc:
            if x is None:
                w.u8(0)
            else:
                w.u8(1)
                w.tensor(x)
        return
    ref.encode_value(w, typ, enc)


class ResultWriter(ref.Writer):
    """Writes result tensors as layout 4: their values in index order and their geometry."""

    def tensor(self, v):
        if not isinstance(v, torch.Tensor):
            raise ValueError("a result of %s" % type(v).__name__)
        if v.dtype not in ref.DTYPE_CODE:
            raise ValueError("dtype %s has no code" % v.dtype)
        self.u8(ref.DTYPE_CODE[v.dtype])
        self.u8(v.dim())
        for s in v.shape:
            self.i64(s)
        self.u8(4)
        for s in v.stride():
            self.i64(s)
        self.i64(v.storage_offset())
        data = ref.raw_bytes(v)
        self.u64(len(data))
        self.b += data


def zeroed(r):
    """r with its tensors' data replaced by zeros, their geometry kept (results whose values
    are not compared)."""
    if isinstance(r, torch.Tensor):
        n = r.storage_offset() + 1 + sum((s - 1) * st for s, st in zip(r.shape, r.stride()))
        base = torch.zeros(n if r.numel() else r.storage_offset(), dtype=r.dtype)
        return base.as_strided(r.shape, r.stride(), r.storage_offset())
    if isinstance(r, (list, tuple)):
        return [zeroed(x) for x in r]
    return r


def encode_ret(w, typ, r):
    if r is None:
        if not typ.endswith("?"):
            raise PlanError("torch returned None for a %s" % typ)
        w.u8(ref.T_NONE)
        return
    if isinstance(r, torch.Tensor) or list_elem(typ) in ("Tensor", "Tensor?"):
        if not isinstance(r, torch.Tensor) and any(x is None for x in r):
            raise PlanError("a result list with None items")
        ref.encode_result(w, r, not isinstance(r, torch.Tensor))
    elif typ.rstrip("?") == "Scalar" or isinstance(r, (bool, int, float)) and \
            typ.rstrip("?") in ("int", "SymInt", "float", "bool"):
        ref.encode_result(w, r, False)
    else:
        # ScalarType (the raw op gives its c10 number), int[], str, ...
        ref.encode_value(w, typ, ref.python_default(typ, r))


def values_unchecked(op, base_name):
    if torch.Tag.nondeterministic_seeded in op.tags:
        return True
    return base_name.startswith(("empty", "new_empty", "_empty", "resize", "_resize"))


def run_line(line):
    """The case's bytes and whether torch raised; PlanError where the line cannot be run."""
    fields = line.split(" ")
    if len(fields) < 3:
        raise PlanError("fewer than 3 fields")
    fam, name, overload = fields[0], fields[1], fields[2]
    overload = "" if overload == "-" else overload
    tokens = fields[3:]
    op = resolve(name, overload)
    schema = op._schema
    text = str(schema)
    parsed = ref.parse_args(text)
    sargs = schema.arguments
    if len(parsed) != len(sargs):
        raise PlanError("schema parse: %d arguments, torch says %d" % (len(parsed), len(sargs)))
    if len(tokens) != len(sargs):
        raise PlanError("%d arguments, the schema has %d" % (len(tokens), len(sargs)))
    line_hash = fnv1a64(line.encode())
    args, kwargs, reads = [], {}, []
    aw = ref.Writer()
    for i, (tok, (typ, aname, _kw, _d), a) in enumerate(zip(tokens, parsed, sargs)):
        if a.name != aname:
            raise PlanError("schema parse: argument %d is %s, torch says %s" % (i, aname, a.name))
        try:  # encoded before the call: an in-place or out= op writes its arguments
            v, enc = parse_token(tok, typ, line_hash, i)
            encode_arg(aw, typ, enc)
        except PlanError:
            raise
        except Exception as e:  # a token of another type than the schema's, say
            raise PlanError("argument %s (%s): %s: %s" % (aname, typ, type(e).__name__, e))
        if a.kwarg_only:
            kwargs[aname] = v
        else:
            if kwargs:
                raise PlanError("positional %s after keyword-only ones" % aname)
            args.append(v)
        if not (a.alias_info and a.alias_info.is_write):
            reads.append(v)
    flags, err = 0, None
    torch.manual_seed(line_hash & 0x7FFFFFFFFFFFFFFF)
    try:
        res = op(*args, **kwargs)
    except Exception as e:  # torch refused the case: that is the expected outcome
        msg = str(e).strip().splitlines()
        err = "%s: %s" % (type(e).__name__, msg[0] if msg else "")
        flags |= 1
    rw = ResultWriter()
    items = []
    rtol = atol = 0.0
    if not flags & 1:
        rtypes = return_types(text)
        items = [] if not rtypes else [res] if len(rtypes) == 1 else list(res)
        if len(items) != len(rtypes):
            raise PlanError("%d results, the schema has %d" % (len(items), len(rtypes)))
        if values_unchecked(op, name.split("::", 1)[1]):
            flags |= 2
            items = [zeroed(r) for r in items]
        try:
            for typ, r in zip(rtypes, items):
                encode_ret(rw, typ, r)
        except PlanError:
            raise
        except Exception as e:
            raise PlanError("result: %s: %s" % (type(e).__name__, e))
        rtol, atol = ref.tolerance(FAMILY_CLASS.get(fam, "mm"), items, reads, TOL)
    w = ref.Writer()
    for s in (fam, schema.name, schema.overload_name, line):
        if len(s.encode()) > 0xFFFF:
            raise PlanError("a string longer than 65535 bytes")
        w.str(s)
    w.u8(flags)
    if flags & 1:
        b = err.encode()[:1000].decode(errors="ignore")  # u16 strings; the first line suffices
        w.str(b)
    w.f64(rtol)
    w.f64(atol)
    w.u8(len(tokens))
    w.b += aw.b
    w.u8(len(items))
    w.b += rw.b
    return bytes(w.b), bool(flags & 1)


def run_lines(items, fn=None):
    """Runs (lineno, line) items in a forked child, so that a case that crashes torch itself
    (an integer division by zero raises SIGFPE in some kernels) is named and left out, not the
    end of the run. Returns (lineno, line, outcome) triples in order; outcome is (bytes, raised),
    or a string: why the case is left out. A crashed batch is split until the crash is alone.
    fn runs a line (default run_line; oracle_grad.py passes its own)."""
    fn = fn or run_line
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out = []
        for lineno, line in items:
            try:
                out.append((lineno, line, fn(line)))
            except PlanError as e:
                out.append((lineno, line, str(e)))
        with os.fdopen(w, "wb") as f:
            pickle.dump(out, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if status == 0 and data:
        return pickle.loads(data)
    if len(items) == 1:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        why = "torch crashed (%s)" % (signal.Signals(sig).name if sig else "exit %d" % status)
        return [(items[0][0], items[0][1], why)]
    half = len(items) // 2
    return run_lines(items[:half], fn) + run_lines(items[half:], fn)


BATCH = 400


def write_output(path, member, data):
    """Writes data to path, or where path ends in .tar.xz (what the repository keeps) a tar of
    the one file member, with no times or owners: the same data gives the same bytes."""
    if path.endswith(".tar.xz"):
        info = tarfile.TarInfo(member)
        info.size, info.mtime, info.mode = len(data), 0, 0o644
        with tarfile.open(path, "w:xz", format=tarfile.USTAR_FORMAT) as tf:
            tf.addfile(info, io.BytesIO(data))
    else:
        with open(path, "wb") as f:
            f.write(data)


def main():
    ap = argparse.ArgumentParser(description="PyTorch's results for a case plan.")
    ap.add_argument("plan", help="the case plan (schemagen --emit=cases)")
    ap.add_argument("out", help="the file to write (conformance.bin)")
    opts = ap.parse_args()
    torch.set_num_threads(1)
    fams = OrderedDict()  # family -> [cases, raised, left out]
    body = bytearray()
    n = 0
    left_out = []
    with open(opts.plan, encoding="utf-8") as f:
        items = [(lineno, raw.rstrip("\r\n")) for lineno, raw in enumerate(f, 1)]
    items = [(k, line) for k, line in items if line.strip() and not line.startswith("#")]
    for b in range(0, len(items), BATCH):
        for lineno, line, outcome in run_lines(items[b:b + BATCH]):
            stat = fams.setdefault(line.split(" ", 1)[0], [0, 0, 0])
            if isinstance(outcome, str):
                stat[2] += 1
                left_out.append("%s:%d: %s: %s" % (opts.plan, lineno, line, outcome))
                continue
            data, raised = outcome
            if n >= 1 << 20:  # ref_load refuses more
                raise SystemExit("%s: more than 2**20 cases" % opts.plan)
            body += data
            n += 1
            stat[0] += 1
            stat[1] += raised
    head = ref.Writer()
    head.b += b"SGCPUREF"
    head.u32(3)
    head.u32(n)
    write_output(opts.out, "conformance.bin", bytes(head.b) + bytes(body))
    for s in left_out:
        print("left out: " + s, file=sys.stderr)
    print("torch %s: %d cases, %d bytes -> %s" % (torch.__version__, n, len(head.b) + len(body),
                                                  opts.out), file=sys.stderr)
    print("  %-10s %6s %6s %8s" % ("family", "cases", "raised", "left out"), file=sys.stderr)
    for fam, (c, r, lo) in fams.items():
        print("  %-10s %6d %6d %8d" % (fam, c, r, lo), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
