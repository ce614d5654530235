#!/usr/bin/env python3
"""dsl_export.py: compiles the artifacts of a DSL plan ahead of time (docs/dsl.md).

    dsl_export.py --plan PLAN.json --out DIR [--force]

For each artifact of the plan (written by `schemagen --dsl-plan`), compiles the kernel with the
DSL's own compiler for the artifact's fixed target (no GPU needed) and writes DIR/PREFIX.cubin
and the sidecar DIR/PREFIX.json. Each file is written to a temporary name and renamed, so a
killed export leaves no half-written artifact. An artifact whose sidecar and binary on disk
already match what the plan asks (same sources, compiler, point and options) is kept as it is
unless --force is given.

Triton (the only DSL for now) is imported only where an artifact needs compiling; kernel sources
are loaded by file path. Failures name the artifact's prefix, the source and the compiler's
message; every artifact is tried, and the exit status is 1 where any failed (its old files are
removed), 2 for a plan that cannot be read. Per-artifact times and a summary go to stderr.
"""
import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
import tempfile
import time

PLAN_VERSION = 1
SIDECAR_VERSION = 1

# Triton's signature types the declarations may use (docs/dsl.md).
TYPES = {"*fp32", "*fp16", "*bf16", "*i32", "*i64", "*i8", "*u8", "i32", "i64", "fp32", "fp64"}
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PREFIX = re.compile(r"^[a-z][a-z0-9_]*$")
ARCH = re.compile(r"^sm_([1-9][0-9]?)([0-9])a?$")  # sm_90a: the same target for Triton


class PlanError(Exception):
    """The plan itself is malformed: nothing is exported."""


class ExportError(Exception):
    """One artifact failed; the message says where and why."""


def say(msg):
    print("dsl_export: " + msg, file=sys.stderr)


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def write_atomic(path, data):
    """Writes data to path through a temporary file in the same folder and a rename."""
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        # mkstemp makes the file private; an artifact is as readable as any build output
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


# ---- the plan ---------------------------------------------------------------------------------

def check_artifact(i, a):
    """Checks one plan entry's fields and types; returns its prefix."""
    where = "artifact %d" % i
    if not isinstance(a, dict):
        raise PlanError("%s: not an object" % where)
    prefix = a.get("prefix")
    if not isinstance(prefix, str) or not PREFIX.match(prefix):
        raise PlanError("%s: 'prefix' must be a name of [a-z0-9_] starting with a letter, got %r"
                        % (where, prefix))
    where = "artifact %d (%s)" % (i, prefix)

    def field(name, kind):
        if name not in a:
            raise PlanError("%s: no '%s'" % (where, name))
        v = a[name]
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            raise PlanError("%s: '%s' has the wrong type (%s)" % (where, name, type(v).__name__))
        return v

    for name in ("decl", "dsl", "compiler", "source", "source_key", "kernel", "arch"):
        field(name, str)
    field("point", dict)
    cap = field("capability", list)
    if len(cap) != 2 or not all(isinstance(c, int) and not isinstance(c, bool) for c in cap):
        raise PlanError("%s: 'capability' must be [major, minor]" % where)
    m = ARCH.match(a["arch"])
    if not m:
        raise PlanError("%s: 'arch' must be sm_XY or sm_XYa (e.g. sm_90), got %r" % (where, a["arch"]))
    if [int(m.group(1)), int(m.group(2))] != cap:
        raise PlanError("%s: arch %s and capability %r disagree" % (where, a["arch"], cap))
    sig = field("signature", list)
    names = set()
    for p in sig:
        if (not isinstance(p, list) or len(p) != 2 or not isinstance(p[0], str)
                or not isinstance(p[1], str)):
            raise PlanError("%s: each 'signature' entry must be [name, type]" % where)
        if not NAME.match(p[0]) or p[0] in names:
            raise PlanError("%s: parameter name %r is not a name or is repeated" % (where, p[0]))
        if p[1] not in TYPES:
            raise PlanError("%s: parameter %s: type %r is not one of %s"
                            % (where, p[0], p[1], ", ".join(sorted(TYPES))))
        names.add(p[0])
    for k, v in field("constexprs", dict).items():
        if not NAME.match(k) or k in names:
            raise PlanError("%s: constexpr %r is not a name or is also a parameter" % (where, k))
        if not isinstance(v, (int, float, bool)):
            raise PlanError("%s: constexpr %s must be a number or a bool" % (where, k))
    for d in field("divisibility", list):
        if d not in names:
            raise PlanError("%s: 'divisibility' names %r, which is not a parameter" % (where, d))
    warps = field("num_warps", int)
    if warps < 1 or warps > 32 or warps & (warps - 1):
        raise PlanError("%s: num_warps must be a power of two in 1..32, got %d" % (where, warps))
    if field("num_stages", int) < 1:
        raise PlanError("%s: num_stages must be at least 1" % where)
    if a["dsl"] != "triton":
        raise PlanError("%s: dsl %r: this exporter knows only 'triton'" % (where, a["dsl"]))
    if not a["compiler"].startswith("triton=="):
        raise PlanError("%s: compiler %r: expected 'triton==VERSION'" % (where, a["compiler"]))
    return prefix


def read_plan(path):
    try:
        with open(path, "rb") as f:
            plan = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise PlanError("cannot read the plan: %s" % e.strerror)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PlanError("not JSON: %s" % e)
    if not isinstance(plan, dict) or plan.get("version") != PLAN_VERSION:
        raise PlanError("expected an object with \"version\": %d" % PLAN_VERSION)
    arts = plan.get("artifacts")
    if not isinstance(arts, list):
        raise PlanError("no \"artifacts\" list")
    seen = set()
    for i, a in enumerate(arts):
        prefix = check_artifact(i, a)
        if prefix in seen:
            raise PlanError("artifact %d: prefix %s appears twice" % (i, prefix))
        seen.add(prefix)
    return arts


# ---- the sidecar ------------------------------------------------------------------------------

def sidecar(a, source_sha, version, meta, cubin_sha):
    """The sidecar's content, in the order docs/dsl.md shows."""
    params = [list(p) for p in a["signature"]]
    return {
        "version": SIDECAR_VERSION,
        "prefix": a["prefix"],
        "kind": "triton-cubin",
        "decl": a["decl"],
        "point": a["point"],
        "arch": a["arch"],
        "capability": list(a["capability"]),
        "symbol": meta["symbol"],
        "shared": meta["shared"],
        "num_warps": a["num_warps"],
        "num_stages": a["num_stages"],
        "num_ctas": meta["num_ctas"],
        "params": params,
        "hidden": meta["hidden"],
        "assumes": {"divisibility_16": list(a["divisibility"]),
                    "int32": [p[0] for p in params if p[1] == "i32"]},
        "compiler": {"name": "triton", "version": version},
        "sources": {a["source_key"]: source_sha},
        "binary": {"file": a["prefix"] + ".cubin", "sha256": cubin_sha},
    }


def encode(obj):
    """One key of the top-level object per line, each value compact: readable in a diff, and
    the same bytes for the same content."""
    lines = ["  %s: %s" % (json.dumps(k), json.dumps(v, separators=(", ", ": ")))
             for k, v in obj.items()]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("ascii")


def up_to_date(a, out, source_sha, version):
    """Whether DIR already holds this artifact as the plan asks it (sidecar and binary agree)."""
    try:
        with open(os.path.join(out, a["prefix"] + ".json"), "rb") as f:
            old = json.loads(f.read().decode("utf-8"))
        with open(os.path.join(out, a["prefix"] + ".cubin"), "rb") as f:
            cubin = f.read()
    except (OSError, ValueError):
        return False
    try:
        meta = {"symbol": old["symbol"], "shared": old["shared"], "num_ctas": old["num_ctas"],
                "hidden": old["hidden"]}
        want = sidecar(a, source_sha, version, meta, sha256_bytes(cubin))
    except (KeyError, TypeError):
        return False
    return old == want


# ---- compiling --------------------------------------------------------------------------------

class Triton:
    """The compiler, imported once, and the kernel sources loaded by path."""

    def __init__(self):
        try:
            import triton
            from triton.backends.compiler import GPUTarget
            from triton.compiler import ASTSource
        except Exception as e:  # any import failure is the same news: no usable compiler
            raise ExportError("cannot import triton (%s: %s); the build installs it in its "
                              "dsl-venv (bash cmake/do deps)" % (type(e).__name__, e))
        self.triton = triton
        self.ASTSource = ASTSource
        self.GPUTarget = GPUTarget
        self.version = triton.__version__
        self.modules = {}

    def kernel(self, source, name):
        mod = self.modules.get(source)
        if mod is None:
            modname = "sg_dsl_src_%s" % hashlib.sha256(source.encode()).hexdigest()[:12]
            try:
                spec = importlib.util.spec_from_file_location(modname, source)
                if spec is None or spec.loader is None:
                    raise ImportError("not a Python source")
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
            except SyntaxError as e:
                raise ExportError("%s:%s:%s: %s" % (source, e.lineno, e.offset, e.msg))
            except Exception as e:
                raise ExportError("%s: cannot load it: %s: %s" % (source, type(e).__name__, e))
            self.modules[source] = mod
        fn = getattr(mod, name, None)
        if fn is None:
            raise ExportError("%s: no function '%s'" % (source, name))
        if not isinstance(fn, self.triton.runtime.jit.JITFunction):
            raise ExportError("%s: '%s' is not a @triton.jit function" % (source, name))
        return fn

    def compile(self, a):
        fn = self.kernel(a["source"], a["kernel"])
        params = [p[0] for p in a["signature"]]
        consts = a["constexprs"]
        declared = [n for n in fn.arg_names if n not in consts]
        if declared != params:
            raise ExportError("%s: the parameters of '%s' other than constexprs are (%s); the "
                              "declaration's args are (%s)"
                              % (a["source"], a["kernel"], ", ".join(declared), ", ".join(params)))
        missing = [n for n in consts if n not in fn.arg_names]
        if missing:
            raise ExportError("%s: '%s' has no parameter %s for the constexpr"
                              % (a["source"], a["kernel"], missing[0]))
        types = dict((p[0], p[1]) for p in a["signature"])
        signature = dict((n, "constexpr" if n in consts else types[n]) for n in fn.arg_names)
        attrs = dict(((fn.arg_names.index(n),), [["tt.divisibility", 16]])
                     for n in a["divisibility"])
        src = self.ASTSource(fn=fn, signature=signature, constexprs=dict(consts), attrs=attrs)
        major, minor = a["capability"]
        # Rationale: the capability as an int (a string breaks ptxas selection), and warps and
        # stages always given: the compiler's defaults differ from the JIT route's.
        target = self.GPUTarget("cuda", 10 * major + minor, 32)
        try:
            k = self.triton.compile(src, target=target,
                                    options={"num_warps": a["num_warps"],
                                             "num_stages": a["num_stages"]})
        except Exception as e:
            raise ExportError("%s: compiling '%s': %s" % (a["source"], a["kernel"],
                                                          str(e).strip() or type(e).__name__))
        cubin = k.asm.get("cubin")
        if not cubin:
            raise ExportError("%s: the compiler gave no cubin" % a["source"])
        md = k.metadata
        # Rationale: the runtime launches with cuLaunchKernel: one CTA per cluster, no
        # cooperative grid, no programmatic dependent launch.
        if (int(getattr(md, "num_ctas", 1)) != 1 or getattr(md, "launch_cooperative_grid", False)
                or getattr(md, "launch_pdl", False)):
            raise ExportError("%s: '%s' needs clusters, a cooperative grid or dependent launch, "
                              "which the runtime does not support" % (a["source"], a["kernel"]))
        hidden = [
            {"name": "global_scratch", "size": int(getattr(md, "global_scratch_size", 0) or 0),
             "align": int(getattr(md, "global_scratch_align", 1) or 1)},
            {"name": "profile_scratch", "size": int(getattr(md, "profile_scratch_size", 0) or 0),
             "align": int(getattr(md, "profile_scratch_align", 1) or 1)},
        ]
        meta = {"symbol": md.name, "shared": int(md.shared), "num_ctas": int(md.num_ctas),
                "hidden": hidden}
        return bytes(cubin), meta


def installed_version():
    """Triton's version from its package metadata, without importing it (an import takes from a
    fraction of a second to seconds, and an up-to-date export needs none)."""
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        raise ExportError("no triton package is installed for %s; the build installs it in "
                          "its dsl-venv (bash cmake/do deps)" % sys.executable)


def export(arts, out, force):
    os.makedirs(out, exist_ok=True)
    if "TRITON_CACHE_DIR" not in os.environ:
        # Rationale: the compiler's cache lives in the build folder, not the user's home.
        os.environ["TRITON_CACHE_DIR"] = os.path.join(os.path.abspath(out), ".triton-cache")
    compiler = None
    version = None
    failures = 0
    done = kept = total_bytes = 0
    t_all = time.monotonic()
    for a in arts:
        prefix = a["prefix"]
        t0 = time.monotonic()
        try:
            try:
                with open(a["source"], "rb") as f:
                    source_sha = sha256_bytes(f.read())
            except OSError as e:
                raise ExportError("%s: cannot read it: %s" % (a["source"], e.strerror))
            if version is None:
                version = installed_version()
            want = a["compiler"][len("triton=="):]
            if version != want:
                raise ExportError("the declaration asks %s; the compiler found is triton %s"
                                  % (a["compiler"], version))
            if not force and up_to_date(a, out, source_sha, version):
                kept += 1
                continue
            if compiler is None:
                t_imp = time.monotonic()
                compiler = Triton()
                say("triton %s imported in %.2f s" % (compiler.version,
                                                      time.monotonic() - t_imp))
                if compiler.version != version:
                    raise ExportError("triton imports as %s but its package says %s"
                                      % (compiler.version, version))
            cubin, meta = compiler.compile(a)
            side = sidecar(a, source_sha, version, meta, sha256_bytes(cubin))
            write_atomic(os.path.join(out, prefix + ".cubin"), cubin)
            write_atomic(os.path.join(out, prefix + ".json"), encode(side))
            done += 1
            total_bytes += len(cubin)
            say("%s: %.2f s, %d bytes, symbol %s, shared %d"
                % (prefix, time.monotonic() - t0, len(cubin), meta["symbol"], meta["shared"]))
        except ExportError as e:
            failures += 1
            remove_quietly(os.path.join(out, prefix + ".json"))
            remove_quietly(os.path.join(out, prefix + ".cubin"))
            say("error: %s: %s" % (prefix, e))
            if "cannot import triton" in str(e) or "no triton package" in str(e):
                break
    untried = len(arts) - done - kept - failures
    say("%d compiled, %d up to date, %d failed%s, of %d; %.2f s; %d bytes of cubin written"
        % (done, kept, failures, ", %d not tried" % untried if untried else "", len(arts),
           time.monotonic() - t_all, total_bytes))
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description="Compile a DSL plan's artifacts ahead of time.")
    ap.add_argument("--plan", required=True, help="the plan (schemagen --dsl-plan)")
    ap.add_argument("--out", required=True, help="the folder for PREFIX.cubin and PREFIX.json")
    ap.add_argument("--force", action="store_true", help="compile even what is up to date")
    args = ap.parse_args(argv)
    try:
        arts = read_plan(args.plan)
    except PlanError as e:
        say("error: %s: %s" % (args.plan, e))
        return 2
    return 1 if export(arts, args.out, args.force) else 0


if __name__ == "__main__":
    sys.exit(main())
