/* pointwise_shape.c: the elementwise ops' result types and argument checks, one copy for the
 * CPU and CUDA kernels (sg_pointwise_shape.h). */
#include "sg_pointwise_shape.h"

#include "cpu.h"
#include "sg_index_shape.h"

sg_dtype sg_pointwise_result(const sg_tensor *a, const sg_tensor *b, const sg_tensor *c) {
    /* the usual case at once: tensors of one dtype, none a wrapped number (whatever their
     * ranks, promotion gives that dtype) */
    if (a && b && a->dtype == b->dtype && (!c || c->dtype == a->dtype) &&
        !((a->flags | b->flags | (c ? c->flags : 0)) & SG_TENSOR_WRAPPED_NUMBER))
        return (sg_dtype)a->dtype;
    sg_result_type r;
    sg_rt_init(&r);
    sg_rt_tensor(&r, a);
    sg_rt_tensor(&r, b);
    sg_rt_tensor(&r, c);
    return sg_rt_result(&r);
}

sg_status sg_pointwise_add_args(const char *op, const sg_tensor *self, const sg_tensor *other,
                                sg_scalar alpha, bool sub, sg_dtype *r, double *af,
                                int64_t *ai) {
    *r = sg_pointwise_result(self, other, NULL);
    if (sub && *r == SG_BOOL)
        return sg_error(SG_EINVAL, "Subtraction, the `-` operator, with two bool tensors is not "
                                   "supported. Use the `^` or `logical_xor()` operator instead.");
    if (sub && (self->dtype == SG_BOOL || other->dtype == SG_BOOL))
        return sg_error(SG_EINVAL, "Subtraction, the `-` operator, with a bool tensor is not "
                                   "supported. If you are trying to invert a mask, use the `~` or "
                                   "`logical_not()` operator instead.");
    if (alpha.kind == SG_SCALAR_FLOAT && sg_dtype_is_integral(*r, true))
        return sg_error(SG_EINVAL, "%s: for integral input tensors, argument alpha must not be a "
                                   "floating point number.",
                        op);
    if (alpha.kind == SG_SCALAR_BOOL && *r != SG_BOOL)
        return sg_error(SG_EINVAL, "%s: boolean alpha only supported for Boolean results.", op);
    if (sg_scalar_overflows(alpha, *r)) /* aten converts alpha to the result type, checked */
        return sg_error(SG_EINVAL, "%s: value cannot be converted to type %s without overflow",
                        op, sg_cpp_type_name(*r));
    *af = sg_scalar_to_double(alpha);
    *ai = alpha.kind == SG_SCALAR_INT ? alpha.u.i : (int64_t)*af;
    return SG_OK;
}

sg_status sg_pointwise_div_mode(const char *rounding, int *mode) {
    if (!rounding) *mode = 0;
    else if (strcmp(rounding, "trunc") == 0) *mode = 1;
    else if (strcmp(rounding, "floor") == 0) *mode = 2;
    else
        return sg_error(SG_EINVAL, "div expected rounding_mode to be one of None, 'trunc', or "
                                   "'floor' but found '%s'",
                        rounding);
    return SG_OK;
}

sg_dtype sg_pointwise_div_result(const sg_tensor *a, const sg_tensor *b, int mode) {
    sg_dtype r = sg_pointwise_result(a, b, NULL);
    if (mode == 0 && sg_dtype_is_integral(r, true)) r = SG_FLOAT32;
    return r;
}

sg_status sg_pointwise_where_args(const sg_tensor *cond, const sg_tensor *self,
                                  const sg_tensor *other, const sg_tensor *out, sg_dtype *r) {
    *r = sg_pointwise_result(self, other, NULL);
    if (dtype_of(cond) != SG_BOOL && dtype_of(cond) != SG_UINT8)
        return sg_error(SG_EINVAL, "where: where expected condition to be a boolean tensor, but "
                                   "got a tensor with dtype %s",
                        sg_dtype_c10_name(dtype_of(cond)));
    if (out && dtype_of(out) != *r)
        return sg_error(SG_EINVAL, "where: Expected out type to be %s but got %s",
                        sg_dtype_c10_name(*r), sg_dtype_c10_name(dtype_of(out)));
    return SG_OK;
}

sg_status sg_pointwise_clamp_scalar_type(const sg_tensor *self, const sg_scalar *lo,
                                         const sg_scalar *hi, sg_dtype *r) {
    sg_status st = sg_index_clamp_type(self, lo, hi, r);
    if (st) return st;
    if (!lo && !hi)
        return sg_error(SG_EINVAL, "clamp: torch.clamp: At least one of 'min' or 'max' must not "
                                   "be None");
    return SG_OK;
}

/* One row per dtype-keeping unary op: whether a bool, an integer self has a kernel in aten
 * (neg's bool refusal has a message of its own, given before this). */
static const struct keep_rule {
    const char *op;
    bool        bools, ints;
} KEEP_RULES[] = {
    {"floor", false, true}, {"ceil", false, true},  {"round", false, true},
    {"sign", true, true},   {"neg", true, true},    {"abs", false, true},
    {"silu", false, false}, {"gelu", false, false}, {"clamp_min", true, true},
    {"clamp_max", true, true},
};

sg_status sg_pointwise_keep_args(const char *op, const char *dev, sg_dtype r,
                                 const sg_tensor *out) {
    /* every rule takes a floating self: the common call skips the search by name */
    if (sg_dtype_is_floating(r) && (!out || dtype_of(out) == r)) return SG_OK;
    for (size_t i = 0; i < sizeof KEEP_RULES / sizeof *KEEP_RULES; i++) {
        const struct keep_rule *k = &KEEP_RULES[i];
        if (strcmp(k->op, op) != 0) continue;
        if (r == SG_BOOL ? !k->bools : sg_dtype_is_integral(r, false) && !k->ints)
            return sg_error(SG_EUNSUPPORTED, "\"%s_%s\" not implemented for '%s'", op, dev,
                            sg_dtype_c10_name(r));
        return sg_out_dtype_exact(op, out, r);
    }
    return sg_error(SG_EINVAL, "%s: not a dtype-keeping unary op", op);
}

sg_status sg_pointwise_inplace_shape(const char *op, const sg_tensor *self,
                                     const sg_tensor *other) {
    int64_t shape[SG_MAX_DIMS];
    int32_t n = 0;
    char    a[160], b[160];
    if (!sg_broadcast_shape(self->sizes, self->ndim, other->sizes, other->ndim, shape, &n))
        return sg_error(SG_EINVAL, "%s: the size of tensor a %s must match the size of tensor b "
                                   "%s at a non-singleton dimension",
                        op, sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                        sg_shape_str(other->sizes, other->ndim, b, sizeof b));
    bool same = n == self->ndim;
    for (int32_t i = 0; same && i < n; i++) same = shape[i] == self->sizes[i];
    if (!same)
        return sg_error(SG_EINVAL, "%s: output with shape %s doesn't match the broadcast shape %s",
                        op, sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                        sg_shape_str(shape, n, b, sizeof b));
    return SG_OK;
}
