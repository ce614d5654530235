#!/usr/bin/env bash
# dsl.sh: the generator's side of DSL kernels (docs/dsl.md): declarations read with located
# errors, the plan's bytes, the sidecars and binaries refused when they do not match, and the
# generated LIB_dsl.c compiled with -Werror against the glue of a small schema.
#
#   bash tests/dsl.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init dsl "$@"

cp -r "$here/dsl/triton" "$tmp/triton"
cp "$here/dsl/ops.yaml" "$tmp/ops.yaml"
base=$here/dsl/rms_norm.yaml
cd "$tmp" || exit 1

# refuse SED_SCRIPT MESSAGE...: the base declaration edited by SED_SCRIPT is refused with
# each MESSAGE (file:line:col: error: what) and no plan written.
refuse() {
    local script=$1
    shift
    sed "$script" "$base" >"$tmp/bad.yaml"
    rm -f "$tmp/plan.json"
    t 1 --dsl bad.yaml --dsl-plan plan.json ops.yaml
    for m in "$@"; do
        case $err in *"$m"*) ;; *) fail "'$script': no '$m' in: $err" ;; esac
    done
    [ ! -e "$tmp/plan.json" ] || fail "'$script': a plan was written"
}

# ---- the plan --------------------------------------------------------------------------------

cp "$base" decl.yaml
t 0 --dsl decl.yaml --dsl-plan plan.json ops.yaml
[ -s plan.json ] || fail "no plan written"
[ "$(grep -c '"prefix"' plan.json)" = 4 ] || fail "the plan does not hold 2 x 2 artifacts"
# the grid in declaration order (the first variable slowest), arch last
grep -o '"prefix": "[^"]*"' plan.json | tr '\n' ' ' >prefixes
[ "$(cat prefixes)" = '"prefix": "rms_norm_triton__float32_1024__sm90" "prefix": "rms_norm_triton__float32_2048__sm90" "prefix": "rms_norm_triton__bfloat16_1024__sm90" "prefix": "rms_norm_triton__bfloat16_2048__sm90" ' ] ||
    fail "prefixes: $(cat prefixes)"
grep -q '"signature": \[\["x", "\*bf16"\], \["w", "\*bf16"\], \["y", "\*bf16"\], \["rstd", "\*fp32"\], \["eps", "fp32"\]\]' plan.json ||
    fail "the bfloat16 signature"
grep -q '"constexprs": {"BLOCK": 2048}' plan.json || fail "constexprs evaluated per point"
grep -q "\"source\": \"$tmp/triton/rms_norm.py\"" plan.json || fail "the source's absolute path"
# deterministic: the same bytes again, and the file is left alone when they are the same
cp plan.json plan.first
touch -d '2000-01-01' plan.json
t 0 --dsl decl.yaml --dsl-plan plan.json ops.yaml
cmp -s plan.json plan.first || fail "the plan's bytes differ between runs"
[ "$(stat -c %Y plan.json)" = "$(date -d 2000-01-01 +%s)" ] || fail "an unchanged plan was rewritten"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary file was left"
# num_warps and num_stages per point, as expressions over the grid variables
sed -e 's/num_warps: 8/num_warps: N \/ 256/' -e 's/num_stages: 1/num_stages: N \/ 1024/' "$base" >ws.yaml
t 0 --dsl ws.yaml --dsl-plan plan_ws.json ops.yaml
[ "$(grep -o '"num_warps": [0-9]*, "num_stages": [0-9]*' plan_ws.json | tr '\n' ' ')" = \
  '"num_warps": 4, "num_stages": 1 "num_warps": 8, "num_stages": 2 "num_warps": 4, "num_stages": 1 "num_warps": 8, "num_stages": 2 ' ] ||
    fail "num_warps and num_stages per point: $(grep -o '"num_warps": [0-9]*' plan_ws.json)"
# a second arch, spelled sm_90a as well: capability 9.0 for both, and refused together
sed 's/archs: \[sm_90\]/archs: [sm_90, sm_100]/' "$base" >two.yaml
t 0 --dsl two.yaml --dsl-plan plan2.json ops.yaml
grep -q '"prefix": "rms_norm_triton__float32_1024__sm100"' plan2.json || fail "sm_100 artifacts"
grep -q '"capability": \[10, 0\]' plan2.json || fail "sm_100 is capability 10.0"
sed 's/archs: \[sm_90\]/archs: [sm_90a]/' "$base" >a.yaml
t 0 --dsl a.yaml --dsl-plan plan3.json ops.yaml
grep -q '"arch": "sm_90a", "capability": \[9, 0\]' plan3.json || fail "sm_90a is capability 9.0"

# constexprs evaluated per point (an int product, a conditional over a dtype variable), the
# archs of a point after one another
cp "$here/dsl/hostile.yaml" hostile.yaml
t 0 --dsl hostile.yaml --dsl-plan hplan.json ops.yaml
grep -o '"prefix": "[^"]*"\|"constexprs": {[^}]*}' hplan.json | tr '\n' ' ' >hfacts
[ "$(cat hfacts)" = '"prefix": "hostile__float32_64__sm90" "constexprs": {"B": 128, "C": 0} "prefix": "hostile__float32_64__sm100" "constexprs": {"B": 128, "C": 0} "prefix": "hostile__float16_64__sm90" "constexprs": {"B": 128, "C": 1} "prefix": "hostile__float16_64__sm100" "constexprs": {"B": 128, "C": 1} ' ] ||
    fail "hostile's plan: $(cat hfacts)"

# ---- refusals of the declaration, each located -----------------------------------------------

refuse 's/  kernel: rms_norm_fwd/  kernel: rms_norm_fwd\n  kernels: x/' \
    'bad.yaml:8:3: error: unknown key '\''kernels'\'' in a DSL declaration'
refuse '/  kernel: rms_norm_fwd/d' "bad.yaml:1:3: error: a DSL declaration lacks the key 'kernel'"
refuse 's/  archs: \[sm_90\]/  archs: sm_90/' "bad.yaml:8:10: error: 'archs' needs a list, not a scalar"
refuse 's/sm_90\]/sm90]/' "bad.yaml:8:11: error: 'sm90' is not an arch"
refuse 's/sm_90\]/sm_90, sm_90a]/' "bad.yaml:8:18: error: 'sm_90a' names capability 9.0, as 'sm_90' does"
refuse 's/aten::_fused_rms_norm/aten::_fused_rms_nrom/' \
    "bad.yaml:2:7: error: no op 'aten::_fused_rms_nrom' in the schemas given; did you mean 'aten::_fused_rms_norm'?"
refuse 's/aten::_fused_rms_norm/aten::add.Scalar/' \
    "bad.yaml:2:7: error: aten::add has no overload 'Scalar' (its overloads: Tensor)"
refuse 's/key: CUDA/key: CPU/' "bad.yaml:3:8: error: 'key' must be CUDA for now, not 'CPU'"
refuse 's/triton==3.6.0/triton>=3.6/' "bad.yaml:5:13: error: 'compiler' needs triton==VERSION"
refuse 's|triton/rms_norm.py|triton/missing.py|' "bad.yaml:6:11: error: cannot read the source"
refuse 's/name: rms_norm_triton/name: RmsNorm/' "bad.yaml:1:9: error: 'name' needs [a-z][a-z0-9_]*"
refuse 's/N: \[1024, 2048\]/N: [1024, float32]/' "bad.yaml:11:15: error: grid variable 'N': 'float32' is not an int"
refuse 's/N: \[1024, 2048\]/input: [1024]/' "bad.yaml:11:5: error: grid variable 'input' has the name of an argument"
refuse 's/N: \[1024, 2048\]/out1: [1024]/' "bad.yaml:11:5: error: grid variable 'out1' has the name of an output"
refuse 's/N: \[1024, 2048\]/capability: [90]/' "bad.yaml:11:5: error: grid variable 'capability' has the name of the capability"
refuse 's/N: \[1024, 2048\]/N: [1024, 1024]/' "bad.yaml:11:15: error: grid variable 'N' lists '1024' twice"
refuse 's/priority: 0/priority: x/; s/  kernel: rms_norm_fwd/  kernel: rms_norm_fwd\n  priority: high/' \
    "bad.yaml:8:13: error: 'priority' needs an integer"
# the predicate: the column inside the folded scalar, on its own line
refuse 's/input.dtype == dtype \&\&/input.dtype == 4 \&\&/' \
    "bad.yaml:13:17: error: cannot compare a dtype with an int"
refuse 's/weight != None/bias != None/' "bad.yaml:15:8: error: unknown name 'bias'"
refuse 's/input.size(-1) == N/input + 1 == N/' "bad.yaml:13:49: error: 'input' is a Tensor, not a number"
refuse 's/input.contiguous \&\&/input.contiguous = /' "bad.yaml:13:46: error: '=' is not an operator"
refuse "s/input.dtype == dtype/$(printf '(%.0s' $(seq 60))N$(printf ')%.0s' $(seq 60)) > 0/" \
    "error: expression nested too deeply (more than 48 levels)"
# outputs and launch
refuse 's/    - {like: input}$/    - {like: weight}/' "bad.yaml:18:14: error: 'like' needs a Tensor argument"
refuse '/    - {like: input}$/d' "bad.yaml:18:5: error: 'outputs' lists 1 output; aten::_fused_rms_norm returns 2"
refuse 's/keep_last: 1/keep_last: -1/' "error: 'keep_last' needs an integer from 0 to 64"
# outputs with their own sizes: int expressions in the scope of `when`, with a dtype
sed 's/{like: input, dtype: float32, keep_last: 1}/{sizes: [input.size(0), N], dtype: float32}/' \
    "$base" >sizes.yaml
t 0 --dsl sizes.yaml --dsl-plan plan.json ops.yaml
out0=18 # the line of out0, `    - {like: input}`
refuse 's/    - {like: input}$/    - {dtype: float32}/' \
    "bad.yaml:$out0:7: error: an output needs 'like' (an argument's sizes) or 'sizes'"
refuse 's/    - {like: input}$/    - {like: input, sizes: [1]}/' \
    "bad.yaml:$out0:28: error: an output takes 'like' or 'sizes', not both"
refuse 's/    - {like: input}$/    - {sizes: [], dtype: float32}/' \
    "bad.yaml:$out0:15: error: 'sizes' needs 1 to 64 int expressions, not 0"
refuse "s/    - {like: input}\$/    - {sizes: [$(printf '1, %.0s' $(seq 64))1], dtype: float32}/" \
    "bad.yaml:$out0:15: error: 'sizes' needs 1 to 64 int expressions, not 65"
refuse 's/    - {like: input}$/    - {sizes: 4, dtype: float32}/' \
    "bad.yaml:$out0:15: error: 'sizes' needs a list, not a scalar"
refuse 's/    - {like: input}$/    - {sizes: [input.size(0)]}/' \
    "bad.yaml:$out0:7: error: an output with 'sizes' needs 'dtype'"
refuse 's/{like: input, dtype: float32, keep_last: 1}/{sizes: [1], dtype: float32, keep_last: 1}/' \
    "bad.yaml:19:47: error: 'keep_last' goes with 'like', not with 'sizes'"
refuse 's/    - {like: input}$/    - {sizes: [input.size(0), 2 < 3], dtype: float32}/' \
    "bad.yaml:$out0:31: error: a size must be an int, not a bool"
refuse 's/{like: input, dtype: float32, keep_last: 1}/{sizes: [out0.numel], dtype: float32}/' \
    "bad.yaml:19:16: error: unknown name 'out0': not an argument of aten::_fused_rms_norm or a grid variable"
refuse 's/    - {like: input}$/    - {sizes: [input.size(0)], dtype: float64x}/' \
    "bad.yaml:$out0:39: error: 'dtype' needs a dtype name or a dtype grid variable, not 'float64x'"
# ... for an object DSL too (its int32 gate on out0 is the product of the sizes:
# tests/dsl_objects.sh); and an op needs a Tensor argument, whose device they take
cat >cute.yaml <<'YAML'
- name: mm_cute
  op: aten::mm
  key: CUDA
  dsl: cutedsl
  compiler: nvidia-cutlass-dsl==4.8.1
  source: triton/rms_norm.py
  kernel: mm
  archs: [sm_90]
  grid: {}
  when: self.dtype == float32
  outputs: [{sizes: [self.size(0), mat2.size(1)], dtype: float32}]
  launch: {args: [[a, "*fp32", self], [c, "*fp32", out0]]}
YAML
t 0 --dsl cute.yaml --dsl-plan plan.json ops.yaml
grep -q '"signature": \[\["a", "\*fp32"\], \["c", "\*fp32"\]\]' plan.json ||
    fail "sizes for cutedsl: the plan lacks out0 as 'c': $(cat plan.json)"
cat >fill.yaml <<'YAML'
- name: fill
  op: my::fill
  key: CUDA
  dsl: triton
  compiler: triton==3.6.0
  source: triton/rms_norm.py
  kernel: fill
  archs: [sm_90]
  grid: {}
  when: n > 0
  outputs: [{sizes: [n], dtype: float32}]
  launch: {grid: [1, 1, 1], num_warps: 4, num_stages: 2, args: [[c, "*fp32", out0]]}
YAML
t 1 --dsl fill.yaml --dsl-plan plan.json ops.yaml
case $err in *"fill.yaml:11:21: error: an output with 'sizes' is allocated on the device of the first Tensor argument (not optional), and my::fill has none"*) ;;
*) fail "sizes without a Tensor argument: $err" ;; esac
refuse 's/grid: \[input.numel \/ N, 1, 1\]/grid: [input.numel \/ N, 1]/' \
    "bad.yaml:21:11: error: the launch grid needs three expressions"
refuse 's/num_warps: 8/num_warps: 6/' "bad.yaml:22:16: error: 'num_warps' at the point dtype=float32, N=1024 (6): not a power of two"
refuse 's/num_stages: 1/num_stages: N \/ 64/' "bad.yaml:23:17: error: 'num_stages' at the point dtype=float32, N=2048 (32): not from 1 to 16"
refuse 's/num_warps: 8/num_warps: M/' "bad.yaml:22:16: error: unknown name 'M'"
refuse 's/{BLOCK: N}/{BLOCK: input.numel}/' "bad.yaml:24:25: error: unknown name 'input': not a grid variable"
refuse 's/{BLOCK: N}/{BLOCK: N \/ (N - N)}/' \
    "bad.yaml:24:25: error: constexpr 'BLOCK' at the point dtype=float32, N=1024: division by zero"
refuse 's/\[rstd, "\*fp32", out1\]/[rstd, "*f32", out1]/' "bad.yaml:29:16: error: '*f32' is not a kernel parameter type"
refuse 's/\[rstd, "\*fp32", out1\]/[rstd, "*fp32", normalized_shape]/' \
    "bad.yaml:29:25: error: a parameter's value must be a Tensor, not an int[]"
refuse 's/\[rstd, "\*fp32", out1\]/[w, "*fp32", out1]/' "bad.yaml:29:10: error: parameter 'w' is listed twice"
refuse 's/\[rstd, "\*fp32", out1\]/[rstd, "*bf16", out1]/' \
    "bad.yaml:29:9: error: parameter 'rstd' points to bfloat16 at the point dtype=float32, N=1024, but out1 is float32"
refuse 's/\[eps, fp32, "eps == None ? 1.1920929e-07 : eps"\]/[eps, i64, out0.numel]/' \
    "bad.yaml:30:20: error: unknown name 'out0'"
# scratch: tensors the kernel works in, of their own sizes and dtype, passed as pointers
sc='s/^  launch:/  scratch:\n    - {sizes: [input.size(0), N], dtype: float32, zero: true}\n  launch:/'
ws='s/      - \[eps, fp32/      - [ws, "*fp32", scratch0]\n      - [eps, fp32/'
sed -e "$sc" -e "$ws" "$base" >scratch.yaml
t 0 --dsl scratch.yaml --dsl-plan plan.json ops.yaml
grep -q '\["rstd", "\*fp32"\], \["ws", "\*fp32"\], \["eps", "fp32"\]' plan.json ||
    fail "scratch0 is not the parameter 'ws': $(cat plan.json)"
refuse "$sc" "bad.yaml:21:7: error: scratch0 is passed to no kernel parameter"
refuse "${sc/zero: true/zero: yes}; $ws" "bad.yaml:21:57: error: 'zero' needs true or false, not 'yes'"
refuse "${sc/dtype: float32/dtype: floaty}; $ws" \
    "bad.yaml:21:42: error: 'dtype' needs a dtype name or a dtype grid variable, not 'floaty'"
refuse "${sc/dtype: float32, /like: input, }; $ws" \
    "bad.yaml:21:35: error: unknown key 'like' in a scratch tensor (known: sizes, dtype, zero)"
refuse "${sc/N]/scratch0.numel]}; $ws" "bad.yaml:21:31: error: unknown name 'scratch0'"
refuse "$sc; ${ws/\"\*fp32\"/\"*bf16\"}" \
    "error: parameter 'ws' points to bfloat16 at the point dtype=float32, N=1024, but scratch0 is float32"
refuse 's/^  launch:/  scratch: []\n  launch:/' "bad.yaml:20:12: error: 'scratch' lists no tensors (leave it out)"
refuse 's/input.size(-1) == N/scratch0.numel == N/' "bad.yaml:13:49: error: unknown name 'scratch0'"
refuse 's/N: \[1024, 2048\]/scratch2: [1024]/' \
    "bad.yaml:11:5: error: grid variable 'scratch2' has the name of a scratch tensor"
# when_c: a C function's name, outside the reserved spaces, that the predicate can call
with_c() { printf 's/^  outputs:/  when_c: %s\\n  outputs:/' "$1"; }
sed "$(with_c rms_gate)" "$base" >wc.yaml
t 0 --dsl wc.yaml --dsl-plan plan.json ops.yaml
refuse "$(with_c 9lives)" "bad.yaml:17:11: error: 'when_c' needs the name of a C function, not '9lives'"
refuse "$(with_c 'rms.gate')" "bad.yaml:17:11: error: 'when_c' needs the name of a C function, not 'rms.gate'"
refuse "$(with_c '[a, b]')" "bad.yaml:17:11: error: 'when_c' needs a value, not a list"
refuse "$(with_c sg_gate)" "bad.yaml:17:11: error: 'when_c' cannot name 'sg_gate': its prefix is the runtime's"
refuse "$(with_c SG_gate)" "error: 'when_c' cannot name 'SG_gate': its prefix is the runtime's"
refuse "$(with_c _gate)" "error: 'when_c' cannot name '_gate': names that start with '_' are the C implementation's"
refuse "$(with_c while)" "error: 'when_c' cannot name 'while': it is a C or C++ keyword"
refuse "$(with_c bool)" "error: 'when_c' cannot name 'bool': it is a C or C++ keyword or a name the runtime's headers define"
refuse "$(with_c class)" "error: 'when_c' cannot name 'class': it is a C or C++ keyword"
refuse "$(with_c gate_t)" "error: 'when_c' cannot name 'gate_t': names that end in '_t' are types"
refuse "$(with_c main)" "error: 'when_c' cannot name 'main': it is the program's entry point"
# ... and nothing it would meet in the generated files, or with which it makes no sense: an
# argument's C name (it would hide the function), the names generated for an op, a `when`
# that no point passes (it would never be called)
refuse "$(with_c weight)" \
    "bad.yaml:17:11: error: 'when_c' names 'weight', the C name an argument of aten::_fused_rms_norm may have ('weight')"
refuse "$(with_c arg_eps_)" "bad.yaml:17:11: error: 'when_c' names 'arg_eps_', the C name an argument"
refuse "$(with_c aten__fused_rms_norm_gate)" \
    "bad.yaml:17:11: error: 'when_c' names 'aten__fused_rms_norm_gate', among the names the generated code declares for aten::_fused_rms_norm (aten__fused_rms_norm, aten__fused_rms_norm_op, ...)"
refuse "$(with_c rms_gate)"'; s/input.dtype == dtype \&\&/N > 4096 \&\& input.dtype == dtype \&\&/' \
    "bad.yaml:17:11: error: 'when_c' names 'rms_gate', which no call would reach: 'when' is false at every point of the grid"
sed 's/input.dtype == dtype \&\&/N > 1024 \&\& input.dtype == dtype \&\&/' wc.yaml >wc2.yaml
t 0 --dsl wc2.yaml --dsl-plan plan.json ops.yaml # false at some points only
# one function, one prototype: a declaration of an op with other parameters cannot share it;
# another declaration of the same op can
sed 's/^  outputs:/  when_c: rms_gate\n  outputs:/' "$here/dsl/hostile.yaml" | sed '/^ *when_c: hostile_gate$/d' >hwc.yaml
t 1 --dsl wc.yaml --dsl hwc.yaml --dsl-plan plan.json ops.yaml
case $err in *"hwc.yaml:19:11: error: 'when_c' names 'rms_gate', the when_c of 'rms_norm_triton' (wc.yaml:17), whose op aten::_fused_rms_norm takes other parameters than my::hostile: one C function has one signature"*) ;;
*) fail "one when_c over two signatures: $err" ;; esac
sed -e 's/^- name: rms_norm_triton$/- name: rms_other/' -e 's/N: \[1024, 2048\]/N: [4096]/' wc.yaml >wc3.yaml
t 0 --dsl wc.yaml --dsl wc3.yaml --dsl-plan plan.json ops.yaml
# an op that cannot take one
refuse 's/aten::_fused_rms_norm/aten::add.Tensor/' \
    "bad.yaml:13:5: error: unknown name 'input': not an argument of aten::add.Tensor or a grid variable"
refuse 's/aten::_fused_rms_norm/aten::abs_/' "bad.yaml:2:7: error: 'aten::abs_' cannot take a DSL kernel"
# two declarations of one name; two artifacts of one prefix (across files)
cat "$base" "$base" >twice.yaml
t 1 --dsl twice.yaml --dsl-plan plan.json ops.yaml
case $err in *"twice.yaml:31:9: error: a DSL declaration named 'rms_norm_triton' exists already (twice.yaml:1)"*) ;;
*) fail "two declarations of one name: $err" ;; esac
# a negative grid value spells 'm' in a prefix; an empty grid is one point
sed 's/N: \[1024, 2048\]/N: [-1]/' "$base" >neg.yaml
t 0 --dsl neg.yaml --dsl-plan plan.json ops.yaml
grep -q '"prefix": "rms_norm_triton__float32_m1__sm90"' plan.json || fail "a negative value's prefix"
cat >clash.yaml <<'YAML'
- name: rms_norm_triton__float32_m1
  op: aten::_fused_rms_norm
  key: CUDA
  dsl: triton
  compiler: triton==3.6.0
  source: triton/rms_norm.py
  kernel: rms_norm_fwd
  archs: [sm_90]
  grid: {}
  when: input.contiguous
  outputs: [{like: input}, {like: input}]
  launch:
    grid: [1, 1, 1]
    num_warps: 4
    num_stages: 2
    args: [[x, "*fp32", input]]
YAML
t 0 --dsl clash.yaml --dsl-plan plan.json ops.yaml
grep -q '"prefix": "rms_norm_triton__float32_m1__sm90"' plan.json || fail "an empty grid's prefix"
t 1 --dsl neg.yaml --dsl clash.yaml --dsl-plan plan.json ops.yaml
case $err in *"clash.yaml:1:3: error: two artifacts have the prefix 'rms_norm_triton__float32_m1__sm90' (the other is of 'rms_norm_triton', neg.yaml:1)"*) ;;
*) fail "two artifacts of one prefix: $err" ;; esac
# an argument named like an output
cat >outarg.yaml <<'YAML'
- name: outarg
  op: my::outarg
  key: CUDA
  dsl: triton
  compiler: triton==3.6.0
  source: triton/rms_norm.py
  kernel: rms_norm_fwd
  archs: [sm_90]
  grid: {}
  when: out0.contiguous
  outputs: [{like: out0}]
  launch: {grid: [1, 1, 1], num_warps: 4, num_stages: 2, args: [[x, "*fp32", out0]]}
YAML
t 1 --dsl outarg.yaml --dsl-plan plan.json ops.yaml
case $err in *"outarg.yaml:11:12: error: my::outarg has an argument named 'out0', which would hide an output's name"*) ;;
*) fail "an argument named out0: $err" ;; esac
# files: missing, not YAML, entries that are not mappings
t 1 --dsl missing.yaml --dsl-plan plan.json ops.yaml
case $err in *"schemagen: error: cannot read 'missing.yaml': No such file or directory"*) ;; *) fail "a missing declaration file: $err" ;; esac
printf -- '- name: [unclosed\n' >broken.yaml
t 1 --dsl broken.yaml --dsl-plan plan.json ops.yaml
case $err in *"broken.yaml:2:1: error: invalid YAML"*) ;; *) fail "broken YAML: $err" ;; esac
printf -- '- just a string\n' >scalar.yaml
t 1 --dsl scalar.yaml --dsl-plan plan.json ops.yaml
case $err in *"scalar.yaml:1:3: error: a DSL declaration is a mapping (name: ..., op: ...), not a scalar"*) ;;
*) fail "a scalar entry: $err" ;; esac
# usage
t 2 --dsl-plan plan.json ops.yaml
case $err in *"--dsl-plan and --dsl-artifacts need --dsl FILE"*) ;; *) fail "usage: $err" ;; esac
t 2 --dsl decl.yaml -o gen ops.yaml
case $err in *"--dsl with -o needs --dsl-artifacts DIR"*) ;; *) fail "usage: $err" ;; esac

sg_test_done "all checks passed"
