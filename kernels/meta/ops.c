/* ops.c: the Meta kernels of the ops that are not structured and whose CPU kernels do more
 * than iterate (those are registered for Meta beside the CPU, SG_REG_CPU_META). Each runs its
 * CPU kernel's checks and shape function (kernels/cpu/sg_*_shape.h) and allocates the results
 * on Meta. */
#include "meta.h"
#include "sg_mm_shape.h"
#include "sg_norm_shape.h"
#include "sg_reduce_shape.h"

#include <stdlib.h>

static sg_dtype dt(const sg_tensor *t) { return (sg_dtype)t->dtype; }

/* A new contiguous tensor on t's device. */
static sg_status like(const int64_t *sizes, int32_t n, sg_dtype dtype, const sg_tensor *t,
                      sg_tensor **out) {
    return sg_tensor_empty(sizes, n, dtype, t->device, out);
}

/* ---- casts: Meta tensors hold no data, so a conversion only checks the shapes ------------ */

static sg_status meta_cast_copy(sg_tensor *dst, const sg_tensor *src) {
    char    a[160], b[160];
    int64_t shape[SG_MAX_DIMS];
    int32_t n;
    bool    ok = sg_broadcast_shape(dst->sizes, dst->ndim, src->sizes, src->ndim, shape, &n) &&
              n == dst->ndim;
    for (int32_t i = 0; ok && i < n; i++) ok = shape[i] == dst->sizes[i];
    if (!ok)
        return sg_error(SG_EINVAL, "copy_: the shape %s cannot be broadcast to %s",
                        sg_shape_str(src->sizes, src->ndim, a, sizeof a),
                        sg_shape_str(dst->sizes, dst->ndim, b, sizeof b));
    return SG_OK;
}

/* ---- reductions ------------------------------------------------------------------------- */

static sg_status prod_all(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype, sg_tensor **ret) {
    (void)ks;
    sg_rdims   r;
    sg_tensor *out = NULL;
    sg_status  st = sg_reduce_dims_list(self, NULL, &r);
    if (!st)
        st = sg_reduce_new_result(self, &r, false,
                                  dtype ? *dtype : sg_reduce_int_to_long(dt(self)), self->device,
                                  &out);
    return sg_reduce_give_new(st, out, ret);
}

#define ALL_EXTREMUM(NAME)                                                                     \
    static sg_status NAME##_unary_out(sg_keyset ks, sg_tensor *self, sg_tensor *out,           \
                                      sg_tensor **ret) {                                       \
        (void)ks;                                                                              \
        sg_rdims  r;                                                                           \
        sg_status st = sg_reduce_all_args(#NAME "()", self, out, &r);                          \
        if (!st) st = sg_reduce_no_complex(#NAME, self);                                       \
        if (!st) st = sg_reduce_shape_out(out, self, &r, false);                               \
        return sg_reduce_give(st, out, ret);                                                   \
    }                                                                                          \
    static sg_status NAME##_all(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {              \
        sg_tensor *out = NULL, *r = NULL;                                                      \
        sg_status  st = sg_reduce_check_nonempty(#NAME "()", self, NULL, 0);                   \
        if (!st) st = like(NULL, 0, dt(self), self, &out);                                     \
        if (!st) st = NAME##_unary_out(ks, self, out, &r);                                     \
        sg_tensor_release(r);                                                                  \
        return sg_reduce_give_new(st, out, ret);                                               \
    }
ALL_EXTREMUM(max)
ALL_EXTREMUM(min)

#define VAR_OP(NAME)                                                                           \
    static sg_status NAME##_correction_out(sg_keyset ks, sg_tensor *self,                      \
                                           const sg_int_list *dim,                             \
                                           const sg_scalar *correction, bool keepdim,          \
                                           sg_tensor *out, sg_tensor **ret) {                  \
        (void)ks, (void)correction;                                                            \
        sg_rdims r;                                                                            \
        return sg_reduce_give(sg_reduce_var_args(#NAME, self, dim, keepdim, out, &r), out,     \
                              ret);                                                            \
    }                                                                                          \
    static sg_status NAME##_correction(sg_keyset ks, sg_tensor *self, const sg_int_list *dim,  \
                                       const sg_scalar *correction, bool keepdim,              \
                                       sg_tensor **ret) {                                      \
        sg_tensor *out = NULL, *r = NULL;                                                      \
        sg_status  st = like(NULL, 0, dt(self), self, &out);                                   \
        if (!st) st = NAME##_correction_out(ks, self, dim, correction, keepdim, out, &r);      \
        sg_tensor_release(r);                                                                  \
        return sg_reduce_give_new(st, out, ret);                                               \
    }
VAR_OP(var)
VAR_OP(std)

static sg_status logsumexp_out(sg_keyset ks, sg_tensor *self, sg_int_list dim, bool keepdim,
                               sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_rdims r;
    return sg_reduce_give(sg_reduce_lse_args(self, dim, keepdim, out, &r), out, ret);
}

static sg_status logsumexp_fn(sg_keyset ks, sg_tensor *self, sg_int_list dim, bool keepdim,
                              sg_tensor **ret) {
    sg_dtype   t = dt(self);
    sg_tensor *out = NULL, *r = NULL;
    sg_status  st = like(NULL, 0, sg_dtype_is_integral(t, true) ? SG_FLOAT32 : t, self, &out);
    if (!st) st = logsumexp_out(ks, self, dim, keepdim, out, &r);
    sg_tensor_release(r);
    return sg_reduce_give_new(st, out, ret);
}

/* The out kernels of structured reductions whose out= may be of any dtype (the result takes
 * it) where no dtype is given: the CPU kernels' checks, then out resized. */
static sg_status reduce_out(const char *op, sg_status st, sg_tensor *self, const sg_rdims *r,
                            bool keepdim, sg_tensor *out, sg_tensor **ret) {
    if (!st && !sg_device_eq(out->device, self->device))
        st = sg_error(SG_EINVAL, "%s: expected out on %s, like the input, but got one on %s", op,
                      sg_device_type_name((sg_device_type)self->device.type),
                      sg_device_type_name((sg_device_type)out->device.type));
    if (!st) st = sg_reduce_no_complex(op, self);
    if (!st) st = sg_reduce_no_complex(op, out);
    if (!st) st = sg_reduce_shape_out(out, self, r, keepdim);
    return sg_reduce_give(st, out, ret);
}

static sg_status sum_out(sg_keyset ks, sg_tensor *self, const sg_int_list *dim, bool keepdim,
                         const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_rdims r;
    return reduce_out("sum", sg_reduce_sum_args(self, dim, dtype, out, &r), self, &r, keepdim,
                      out, ret);
}

static sg_status prod_out(sg_keyset ks, sg_tensor *self, int64_t dim, bool keepdim,
                          const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_rdims r;
    return reduce_out("prod", sg_reduce_prod_args(self, &dim, dtype, out, &r), self, &r, keepdim,
                      out, ret);
}

#define AMAX_LIKE(NAME)                                                                        \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_int_list dim, bool keepdim,  \
                                sg_tensor *out, sg_tensor **ret) {                             \
        (void)ks;                                                                              \
        sg_rdims r;                                                                            \
        return reduce_out(#NAME, sg_reduce_amax_args(#NAME "()", self, dim, out, &r), self, &r, \
                          keepdim, out, ret);                                                  \
    }
AMAX_LIKE(amax)
AMAX_LIKE(amin)

/* cumsum: self's shape, out of any dtype (the scan's) */
static sg_status cumsum_out(sg_keyset ks, sg_tensor *self, int64_t dim, const sg_dtype *dtype,
                            sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    int64_t   outer, len, inner;
    sg_status st = sg_reduce_cumsum_args(self, &dim, dtype, out, false);
    if (!st && !sg_device_eq(out->device, self->device))
        st = sg_error(SG_EINVAL, "cumsum: expected out on %s, like the input, but got one on %s",
                      sg_device_type_name((sg_device_type)self->device.type),
                      sg_device_type_name((sg_device_type)out->device.type));
    if (!st) st = sg_reduce_lines(self, dim, out, &outer, &len, &inner);
    return sg_reduce_give(st, out, ret);
}

static sg_status cumsum_inplace(sg_keyset ks, sg_tensor *self, int64_t dim, const sg_dtype *dtype,
                                sg_tensor **ret) {
    (void)ks;
    return sg_reduce_give(sg_reduce_cumsum_args(self, &dim, dtype, self, true), self, ret);
}

/* ---- matrix products: the CPU out kernels' own preparation (checks, out= resized) -------- */

static sg_status give_prepared(sg_status st, sg_tensor *expanded, sg_tensor *out,
                               sg_tensor **ret) {
    sg_tensor_release(expanded);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

static sg_status mm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor *out,
                        sg_tensor **ret) {
    (void)ks;
    return give_prepared(sg_mm_mm_prepare(self, mat2, out), NULL, out, ret);
}

static sg_status bmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor *out,
                         sg_tensor **ret) {
    (void)ks;
    return give_prepared(sg_mm_bmm_prepare(self, mat2, out), NULL, out, ret);
}

static sg_status addmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2,
                           sg_scalar beta, sg_scalar alpha, sg_tensor *out, sg_tensor **ret) {
    (void)ks, (void)beta, (void)alpha;
    sg_tensor *e = NULL;
    sg_status  st = sg_mm_addmm_prepare(self, mat1, mat2, out, &e);
    return give_prepared(st, e, out, ret);
}

static sg_status baddbmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *b1, sg_tensor *b2,
                             sg_scalar beta, sg_scalar alpha, sg_tensor *out, sg_tensor **ret) {
    (void)ks, (void)beta, (void)alpha;
    sg_tensor *e = NULL;
    sg_status  st = sg_mm_baddbmm_prepare(self, b1, b2, out, &e);
    return give_prepared(st, e, out, ret);
}

/* ---- joining, indexing, selection ------------------------------------------------------- */

/* A result as m describes (out == NULL) or out made ready for it. */
static sg_status give(const char *op, const sg_meta *m, sg_tensor *out, bool exact,
                      sg_tensor **ret) {
    sg_status st = out ? sg_meta_out_ready(op, out, m, exact) : sg_meta_empty(m, ret);
    if (!st && out) *ret = sg_tensor_retain(out);
    return st;
}

static sg_status index_select_run(const char *op, sg_tensor *self, int64_t dim, sg_tensor *index,
                                  sg_tensor *out, sg_tensor **ret) {
    sg_meta   m;
    sg_status st = sg_index_select_check(op, self, &dim, index, out, &m);
    *ret = NULL;
    if (!st && out && !(st = sg_index_no_overlap(op, out, self)))
        st = sg_index_no_overlap(op, out, index);
    return st ? st : give(op, &m, out, true, ret);
}
static sg_status index_select_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                                sg_tensor **ret) {
    (void)ks;
    return index_select_run("index_select", self, dim, index, NULL, ret);
}
static sg_status index_select_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                                    sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return index_select_run("index_select", self, dim, index, out, ret);
}

static sg_status masked_fill__scalar_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                       sg_scalar value, sg_tensor **ret) {
    (void)ks;
    char      v[16];
    sg_status st = sg_index_masked_fill_check(self, mask);
    if (!st) st = sg_index_scalar_bytes("masked_fill_", value, dt(self), v);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}
static sg_status masked_fill__tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                       sg_tensor *value, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_index_masked_fill_value_check(value);
    if (!st) st = sg_index_masked_fill_check(self, mask);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}
/* masked_fill: self broadcast with mask, contiguous, then filled in place */
static sg_status masked_fill_k(sg_tensor *self, sg_tensor *mask, const sg_scalar *value,
                               sg_tensor *tvalue, sg_tensor **ret) {
    int64_t    shape[SG_MAX_DIMS];
    int32_t    n;
    sg_tensor *r = NULL, *x = NULL;
    sg_status  st = tvalue ? sg_index_masked_fill_value_check(tvalue) : SG_OK;
    *ret = NULL;
    if (!st) st = sg_index_masked_fill_shape(self, mask, shape, &n);
    if (!st) st = like(shape, n, dt(self), self, &r);
    if (!st) st = value ? masked_fill__scalar_k(0, r, mask, *value, &x)
                        : masked_fill__tensor_k(0, r, mask, tvalue, &x);
    sg_tensor_release(x);
    if (st) sg_tensor_release(r);
    else *ret = r;
    return st;
}
static sg_status masked_fill_scalar_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                      sg_scalar value, sg_tensor **ret) {
    (void)ks;
    return masked_fill_k(self, mask, &value, NULL, ret);
}
static sg_status masked_fill_tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                      sg_tensor *value, sg_tensor **ret) {
    (void)ks;
    return masked_fill_k(self, mask, NULL, value, ret);
}

/* where(condition): the coordinates of the nonzero elements, as many as the data says */
static sg_status where_cond_k(sg_keyset ks, sg_tensor *cond, sg_tensor_list *ret) {
    (void)ks, (void)cond;
    ret->items = NULL, ret->len = 0;
    return sg_meta_data_dependent("aten::where");
}

/* ---- norms ------------------------------------------------------------------------------ */

static sg_status three(sg_tensor *input, const int64_t *stat, int32_t ns, sg_dtype pt,
                       sg_tensor **y, sg_tensor **mean, sg_tensor **rstd) {
    sg_status st = like(input->sizes, input->ndim, dt(input), input, y);
    if (!st && (st = like(stat, ns, pt, input, mean))) sg_tensor_release(*y), *y = NULL;
    if (!st && rstd && (st = like(stat, ns, pt, input, rstd))) {
        sg_tensor_release(*y), *y = NULL;
        sg_tensor_release(*mean), *mean = NULL;
    }
    return st;
}

static sg_status native_layer_norm_k(sg_keyset ks, sg_tensor *input, sg_int_list ns,
                                     sg_tensor *weight, sg_tensor *bias, double eps,
                                     sg_tensor **ret0, sg_tensor **ret1, sg_tensor **ret2) {
    (void)ks, (void)eps;
    int64_t   M, N, stat[SG_MAX_DIMS];
    sg_dtype  pt = SG_FLOAT32;
    sg_status st = sg_norm_layer_checks(input, ns, weight, bias, &pt, &M, &N, stat);
    *ret0 = *ret1 = *ret2 = NULL;
    return st ? st : three(input, stat, input->ndim, pt, ret0, ret1, ret2);
}

static sg_status native_group_norm_k(sg_keyset ks, sg_tensor *input, sg_tensor *weight,
                                     sg_tensor *bias, int64_t N, int64_t C, int64_t HxW,
                                     int64_t group, double eps, sg_tensor **ret0,
                                     sg_tensor **ret1, sg_tensor **ret2) {
    (void)ks, (void)eps;
    sg_dtype  pt = SG_FLOAT32;
    sg_status st = sg_norm_group_checks(input, weight, bias, N, C, HxW, group, &pt);
    int64_t   stat[2] = {N, group};
    *ret0 = *ret1 = *ret2 = NULL;
    return st ? st : three(input, stat, 2, pt, ret0, ret1, ret2);
}

static sg_status fused_rms_norm_k(sg_keyset ks, sg_tensor *input, sg_int_list ns,
                                  sg_tensor *weight, const double *eps, sg_tensor **ret0,
                                  sg_tensor **ret1) {
    (void)ks;
    int64_t M, N, stat[SG_MAX_DIMS];
    if (sg_norm_check_inputs(input, ns, weight, NULL, &M, &N))
        return sg_norm_rms_composite(input, ns, weight, eps, ret0, ret1);
    sg_status st = sg_norm_rms_checks(input, ns, weight, &M, &N, stat);
    *ret0 = *ret1 = NULL;
    sg_dtype acc = dt(input) == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    return st ? st : three(input, stat, input->ndim, acc, ret0, ret1, NULL);
}

sg_status sg_meta_register_ops(void) {
    sg_set_cast_copy(SG_DEV_META, meta_cast_copy);
    SG_REG_META(aten_sum_IntList_out, sum_out);
    SG_REG_META(aten_prod_int_out, prod_out);
    SG_REG_META(aten_amax_out, amax_out);
    SG_REG_META(aten_amin_out, amin_out);
    SG_REG_META(aten_cumsum_out, cumsum_out);
    SG_REG_META(aten_cumsum_, cumsum_inplace);
    SG_REG_META(aten_mm_out, mm_out);
    SG_REG_META(aten_bmm_out, bmm_out);
    SG_REG_META(aten_addmm_out, addmm_out);
    SG_REG_META(aten_baddbmm_out, baddbmm_out);
    SG_REG_META(aten_prod, prod_all);
    SG_REG_META(aten_max, max_all);
    SG_REG_META(aten_min, min_all);
    SG_REG_META(aten_max_unary_out, max_unary_out);
    SG_REG_META(aten_min_unary_out, min_unary_out);
    SG_REG_META(aten_var_correction, var_correction);
    SG_REG_META(aten_var_correction_out, var_correction_out);
    SG_REG_META(aten_std_correction, std_correction);
    SG_REG_META(aten_std_correction_out, std_correction_out);
    SG_REG_META(aten_logsumexp, logsumexp_fn);
    SG_REG_META(aten_logsumexp_out, logsumexp_out);
    SG_REG_META(aten_index_select, index_select_k);
    SG_REG_META(aten_index_select_out, index_select_out_k);
    SG_REG_META(aten_masked_fill__Scalar, masked_fill__scalar_k);
    SG_REG_META(aten_masked_fill__Tensor, masked_fill__tensor_k);
    SG_REG_META(aten_masked_fill_Scalar, masked_fill_scalar_k);
    SG_REG_META(aten_masked_fill_Tensor, masked_fill_tensor_k);
    SG_REG_META(aten_where, where_cond_k);
    SG_REG_META(aten_native_layer_norm, native_layer_norm_k);
    SG_REG_META(aten_native_group_norm, native_group_norm_k);
    SG_REG_META(aten__fused_rms_norm, fused_rms_norm_k);
    return SG_OK;
}
