#!/usr/bin/env bash
# derivatives.sh: derivatives.yaml read against the schemas (--derivatives, docs/autograd.md):
# PyTorch's file matched to its own schemas and to ours, --emit=derivatives, and each refusal
# located (file:line:col and what).
#
#   bash tests/derivatives.sh SCHEMAGEN [CORPUS_DIR]
set -uo pipefail

# shellcheck source=SCRIPTDIR/sg_test.bash
. "$(dirname "${BASH_SOURCE[0]}")/sg_test.bash"
sg_test_init derivatives "$@"
if [ -n "$corpus" ] && [ -d "$corpus" ]; then corpus=$(cd "$corpus" && pwd); fi
cd "$tmp" || exit 1

cat >ops.yaml <<'YAML'
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
- func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
- func: sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor, Tensor)
- func: my_ns::foo(Tensor self) -> Tensor
YAML
cat >base.yaml <<'YAML'
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: mul_tensor_backward(grad, other, self.scalar_type())
  other: mul_tensor_backward(grad, self, other.scalar_type())
  result: other_t * self_p + self_t * other_p

- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)
  values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)
  output_differentiability: [True, False]

- name: sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor, Tensor)
  dispatch:
    Default:
      self: value_selecting_reduction_backward_symint(grad, dim, result1, self.sym_sizes(), true)
      result0: gather_with_keepdimed_indices(self_t, dim, result1, true)
    AutogradNestedTensor:
      self: sort_backward_nested(grad, self)
  output_differentiability: [True, False]

- name: cos(Tensor self) -> Tensor
  self: grad * -self.sin().conj()
YAML

# refuse SED_SCRIPT MESSAGE...: base.yaml edited by SED_SCRIPT is refused (exit 1) with each
# MESSAGE, and nothing is printed on standard output.
refuse() {
    local script=$1
    shift
    sed "$script" base.yaml >bad.yaml
    t 1 --derivatives bad.yaml --emit=derivatives ops.yaml
    for m in "$@"; do
        case $err in *"$m"*) ;; *) fail "'$script': no '$m' in: $err" ;; esac
    done
    [ -z "$out" ] || fail "'$script': printed $out"
}

t 0 --derivatives base.yaml --emit=derivatives ops.yaml
# (the helpers these formulas call are not among these schemas: listed, not translated)
want="aten::mul.Tensor  (base.yaml:1)
  backward self: mul_tensor_backward(grad, other, self.scalar_type())
    not translated: no op or helper named 'mul_tensor_backward', at 'mul_tensor_backward(grad'
  backward other: mul_tensor_backward(grad, self, other.scalar_type())
    not translated: no op or helper named 'mul_tensor_backward', at 'mul_tensor_backward(grad'
  forward result: other_t * self_p + self_t * other_p
aten::max.dim  (base.yaml:6)
  backward self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)
    not translated: no op or helper named 'value_selecting_reduction_backward', at 'value_selecting_reductio'
  forward values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)
  output_differentiability true, false
aten::sort  (base.yaml:11)
  backward self: value_selecting_reduction_backward_symint(grad, dim, result1, self.sym_sizes(), true)
    not translated: no op or helper named 'value_selecting_reduction_backward', at 'value_selecting_reductio'
  forward result0: gather_with_keepdimed_indices(self_t, dim, result1, true)
  output_differentiability true, false
4 entries of base.yaml: 3 for ops of the schemas, 1 for other ops (skipped)
4 backward formulas: 0 translated, 4 not"
[ "$out" = "$want" ] || fail "--emit=derivatives: $out"
# formatting aside, the schemas match (PyTorch matches the text; the canonical forms agree)
sed 's/^- name: mul.Tensor(Tensor self, Tensor other) -> Tensor/- name: "mul.Tensor(Tensor  self,Tensor other)  ->  Tensor"/' \
    base.yaml >spaced.yaml
t 0 --derivatives spaced.yaml --emit=derivatives ops.yaml
case $out in *"aten::mul.Tensor  (spaced.yaml:1)"*) ;; *) fail "a spaced schema: $out" ;; esac
# inputs marked non_differentiable; a key naming two inputs
sed 's/^  other: mul_tensor_backward.*/  other: non_differentiable/' base.yaml >nd.yaml
t 0 --derivatives nd.yaml --emit=derivatives ops.yaml
case $out in *"aten::mul.Tensor  (nd.yaml:1)
  backward self: mul_tensor_backward(grad, other, self.scalar_type())
    not translated: no op or helper named 'mul_tensor_backward', at 'mul_tensor_backward(grad'
  forward result: other_t * self_p + self_t * other_p
  non_differentiable other"*) ;; *) fail "non_differentiable: $out" ;; esac
sed -e '/^  other: mul_tensor_backward/d' -e 's/^  self: mul_tensor_backward(grad, other,/  self, other: both(grad, other,/' \
    base.yaml >two.yaml
t 0 --derivatives two.yaml --emit=derivatives ops.yaml
case $out in *"  backward self, other: both(grad, other, self.scalar_type())"*) ;;
*) fail "one key for two inputs: $out" ;; esac

# formulas typed against the schemas: each name bound (grad, inputs, results), each call and
# C++ operator resolved to an op and overload (defaults as _), a helper op of the autograd
# namespace found like aten's; what cannot be resolved listed with where, not an error
cat >typed_ops.yaml <<'YAML'
- func: neg(Tensor self) -> Tensor
- func: sin(Tensor self) -> Tensor
- func: reciprocal(Tensor self) -> Tensor
- func: mul.Scalar(Tensor self, Scalar other) -> Tensor
- func: rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
- func: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
- func: zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: zeros_like
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
- func: autograd::maybe_multiply(Tensor t, Scalar s) -> Tensor
YAML
typed() { # FORMULA EXPECTED: the formula for mul.Tensor's self, and its line after "as " or
    # "not translated: "
    printf -- '- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: "%s"\n' "$1" >typed.yaml
    t 0 --derivatives typed.yaml --emit=derivatives ops.yaml typed_ops.yaml
    case $out in *"
    $2
"*) ;; *) fail "'$1': no '$2' in: $out" ;; esac
}
typed 'grad * -self.sin()' 'as aten::mul.Tensor(grads[0], aten::neg(aten::sin(self)))'
typed 'grad * 2' 'as aten::mul.Scalar(grads[0], 2)'
typed '2 * grad' 'as aten::mul.Scalar(grads[0], 2)'
typed '1 - grad' 'as aten::rsub.Scalar(grads[0], 1, _)'
typed '2.5 / other' 'as aten::mul.Scalar(aten::reciprocal(other), 2.5)'
typed 'maybe_multiply(grad, 2)' 'as autograd::maybe_multiply(grads[0], 2)'
typed 'grad.sum(1, true)' 'as aten::sum.dim_IntList(grads[0], 1, true, _)'
typed 'grad.expand_symint({ self.sym_size(0), 2 })' \
    'as aten::expand(grads[0], {self.sym_size(0), 2}, _)'
typed 'at::zeros_like(grad, grad.options())' \
    'as aten::zeros_like(grads[0], grads[0].options(), _, _, _, _)'
# zeros_like of an input is zeros of its sizes and options (PyTorch's TypeAndSize: the node
# keeps the input's metadata, not the input), where the schemas have zeros
typed 'zeros_like(other)' 'as aten::zeros_like(other, _, _, _, _, _)'
cat >>typed_ops.yaml <<'YAML'
- func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: zeros
YAML
typed 'zeros_like(other)' 'as aten::zeros(other.sym_sizes(), other.options(), _, _, _)'
typed 'at::zeros_like(grad)' 'as aten::zeros_like(grads[0], _, _, _, _, _)'
typed 'self.dim() > 1 ? grad * other : Tensor()' \
    'as ((self.dim() > 1) ? aten::mul.Tensor(grads[0], other) : undefined)'
typed 'result * grad' 'as aten::mul.Tensor(result0, grads[0])'
typed 'mystery(grad)' "not translated: no op or helper named 'mystery', at 'mystery(grad)'"
typed 'grad * sum(1.5)' "not translated: no overload of 'sum' takes (float), at 'sum(1.5)'"
typed 'grad.sum(1.5)' "not translated: no overload of 'sum' takes (tensor, float), at 'grad.sum(1.5)'"
typed 'grad + self.dim()' "not translated: no overload of 'add' takes (tensor, int), at 'grad + self.dim()'"
typed 'self.dim()' "not translated: the formula gives int, not a Tensor, at 'self.dim()'"
typed 'grad * unknown_name' "not translated: unknown name 'unknown_name', at 'unknown_name'"
typed 'grad * (1' \
    "not translated: expected ')' to close the parenthesis at 7, found the end of the formula, at 'grad * (1'"
typed 'grad.sizes' "not translated: the member 'sizes' (not a call), at 'grad.sizes'"
# C's math functions of a constant are computed (erf's 2.0 / sqrt(M_PI)); of anything else they
# are calls like any other; a tensor's device().is_cpu() is the tensor's own property
typed '2.0 / sqrt(M_PI) * grad' 'as aten::mul.Scalar(grads[0], (2.0 / 1.7724538509055159))'
typed 'grad * exp(1)' 'as aten::mul.Scalar(grads[0], 2.7182818284590451)'
typed 'grad * log(0)' "not translated: log of 0 is not a finite number, at 'log(0)'"
typed 'grad * sqrt(self.dim())' "not translated: no op or helper named 'sqrt', at 'sqrt(self.dim())'"
typed 'self.device().is_cpu() ? grad : grad.sin()' \
    'as (self.is_cpu() ? grads[0] : aten::sin(grads[0]))'
typed 'grad.device().is_xpu() ? grad : -grad' 'as (grads[0].is_xpu() ? grads[0] : aten::neg(grads[0]))'
typed 'grad.device().is_gpu() ? grad : -grad' "not translated: '.is_gpu()' on device, at 'grad.device().is_gpu() ?'"

# text from the formulas reaches the generated C only as escaped string literals, never as a
# format: a reason that quotes '%' and a string with '"', '%' and '??=' (a trigraph)
printf -- '- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: "grad %% \\"%%n?\\""\n' >hostile.yaml
printf -- '  other: "grad.div(grad, \\"%%s??=\\")"\n' >>hostile.yaml
printf -- '- func: div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor\n' >div.yaml
t 0 --lib hostile -o gen_hostile ops.yaml div.yaml hostile.yaml
grep -qF 'aten_div_Tensor_mode(grads[0], grads[0], "%s?\?=", &sg_t[0]);' gen_hostile/hostile_autograd.c ||
    fail "the string is not escaped: $(grep div_Tensor_mode gen_hostile/hostile_autograd.c)"
grep -qF 'sg_error(SG_EUNSUPPORTED, "%s", "MulBackward0: the derivative of aten::mul.Tensor for '"'"'self'"'"' is not translated: '"'"'%'"'"' between tensor and str");' \
    gen_hostile/hostile_autograd.c || fail "the reason is not one escaped argument: $(grep sg_error gen_hostile/hostile_autograd.c)"
sg_test_compile gen_hostile gen_hostile/hostile_autograd.c

# ops with a Tensor[] input (one edge per element, the elements' sizes and dtypes kept as int
# lists) or a Tensor[] result (one node input per piece, the formulas reading grads as a
# Tensor?[]); an entry that is all not_implemented for an op with a CompositeImplicitAutograd
# kernel (here: no dispatch table) gets no Autograd kernel (its decomposition is differentiated)
cat >list_ops.yaml <<'YAML'
- func: cat(Tensor[] tensors, int dim=0) -> Tensor
- func: stack(Tensor[] tensors, int dim=0) -> Tensor
- func: split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
- func: chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
- func: lerp.Scalar(Tensor self, Tensor[] end, Scalar weight) -> Tensor
- func: autograd::cat_tensors_backward(Tensor grad, SymInt[] sizes, int[] dtypes, int dim) -> Tensor[]
- func: autograd::split_backward(Tensor?[] grads, SymInt split_size, int dim, SymInt[] sym_sizes, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
YAML
cat >list_d.yaml <<'YAML'
- name: cat(Tensor[] tensors, int dim=0) -> Tensor
  tensors: cat_tensors_backward(grad, to_args_sizes_symint(tensors), to_args_scalartypes(tensors), dim)

- name: stack(Tensor[] tensors, int dim=0) -> Tensor
  tensors: grad

- name: split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
  self: split_backward(grads, split_size, dim, self.sym_sizes(), self.options())

- name: chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]
  dispatch:
    Default:
      self: not_implemented("chunk")

- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: to_args_sizes(self)

- name: lerp.Scalar(Tensor self, Tensor[] end, Scalar weight) -> Tensor
  self: grad
  end: cat_tensors_backward(grad, to_args_sizes(end), to_args_scalartypes(end), 0)
YAML
t 0 --derivatives list_d.yaml --emit=derivatives list_ops.yaml
for want in \
    "    as autograd::cat_tensors_backward(grads[0], to_args_sizes(tensors), to_args_scalartypes(tensors), dim)" \
    "    as autograd::split_backward(grads, split_size, dim, self.sym_sizes(), self.options(), _, _, _)" \
    "    not translated: the formula gives tensor, not a Tensor[], at 'grad'" \
    "    not translated: 'to_args_sizes' of something other than a Tensor[] input, at 'self)'"; do
    case $out in *"$want"*) ;; *) fail "Tensor[] formulas: no '$want' in: $out" ;; esac
done
t 0 --lib lists -o gen_lists list_ops.yaml list_d.yaml
c=gen_lists/lists_autograd.c
grep -q 'no node (' "$c" && fail "a Tensor[] op got a refusing kernel: $(grep 'no node (' "$c")"
grep -qF 'st = sg_node_new(sizeof(sg_agn_aten_cat), "CatBackward0", sg_nin, sg_ne,' "$c" ||
    fail "cat's node: edges not counted at run time"
grep -qF 'st = sg_node_set_next(sg_n, sg_e_tensors + (uint32_t)i, tensors.items[i]);' "$c" ||
    fail "cat's node: no edge per element"
grep -qF 'st = sg_agh_list_facts(tensors, true, "CatBackward0", &n->v_tensors_sizes, &n->n_tensors_sizes);' \
    "$c" || fail "cat's node: the elements' sizes not kept"
grep -q 'sg_saved s_tensors' "$c" && fail "cat's node keeps the tensors"
grep -qF 'st = sg_agh_list_out(sg_l[0], sg_n, n->e_tensors, n->len_tensors, out);' "$c" ||
    fail "cat's backward: the list not given out per element"
grep -qF 'uint32_t sg_nin = (uint32_t)ret->len, sg_ne = 0;' "$c" ||
    fail "split's node: not one input per piece"
grep -qF 'st = autograd_split_backward((sg_tensor_list){grads, (int32_t)sg_n->nin},' "$c" ||
    fail "split's backward: grads not the pieces' gradients"
grep -q 'sg_agk_aten_chunk' "$c" && fail "chunk (decomposed) got an Autograd kernel"
grep -qF 'StackBackward0: the derivative of aten::stack for '"'"'tensors'"'"' is not translated' "$c" ||
    fail "stack's untranslated formula: no message"
# a Tensor beside a Tensor[] (a made-up lerp): its edge too is found at run time
grep -qF 'uint32_t sg_e_self = sg_ne++;' "$c" && grep -qF 'n->e_self = sg_e_self;' "$c" &&
    grep -qF 'sg_mask[0] = sg_n->next[n->e_self].node != NULL;' "$c" &&
    grep -qF 'out[n->e_self] = sg_tensor_retain(grads[0]);' "$c" ||
    fail "a Tensor beside a Tensor[]: its edge not kept in the node"
sg_test_compile gen_lists "$c"

# TensorGeometry(self) (as_strided's formula) stands for three parameters of the helper in a
# row: self's sizes, strides and storage offset, read off the saved self; elsewhere it is not
# translated
cat >geo_ops.yaml <<'YAML'
- func: as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
- func: autograd::as_strided_backward(Tensor grad, SymInt[] input_sizes, SymInt[] input_strides, SymInt input_storage_offset, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor
YAML
cat >geo_d.yaml <<'YAML'
- name: as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
  self: as_strided_backward(grad, TensorGeometry(self), size, stride, storage_offset)

- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: as_strided_backward(grad, TensorGeometry(self.dim()), {1}, {1}, 0)
  other: as_strided_backward(grad, self.sizes(), self.strides(), 0, {1}, {1}, TensorGeometry(self))
YAML
t 0 --derivatives geo_d.yaml --emit=derivatives geo_ops.yaml
for want in \
    "    as autograd::as_strided_backward(grads[0], TensorGeometry(self), _, _, size, stride, storage_offset)" \
    "    not translated: TensorGeometry takes a Tensor, not int, at 'self.dim()), {1}, {1}, 0'" \
    "    not translated: no overload of 'as_strided_backward' takes (tensor, int_list, int_list, int, int_list, int_list, TensorGeometry), at 'as_strided_backward(grad'"; do
    case $out in *"$want"*) ;; *) fail "TensorGeometry: no '$want' in: $out" ;; esac
done
t 0 --lib geo -o gen_geo geo_ops.yaml geo_d.yaml
c=gen_geo/geo_autograd.c
grep -qF 'st = autograd_as_strided_backward(grads[0], (sg_int_list){(a_self)->sizes, (a_self)->ndim}, (sg_int_list){(a_self)->strides, (a_self)->ndim}, (a_self)->offset, a_size, a_stride, a_storage_offset, &sg_t[0]);' \
    "$c" || fail "TensorGeometry: not self's sizes, strides and offset: $(grep as_strided_backward "$c")"
sg_test_compile gen_geo "$c"

# in-place and out= ops (docs/autograd.md, "In-place and out= ops"): mul_ records mul's node
# and saves self's value before the change; sigmoid_ saves self after it as the result; add_
# keeps only self's properties; mul.out refuses with PyTorch's message; neg_ (no formula)
# refuses under grad; relu_ (CompositeImplicitAutograd) gets no kernel; copy_ gets
# CopyBackwards; each bumps versions
cat >mut_ops.yaml <<'YAML'
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  dispatch:
    CPU: mul_cpu
- func: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  dispatch:
    CPU: mul__cpu
- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: mul_out_cpu
- func: sigmoid(Tensor self) -> Tensor
  dispatch:
    CPU: sigmoid_cpu
- func: sigmoid_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU: sigmoid__cpu
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  dispatch:
    CPU: add_cpu
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  dispatch:
    CPU: add__cpu
- func: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  dispatch:
    CPU: expand_cpu
- func: expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor
  tags: view_copy
  dispatch:
    CompositeExplicitAutograd: expand_copy
- func: neg_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU: neg__cpu
- func: relu(Tensor self) -> Tensor
  dispatch:
    CPU: relu_cpu
- func: relu_(Tensor(a!) self) -> Tensor(a!)
- func: copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
  dispatch:
    CPU: copy__cpu
YAML
cat >mut.yaml <<'YAML'
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self
- name: sigmoid(Tensor self) -> Tensor
  self: grad * result
- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: grad.expand(self.sizes())
  other: grad * alpha
- name: relu(Tensor self) -> Tensor
  self: grad * result
- name: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  self: grad
YAML
t 0 --lib mut -o gen_mut mut_ops.yaml mut.yaml
g=gen_mut/mut_autograd.c
# body OP: the generated Autograd kernel of OP (its C name), from its signature to its end
body() { sed -n "/^static sg_status sg_agk_$1(/,/^}/p" "$g"; }
has() { grep -qF -- "$2" <<<"$(body "$1")" || fail "$1's kernel has no '$2': $(body "$1")"; }
has aten_mul__Tensor 'sg_autograd_check_inplace(self, "aten::mul_.Tensor")'
has aten_mul__Tensor 'sg_autograd_check_inplace_shared(self, "aten::mul_.Tensor")'
has aten_mul__Tensor 'sg_node_new(sizeof(sg_agn_aten_mul_Tensor), "MulBackward0", 1, 2, sg_agb_aten_mul_Tensor'
# self's value before the change, where other's formula (the one that reads it) will run
has aten_mul__Tensor 'st = sg_saved_init_original(&n->s_self, sg_n->next[1].node ? self : NULL);'
has aten_mul_Tensor 'st = sg_saved_init(&n->s_other, sg_n->next[0].node ? other : NULL);'
has aten_mul__Tensor 'st = sg_autograd_rebase_history(self, sg_n);'
has aten_mul__Tensor 'sg_tensor_bump_version(self);'
# the edges are set before the op runs, the history rebased after it
[ "$(body aten_mul__Tensor | grep -n 'sg_node_set_next(sg_n, 0, self)' | cut -d: -f1)" -lt \
  "$(body aten_mul__Tensor | grep -n 'aten_mul__Tensor_redispatch' | tail -1 | cut -d: -f1)" ] ||
    fail "mul_: its edges are set after the op"
has aten_sigmoid_ 'st = sg_saved_init(&n->r0, self);'
body aten_sigmoid_ | grep -q 's_self' && fail "sigmoid_ saves self, which its formula does not read"
# a formula that reads only self.sizes(): its metadata, in place and not
has aten_add__Tensor 'st = sg_saved_init_meta(&n->s_self, self); /* its metadata only */'
has aten_add_Tensor 'st = sg_saved_init_meta(&n->s_self, self); /* its metadata only */'
has aten_mul_out 'return sg_error(SG_EINVAL, "%s", "mul(): functions with out=... arguments don'"'"'t support automatic differentiation, but one of the arguments requires grad.");'
has aten_mul_out 'sg_tensor_requires_grad(self) || sg_tensor_requires_grad(other) || sg_tensor_requires_grad(out)'
has aten_mul_out 'sg_tensor_bump_version(out);'
has aten_neg_ 'return sg_error(SG_EUNSUPPORTED, "%s: its gradient is not supported yet (%s)", "aten::neg_"'
has aten_neg_ 'sg_tensor_bump_version(self);'
grep -q 'sg_agk_aten_relu_(' "$g" && fail "relu_ (CompositeImplicitAutograd) has an Autograd kernel"
has aten_expand 'st = sg_autograd_mark_view(*ret, self);'
has aten_expand 'if (st == SG_OK && !sg_need && sg_tensor_requires_grad(self)) { /* a view made under no_grad */'
body aten_mul_Tensor | grep -q 'mark_view' && fail "mul's result is marked a view"
grep -q 'st = aten_sigmoid__register(sg_agh_keys\[i\], sg_agk_aten_sigmoid_, NULL);' "$g" ||
    fail "sigmoid_'s kernel is not registered"
# copy_ has no entry (PyTorch's is written by hand): CopyBackwards, src's edge given the gradient
has aten_copy_ 'st = sg_node_new(sizeof(sg_node), "CopyBackwards", 1, 2, sg_agb_aten_copy_, NULL, &sg_n);'
has aten_copy_ 'st = sg_autograd_rebase_history(self, sg_n);'
grep -qF 'if (st == SG_OK && sg_n->next[1].node) out[1] = sg_tensor_retain(grads[0]);' "$g" ||
    fail "CopyBackwards does not give src the gradient"
sg_test_compile gen_mut "$g"

# a helper op's kernel is named in C: a name that is no C identifier is refused
printf -- '- func: autograd::h(Tensor a) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: "x;y"\n' >badhelper.yaml
t 1 --emit=derivatives ops.yaml badhelper.yaml base.yaml
case $err in *"badhelper.yaml:3:32: error: the kernel of helper op autograd::h, 'x;y', is not a C identifier"*) ;;
*) fail "a helper kernel that is no C identifier: $err" ;; esac

# refusals, each located
refuse 's/^- name: mul.Tensor(Tensor self, Tensor other) -> Tensor/- name: mul.Tensor(Tensor self, Scalar other) -> Tensor/' \
    "bad.yaml:1:9: error: aten::mul.Tensor is 'mul.Tensor(Tensor self, Tensor other) -> Tensor' (ops.yaml:1), not this schema"
refuse 's/^- name: cos(Tensor self) -> Tensor/- name: cos(Tensor self -> Tensor/' \
    "bad.yaml:20:25: error: expected ',' or ')' after an argument, found '->'"
refuse 's/^  other: mul_tensor/  othr: mul_tensor/' \
    "bad.yaml:3:3: error: 'othr' is neither an input nor a result of aten::mul.Tensor"
refuse 's/^  self: value_selecting_reduction_backward_symint(grad, dim, indices/  self, values: f(grad, dim, indices/' \
    "bad.yaml:7:9: error: 'self, values' mixes inputs and results in one key"
refuse 's/^  output_differentiability: \[True, False\]$/  output_differentiability: [True]/' \
    "bad.yaml:9:29: error: 'output_differentiability' needs one entry per result (2), not another count"
refuse 's/^  other: mul_tensor_backward.*/  other: [a, b]/' \
    "bad.yaml:3:10: error: the formula of 'other' is a C++ expression (a string), not a list"
refuse 's/^  other: mul_tensor_backward.*/  self: again(grad)/' \
    "bad.yaml:3:3: error: 'self' has a formula already (line 2)"
refuse 's/^    AutogradNestedTensor:/    NestedTensor:/' \
    "bad.yaml:16:5: error: 'NestedTensor' is not an autograd key (Default, Autograd...)"
refuse 's/^- name: cos(Tensor self) -> Tensor/- self: grad/' \
    "bad.yaml:20:3: error: a derivatives entry needs 'name', its op's schema"
refuse '$a - just a string' "bad.yaml:22:3: error: a derivatives entry is a mapping (name: ..., self: ...), not a scalar"
refuse 's/^- name: cos(Tensor self) -> Tensor/- name: my_ns::foo(Tensor self) -> Tensor/' \
    "bad.yaml:20:9: error: derivatives.yaml names aten's ops, not my_ns's"
cat base.yaml base.yaml >bad.yaml
t 1 --derivatives bad.yaml --emit=derivatives ops.yaml
case $err in *"bad.yaml:22:9: error: a second entry for 'mul.Tensor(Tensor self, Tensor other) -> Tensor' (the first: line 1)"*) ;;
*) fail "a second entry: $err" ;; esac
t 1 --derivatives missing.yaml ops.yaml
case $err in *"schemagen: error: cannot read 'missing.yaml': No such file or directory"*) ;;
*) fail "a missing file: $err" ;; esac
t 1 --emit=derivatives ops.yaml
case $err in *"schemagen: error: --emit=derivatives: no derivatives file among the inputs (--derivatives FILE, or a derivatives.yaml given as FILE)"*) ;;
*) fail "no derivatives file: $err" ;; esac
# a derivatives file among the plain inputs is told by its entries (name:), as a tags file is,
# and read once the schemas are (schemagen schemas/*.yaml takes it along)
t 0 --emit=derivatives base.yaml ops.yaml
case $out in *"aten::mul.Tensor  (base.yaml:1)"*"4 entries of base.yaml: 3 for ops"*) ;;
*) fail "a derivatives file as FILE: $out" ;; esac
cp base.yaml again.yaml
t 1 --emit=derivatives base.yaml ops.yaml again.yaml
case $err in *"again.yaml:1:3: error: a second derivatives file (the first: base.yaml)"*) ;;
*) fail "two derivatives files: $err" ;; esac
t 1 --derivatives ops.yaml ops.yaml
case $err in *"schemagen: error: 'ops.yaml' was given with --derivatives but is no derivatives file (its entries are not 'name: SCHEMA')"*) ;;
*) fail "--derivatives with a schema file: $err" ;; esac

# the shipped schemas, derivatives included, as the README runs them
t 0 "$root"/schemas/*.yaml
t 0 --emit=derivatives "$root"/schemas/*.yaml
case $out in *"entries of $root/schemas/derivatives_core.yaml: "*) ;;
*) fail "schemas/*.yaml: the derivatives not read: $(echo "$out" | tail -2)" ;; esac
# the shipped extract (schemas/derivatives_core.yaml) belongs wholly to the shipped schemas;
# and where the corpus and python3 are, it is what schemas/extract.py makes of the corpus
# ops without a formula (gen/deriv_emit_gate.c): a CompositeImplicitAutograd op (no dispatch
# table) runs its decomposition where an input needs a gradient; a backend op gets a
# NotImplemented node; zeros_like (DONT_REQUIRE_DERIVATIVE) gets no kernel, an in-place op is
# left to the in-place rules, an op with a formula gets its own; a Tensor[] argument is refused
# up front
cat >gate_ops.yaml <<'YAML'
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
- func: reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
- func: view_copy(Tensor self, SymInt[] size) -> Tensor
  dispatch:
    CompositeExplicitAutogradNonFunctional: view_copy
- func: zeros_like(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: zeros_like
- func: abs_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU: abs_
- func: block_sum(Tensor[] tensors) -> Tensor
  dispatch:
    CPU: block_sum
YAML
cat >gate_d.yaml <<'YAML'
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self
YAML
t 0 --lib gate -o gen_gate gate_ops.yaml gate_d.yaml
c=gen_gate/gate_autograd.c
grep -qF '/* aten::reshape: CompositeImplicitAutograd, no formula: differentiated through its decomposition. */' "$c" ||
    fail "reshape: no decomposing kernel"
grep -qF 'sg_entry sg_e = sg_op_registered(aten_reshape_op, SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);' "$c" ||
    fail "reshape's kernel does not look up the decomposition"
grep -qF 'return aten_reshape_redispatch(ks & ~SG_KEYSET_AUTOGRAD, self, shape, ret);' "$c" ||
    fail "reshape's kernel does not go below autograd without a gradient to make"
grep -qF 'st = sg_autograd_not_implemented("aten::view_copy", sg_in, 1, sg_out, 1);' "$c" ||
    fail "view_copy: no NotImplemented node"
grep -qF 'aten::block_sum: an input requires grad, and the op has no derivative formula' "$c" ||
    fail "block_sum (a Tensor[] argument): not refused"
grep -q 'sg_agk_aten_zeros_like(' "$c" && fail "zeros_like got an Autograd kernel"
grep -q 'aten::abs_: no formula' "$c" && fail "abs_ (in place) got a NotImplemented kernel"
[ "$(grep -c 'static sg_status sg_agk_aten_mul_Tensor(' "$c")" = 1 ] ||
    fail "mul.Tensor: not exactly its formula's kernel"
sg_test_compile gen_gate "$c"

t 0 --derivatives "$root/schemas/derivatives_core.yaml" --emit=derivatives "$root/schemas/aten_core.yaml"
case $out in *" entries of $root/schemas/derivatives_core.yaml: "*" for ops of the schemas, 0 for other ops (skipped)"*) ;;
*) fail "schemas/derivatives_core.yaml has entries of other ops: $(echo "$out" | tail -2)" ;; esac
if [ -n "$corpus" ] && [ -f "$corpus/derivatives.yaml" ] && command -v python3 >/dev/null; then
    python3 "$root/schemas/extract.py" --derivatives "$corpus" >extract.yaml ||
        fail "schemas/extract.py --derivatives failed"
    cmp -s extract.yaml "$root/schemas/derivatives_core.yaml" ||
        fail "schemas/derivatives_core.yaml is not what schemas/extract.py --derivatives makes"
    python3 "$root/schemas/extract.py" "$corpus" >extract_core.yaml
    cmp -s extract_core.yaml "$root/schemas/aten_core.yaml" ||
        fail "schemas/aten_core.yaml is not what schemas/extract.py makes"
fi

# PyTorch's own file: against its own schemas every entry but one matches (torchgen makes that
# one's op, rrelu_with_noise_functional, itself); against ours, the aten_core entries
if [ -n "$corpus" ] && [ -f "$corpus/derivatives.yaml" ]; then
    t 0 --derivatives "$corpus/derivatives.yaml" --emit=derivatives "$corpus/native_functions.yaml" \
        "$corpus/tags.yaml"
    case $out in *"678 entries of $corpus/derivatives.yaml: 677 for ops of the schemas, 1 for other ops (skipped)
"*" backward formulas: "*) ;;
    *) fail "the corpus against its own schemas: $(echo "$out" | tail -1) $err" ;; esac
    t 0 --derivatives "$corpus/derivatives.yaml" --emit=derivatives "$root/schemas/aten_core.yaml"
    n=$(echo "$out" | grep -c '^aten::')
    [ "$n" -gt 100 ] || fail "only $n entries matched schemas/aten_core.yaml"
    case $out in *"aten::mm  ("*"  backward self: mm_mat1_backward("*) ;; *) fail "mm's formula: $out" ;; esac
else
    echo "derivatives: no corpus (derivatives.yaml): its checks skipped"
fi

sg_test_done "all checks passed"
