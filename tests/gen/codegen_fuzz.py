#!/usr/bin/env python3
"""codegen_fuzz.py: schemas with hostile text in every field, through the generator and a C
compiler; the generated C must compile and declare exactly the ops of the input.

    python3 codegen_fuzz.py --schemagen PATH --include RUNTIME_DIR [options]

  --cases N        random cases (default 30); --seed S picks them (default 1: CI is repeatable)
  --seconds T      run random cases until T seconds have passed instead (a longer hunt)
  --hostile        also the fixed case: every text field holds */, /*, a newline, quotes, a
                   backslash, ??/ and #; compiled by each compiler given, once with -trigraphs
  --cc CC          a compiler (repeatable; default cc)
  --cxx CXX        also compile the header as C++ with CXX
  --link LIB       the runtime's static libraries: then each case is also linked with a program
                   that walks the op table and compares every string with the input
  --keep DIR       keep the failing case's files there

A case passes when schemagen either refuses it with located errors (FILE:LINE:COL: error:),
or writes C that compiles at -Werror, whose header declares exactly the expected ops, whose
objects define only the symbols the generator's naming gives those ops (an injected
declaration shows up here), and whose op table holds the input's strings byte for byte.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Werror"]
LIB = "fz"

# Pieces of hostile text: comment ends and starts, line breaks, quotes, backslashes, trigraphs,
# preprocessor lines, template syntax, control bytes and non-ASCII.
HOSTILE = ["*/", "/*", "\n", "\r\n", '"', "'", "\\", "\\\n", "??/", "??=", "???/", "??'", "#",
           "\n#define X 1\n", "\n#include <stdio.h>\n", "*/ int injected; /*", '", 0}; int injected; //',
           "$(", "$$", "%", "{lib}", "\t", "\x01", "\x7f", "\u00e9", "\u2028", "\ufeff", "//", "\\\\",
           "*", "/", "?", " ", "a", "Z", "0", "_"]


# Names that parse and validate, but that C, the runtime or the templates already use.
NAMES = ["int", "default", "_Bool", "__x", "_X", "sg_x", "SG_Y", "ks", "outs", "ret", "ret0",
         "ret_a", "st", "m", "o", "r", "r0", "c0", "i", "meta", "size_t", "INT64_MAX", "bool",
         "NULL", "true", "offsetof", "out", "sg_i", "sg_ks", "sg_st", "sg_m", "static_assert",
         "x_op", "x_op0", "x_op0_op", "my_ops_op0_redispatch", "aten_op1", "int_", "ret_",
         "class", "new", "this", "template", "namespace", "and", "fz_ops", "fz_nops", "FZ_H",
         "ctx", "key", "priority", "pred", "impl", "fn", "linux", "unix", "i386"]


def hostile_text(rng, n=None):
    n = rng.randint(0, 8) if n is None else n
    out = []
    for _ in range(n):
        if rng.random() < 0.8:
            out.append(rng.choice(HOSTILE))
        else:
            out.append(chr(rng.choice([rng.randint(1, 0x7f), rng.randint(0x80, 0x7ff), rng.randint(0x800, 0xd7ff)])))
    return "".join(out)


def yq(s):
    """s as a YAML double-quoted scalar."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif c < 0x20 or 0x7f <= c <= 0x9f or c in (0x2028, 0x2029, 0xfeff):
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def schema_string(rng, text):
    """A schema string literal holding text: quotes and backslashes escaped, line breaks and
    other control bytes as escapes (c10 ends a string at a raw line break): \\n, or octal."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n" and rng.random() < 0.5:
            out.append("\\n")
        elif ch == "\x00":
            continue
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append("\\%03o" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class Case:
    def __init__(self):
        self.yaml = []
        self.expect = {}  # "ns::name.overload" -> {"tags": [...], "defaults": {arg: text}}
        self.filename = "case.yaml"  # the banner of every generated file names it

    def op(self, rng, ns, name, overload, extra_args="", rets=None, keys=None, tags=None):
        q = "%s::%s" % (ns, name)
        full = q + ("." + overload if overload else "")
        defaults = {}
        args = ["Tensor self"]
        names = set()
        for k in range(rng.randint(0, 4)):
            pname = rng.choice(NAMES)
            if pname in names and rng.random() < 0.9:
                continue  # a name twice is refused (SG-001), which the fuzz allows but rarely wants
            names.add(pname)
            args.append("int %s" % pname)
        for k in range(rng.randint(0, 2)):
            lit = schema_string(rng, hostile_text(rng))
            args.append("str s%d=%s" % (k, lit))
            defaults["s%d" % k] = lit
        if extra_args:
            args.append(extra_args)
        if rets is None:
            rets = rng.choice(["Tensor", "(Tensor, Tensor)", "(Tensor a, Tensor a)",
                               "(Tensor ret, Tensor %s)" % rng.choice(NAMES), "()"])
        func = "%s(%s) -> %s" % (full, ", ".join(args), rets)
        tags = [hostile_text(rng, rng.randint(1, 5)) for _ in range(rng.randint(0, 3))] if tags is None else tags
        lines = ["- func: " + yq(func)]
        if tags:
            lines.append("  tags: [" + ", ".join(yq(t) for t in tags) + "]")
        lines.append("  python_module: " + yq(hostile_text(rng)))
        lines.append("  category_override: " + yq(hostile_text(rng)))
        lines.append("  dispatch:\n    CPU: " + yq(hostile_text(rng, rng.randint(1, 6))))
        if keys:
            lines.extend(keys)
        self.yaml.append("\n".join(lines))
        self.expect[full] = {"tags": tags, "defaults": defaults}
        return full


def random_case(rng, hostile=False):
    c = Case()
    ns = rng.choice(["aten", "my_ops", "x"] * 4 + ["sg", "__x", "_X", "fz", "FZ"])
    if hostile:
        ns = "my_ops"
    used = set()
    for i in range(rng.randint(1, 5) if not hostile else 3):
        name = "op%d" % i
        overload = rng.choice(["", "Tensor", "o%d" % i])
        if (name, overload) in used:
            continue
        used.add((name, overload))
        c.op(rng, ns, name, overload)
    if not hostile and rng.random() < 0.1:  # two ops of one C name: refused (SG-407)
        c.op(rng, ns, "op9_x", "")
        c.op(rng, ns, "op9", "x")
    if not hostile and rng.random() < 0.05:  # hostile text where a name is wanted: refused
        c.yaml.append("- func: %s::op8(Tensor self) -> Tensor\n  %s: %s" % (
            ns, rng.choice(["structured_delegate", "autogen", "device_check", "structured_inherits"]),
            yq(hostile_text(rng, 4))))
        c.expect["%s::op8" % ns] = {"tags": [], "defaults": {}}
    if not hostile and rng.random() < 0.05:  # a name the library declares: refused (SG-409)
        c.op(rng, LIB, rng.choice(["init", "find", "boxed_t", "over_t_t"]), "")
    # a structured pair and an autogen'd out variant: schemas in the composite kernels' comments
    if hostile:
        c.filename = "h */ /* ??/ \\ #x\n#define Y.yaml"
        c.must_generate = True
    if hostile or rng.random() < 0.5:
        lit = schema_string(rng, hostile_text(rng, 6) if not hostile else "*/ int injected; /* ??/\n#x \\")
        c.yaml.append("- func: %s\n  structured: True\n  dispatch:\n    CPU: %s" % (
            yq("%s::sfn.out(Tensor self, str s=%s, *, Tensor(a!) out) -> Tensor(a!)" % (ns, lit)),
            yq(hostile_text(rng, 3))))
        c.yaml.append("- func: %s\n  structured_delegate: sfn.out" % yq("%s::sfn(Tensor self, str s=%s) -> Tensor" % (ns, lit)))
        c.expect["%s::sfn.out" % ns] = {"tags": [], "defaults": {"s": lit}}
        c.expect["%s::sfn" % ns] = {"tags": [], "defaults": {"s": lit}}
        c.yaml.append("- func: %s\n  autogen: agen.out" % yq("%s::agen(Tensor self, str s=%s) -> Tensor" % (ns, lit)))
        c.expect["%s::agen" % ns] = {"tags": [], "defaults": {"s": lit}}
        c.expect["%s::agen.out" % ns] = {"tags": ["generated"], "defaults": {"s": lit}, "derived": True}
    return c


def names_case():
    """Every name of NAMES as a parameter, of ops the generator writes kernels for (structured,
    autogen out from functional and in-place ops, autogen functional): must generate, compile
    and run."""
    c = Case()
    bad = ", ".join("int %s" % n for n in NAMES if n != "out")
    few = "int st, int m, int ks, int meta, int i, int o, int r, int r0, int c0, int sg_m, int ret"
    ops = [
        ("nm(Tensor self, %s) -> (Tensor a, Tensor a)" % bad, ""),
        ("sfn.out(Tensor self, %s, *, Tensor(a!) out) -> Tensor(a!)" % few,
         "  structured: True\n  dispatch:\n    CPU: sfn_out"),
        ("sfn(Tensor self, %s) -> Tensor" % few, "  structured_delegate: sfn.out"),
        ("sfn_(Tensor(a!) self, %s) -> Tensor(a!)" % few, "  structured_delegate: sfn.out"),
        ("ag(Tensor self, %s) -> Tensor" % few, "  autogen: ag.out"),
        ("ip_(Tensor(a!) self, %s) -> Tensor(a!)" % few, "  autogen: ip.out, ip"),
    ]
    for func, keys in ops:
        c.yaml.append("- func: " + yq("x::" + func) + ("\n" + keys if keys else ""))
        c.expect["x::" + func.split("(")[0]] = {"tags": [], "defaults": {}}
    for full in ("x::ag.out", "x::ip.out", "x::ip"):
        c.expect[full] = {"tags": ["generated"], "defaults": {}}
    c.must_generate = True
    return c


def cname(full):
    ns, rest = full.split("::", 1)
    name, _, overload = rest.partition(".")
    return ns + "_" + name + ("_" + overload if overload else "")


STATS = {"generated": 0, "refused": 0}
LOCATED = re.compile(r"^[^:\n]+:\d+:\d+: (error|warning|note): ")


def run(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


WALKER = r"""
#include "fz.h"
#include <stdio.h>
#include <string.h>
/* prints every string of the op table, bytes past printable ASCII as \xHH */
static void put(const char *s) {
    if (!s) { fputs("<null>", stdout); return; }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c >= 0x7f || c == '\\') printf("\\x%02x", c); else putchar(c);
    }
}
int main(void) {
    if (fz_init()) { printf("init failed: %s\n", sg_last_error()); return 1; }
    for (size_t i = 0; i < fz_nops; i++) {
        const sg_op_desc *d = &fz_ops[i];
        if (fz_find(d->name, d->overload) != d || !*d->op) { printf("lookup failed\n"); return 1; }
        fputs("op\t", stdout); put(d->name); fputs("\t", stdout); put(d->overload);
        fputs("\t", stdout); put(d->schema); fputs("\t", stdout); put(d->cname); fputs("\n", stdout);
        for (int32_t t = 0; t < d->ntags; t++) { fputs("tag\t", stdout); put(d->tags[t]); fputs("\n", stdout); }
        for (int32_t a = 0; a < d->nargs; a++) {
            fputs("arg\t", stdout); put(d->args[a].name); fputs("\t", stdout);
            put(d->args[a].default_text); fputs("\n", stdout);
        }
    }
    return 0;
}
"""


def esc(s):
    b = s.encode("utf-8")
    return "".join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else "\\x%02x" % c for c in b)


def check_case(args, c, work, trigraphs=False):
    """None where the case passes, else what failed."""
    inputs = os.path.join(work, "in")
    shutil.rmtree(inputs, ignore_errors=True)
    src = os.path.join(inputs, c.filename)
    os.makedirs(os.path.dirname(src), exist_ok=True)
    with open(src, "w", encoding="utf-8") as f:
        f.write("\n".join(c.yaml) + "\n")
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    r = run([args.schemagen, "--lib", LIB, "--shards", "2", "-o", out, c.filename], cwd=inputs)
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode != 0 and getattr(c, "must_generate", False):
        return "schemagen refused it:\n" + err
    if r.returncode != 0:
        lines = [l for l in err.splitlines() if re.search(r"\b(error|warning):", l)]
        bad = [l for l in lines if not LOCATED.match(l) and "error generated" not in l and "errors generated" not in l]
        if r.returncode < 0 or not lines or bad:
            return "schemagen exited %d without located errors:\n%s" % (r.returncode, err)
        STATS["refused"] += 1
        return None  # refused, and said where
    STATS["generated"] += 1
    try:
        with open(os.path.join(out, LIB + "_registrations.json"), encoding="utf-8") as f:
            json.load(f)
    except ValueError as e:
        return "the registrations listing is not JSON: %s" % e
    expected = {cname(q) for q in c.expect}
    # LIB.h includes the shard headers (LIB_K.h), which declare the ops
    header = "".join(open(os.path.join(out, f), encoding="utf-8", errors="replace").read()
                     for f in sorted(os.listdir(out)) if f.endswith(".h"))
    declared = set(re.findall(r"^extern sg_op \*(\w+)_op;$", header, re.M))
    if declared != expected:
        return "the header declares %s, the input has %s" % (sorted(declared), sorted(expected))
    if args.cxx:
        unit = os.path.join(work, "header.cpp")
        with open(unit, "w") as f:
            f.write('#include "%s.h"\n' % LIB)
        r = run([args.cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", args.include,
                 "-I", out, unit])
        if r.returncode != 0:
            return "%s does not compile the header as C++:\n%s" % (args.cxx, r.stderr.decode("utf-8", "replace")[:3000])
    cfiles = sorted(f for f in os.listdir(out) if f.endswith(".c"))
    objs = []
    for cc in args.cc:
        for f in cfiles:
            flags = FLAGS + (["-trigraphs"] if trigraphs and "clang" not in cc else [])
            o = os.path.join(work, f + ".o")
            # the first compiler's objects are checked and linked; the others only compile
            obj = ["-c", "-o", o] if cc == args.cc[0] else ["-fsyntax-only"]
            r = run([cc] + flags + ["-I", args.include, "-I", out, os.path.join(out, f)] + obj)
            if r.returncode != 0:
                return "%s does not compile %s:\n%s" % (cc, f, r.stderr.decode("utf-8", "replace")[:3000])
            if cc == args.cc[0]:
                objs.append(o)
                # GNU C's dialect predefines names outside the reserved space (linux, unix)
                gnu = [x if x != "-std=c11" else "-std=gnu11" for x in flags if x != "-Wpedantic"]
                r = run([cc] + gnu + ["-fsyntax-only", "-I", args.include, "-I", out, os.path.join(out, f)])
                if r.returncode != 0:
                    return "%s -std=gnu11 does not compile %s:\n%s" % (cc, f, r.stderr.decode("utf-8", "replace")[:3000])
    # every symbol the objects define is one the generator names for these ops
    allowed_ops = expected
    r = run(["nm", "--defined-only"] + objs)
    for line in r.stdout.decode().splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        kind, sym = parts[1], parts[2].split(".")[0]
        if not sym or (kind.islower() and sym.startswith("sg_")):
            continue  # the compiler's own labels, the runtime headers' static inline functions
        if sym == "registered" or sym.startswith(LIB + "_"):
            continue
        base = sym
        for suffix in ("_op", "_redispatch", "_register", "_composite", "_set_meta", "_meta", "_args", "_rets", "_tags", ""):
            if suffix and sym.endswith(suffix) and sym[: -len(suffix)] in allowed_ops:
                base = sym[: -len(suffix)]
                break
        if base not in allowed_ops:
            return "the objects define '%s', which is no name of the input's ops" % sym
    if args.link:
        w = os.path.join(work, "walk.c")
        with open(w, "w") as f:
            f.write(WALKER)
        exe = os.path.join(work, "walk")
        r = run([args.cc[0], "-std=c11", "-I", args.include, "-I", out, w] + objs + args.link + ["-lpthread", "-lm", "-o", exe])
        if r.returncode != 0:
            return "the walker does not link:\n" + r.stderr.decode("utf-8", "replace")[:3000]
        r = run([exe])
        if r.returncode != 0:
            return "the walker failed: " + r.stdout.decode()[-500:]
        got = parse_walk(r.stdout.decode())
        j = run([args.schemagen, "--emit=json", c.filename], cwd=inputs)
        model = {}
        for op in json.loads(j.stdout.decode("utf-8")).get("ops", []):
            full = "%s::%s" % (op["namespace"], op["name"]) + ("." + op["overload"] if op["overload"] else "")
            model[full] = op
        if set(got) != set(c.expect):
            return "the op table has %s, the input %s" % (sorted(got), sorted(c.expect))
        for full, e in c.expect.items():
            g = got[full]
            if g["cname"] != cname(full):
                return "%s: C name %s" % (full, g["cname"])
            if g["tags"] != [esc(t) for t in e["tags"]]:
                return "%s: tags %s, not %s" % (full, g["tags"], [esc(t) for t in e["tags"]])
            for a, lit in e["defaults"].items():
                if g["defaults"].get(a) != esc(lit):
                    return "%s: default of %s is %s, not %s" % (full, a, g["defaults"].get(a), esc(lit))
            if full in model and g["schema"] != esc(model[full]["schema"]):
                return "%s: schema %s, not %s" % (full, g["schema"], esc(model[full]["schema"]))
    return None


def parse_walk(text):
    ops, cur = {}, None
    for line in text.split("\n"):
        f = line.split("\t")
        if f[0] == "op":
            full = f[1] + ("." + f[2] if f[2] else "")
            cur = ops[full] = {"schema": f[3], "cname": f[4], "tags": [], "defaults": {}}
        elif f[0] == "tag":
            cur["tags"].append(f[1])
        elif f[0] == "arg":
            if f[2] != "<null>":
                cur["defaults"][f[1]] = f[2]
    return ops


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--schemagen", required=True)
    p.add_argument("--include", required=True)
    p.add_argument("--cc", action="append")
    p.add_argument("--cxx")
    p.add_argument("--link", action="append")
    p.add_argument("--cases", type=int, default=30)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seconds", type=float)
    p.add_argument("--hostile", action="store_true")
    p.add_argument("--keep")
    args = p.parse_args()
    args.cc = args.cc or ["cc"]
    args.schemagen = os.path.abspath(args.schemagen)
    args.include = os.path.abspath(args.include)
    args.link = [os.path.abspath(l) for l in (args.link or [])]
    work = tempfile.mkdtemp(prefix="sg_fuzz_")

    def failed(what, c, tri):
        msg = check_case(args, c, work, trigraphs=tri)
        if not msg:
            return False
        print("FAIL %s: %s" % (what, msg), file=sys.stderr)
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(work, args.keep)
            print("(its files are in %s)" % args.keep, file=sys.stderr)
        return True

    try:
        if args.hostile and failed("the hostile case", random_case(random.Random(0), hostile=True), True):
            return 1
        if args.hostile and failed("the names case", names_case(), False):
            return 1
        rng = random.Random(args.seed)
        start, n = time.time(), 0
        while (time.time() - start < args.seconds) if args.seconds is not None else n < args.cases:
            if failed("case %d of seed %d" % (n, args.seed), random_case(rng), False):
                return 1
            n += 1
        if args.keep and n == 0:  # nothing random: keep the fixed cases' files to read
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(work, args.keep)
        print("codegen_fuzz: %d random case(s)%s passed (%d generated and compiled, %d refused with "
              "located errors)" % (n, " and the fixed ones" if args.hostile else "", STATS["generated"],
                                   STATS["refused"]))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
