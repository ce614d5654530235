#!/usr/bin/env python3
"""dsl_export.py: compiles the artifacts of a DSL plan ahead of time (docs/dsl.md).

    dsl_export.py --plan PLAN.json --out DIR [--force] [--from PREBUILT]

For each artifact of the plan (written by `schemagen --dsl-plan`), compiles the kernel with the
DSL's own compiler for the artifact's fixed target (no GPU needed) and writes the sidecar
DIR/PREFIX.json beside the binary: DIR/PREFIX.cubin for Triton; DIR/PREFIX.o and DIR/PREFIX.h
for CuTeDSL (export_to_c), with the DSL's runtime archive copied once into DIR. Each file is
written to a temporary name and renamed, the sidecar last, so a killed export leaves no
half-written artifact. An artifact whose sidecar and files on disk already match what the plan
asks (same sources, compiler, point and options) is kept as it is unless --force is given.
With --from, an artifact that PREBUILT holds as the plan asks is copied from there instead of
compiled (a machine without the DSL's compiler builds from artifacts exported elsewhere).

A DSL's compiler is imported only where an artifact needs compiling; kernel sources are loaded
by file path. Failures name the artifact's prefix, the source and the compiler's message; every
artifact is tried, and the exit status is 1 where any failed (its old files are removed), 2 for
a plan that cannot be read. Per-artifact times and a summary go to stderr.
"""
import argparse
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
import time

PLAN_VERSION = 1
SIDECAR_VERSION = 1

# The signature types the declarations may use (docs/dsl.md).
TYPES = {"*fp32", "*fp16", "*bf16", "*i32", "*i64", "*i8", "*u8", "i32", "i64", "fp32", "fp64"}
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PREFIX = re.compile(r"^[a-z][a-z0-9_]*$")
ARCH = re.compile(r"^sm_([1-9][0-9]?)([0-9])a?$")  # sm_90a: the same target for Triton
# What each DSL's plan entries name as their compiler (NAME==VERSION, the package's name).
PACKAGES = {"triton": "triton", "cutedsl": "nvidia-cutlass-dsl"}


class PlanError(Exception):
    """The plan itself is malformed: nothing is exported."""


class ExportError(Exception):
    """One artifact failed; the message says where and why."""


class NoCompiler(ExportError):
    """A DSL's compiler is missing or cannot be imported: none of its artifacts can compile."""


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


def read_bytes(path):
    """The file's bytes, or None where it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


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
    dsl = a["dsl"]
    if dsl not in PACKAGES:
        raise PlanError("%s: dsl %r: this exporter knows %s"
                        % (where, dsl, " and ".join("'%s'" % d for d in sorted(PACKAGES))))
    if not a["compiler"].startswith(PACKAGES[dsl] + "==") or a["compiler"] == PACKAGES[dsl] + "==":
        raise PlanError("%s: compiler %r: expected '%s==VERSION'"
                        % (where, a["compiler"], PACKAGES[dsl]))
    if dsl == "triton":
        warps = field("num_warps", int)
        if warps < 1 or warps > 32 or warps & (warps - 1):
            raise PlanError("%s: num_warps must be a power of two in 1..32, got %d" % (where, warps))
        if field("num_stages", int) < 1:
            raise PlanError("%s: num_stages must be at least 1" % where)
    else:
        for name in ("num_warps", "num_stages"):
            if name in a:
                raise PlanError("%s: '%s': a %s kernel has none (its host function launches)"
                                % (where, name, dsl))
        if "stream" in names or "stream" in a["constexprs"]:
            raise PlanError("%s: 'stream' is the host function's last parameter, not an "
                            "argument or a constexpr" % where)
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


def pin(a):
    """The compiler version the plan asks for this artifact."""
    return a["compiler"].split("==", 1)[1]


# ---- sidecars ---------------------------------------------------------------------------------

def encode(obj):
    """One key of the top-level object per line, each value compact: readable in a diff, and
    the same bytes for the same content."""
    lines = ["  %s: %s" % (json.dumps(k), json.dumps(v, separators=(", ", ": ")))
             for k, v in obj.items()]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("ascii")


def triton_sidecar(a, source_sha, version, meta, cubin_sha):
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


# CuTeDSL: the runtime archive its objects link with, copied from the wheel (the cu13 build).
RUNTIME = "libcuda_dialect_runtime_static.a"
RUNTIME_IN_WHEEL = "nvidia_cutlass_dsl/cu13/lib/" + RUNTIME
# Scalars: CuTeDSL's numeric type (by name in cutlass) and the C type the wrapper takes by value.
CUTE_SCALARS = {"i32": ("Int32", "int32_t"), "i64": ("Int64", "int64_t"),
                "fp32": ("Float32", "float"), "fp64": ("Float64", "double")}
# Pointers: the tensor's element type in cutlass and its size in bytes.
CUTE_ELEMENTS = {"*fp32": ("Float32", 4), "*fp16": ("Float16", 2), "*bf16": ("BFloat16", 2),
                 "*i32": ("Int32", 4), "*i64": ("Int64", 8), "*i8": ("Int8", 1),
                 "*u8": ("Uint8", 1)}


def cute_header_facts(a, text):
    """What the sidecar takes from an export_to_c header: per parameter the tensor struct's
    [dynamic_shapes, dynamic_strides] counts (None for a scalar), the wrapper's parameter types
    between `module` and `stream`, and the int32 assumptions. The wrapper must be
    cute_dsl_PREFIX_wrapper(module, the declared parameters in order, stream), each tensor a
    pointer to its struct and each scalar the C type of its declared type, by value."""
    prefix = a["prefix"]
    wrapper = "cute_dsl_%s_wrapper" % prefix
    m = re.search(r"\bint32_t\s+%s\s*\(([^)]*)\)\s*\{" % re.escape(wrapper), text)
    if not m:
        raise ExportError("the header defines no int32_t %s(...)" % wrapper)
    decl = []
    for part in m.group(1).split(","):
        pm = re.match(r"^(.*[\s*])([A-Za-z_][A-Za-z0-9_]*)$", part.strip())
        if not pm:
            raise ExportError("%s: cannot read its parameter %r" % (wrapper, part.strip()))
        decl.append((re.sub(r"\s+", " ", pm.group(1).strip()), pm.group(2)))
    names = [n for _, n in decl]
    want = ["module"] + [p[0] for p in a["signature"]] + ["stream"]
    if names != want:
        raise ExportError("%s takes (%s); the declaration's args make (%s)"
                          % (wrapper, ", ".join(names), ", ".join(want)))
    if decl[0][0] != prefix + "_Kernel_Module_t *" or decl[-1][0] != "cudaStream_t":
        raise ExportError("%s: module is %r and stream %r, expected '%s_Kernel_Module_t *' and "
                          "'cudaStream_t'" % (wrapper, decl[0][0], decl[-1][0], prefix))
    layouts, ctypes, int32 = [], [], []
    for (name, ty), (ctype, _) in zip(a["signature"], decl[1:-1]):
        if ty.startswith("*"):
            struct = "%s_Tensor_%s_t" % (prefix, name)
            expect = struct + " *"
        else:
            expect = CUTE_SCALARS[ty][1]
        if ctype != expect:
            raise ExportError("%s takes %s as %r; its declared type %s needs %r"
                              % (wrapper, name, ctype, ty, expect))
        ctypes.append(ctype)
        if not ty.startswith("*"):
            layouts.append(None)
            if ty == "i32":
                int32.append(name)
            continue
        sm = re.search(r"typedef\s+struct\s*\{([^}]*)\}\s*%s\s*;" % re.escape(struct), text)
        if not sm:
            raise ExportError("the header defines no struct %s" % struct)
        members = [" ".join(x.split()) for x in sm.group(1).split(";") if x.strip()]
        if not members or members[0] != "void *data":
            raise ExportError("%s does not start with 'void *data'" % struct)
        counts = {"shapes": 0, "strides": 0}
        seen = []
        for mem in members[1:]:
            mm = re.match(r"^(int32_t|int64_t) dynamic_(shapes|strides)\[([1-9][0-9]*)\]$", mem)
            if not mm or mm.group(2) in seen:
                raise ExportError("%s: unexpected member %r" % (struct, mem))
            if mm.group(2) == "strides" and mm.group(1) != "int64_t":
                raise ExportError("%s: strides of %s, expected int64_t" % (struct, mm.group(1)))
            if mm.group(2) == "shapes" and "strides" in seen:
                raise ExportError("%s: shapes after strides" % struct)
            seen.append(mm.group(2))
            counts[mm.group(2)] = int(mm.group(3))
            if mm.group(2) == "shapes" and mm.group(1) == "int32_t":
                int32.append(name)
        layouts.append([counts["shapes"], counts["strides"]])
    order = [p[0] for p in a["signature"]]
    return {"layouts": layouts, "ctypes": ctypes, "int32": sorted(int32, key=order.index)}


def cute_sidecar(a, source_sha, version, facts, obj_sha, header_sha, runtime_sha):
    """The sidecar's content, in the order docs/dsl.md shows."""
    prefix = a["prefix"]
    return {
        "version": SIDECAR_VERSION,
        "prefix": prefix,
        "kind": "cutedsl-obj",
        "decl": a["decl"],
        "point": a["point"],
        "arch": a["arch"],
        "capability": list(a["capability"]),
        "symbol": "cute_dsl_%s_wrapper" % prefix,
        "params": [list(p) for p in a["signature"]],
        "layouts": facts["layouts"],
        "ctypes": facts["ctypes"],
        "assumes": {"divisibility_16": list(a["divisibility"]), "int32": facts["int32"]},
        "compiler": {"name": PACKAGES["cutedsl"], "version": version},
        "sources": {a["source_key"]: source_sha},
        "binary": {"file": prefix + ".o", "sha256": obj_sha},
        "header": {"file": prefix + ".h", "sha256": header_sha},
        "runtime": {"file": RUNTIME, "sha256": runtime_sha},
    }


def artifact_files(a):
    """The artifact's own files beside its sidecar (the runtime archive is shared)."""
    if a["dsl"] == "cutedsl":
        return [a["prefix"] + ".o", a["prefix"] + ".h"]
    return [a["prefix"] + ".cubin"]


def held(a, folder, source_sha, version):
    """Whether folder holds this artifact as the plan asks it: sidecar and files agree with the
    plan and with each other. Returns (None, files) where it does, files being name -> bytes of
    the sidecar, the artifact's files and (CuTeDSL) the runtime archive; else (why, None)."""
    prefix = a["prefix"]
    names = [prefix + ".json"] + artifact_files(a)
    if a["dsl"] == "cutedsl":
        names.append(RUNTIME)
    files = {}
    for n in names:
        data = read_bytes(os.path.join(folder, n))
        if data is None:
            return "no %s" % n, None
        files[n] = data
    try:
        old = json.loads(files[prefix + ".json"].decode("utf-8"))
    except ValueError:
        return "%s.json is not JSON" % prefix, None
    try:
        if a["dsl"] == "cutedsl":
            obj, hdr = files[prefix + ".o"], files[prefix + ".h"]
            try:
                facts = cute_header_facts(a, hdr.decode("utf-8"))
            except (ExportError, UnicodeDecodeError) as e:
                return "%s.h: %s" % (prefix, e), None
            want = cute_sidecar(a, source_sha, version, facts, sha256_bytes(obj),
                                sha256_bytes(hdr), sha256_bytes(files[RUNTIME]))
        else:
            meta = {"symbol": old["symbol"], "shared": old["shared"],
                    "num_ctas": old["num_ctas"], "hidden": old["hidden"]}
            want = triton_sidecar(a, source_sha, version, meta, sha256_bytes(files[prefix + ".cubin"]))
    except (KeyError, TypeError):
        return "%s.json lacks what a %s sidecar has" % (prefix, a["dsl"]), None
    if old != want:
        if not isinstance(old, dict):
            return "%s.json is not an object" % prefix, None
        diff = [k for k in want if old.get(k) != want[k]] or [k for k in old if k not in want]
        return "%s.json differs from the plan and the files in '%s'" % (prefix, diff[0]), None
    return None, files


# ---- compiling --------------------------------------------------------------------------------

def load_function(modules, source, name):
    """The function `name` of the kernel source at path `source` (each file loaded once)."""
    mod = modules.get(source)
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
        modules[source] = mod
    fn = getattr(mod, name, None)
    if fn is None:
        raise ExportError("%s: no function '%s'" % (source, name))
    return fn


class Triton:
    """The compiler, imported once, and the kernel sources loaded by path. (Its target is
    given per compile: arch, the first artifact's, is not needed.)"""

    def __init__(self, arch):
        try:
            import triton
            from triton.backends.compiler import GPUTarget
            from triton.compiler import ASTSource
        except Exception as e:  # any import failure is the same news: no usable compiler
            raise NoCompiler("cannot import triton (%s: %s); the build installs it in its "
                             "dsl-venv (bash cmake/do deps)" % (type(e).__name__, e))
        self.triton = triton
        self.ASTSource = ASTSource
        self.GPUTarget = GPUTarget
        self.version = triton.__version__
        self.modules = {}

    def kernel(self, source, name):
        fn = load_function(self.modules, source, name)
        if not isinstance(fn, self.triton.runtime.jit.JITFunction):
            raise ExportError("%s: '%s' is not a @triton.jit function" % (source, name))
        return fn

    def compile(self, a, source_sha, version, tmp):
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
        cubin = bytes(cubin)
        side = triton_sidecar(a, source_sha, version, meta, sha256_bytes(cubin))
        note = "symbol %s, shared %d" % (meta["symbol"], meta["shared"])
        return {a["prefix"] + ".cubin": cubin}, side, note


def strip_ansi(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


class CuteDSL:
    """CuTeDSL (nvidia-cutlass-dsl), imported once for the target of the first artifact that
    compiles, and its kernel sources loaded by path."""

    def __init__(self, arch):
        # Rationale: CuTeDSL reads its target once, at import; without it (no GPU to ask) the
        # first export fails with "Failed to dump object file with PIC relocation".
        os.environ["CUTE_DSL_ARCH"] = arch
        try:
            import cutlass
            import cutlass.cute as cute
            from cutlass.cute.runtime import make_fake_compact_tensor
            from cutlass.runtime import make_fake_stream
        except Exception as e:  # any import failure is the same news: no usable compiler
            raise NoCompiler("cannot import cutlass (%s: %s); the build installs %s in its "
                             "dsl-venv (bash cmake/do deps)" % (type(e).__name__, e,
                                                                PACKAGES["cutedsl"]))
        self.cutlass = cutlass
        self.cute = cute
        self.fake_tensor = make_fake_compact_tensor
        self.fake_stream = make_fake_stream
        self.version = getattr(cutlass, "__version__", None)
        self.modules = {}
        self.runtime = None

        # Rationale: an export for a target other than the import's as the first compile of a
        # process fails as above; one kernel-free compile for the import's target first lets
        # any target follow, each giving the bytes a process of its own would.
        @cute.jit
        def warm_up(stream):
            pass

        try:
            cute.compile(warm_up, make_fake_stream(), options="--gpu-arch " + arch)
        except Exception as e:
            raise NoCompiler("CuTeDSL cannot compile for %s: %s"
                             % (arch, strip_ansi(str(e)).strip() or type(e).__name__))

    def runtime_archive(self):
        """The wheel's runtime archive's bytes (read once), located from package metadata."""
        if self.runtime is None:
            path = None
            for dist in ("nvidia-cutlass-dsl-libs-cu13", PACKAGES["cutedsl"]):
                try:
                    files = importlib.metadata.files(dist) or []
                except importlib.metadata.PackageNotFoundError:
                    continue
                for f in files:
                    if str(f).replace(os.sep, "/").endswith(RUNTIME_IN_WHEEL):
                        path = str(f.locate())
                        break
                if path:
                    break
            data = read_bytes(path) if path else None
            if data is None:
                raise ExportError("the wheel's %s is not installed (%s); install "
                                  "%s[cu13]" % (RUNTIME_IN_WHEEL, path or "no such file",
                                                PACKAGES["cutedsl"]))
            self.runtime = data
        return self.runtime

    def kernel(self, a):
        fn = load_function(self.modules, a["source"], a["kernel"])
        if not callable(fn):
            raise ExportError("%s: '%s' is not a function" % (a["source"], a["kernel"]))
        try:
            names = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            names = None
        args = [p[0] for p in a["signature"]]
        consts = list(a["constexprs"])
        n = len(args)
        if (names is None or names[:n] != args or names[-1:] != ["stream"]
                or sorted(names[n:-1]) != sorted(consts)):
            raise ExportError("%s: the parameters of '%s' are (%s); expected the declaration's "
                              "args (%s), then its constexprs (%s), then stream"
                              % (a["source"], a["kernel"], ", ".join(names or ["?"]),
                                 ", ".join(args), ", ".join(consts)))
        return fn

    def compile(self, a, source_sha, version, out):
        fn = self.kernel(a)
        cutlass, cute = self.cutlass, self.cute
        fakes = []
        for name, ty in a["signature"]:
            if ty.startswith("*"):
                dtype, size = CUTE_ELEMENTS[ty]
                # a 1-D compact tensor of a dynamic size: the tensor's numel
                fakes.append(self.fake_tensor(getattr(cutlass, dtype), (cute.sym_int(),),
                                              assumed_align=16 if name in a["divisibility"]
                                              else size))
            else:
                # a run-time argument of the declared type; the header's check below makes
                # sure the wrapper takes it by value as that C type
                fakes.append(getattr(cutlass, CUTE_SCALARS[ty][0])(0))
        prefix = a["prefix"]
        tmp = tempfile.mkdtemp(prefix=".cutedsl-", dir=out)
        try:
            try:
                compiled = cute.compile(fn, *fakes, **dict(a["constexprs"]),
                                        stream=self.fake_stream(),
                                        options="--gpu-arch " + a["arch"])
                compiled.export_to_c(tmp, prefix, prefix)
            except Exception as e:
                raise ExportError("%s: compiling '%s': %s"
                                  % (a["source"], a["kernel"],
                                     strip_ansi(str(e)).strip() or type(e).__name__))
            obj = read_bytes(os.path.join(tmp, prefix + ".o"))
            raw = read_bytes(os.path.join(tmp, prefix + ".h"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if obj is None or raw is None:
            raise ExportError("export_to_c wrote no %s.o and %s.h" % (prefix, prefix))
        if obj[:4] != b"\x7fELF" or ("_mlir_%s_cuda_init\0" % prefix).encode() not in obj:
            raise ExportError("%s.o is not an ELF object defining _mlir_%s_cuda_init"
                              % (prefix, prefix))
        try:
            facts = cute_header_facts(a, raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ExportError("%s.h is not UTF-8" % prefix)
        except ExportError as e:
            raise ExportError("%s: %s.h: %s" % (a["source"], prefix, e))
        runtime = self.runtime_archive()
        side = cute_sidecar(a, source_sha, version, facts, sha256_bytes(obj), sha256_bytes(raw),
                            sha256_bytes(runtime))
        note = "symbol %s" % side["symbol"]
        return {prefix + ".o": obj, prefix + ".h": raw, RUNTIME: runtime}, side, note


COMPILERS = {"triton": Triton, "cutedsl": CuteDSL}


def installed_version(dsl):
    """The compiler's version from its package metadata, without importing it (an import takes
    from a fraction of a second to seconds, and an up-to-date export needs none)."""
    try:
        return importlib.metadata.version(PACKAGES[dsl])
    except importlib.metadata.PackageNotFoundError:
        raise NoCompiler("no %s package is installed for %s; the build installs it in "
                         "its dsl-venv (bash cmake/do deps)" % (PACKAGES[dsl], sys.executable))


class Exporter:
    """One run over a plan: the compilers imported so far, the counts, the shared files."""

    def __init__(self, out, force, prebuilt):
        self.out, self.force, self.prebuilt = out, force, prebuilt
        self.versions = {}      # dsl -> installed version, or the NoCompiler it raised
        self.compilers = {}     # dsl -> compiler, or the NoCompiler its import raised
        self.runtime = None     # the runtime archive's bytes last made sure of in DIR
        self.compiled = self.copied = self.kept = self.failed = self.untried = 0
        self.bytes = 0

    def version(self, a):
        """The installed compiler's version, which must be the plan's pin."""
        dsl = a["dsl"]
        if dsl not in self.versions:
            try:
                self.versions[dsl] = installed_version(dsl)
            except NoCompiler as e:
                self.versions[dsl] = e
        v = self.versions[dsl]
        if isinstance(v, NoCompiler):
            raise v
        if v != pin(a):
            raise ExportError("the declaration asks %s; the compiler found is %s %s"
                              % (a["compiler"], PACKAGES[dsl], v))
        return v

    def compiler(self, a):
        dsl = a["dsl"]
        if dsl not in self.compilers:
            major, minor = a["capability"]
            arch = "sm_%d%d" % (major, minor)
            t0 = time.monotonic()
            try:
                c = COMPILERS[dsl](arch)
            except NoCompiler as e:
                self.compilers[dsl] = e
                raise
            self.compilers[dsl] = c
            say("%s %s imported in %.2f s%s" % (PACKAGES[dsl], c.version, time.monotonic() - t0,
                                                " (for %s)" % arch if dsl == "cutedsl" else ""))
            if c.version is not None and c.version != self.versions.get(dsl):
                raise ExportError("%s imports as %s but its package says %s"
                                  % (PACKAGES[dsl], c.version, self.versions.get(dsl)))
        c = self.compilers[dsl]
        if isinstance(c, NoCompiler):
            raise c
        return c

    def write(self, a, files, side):
        """Writes the artifact's files, the shared runtime archive where its bytes differ, and
        the sidecar last."""
        runtime = files.pop(RUNTIME, None)
        for name, data in files.items():
            write_atomic(os.path.join(self.out, name), data)
        if runtime is not None and runtime != self.runtime:
            if read_bytes(os.path.join(self.out, RUNTIME)) != runtime:
                write_atomic(os.path.join(self.out, RUNTIME), runtime)
            self.runtime = runtime
        write_atomic(os.path.join(self.out, a["prefix"] + ".json"), side)

    def one(self, a):
        prefix = a["prefix"]
        t0 = time.monotonic()
        try:
            with open(a["source"], "rb") as f:
                source_sha = sha256_bytes(f.read())
        except OSError as e:
            raise ExportError("%s: cannot read it: %s" % (a["source"], e.strerror))
        if self.prebuilt is None:
            self.version(a)
        if not self.force and held(a, self.out, source_sha, pin(a))[0] is None:
            self.kept += 1
            return
        why = None
        if self.prebuilt is not None:
            why, files = held(a, self.prebuilt, source_sha, pin(a))
            if why is None:
                side = files.pop(prefix + ".json")
                self.write(a, files, side)
                self.copied += 1
                say("%s: copied from %s" % (prefix, self.prebuilt))
                return
        try:
            version = self.version(a)
            compiler = self.compiler(a)
        except ExportError as e:
            if why is None:
                raise
            raise type(e)("not in %s as the plan asks (%s), and %s" % (self.prebuilt, why, e))
        files, side, note = compiler.compile(a, source_sha, version, self.out)
        size = sum(len(d) for n, d in files.items() if n != RUNTIME and not n.endswith(".h"))
        self.write(a, files, encode(side))
        self.compiled += 1
        self.bytes += size
        say("%s: %.2f s, %d bytes, %s" % (prefix, time.monotonic() - t0, size, note))

    def run(self, arts):
        t_all = time.monotonic()
        stopped = set()  # DSLs whose compiler is missing, where nothing else could supply
        for a in arts:
            if a["dsl"] in stopped:
                self.untried += 1
                continue
            try:
                self.one(a)
            except ExportError as e:
                self.failed += 1
                for name in [a["prefix"] + ".json"] + artifact_files(a):
                    remove_quietly(os.path.join(self.out, name))
                say("error: %s: %s" % (a["prefix"], e))
                # Rationale: without --from a missing compiler fails every artifact of its DSL
                # alike: said once. With --from, each says whether the folder had it.
                if isinstance(e, NoCompiler) and self.prebuilt is None:
                    stopped.add(a["dsl"])
        copied = "%d copied from %s, " % (self.copied, self.prebuilt) if self.prebuilt else ""
        say("%s%d compiled, %d up to date, %d failed%s, of %d; %.2f s; %d bytes of binaries "
            "written" % (copied, self.compiled, self.kept, self.failed,
                         ", %d not tried" % self.untried if self.untried else "", len(arts),
                         time.monotonic() - t_all, self.bytes))
        return self.failed + self.untried


def sweep(out):
    """Removes what a killed export left in out: write_atomic's temporary files (.NAME.*.tmp) and
    CuTeDSL's temporary folders (.cutedsl-*). One export writes to a folder at a time."""
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if name.startswith(".cutedsl-") and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif name.startswith(".") and name.endswith(".tmp") and os.path.isfile(path):
            remove_quietly(path)


def export(arts, out, force, prebuilt=None):
    os.makedirs(out, exist_ok=True)
    sweep(out)
    if "TRITON_CACHE_DIR" not in os.environ:
        # Rationale: the compiler's cache lives in the build folder, not the user's home.
        os.environ["TRITON_CACHE_DIR"] = os.path.join(os.path.abspath(out), ".triton-cache")
    return Exporter(out, force, prebuilt).run(arts)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Compile a DSL plan's artifacts ahead of time.")
    ap.add_argument("--plan", required=True, help="the plan (schemagen --dsl-plan)")
    ap.add_argument("--out", required=True, help="the folder for the artifacts and sidecars")
    ap.add_argument("--force", action="store_true", help="compile even what is up to date")
    ap.add_argument("--from", dest="prebuilt", metavar="DIR",
                    help="copy the artifacts DIR holds as the plan asks instead of compiling")
    args = ap.parse_args(argv)
    if args.prebuilt is not None and not os.path.isdir(args.prebuilt):
        say("error: --from %s: not a folder" % args.prebuilt)
        return 2
    try:
        arts = read_plan(args.plan)
    except PlanError as e:
        say("error: %s: %s" % (args.plan, e))
        return 2
    return 1 if export(arts, args.out, args.force, args.prebuilt) else 0


if __name__ == "__main__":
    sys.exit(main())
