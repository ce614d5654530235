/* promote.c: aten's type promotion (result_type), with its classes: tensors with dimensions
 * rank above zero-dim tensors, which rank above wrapped numbers (Python scalars); a lower class
 * only moves the result to a higher category (bool < integral < floating < complex). */
#include "cpu.h"

/* The two other spellings aten's messages use, from sg_dtypes.h's table (c10's name:
 * sg_dtype_c10_name). */
#define CPP_NAME(NAME, NUM, KIND, SIZE, CTYPE, SUF, DL, CU, DIGITS, name, c10, cpp, meta) \
    [SG_##NAME] = cpp,
#define META_NAME(NAME, NUM, KIND, SIZE, CTYPE, SUF, DL, CU, DIGITS, name, c10, cpp, meta) \
    [SG_##NAME] = meta,

const char *sg_meta_type_name(sg_dtype t) {
    static const char *const names[SG_DTYPE__END] = {SG_DTYPES(META_NAME)};
    return sg_dtype_valid((int)t) ? names[t] : "?";
}

const char *sg_cpp_type_name(sg_dtype t) {
    static const char *const names[SG_DTYPE__END] = {SG_DTYPES(CPP_NAME)};
    return sg_dtype_valid((int)t) ? names[t] : "?";
}

static int category(sg_dtype t) {
    if (t == SG_BOOL) return 0;
    if (sg_dtype_is_integral(t, false)) return 1;
    if (sg_dtype_is_floating(t)) return 2;
    return 3;
}

static sg_dtype to_complex(sg_dtype t) { return t == SG_FLOAT64 ? SG_COMPLEX128 : SG_COMPLEX64; }

/* c10's promoteTypes for the dtypes we have. */
sg_dtype sg_promote_types(sg_dtype a, sg_dtype b) {
    if (a == b) return a;
    if (a == SG_BOOL) return b;
    if (b == SG_BOOL) return a;
    int ca = category(a), cb = category(b);
    if (ca != cb) {
        sg_dtype hi = ca > cb ? a : b, lo = ca > cb ? b : a;
        if (category(hi) == 3 && lo == SG_FLOAT64) return SG_COMPLEX128;
        return hi;
    }
    switch (ca) {
    case 1: {
        /* uint8 with a signed type: the smallest signed type that holds both */
        if (a == SG_UINT8 || b == SG_UINT8) {
            sg_dtype other = a == SG_UINT8 ? b : a;
            return other == SG_INT8 ? SG_INT16 : other;
        }
        return sg_dtype_size(a) >= sg_dtype_size(b) ? a : b;
    }
    case 2:
        if ((a == SG_FLOAT16 && b == SG_BFLOAT16) || (a == SG_BFLOAT16 && b == SG_FLOAT16))
            return SG_FLOAT32;
        return sg_dtype_size(a) >= sg_dtype_size(b) ? a : b;
    default: return a == SG_COMPLEX128 || b == SG_COMPLEX128 ? SG_COMPLEX128 : SG_COMPLEX64;
    }
}

void sg_rt_init(sg_result_type *r) { memset(r, 0, sizeof *r); }

static void join(sg_dtype *acc, bool *has, sg_dtype t) {
    *acc = *has ? sg_promote_types(*acc, t) : t;
    *has = true;
}

void sg_rt_tensor(sg_result_type *r, const sg_tensor *t) {
    if (!t) return;
    sg_dtype d = (sg_dtype)t->dtype;
    if (t->flags & SG_TENSOR_WRAPPED_NUMBER) {
        if (sg_dtype_is_complex(d)) d = SG_COMPLEX64;
        else if (sg_dtype_is_floating(d)) d = SG_FLOAT32;
        join(&r->wrapped, &r->has_wrapped, d);
    } else if (t->ndim == 0) {
        join(&r->zero, &r->has_zero, d);
    } else {
        join(&r->dim, &r->has_dim, d);
    }
}

void sg_rt_scalar(sg_result_type *r, sg_scalar s) {
    static const sg_dtype of[] = {[SG_SCALAR_BOOL] = SG_BOOL, [SG_SCALAR_INT] = SG_INT64,
                                  [SG_SCALAR_FLOAT] = SG_FLOAT32, [SG_SCALAR_COMPLEX] = SG_COMPLEX64};
    join(&r->wrapped, &r->has_wrapped, of[s.kind]);
}

/* c10's combine_categories: the higher class wins unless the lower one is of a higher
 * category; a complex lower class keeps a floating higher one's precision. */
static sg_dtype combine(bool has_hi, sg_dtype hi, bool has_lo, sg_dtype lo, bool *has) {
    *has = has_hi || has_lo;
    if (!has_hi) return lo;
    if (!has_lo) return hi;
    if (sg_dtype_is_complex(hi)) return hi;
    if (sg_dtype_is_complex(lo)) return sg_dtype_is_floating(hi) ? to_complex(hi) : lo;
    if (sg_dtype_is_floating(hi)) return hi;
    if (hi == SG_BOOL || sg_dtype_is_floating(lo)) return sg_promote_types(hi, lo);
    return hi;
}

sg_dtype sg_rt_result(const sg_result_type *r) {
    bool     has_low, has;
    sg_dtype low = combine(r->has_zero, r->zero, r->has_wrapped, r->wrapped, &has_low);
    sg_dtype res = combine(r->has_dim, r->dim, has_low, low, &has);
    return has ? res : SG_FLOAT32;
}

sg_status sg_scalar_tensor(sg_scalar s, sg_tensor **out) {
    static const sg_dtype of[] = {[SG_SCALAR_BOOL] = SG_BOOL, [SG_SCALAR_INT] = SG_INT64,
                                  [SG_SCALAR_FLOAT] = SG_FLOAT64, [SG_SCALAR_COMPLEX] = SG_COMPLEX128};
    sg_status st = sg_tensor_empty(NULL, 0, of[s.kind], SG_CPU, out);
    if (st) return st;
    void *p = sg_tensor_data(*out);
    switch (s.kind) {
    case SG_SCALAR_BOOL: *(bool *)p = s.u.b; break;
    case SG_SCALAR_INT: *(int64_t *)p = s.u.i; break;
    case SG_SCALAR_FLOAT: *(double *)p = s.u.f; break;
    default: *(sg_c128 *)p = s.u.c.re + s.u.c.im * I; break;
    }
    (*out)->flags |= SG_TENSOR_WRAPPED_NUMBER;
    return SG_OK;
}

