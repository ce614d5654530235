/* structured.c: the Meta kernels of the structured out ops. A structured op's shape logic is
 * its meta function, which the CPU kernels set (aten_X_set_meta) and the generated functional
 * and in-place variants call; the Meta out kernel is that function and an out= resized to its
 * result, so every variant of the op runs on Meta from one shape function. */
#include "meta.h"

#include <stdio.h>

/* X1(op, exact, (params but out), (args)): one out= tensor; X2: two (values, indices).
 * exact: whether the CPU's out kernel wants the result's dtype exactly (else one it casts to).
 * The structured ops whose CPU out kernels check out= by rules of their own (the matrix
 * products, sum, prod, cumsum, amax, amin) have Meta out kernels in ops.c that call those
 * checks. */
#define SG_META_STRUCTURED(X1, X2)                                                                 \
    X1(aten__log_softmax_out, true, (sg_tensor *self, int64_t dim, bool half_to_float),            \
       (self, dim, half_to_float))                                                                 \
    X1(aten__softmax_out, true, (sg_tensor *self, int64_t dim, bool half_to_float),                \
       (self, dim, half_to_float))                                                                 \
    X1(aten_add_out, false, (sg_tensor *self, sg_tensor *other, sg_scalar alpha),                  \
       (self, other, alpha))                                                                       \
    X1(aten_argmax_out, true, (sg_tensor *self, const int64_t *dim, bool keepdim),                 \
       (self, dim, keepdim))                                                                       \
    X1(aten_argmin_out, true, (sg_tensor *self, const int64_t *dim, bool keepdim),                 \
       (self, dim, keepdim))                                                                       \
    X1(aten_cat_out, false, (sg_tensor_list tensors, int64_t dim), (tensors, dim))                 \
    X1(aten_ceil_out, true, (sg_tensor *self), (self))                                            \
    X1(aten_clamp_Tensor_out, false, (sg_tensor *self, sg_tensor *min, sg_tensor *max),            \
       (self, min, max))                                                                           \
    X1(aten_clamp_max_Tensor_out, false, (sg_tensor *self, sg_tensor *max), (self, max))           \
    X1(aten_clamp_max_out, true, (sg_tensor *self, sg_scalar max), (self, max))                   \
    X1(aten_clamp_min_Tensor_out, false, (sg_tensor *self, sg_tensor *min), (self, min))           \
    X1(aten_clamp_min_out, true, (sg_tensor *self, sg_scalar min), (self, min))                   \
    X1(aten_clamp_out, true, (sg_tensor *self, const sg_scalar *min, const sg_scalar *max),        \
       (self, min, max))                                                                           \
    X1(aten_cos_out, false, (sg_tensor *self), (self))                                             \
    X1(aten_div_out, false, (sg_tensor *self, sg_tensor *other), (self, other))                    \
    X1(aten_div_out_mode, false, (sg_tensor *self, sg_tensor *other, const char *rounding_mode),   \
       (self, other, rounding_mode))                                                               \
    X1(aten_eq_Scalar_out, false, (sg_tensor *self, sg_scalar other), (self, other))               \
    X1(aten_eq_Tensor_out, false, (sg_tensor *self, sg_tensor *other), (self, other))              \
    X1(aten_erf_out, false, (sg_tensor *self), (self))                                             \
    X1(aten_exp_out, false, (sg_tensor *self), (self))                                             \
    X1(aten_floor_out, true, (sg_tensor *self), (self))                                           \
    X1(aten_gather_out, true, (sg_tensor *self, int64_t dim, sg_tensor *index, bool sparse_grad),  \
       (self, dim, index, sparse_grad))                                                            \
    X1(aten_ge_Scalar_out, false, (sg_tensor *self, sg_scalar other), (self, other))               \
    X1(aten_ge_Tensor_out, false, (sg_tensor *self, sg_tensor *other), (self, other))              \
    X1(aten_gelu_out, true, (sg_tensor *self, const char *approximate), (self, approximate))      \
    X1(aten_gt_Scalar_out, false, (sg_tensor *self, sg_scalar other), (self, other))               \
    X1(aten_gt_Tensor_out, false, (sg_tensor *self, sg_tensor *other), (self, other))              \
    X1(aten_le_Scalar_out, false, (sg_tensor *self, sg_scalar other), (self, other))               \
    X1(aten_le_Tensor_out, false, (sg_tensor *self, sg_tensor *other), (self, other))              \
    X1(aten_log_out, false, (sg_tensor *self), (self))                                             \
    X1(aten_lt_Scalar_out, false, (sg_tensor *self, sg_scalar other), (self, other))               \
    X1(aten_lt_Tensor_out, false, (sg_tensor *self, sg_tensor *other), (self, other))              \
    X2(aten_max_dim_max, true, (sg_tensor *self, int64_t dim, bool keepdim),                       \
       (self, dim, keepdim))                                                                       \
    X1(aten_maximum_out, false, (sg_tensor *self, sg_tensor *other), (self, other))                \
    X1(aten_mean_out, false,                                                                       \
       (sg_tensor *self, const sg_int_list *dim, bool keepdim, const sg_dtype *dtype),             \
       (self, dim, keepdim, dtype))                                                                \
    X2(aten_min_dim_min, true, (sg_tensor *self, int64_t dim, bool keepdim),                       \
       (self, dim, keepdim))                                                                       \
    X1(aten_minimum_out, false, (sg_tensor *self, sg_tensor *other), (self, other))                \
    X1(aten_mul_out, false, (sg_tensor *self, sg_tensor *other), (self, other))                    \
    X1(aten_ne_Scalar_out, false, (sg_tensor *self, sg_scalar other), (self, other))               \
    X1(aten_ne_Tensor_out, false, (sg_tensor *self, sg_tensor *other), (self, other))              \
    X1(aten_neg_out, true, (sg_tensor *self), (self))                                             \
    X1(aten_pow_Scalar_out, false, (sg_scalar self, sg_tensor *exponent), (self, exponent))        \
    X1(aten_pow_Tensor_Scalar_out, false, (sg_tensor *self, sg_scalar exponent),                   \
       (self, exponent))                                                                           \
    X1(aten_pow_Tensor_Tensor_out, false, (sg_tensor *self, sg_tensor *exponent),                  \
       (self, exponent))                                                                           \
    X1(aten_reciprocal_out, false, (sg_tensor *self), (self))                                      \
    X1(aten_round_decimals_out, true, (sg_tensor *self, int64_t decimals), (self, decimals))      \
    X1(aten_round_out, true, (sg_tensor *self), (self))                                           \
    X1(aten_rsqrt_out, false, (sg_tensor *self), (self))                                           \
    X1(aten_scatter_add_out, true,                                                                 \
       (sg_tensor *self, int64_t dim, sg_tensor *index, sg_tensor *src),                           \
       (self, dim, index, src))                                                                    \
    X1(aten_scatter_reduce_out, true,                                                              \
       (sg_tensor *self, int64_t dim, sg_tensor *index, sg_tensor *src, const char *reduce),       \
       (self, dim, index, src, reduce))                                                            \
    X1(aten_scatter_src_out, true,                                                                 \
       (sg_tensor *self, int64_t dim, sg_tensor *index, sg_tensor *src),                           \
       (self, dim, index, src))                                                                    \
    X1(aten_scatter_value_out, true,                                                               \
       (sg_tensor *self, int64_t dim, sg_tensor *index, sg_scalar value),                          \
       (self, dim, index, value))                                                                  \
    X1(aten_scatter_value_reduce_out, true,                                                        \
       (sg_tensor *self, int64_t dim, sg_tensor *index, sg_scalar value, const char *reduce),      \
       (self, dim, index, value, reduce))                                                          \
    X1(aten_sigmoid_out, false, (sg_tensor *self), (self))                                         \
    X1(aten_sign_out, true, (sg_tensor *self), (self))                                            \
    X1(aten_silu_out, true, (sg_tensor *self), (self))                                            \
    X1(aten_sin_out, false, (sg_tensor *self), (self))                                             \
    X2(aten_sort_values_stable, true,                                                              \
       (sg_tensor *self, const bool *stable, int64_t dim, bool descending),                        \
       (self, stable, dim, descending))                                                            \
    X1(aten_sqrt_out, false, (sg_tensor *self), (self))                                            \
    X1(aten_sub_out, false, (sg_tensor *self, sg_tensor *other, sg_scalar alpha),                  \
       (self, other, alpha))                                                                       \
    X1(aten_tanh_out, false, (sg_tensor *self), (self))                                            \
    X2(aten_topk_values, true,                                                                     \
       (sg_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted),                       \
       (self, k, dim, largest, sorted))                                                            \
    X1(aten_tril_out, true, (sg_tensor *self, int64_t diagonal), (self, diagonal))                 \
    X1(aten_triu_out, true, (sg_tensor *self, int64_t diagonal), (self, diagonal))                 \
    /* end */

#define SG_UNPAREN(...) __VA_ARGS__

/* "aten::add.out", as errors name ops */
static const char *label(const sg_op *op, char *buf, size_t n) {
    const char *ov = sg_op_overload(op);
    snprintf(buf, n, "%s%s%s", sg_op_name(op), ov && *ov ? "." : "", ov ? ov : "");
    return buf;
}

static sg_status no_meta_fn(const sg_op *op) {
    char b[128];
    return sg_error(SG_EUNSUPPORTED, "%s: its meta function is not set (sg_aten_cpu_init sets it)",
                    label(op, b, sizeof b));
}

static sg_status out_ready(const sg_op *op, sg_tensor *out, const sg_meta *m, bool exact) {
    char b[128];
    return sg_meta_out_ready(label(op, b, sizeof b), out, m, exact);
}

#define META_K1(op, exact, P, A)                                                            \
    static sg_status op##_meta_k(sg_keyset ks, SG_UNPAREN P, sg_tensor *out, sg_tensor **ret) { \
        (void)ks;                                                                           \
        *ret = NULL;                                                                        \
        op##_meta_fn mf = __atomic_load_n(&op##_meta, __ATOMIC_ACQUIRE);                    \
        sg_meta      m[1] = {{.strided = false}};                                           \
        sg_status    st = mf ? mf(SG_UNPAREN A, m) : no_meta_fn(op##_op);                   \
        if (!st) st = out_ready(op##_op, out, &m[0], exact);                                \
        if (!st) *ret = sg_tensor_retain(out);                                              \
        return st;                                                                          \
    }
#define META_K2(op, exact, P, A)                                                            \
    static sg_status op##_meta_k(sg_keyset ks, SG_UNPAREN P, sg_tensor *o0, sg_tensor *o1,  \
                                 sg_tensor **r0, sg_tensor **r1) {                          \
        (void)ks;                                                                           \
        *r0 = *r1 = NULL;                                                                   \
        op##_meta_fn mf = __atomic_load_n(&op##_meta, __ATOMIC_ACQUIRE);                    \
        sg_meta      m[2] = {{.strided = false}, {.strided = false}};                       \
        sg_status    st = mf ? mf(SG_UNPAREN A, m) : no_meta_fn(op##_op);                   \
        if (!st) st = out_ready(op##_op, o0, &m[0], exact);                                 \
        if (!st) st = out_ready(op##_op, o1, &m[1], exact);                                 \
        if (!st) *r0 = sg_tensor_retain(o0), *r1 = sg_tensor_retain(o1);                    \
        return st;                                                                          \
    }
SG_META_STRUCTURED(META_K1, META_K2)

#define META_REG(op, exact, P, A) SG_REG_META(op, op##_meta_k);
sg_status sg_meta_register_structured(void) {
    SG_META_STRUCTURED(META_REG, META_REG)
    return SG_OK;
}
