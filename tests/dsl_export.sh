#!/usr/bin/env bash
# dsl_export.sh SCHEMAGEN CORPUS: tools/dsl_export.py with the build's pinned Triton (the
# dsl-venv beside SCHEMAGEN, or SG_DSL_PYTHON), for sm_90, no GPU needed.
#
# Exports a plan with one point of each shipped kernel (kernels/dsl/triton/) and checks each
# sidecar against the plan, the files and the compiler (fields, hashes, symbol, hidden
# arguments); a second run keeps everything (up to date) and --force writes the same bytes; then
# the failures: a missing kernel, a syntax error, parameters in another order, another compiler
# version, a malformed plan: each named, a non-zero exit, no file of the failed artifact left
# (a stale one removed), the others still exported, no temporary file left; --from copies the
# first export with the compilers made unimportable. Where the Python has nvidia-cutlass-dsl,
# the CuTeDSL plan (tests/data/dsl_cutedsl_plan.json.in) the same way: sidecars against the
# plan, the headers and the files, an sm_80 point after sm_90 ones, up to date, --force,
# --from, and its failures. Where schemagen writes plans (--dsl-plan), the plan of
# kernels/dsl/*.yaml (over schemas/aten_core.yaml and kernels/dsl/schemas/) is exported whole
# too: every point of its plan.
# Skips (77), saying why, where no Python with Triton is found; the CuTeDSL cases are skipped,
# saying so, where that Python has no nvidia-cutlass-dsl.
set -u
# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init dsl_export "$@"
py=${SG_DSL_PYTHON:-$(dirname "$tool")/dsl-venv/bin/python}
if [ ! -x "$py" ] || ! "$py" -c 'import triton' >/dev/null 2>&1; then
    sg_test_skip "no Python with Triton at $py (bash cmake/do deps installs it; or set SG_DSL_PYTHON)"
fi
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(dirname "$tool")/dsl-triton-cache}
export_tool=$root/tools/dsl_export.py
k=$root/kernels/dsl/triton

# plan NAME [EDIT]: writes $tmp/NAME.json, the base plan edited by the Python statement EDIT
# (over `arts`, the artifacts' list).
plan() {
    python3 - "$tmp/$1.json" "$k" "${2:-pass}" <<'PY'
import json, sys
out, k, edit = sys.argv[1], sys.argv[2], sys.argv[3]
def art(prefix, src, kern, point, sig, consts, warps=8):
    return {"prefix": prefix, "decl": prefix.split("__")[0], "dsl": "triton",
            "compiler": "triton==3.6.0", "source": k + "/" + src, "source_key": "triton/" + src,
            "kernel": kern, "arch": "sm_90", "capability": [9, 0], "point": point,
            "signature": sig, "constexprs": consts,
            "divisibility": [p[0] for p in sig if p[1].startswith("*")],
            "num_warps": warps, "num_stages": 1}
arts = [
    art("rms__float32_1024__sm90", "rms_norm.py", "rms_norm_fwd", {"dtype": "float32", "N": 1024},
        [["x", "*fp32"], ["w", "*fp32"], ["y", "*fp32"], ["rstd", "*fp32"], ["eps", "fp32"]],
        {"BLOCK": 1024}),
    art("softmax__bfloat16_2048__sm90", "softmax.py", "softmax_fwd",
        {"dtype": "bfloat16", "N": 2048}, [["x", "*bf16"], ["y", "*bf16"]], {"BLOCK": 2048}, 4),
    art("ln__bfloat16_4096__sm90", "layer_norm.py", "layer_norm_fwd",
        {"dtype": "bfloat16", "N": 4096},
        [["x", "*bf16"], ["w", "*bf16"], ["b", "*bf16"], ["y", "*bf16"], ["mean", "*fp32"],
         ["rstd", "*fp32"], ["eps", "fp32"]], {"BLOCK": 4096}),
    art("add_rms__float32_8192__sm90", "add_rms_norm.py", "add_rms_norm_fwd",
        {"dtype": "float32", "N": 8192},
        [["x", "*fp32"], ["residual", "*fp32"], ["w", "*fp32"], ["y", "*fp32"], ["s", "*fp32"],
         ["eps", "fp32"]], {"BLOCK": 8192}, 16),
]
exec(edit)
json.dump({"version": 1, "artifacts": arts}, open(out, "w"), indent=1)
PY
}

# ---- a good plan -----------------------------------------------------------------------------
plan good
out=$tmp/out
if ! "$py" "$export_tool" --plan "$tmp/good.json" --out "$out" 2>"$tmp/err"; then
    cat "$tmp/err" >&2
    fail "the good plan did not export"
fi
grep -q 'rms__float32_1024__sm90: [0-9.]* s, [0-9]* bytes' "$tmp/err" || fail "no per-artifact time"
grep -q '4 compiled, 0 up to date, 0 failed, of 4' "$tmp/err" || fail "no summary: $(cat "$tmp/err")"
version=$("$py" -c 'import triton; print(triton.__version__)')
python3 - "$tmp/good.json" "$out" "$version" <<'PY' || fail "the sidecars disagree with the plan or the files"
import hashlib, json, os, sys
plan, out, version = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
ok = True
def expect(cond, what):
    global ok
    if not cond:
        print("sidecar check failed: " + what, file=sys.stderr)
        ok = False
keys = ["version", "prefix", "kind", "decl", "point", "arch", "capability", "symbol", "shared",
        "num_warps", "num_stages", "num_ctas", "params", "hidden", "assumes", "compiler",
        "sources", "binary"]
for a in plan["artifacts"]:
    p = a["prefix"]
    side = json.load(open(os.path.join(out, p + ".json")))
    cubin = open(os.path.join(out, p + ".cubin"), "rb").read()
    expect(list(side) == keys, p + ": keys in the documented order: %s" % list(side))
    expect(side["version"] == 1 and side["kind"] == "triton-cubin", p + ": version and kind")
    for f in ("prefix", "decl", "point", "arch", "capability", "num_warps", "num_stages"):
        expect(side[f] == a[f], "%s: %s is %r, the plan says %r" % (p, f, side[f], a[f]))
    expect(side["params"] == a["signature"], p + ": params are the plan's signature")
    expect(side["symbol"] == a["kernel"], p + ": symbol %r" % side["symbol"])
    expect(side["symbol"].encode() + b"\0" in cubin, p + ": the symbol is in the cubin")
    expect(cubin[:4] == b"\x7fELF", p + ": the cubin is an ELF image")
    expect(side["binary"] == {"file": p + ".cubin", "sha256": hashlib.sha256(cubin).hexdigest()},
           p + ": binary file and hash")
    src = open(a["source"], "rb").read()
    expect(side["sources"] == {a["source_key"]: hashlib.sha256(src).hexdigest()}, p + ": source hash")
    expect(side["compiler"] == {"name": "triton", "version": version}, p + ": compiler")
    expect([h["name"] for h in side["hidden"]] == ["global_scratch", "profile_scratch"] and
           all(h["size"] == 0 and h["align"] >= 1 for h in side["hidden"]), p + ": hidden args")
    expect(side["assumes"] == {"divisibility_16": a["divisibility"], "int32": []}, p + ": assumes")
    expect(side["num_ctas"] == 1 and isinstance(side["shared"], int) and side["shared"] >= 0,
           p + ": num_ctas, shared")
sys.exit(0 if ok else 1)
PY
cp -r "$out" "$tmp/first"

# up to date: nothing compiled, nothing rewritten; --force: the same bytes again
"$py" "$export_tool" --plan "$tmp/good.json" --out "$out" 2>"$tmp/err" || fail "the second export failed"
grep -q '0 compiled, 4 up to date' "$tmp/err" || fail "the second export was not up to date: $(cat "$tmp/err")"
"$py" "$export_tool" --plan "$tmp/good.json" --out "$out" --force 2>"$tmp/err" || fail "--force failed"
grep -q '4 compiled, 0 up to date' "$tmp/err" || fail "--force did not compile"
for f in "$tmp"/first/*.json "$tmp"/first/*.cubin; do
    cmp -s "$f" "$out/$(basename "$f")" || fail "$(basename "$f") differs after --force"
done
# an edited source is not up to date
cp -r "$k" "$tmp/ksrc"
printf '\n# edited\n' >>"$tmp/ksrc/softmax.py"
plan edited "for a in arts: a['source'] = a['source'].replace('$k', '$tmp/ksrc')"
"$py" "$export_tool" --plan "$tmp/edited.json" --out "$out" 2>"$tmp/err" || fail "the edited export failed"
grep -q '1 compiled, 3 up to date' "$tmp/err" || fail "an edited source was kept: $(cat "$tmp/err")"

# ---- failures --------------------------------------------------------------------------------
# expect_fail NAME STATUS TEXT: exporting plan NAME into a fresh folder exits STATUS and says TEXT
expect_fail() {
    local dir=$tmp/out_$1 st=0
    mkdir -p "$dir"
    # a stale artifact of the first prefix, which a failure must not leave behind
    echo stale >"$dir/rms__float32_1024__sm90.json"
    "$py" "$export_tool" --plan "$tmp/$1.json" --out "$dir" 2>"$tmp/err" || st=$?
    [ "$st" = "$2" ] || fail "$1: exit $st, expected $2 ($(cat "$tmp/err"))"
    grep -qF -- "$3" "$tmp/err" || fail "$1: the message lacks '$3': $(cat "$tmp/err")"
    if [ -n "$(find "$dir" -maxdepth 1 -name '*.tmp' -print -quit)" ]; then
        fail "$1: a temporary file was left"
    fi
}
plan nokernel "arts[0]['kernel'] = 'nope'"
expect_fail nokernel 1 "error: rms__float32_1024__sm90: $k/rms_norm.py: no function 'nope'"
[ ! -e "$tmp/out_nokernel/rms__float32_1024__sm90.json" ] || fail "a failed artifact's stale sidecar was left"
[ -e "$tmp/out_nokernel/softmax__bfloat16_2048__sm90.cubin" ] || fail "one failure stopped the others"
grep -q '3 compiled, 0 up to date, 1 failed, of 4' "$tmp/err" || fail "nokernel: summary"

printf 'import triton\n\ndef broken(:\n    pass\n' >"$tmp/broken.py"
plan syntax "arts[0]['source'] = '$tmp/broken.py'"
expect_fail syntax 1 "rms__float32_1024__sm90: $tmp/broken.py:3:"

plan order "arts[0]['signature'][0], arts[0]['signature'][1] = arts[0]['signature'][1], arts[0]['signature'][0]"
expect_fail order 1 "the parameters of 'rms_norm_fwd' other than constexprs are (x, w, y, rstd, eps); the declaration's args are (w, x, y, rstd, eps)"

plan version "arts[0]['compiler'] = 'triton==0.0.1'"
expect_fail version 1 "rms__float32_1024__sm90: the declaration asks triton==0.0.1; the compiler found is triton $version"

plan badarch "arts[0]['capability'] = [8, 0]"
expect_fail badarch 2 "artifact 0 (rms__float32_1024__sm90): arch sm_90 and capability [8, 0] disagree"
plan badtype "arts[1]['signature'][0][1] = '*f32'"
expect_fail badtype 2 "artifact 1 (softmax__bfloat16_2048__sm90): parameter x: type '*f32' is not one of"
plan dup "arts[1]['prefix'] = arts[0]['prefix']"
expect_fail dup 2 "artifact 1: prefix rms__float32_1024__sm90 appears twice"
echo '{"version": 2, "artifacts": []}' >"$tmp/v2.json"
expect_fail v2 2 'expected an object with "version": 1'
echo '{"version": 1, "artifacts": [' >"$tmp/notjson.json"
expect_fail notjson 2 "not JSON"

# a Python without Triton: said once, the rest not tried, nothing written
if ! python3 -c 'import importlib.metadata as m; m.version("triton")' >/dev/null 2>&1; then
    st=0
    python3 "$export_tool" --plan "$tmp/good.json" --out "$tmp/out_none" 2>"$tmp/err" || st=$?
    [ "$st" = 1 ] || fail "without triton: exit $st"
    grep -q "no triton package is installed for" "$tmp/err" || fail "without triton: $(cat "$tmp/err")"
    grep -q "1 failed, 3 not tried, of 4" "$tmp/err" || fail "without triton: summary: $(cat "$tmp/err")"
    [ -z "$(ls -A "$tmp/out_none" 2>/dev/null)" ] || fail "without triton: files were written"
fi

# ---- --from: Triton artifacts copied, the compiler never imported ----------------------------
# nocompiler PY ARGS...: runs the exporter under PY with cutlass and triton made unimportable
nocompiler() {
    local p=$1
    shift
    "$p" -c 'import runpy, sys
sys.modules["cutlass"] = None  # an import of either now raises ImportError
sys.modules["triton"] = None
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")' "$export_tool" "$@"
}
nocompiler "$py" --plan "$tmp/good.json" --out "$tmp/tfrom" --from "$tmp/first" 2>"$tmp/err" ||
    fail "--from the first export failed: $(cat "$tmp/err")"
grep -q "4 copied from $tmp/first, 0 compiled, 0 up to date, 0 failed, of 4" "$tmp/err" ||
    fail "--from did not copy the Triton artifacts: $(cat "$tmp/err")"
for f in "$tmp"/first/*.json "$tmp"/first/*.cubin; do
    cmp -s "$f" "$tmp/tfrom/$(basename "$f")" || fail "--from: $(basename "$f") differs from its copy"
done
st=0
"$py" "$export_tool" --plan "$tmp/good.json" --out "$tmp/tfrom" --from "$tmp/nowhere" 2>"$tmp/err" || st=$?
[ "$st" = 2 ] && grep -q -- "--from $tmp/nowhere: not a folder" "$tmp/err" || fail "--from a missing folder: exit $st: $(cat "$tmp/err")"

# ---- CuTeDSL (export_to_c objects) -----------------------------------------------------------
# The plan tests/data/dsl_cutedsl_plan.json.in: silu_mul (kernels/dsl/cutedsl/) for float32 and
# bfloat16 (one tensor not 16-byte aligned), tests/dsl/cutedsl_axpb.py (a scalar of each type
# and a constexpr), all sm_90, then silu_mul for sm_80 in the same run.
if ! "$py" -c 'import importlib.metadata as m; m.version("nvidia-cutlass-dsl")' >/dev/null 2>&1; then
    echo "note: no nvidia-cutlass-dsl at $py: the CuTeDSL cases skipped (bash cmake/do deps installs it)" >&2
else
    # cplan NAME [EDIT]: writes $tmp/NAME.json, the CuTeDSL plan edited by EDIT (over `arts`)
    cplan() {
        python3 - "$tmp/$1.json" "$root" "${2:-pass}" <<'PY'
import json, sys
out, root, edit = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(root + "/tests/data/dsl_cutedsl_plan.json.in").read()
arts = json.loads(text.replace("@PROJECT_SOURCE_DIR@", root))["artifacts"]
exec(edit)
json.dump({"version": 1, "artifacts": arts}, open(out, "w"), indent=1)
PY
    }
    cplan cute
    cout=$tmp/cute
    if ! "$py" "$export_tool" --plan "$tmp/cute.json" --out "$cout" 2>"$tmp/err"; then
        cat "$tmp/err" >&2
        fail "the CuTeDSL plan did not export"
    fi
    grep -q 'nvidia-cutlass-dsl [0-9.]* imported in [0-9.]* s (for sm_90)' "$tmp/err" || fail "no import line: $(cat "$tmp/err")"
    grep -q 'axpb__float32_128__sm90: [0-9.]* s, [0-9]* bytes' "$tmp/err" || fail "no per-artifact time"
    grep -q '4 compiled, 0 up to date, 0 failed, of 4' "$tmp/err" || fail "no CuTeDSL summary: $(cat "$tmp/err")"
    cversion=$("$py" -c 'import importlib.metadata as m; print(m.version("nvidia-cutlass-dsl"))')
    wheel_rt=$("$py" -c 'import importlib.metadata as m
print([f.locate() for f in m.files("nvidia-cutlass-dsl-libs-cu13") if str(f).endswith("cu13/lib/libcuda_dialect_runtime_static.a")][0])')
    cmp -s "$wheel_rt" "$cout/libcuda_dialect_runtime_static.a" || fail "the runtime archive is not the wheel's cu13 one"
    python3 - "$tmp/cute.json" "$cout" "$cversion" <<'PY' || fail "the CuTeDSL sidecars disagree with the plan or the files"
import hashlib, json, os, sys
plan, out, version = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
ok = True
def expect(cond, what):
    global ok
    if not cond:
        print("sidecar check failed: " + what, file=sys.stderr)
        ok = False
def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()
keys = ["version", "prefix", "kind", "decl", "point", "arch", "capability", "symbol", "params",
        "layouts", "ctypes", "assumes", "compiler", "sources", "binary", "header", "runtime"]
ctype = {"fp32": "float", "fp64": "double", "i32": "int32_t", "i64": "int64_t"}
for a in plan["artifacts"]:
    p = a["prefix"]
    side = json.load(open(os.path.join(out, p + ".json")))
    obj = open(os.path.join(out, p + ".o"), "rb").read()
    hdr = open(os.path.join(out, p + ".h")).read()
    expect(list(side) == keys, p + ": keys in the documented order: %s" % list(side))
    expect(side["version"] == 1 and side["kind"] == "cutedsl-obj", p + ": version and kind")
    for f in ("prefix", "decl", "point", "arch", "capability"):
        expect(side[f] == a[f], "%s: %s is %r, the plan says %r" % (p, f, side[f], a[f]))
    expect(side["params"] == a["signature"], p + ": params are the plan's signature")
    expect(side["symbol"] == "cute_dsl_%s_wrapper" % p, p + ": symbol %r" % side["symbol"])
    ptr = [t.startswith("*") for _, t in a["signature"]]
    expect(side["layouts"] == [[1, 0] if x else None for x in ptr], p + ": layouts %r" % side["layouts"])
    want_ct = ["%s_Tensor_%s_t *" % (p, n) if t.startswith("*") else ctype[t] for n, t in a["signature"]]
    expect(side["ctypes"] == want_ct, p + ": ctypes %r" % side["ctypes"])
    # the header's own spelling of the wrapper and of each tensor's struct
    proto = "static inline int32_t cute_dsl_%s_wrapper(%s_Kernel_Module_t *module, %s, cudaStream_t stream) {" % (
        p, p, ", ".join((c if c.endswith("*") else c + " ") + n for c, (n, _) in zip(want_ct, a["signature"])))
    expect(proto in hdr, p + ": the header lacks " + proto)
    for (n, t) in a["signature"]:
        if t.startswith("*"):
            struct = "typedef struct {\n    void *data;\n    int32_t dynamic_shapes[1];\n} %s_Tensor_%s_t;" % (p, n)
            expect(struct in hdr, p + ": the header lacks " + struct)
    int32 = [n for n, t in a["signature"] if t.startswith("*") or t == "i32"]
    expect(side["assumes"] == {"divisibility_16": a["divisibility"], "int32": int32}, p + ": assumes")
    expect(side["compiler"] == {"name": "nvidia-cutlass-dsl", "version": version}, p + ": compiler")
    expect(side["sources"] == {a["source_key"]: sha(a["source"])}, p + ": source hash")
    expect(side["binary"] == {"file": p + ".o", "sha256": hashlib.sha256(obj).hexdigest()}, p + ": binary")
    expect(side["header"] == {"file": p + ".h", "sha256": sha(os.path.join(out, p + ".h"))}, p + ": header")
    rt = "libcuda_dialect_runtime_static.a"
    expect(side["runtime"] == {"file": rt, "sha256": sha(os.path.join(out, rt))}, p + ": runtime")
    # an x86-64 relocatable object (ET_REL) whose embedded kernels were built for the arch
    expect(obj[:4] == b"\x7fELF" and obj[16:18] == b"\x01\x00", p + ": the .o is an ELF relocatable object")
    expect(("-arch %s\0" % a["arch"]).encode() in obj or ("-arch %s " % a["arch"]).encode() in obj,
           p + ": the object was built for " + a["arch"])
sys.exit(0 if ok else 1)
PY
    if command -v nm >/dev/null 2>&1; then
        for o in "$cout"/*.o; do
            p=$(basename "$o" .o)
            nm --defined-only "$o" | grep -q " T _mlir_${p}_cuda_init$" || fail "$p.o defines no _mlir_${p}_cuda_init"
        done
    else
        echo "note: no nm: the objects' symbols not checked" >&2
    fi
    [ -z "$(find "$cout" -mindepth 1 -name '.*' -print -quit)" ] || fail "a temporary file or folder was left in $cout"
    cp -r "$cout" "$tmp/cfirst"

    # the sm_80 artifact exported after sm_90 ones is what a run of its own makes
    cplan cute80 "arts[:] = arts[3:]"
    "$py" "$export_tool" --plan "$tmp/cute80.json" --out "$tmp/cute80" 2>"$tmp/err" || fail "the sm_80 plan failed: $(cat "$tmp/err")"
    grep -q '(for sm_80)' "$tmp/err" || fail "the sm_80 run did not import for sm_80: $(cat "$tmp/err")"
    for f in "$tmp"/cute80/silu_mul_cutedsl__float32__sm80.*; do
        cmp -s "$f" "$cout/$(basename "$f")" || fail "$(basename "$f") differs when exported after sm_90 artifacts"
    done

    # up to date: nothing compiled or imported; --force: the same bytes again
    "$py" "$export_tool" --plan "$tmp/cute.json" --out "$cout" 2>"$tmp/err" || fail "the second CuTeDSL export failed"
    grep -q '0 compiled, 4 up to date' "$tmp/err" || fail "the second CuTeDSL export was not up to date: $(cat "$tmp/err")"
    grep -q 'imported' "$tmp/err" && fail "an up-to-date export imported the compiler"
    "$py" "$export_tool" --plan "$tmp/cute.json" --out "$cout" --force 2>"$tmp/err" || fail "CuTeDSL --force failed"
    grep -q '4 compiled, 0 up to date' "$tmp/err" || fail "CuTeDSL --force did not compile"
    for f in "$tmp"/cfirst/*; do
        cmp -s "$f" "$cout/$(basename "$f")" || fail "$(basename "$f") differs after --force"
    done
    # a header edited in DIR is not up to date: recompiled
    printf '\n' >>"$cout/axpb__float32_128__sm90.h"
    "$py" "$export_tool" --plan "$tmp/cute.json" --out "$cout" 2>"$tmp/err" || fail "the export after an edited header failed"
    grep -q '1 compiled, 3 up to date' "$tmp/err" || fail "an edited header was kept: $(cat "$tmp/err")"
    cmp -s "$tmp/cfirst/axpb__float32_128__sm90.h" "$cout/axpb__float32_128__sm90.h" || fail "the edited header was not rewritten"

    # --from: copied where DIR holds them as the plan asks, cutlass never imported
    nocompiler "$py" --plan "$tmp/cute.json" --out "$tmp/cfrom" --from "$tmp/cfirst" 2>"$tmp/err" ||
        fail "CuTeDSL --from failed: $(cat "$tmp/err")"
    grep -q "4 copied from $tmp/cfirst, 0 compiled, 0 up to date, 0 failed, of 4" "$tmp/err" ||
        fail "CuTeDSL --from did not copy: $(cat "$tmp/err")"
    for f in "$tmp"/cfirst/*; do
        cmp -s "$f" "$tmp/cfrom/$(basename "$f")" || fail "--from: $(basename "$f") differs from its copy"
    done
    nocompiler "$py" --plan "$tmp/cute.json" --out "$tmp/cfrom" --from "$tmp/cfirst" 2>"$tmp/err" ||
        fail "the second CuTeDSL --from failed"
    grep -q "0 copied from $tmp/cfirst, 0 compiled, 4 up to date" "$tmp/err" || fail "a second --from was not up to date: $(cat "$tmp/err")"
    # a Python with no DSL package at all (the GPU machine) copies the same way
    if ! python3 -c 'import importlib.metadata as m; m.version("nvidia-cutlass-dsl")' >/dev/null 2>&1; then
        python3 "$export_tool" --plan "$tmp/cute.json" --out "$tmp/cfrom3" --from "$tmp/cfirst" 2>"$tmp/err" ||
            fail "--from under a Python without nvidia-cutlass-dsl failed: $(cat "$tmp/err")"
        grep -q "4 copied from" "$tmp/err" || fail "--from without the package: $(cat "$tmp/err")"
    fi
    # what DIR does not hold as the plan asks is not copied: a binary that is not its sidecar's,
    # a header whose wrapper lost a parameter (its hash made right); with no compiler, failures
    cp -r "$tmp/cfirst" "$tmp/cbad"
    printf 'x' >>"$tmp/cbad/silu_mul_cutedsl__float32__sm90.o"
    python3 - "$tmp/cbad" <<'PY'
import hashlib, json, sys
d, p = sys.argv[1], "silu_mul_cutedsl__bfloat16__sm90"
h = open("%s/%s.h" % (d, p)).read().replace("*up, ", "")
open("%s/%s.h" % (d, p), "w").write(h)
side = json.load(open("%s/%s.json" % (d, p)))
side["header"]["sha256"] = hashlib.sha256(h.encode()).hexdigest()
open("%s/%s.json" % (d, p), "w").write(json.dumps(side))
PY
    st=0
    nocompiler "$py" --plan "$tmp/cute.json" --out "$tmp/cbadout" --from "$tmp/cbad" 2>"$tmp/err" || st=$?
    [ "$st" = 1 ] || fail "--from a bad folder: exit $st"
    grep -qF "error: silu_mul_cutedsl__float32__sm90: not in $tmp/cbad as the plan asks (silu_mul_cutedsl__float32__sm90.json differs from the plan and the files in 'binary'), and cannot import cutlass" "$tmp/err" ||
        fail "--from a bad binary: $(cat "$tmp/err")"
    grep -qF "(silu_mul_cutedsl__bfloat16__sm90.h: cute_dsl_silu_mul_cutedsl__bfloat16__sm90_wrapper takes (module, gate, out, stream); the declaration's args make (module, gate, up, out, stream))" "$tmp/err" ||
        fail "--from a header whose wrapper lacks a parameter: $(cat "$tmp/err")"
    grep -q "2 copied from $tmp/cbad, 0 compiled, 0 up to date, 2 failed, of 4" "$tmp/err" || fail "--from a bad folder: summary: $(cat "$tmp/err")"
    [ ! -e "$tmp/cbadout/silu_mul_cutedsl__float32__sm90.json" ] || fail "--from a bad folder: a failed artifact's sidecar was written"

    # one folder, one plan, both DSLs: all up to date, neither compiler imported
    mkdir -p "$tmp/mixed"
    cp "$tmp"/first/* "$tmp"/cfirst/* "$tmp/mixed/"
    python3 -c 'import json, sys
a, b = (json.load(open(p))["artifacts"] for p in sys.argv[1:3])
json.dump({"version": 1, "artifacts": a + b}, open(sys.argv[3], "w"))' "$tmp/good.json" "$tmp/cute.json" "$tmp/mixed.json"
    nocompiler "$py" --plan "$tmp/mixed.json" --out "$tmp/mixed" 2>"$tmp/err" || fail "the mixed plan failed: $(cat "$tmp/err")"
    grep -q '0 compiled, 8 up to date, 0 failed, of 8' "$tmp/err" || fail "the mixed plan was not up to date: $(cat "$tmp/err")"

    # a Python without nvidia-cutlass-dsl: said once, its other artifacts not tried, nothing written
    if ! python3 -c 'import importlib.metadata as m; m.version("nvidia-cutlass-dsl")' >/dev/null 2>&1; then
        st=0
        python3 "$export_tool" --plan "$tmp/cute.json" --out "$tmp/cout_none" 2>"$tmp/err" || st=$?
        [ "$st" = 1 ] || fail "without nvidia-cutlass-dsl: exit $st"
        grep -q "error: silu_mul_cutedsl__float32__sm90: no nvidia-cutlass-dsl package is installed for" "$tmp/err" ||
            fail "without nvidia-cutlass-dsl: $(cat "$tmp/err")"
        grep -q "1 failed, 3 not tried, of 4" "$tmp/err" || fail "without nvidia-cutlass-dsl: summary: $(cat "$tmp/err")"
        [ -z "$(ls -A "$tmp/cout_none" 2>/dev/null)" ] || fail "without nvidia-cutlass-dsl: files were written"
    fi

    # failures: each named, exit 1, the failed artifact's stale files removed, the others exported
    # cexpect_fail NAME STATUS TEXT: as expect_fail, for the CuTeDSL plan NAME
    # cexpect_fail NAME STATUS TEXT [FAILED OTHER]: as expect_fail, for the CuTeDSL plan NAME; with
    # status 1 the artifact FAILED (silu_mul_cutedsl__float32__sm90) has no stale file left, and
    # OTHER (axpb__float32_128__sm90) is exported
    cexpect_fail() {
        local dir=$tmp/cout_$1 st=0 failed=${4:-silu_mul_cutedsl__float32__sm90} other=${5:-axpb__float32_128__sm90}
        mkdir -p "$dir"
        echo stale >"$dir/$failed.json"
        echo stale >"$dir/$failed.o"
        "$py" "$export_tool" --plan "$tmp/$1.json" --out "$dir" 2>"$tmp/err" || st=$?
        [ "$st" = "$2" ] || fail "$1: exit $st, expected $2 ($(cat "$tmp/err"))"
        grep -qF -- "$3" "$tmp/err" || fail "$1: the message lacks '$3': $(cat "$tmp/err")"
        if [ "$2" = 1 ]; then
            [ ! -e "$dir/$failed.json" ] && [ ! -e "$dir/$failed.o" ] ||
                fail "$1: the failed artifact's stale files were left"
            [ -e "$dir/$other.o" ] || fail "$1: one failure stopped the others"
        fi
        [ -z "$(find "$dir" -mindepth 1 -name '.*' -print -quit)" ] || fail "$1: a temporary file or folder was left"
    }
    cplan cpin "arts[0]['compiler'] = 'nvidia-cutlass-dsl==0.0.1'; arts[:] = arts[:3]"
    cexpect_fail cpin 1 "error: silu_mul_cutedsl__float32__sm90: the declaration asks nvidia-cutlass-dsl==0.0.1; the compiler found is nvidia-cutlass-dsl $cversion"
    cplan corder "s = arts[0]['signature']; s[1], s[2] = s[2], s[1]; arts[:] = arts[:3]"
    cexpect_fail corder 1 "error: silu_mul_cutedsl__float32__sm90: $root/kernels/dsl/cutedsl/silu_mul.py: the parameters of 'silu_mul' are (gate, up, out, stream); expected the declaration's args (gate, out, up), then its constexprs (), then stream"
    cplan cconst "arts[0]['constexprs'] = {'BLOCK': 64}; arts[:] = arts[:3]"
    cexpect_fail cconst 1 "the parameters of 'silu_mul' are (gate, up, out, stream); expected the declaration's args (gate, up, out), then its constexprs (BLOCK), then stream"
    cplan ctype "arts[2]['signature'][5][1] = 'i64'; arts[:] = arts[:3]"
    cexpect_fail ctype 1 "error: axpb__float32_128__sm90: $root/tests/dsl/cutedsl_axpb.py: axpb__float32_128__sm90.h: cute_dsl_axpb__float32_128__sm90_wrapper takes m as 'int32_t'; its declared type i64 needs 'int64_t'" \
        axpb__float32_128__sm90 silu_mul_cutedsl__float32__sm90
    cplan cwarps "arts[1]['num_warps'] = 4"
    cexpect_fail cwarps 2 "artifact 1 (silu_mul_cutedsl__bfloat16__sm90): 'num_warps': a cutedsl kernel has none"
    cplan cpkg "arts[1]['compiler'] = 'triton==3.6.0'"
    cexpect_fail cpkg 2 "artifact 1 (silu_mul_cutedsl__bfloat16__sm90): compiler 'triton==3.6.0': expected 'nvidia-cutlass-dsl==VERSION'"
fi

# ---- the declarations' own plan, where schemagen writes plans --------------------------------
if "$tool" --help 2>&1 | grep -q -- '--dsl-plan'; then
    shopt -s nullglob
    decls=()
    # without nvidia-cutlass-dsl, the CuTeDSL declarations are left out (as the build does)
    has_cute=0
    "$py" -c 'import importlib.metadata as m; m.version("nvidia-cutlass-dsl")' >/dev/null 2>&1 && has_cute=1
    for d in "$root"/kernels/dsl/*.yaml; do
        [ "$has_cute" = 1 ] || ! grep -q '^  dsl: cutedsl$' "$d" || continue
        decls+=("$d")
    done
    if [ ${#decls[@]} -gt 0 ]; then
        dsl_args=()
        for d in "${decls[@]}"; do dsl_args+=(--dsl "$d"); done
        # what a killed export leaves behind (a temporary file, a CuTeDSL temporary folder) is
        # swept by the next one
        mkdir -p "$tmp/decls/.cutedsl-killed"
        touch "$tmp/decls/.cutedsl-killed/x.o" "$tmp/decls/.x.json.abc123.tmp"
        if ! "$tool" "${dsl_args[@]}" --dsl-plan "$tmp/decls.json" "$root/schemas/aten_core.yaml" \
            "$root"/kernels/dsl/schemas/*.yaml 2>"$tmp/err"; then
            fail "schemagen --dsl-plan over kernels/dsl/*.yaml failed: $(cat "$tmp/err")"
        elif ! "$py" "$export_tool" --plan "$tmp/decls.json" --out "$tmp/decls" 2>"$tmp/err"; then
            fail "the declarations' plan did not export: $(cat "$tmp/err")"
        else
            tail -n 1 "$tmp/err" >&2
            n=$("$py" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["artifacts"]))' "$tmp/decls.json")
            [ "$n" -gt 0 ] && grep -q " 0 failed, of $n;" "$tmp/err" ||
                fail "the declarations' plan ($n points) did not export whole"
            [ ! -e "$tmp/decls/.cutedsl-killed" ] && [ ! -e "$tmp/decls/.x.json.abc123.tmp" ] ||
                fail "a killed export's leftovers were not swept: $(ls -A "$tmp/decls" | grep '^\.')"
        fi
    fi
else
    echo "note: this schemagen writes no plans (--dsl-plan): kernels/dsl/*.yaml not exported" >&2
fi

sg_test_done
