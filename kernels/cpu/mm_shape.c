/* mm_shape.c: the matrix products' checks, result shapes and layout tests (sg_mm_shape.h). */
#include "sg_mm_shape.h"

#include "cpu.h"

bool sg_mm_scalar_is_zero(sg_scalar s) {
    switch (s.kind) {
    case SG_SCALAR_BOOL: return !s.u.b;
    case SG_SCALAR_INT: return s.u.i == 0;
    case SG_SCALAR_FLOAT: return s.u.f == 0;
    default: return s.u.c.re == 0 && s.u.c.im == 0;
    }
}

bool sg_mm_dtype_ok(sg_dtype t) {
    return sg_dtype_is_floating(t) || sg_dtype_is_integral(t, false);
}

/* Whether a rows x cols matrix with these strides is row-major in BLAS's sense (unit column
 * stride, leading dimension >= max(1, cols)); *ld gets its leading dimension. Strides of
 * size-1 dims are never used, so they may be anything. */
bool sg_mm_row_major(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t *ld) {
    int64_t need = cols > 1 ? cols : 1;
    if (!(cs == 1 || cols == 1)) return false;
    if (rows == 1) {
        *ld = need;
        return true;
    }
    if (rs < need) return false;
    *ld = rs;
    return true;
}



/* Checks an out= tensor against what the meta function computed, as aten's structured out
 * wrappers do (same dtype and device), and resizes it where its shape differs. */
sg_status sg_mm_out_prepare(sg_tensor *out, const sg_meta *m) {
    if (dtype_of(out) != m->dtype)
        return sg_error(SG_EINVAL, "Expected out tensor to have dtype %s, but got %s instead",
                        sg_meta_type_name(m->dtype), sg_meta_type_name(dtype_of(out)));
    if (!sg_device_eq(out->device, m->device))
        return sg_error(SG_EINVAL, "Expected out tensor to have device %s, but got %s instead",
                        sg_device_type_name((sg_device_type)m->device.type),
                        sg_device_type_name((sg_device_type)out->device.type));
    return sg_tensor_resize_out_(out, m->sizes, m->ndim);
}

void sg_mm_meta_set(sg_meta *m, const sg_tensor *like, sg_dtype dtype, const int64_t *sizes,
                    int32_t n) {
    m->ndim = n;
    m->dtype = dtype;
    m->device = like->device;
    m->strided = false;
    memcpy(m->sizes, sizes, (size_t)n * sizeof *sizes);
}

/* self expanded to sizes, with aten's expand_size message. */
sg_status sg_mm_expand_self(sg_tensor *self, const int64_t *sizes, int32_t n, sg_tensor **out) {
    char      a[160], b[160];
    sg_status st = sg_tensor_expand(self, sizes, n, out);
    if (st && self->ndim <= n) {
        for (int32_t i = n - 1, d = self->ndim - 1; d >= 0; i--, d--)
            if (self->sizes[d] != sizes[i] && self->sizes[d] != 1)
                return sg_error(SG_EINVAL,
                                "The expanded size of the tensor (%lld) must match the existing "
                                "size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                                "Tensor sizes: %s",
                                (long long)sizes[i], (long long)self->sizes[d], i,
                                sg_shape_str(sizes, n, a, sizeof a),
                                sg_shape_str(self->sizes, self->ndim, b, sizeof b));
    }
    return st;
}

sg_status sg_mm_meta(sg_tensor *self, sg_tensor *mat2, sg_meta *m) {
    if (self->ndim != 2) return sg_error(SG_EINVAL, "self must be a matrix");
    if (mat2->ndim != 2) return sg_error(SG_EINVAL, "mat2 must be a matrix");
    if (self->sizes[1] != mat2->sizes[0])
        return sg_error(SG_EINVAL, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                                   "%lldx%lld)",
                        (long long)self->sizes[0], (long long)self->sizes[1],
                        (long long)mat2->sizes[0], (long long)mat2->sizes[1]);
    int64_t sizes[2] = {self->sizes[0], mat2->sizes[1]};
    sg_mm_meta_set(m, self, dtype_of(self), sizes, 2);
    return SG_OK;
}

/* addmm_impl_cpu_'s own check */
sg_status sg_mm_same_dtype_m1_m2(const sg_tensor *m1, const sg_tensor *m2) {
    if (m1->dtype != m2->dtype)
        return sg_error(SG_EINVAL, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                        sg_meta_type_name(dtype_of(m1)), sg_meta_type_name(dtype_of(m2)));
    return SG_OK;
}

sg_status sg_mm_bmm_checks(const sg_tensor *b1, const sg_tensor *b2, sg_meta *m) {
    if (b1->ndim != 3) return sg_error(SG_EINVAL, "batch1 must be a 3D tensor");
    if (b2->ndim != 3) return sg_error(SG_EINVAL, "batch2 must be a 3D tensor");
    int64_t bs = b1->sizes[0], kk = b1->sizes[2];
    if (b2->sizes[0] != bs || b2->sizes[1] != kk)
        return sg_error(SG_EINVAL, "Expected size for first two dimensions of batch2 tensor to "
                                   "be: [%lld, %lld] but got: [%lld, %lld].",
                        (long long)bs, (long long)kk, (long long)b2->sizes[0],
                        (long long)b2->sizes[1]);
    int64_t sizes[3] = {bs, b1->sizes[1], b2->sizes[2]};
    sg_mm_meta_set(m, b2, dtype_of(b2), sizes, 3);
    return SG_OK;
}

/* the kernel reads batch2 as batch1's type */
sg_status sg_mm_bmm_dtypes(const sg_tensor *b1, const sg_tensor *b2) {
    if (b1->dtype != b2->dtype)
        return sg_error(SG_EINVAL, "expected scalar type %s but found %s",
                        sg_dtype_c10_name(dtype_of(b1)), sg_dtype_c10_name(dtype_of(b2)));
    return SG_OK;
}

sg_status sg_mm_baddbmm_checks(sg_tensor *self, const sg_tensor *b1, const sg_tensor *b2,
                               sg_meta *m, sg_tensor **expanded) {
    if (b1->ndim != 3) return sg_error(SG_EINVAL, "batch1 must be a 3D tensor");
    if (b2->ndim != 3) return sg_error(SG_EINVAL, "batch2 must be a 3D tensor");
    int64_t   sizes[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    sg_status st = sg_mm_expand_self(self, sizes, 3, expanded);
    if (st) return st;
    if (self->dtype != b1->dtype)
        st = sg_error(SG_EINVAL, "Input dtypes must be the same, got: input %s, batch1: %s, "
                                 "batch2: %s",
                      sg_meta_type_name(dtype_of(self)), sg_meta_type_name(dtype_of(b1)),
                      sg_meta_type_name(dtype_of(b2)));
    if (!st) st = sg_mm_bmm_checks(b1, b2, m);
    if (st) {
        sg_tensor_release(*expanded);
        *expanded = NULL;
    }
    return st;
}

/* addmm's checks and result (its meta function without beta and alpha) */
sg_status sg_mm_addmm_checks(sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2, sg_meta *m) {
    if (self->dtype != mat2->dtype)
        return sg_error(SG_EINVAL, "self and mat2 must have the same dtype, but got %s and %s",
                        sg_dtype_c10_name(dtype_of(self)), sg_dtype_c10_name(dtype_of(mat2)));
    if (mat1->dtype != mat2->dtype)
        return sg_error(SG_EINVAL, "mat1 and mat2 must have the same dtype, but got %s and %s",
                        sg_dtype_c10_name(dtype_of(mat1)), sg_dtype_c10_name(dtype_of(mat2)));
    if (mat1->ndim != 2)
        return sg_error(SG_EINVAL, "mat1 must be a matrix, got %d-D tensor", mat1->ndim);
    if (mat2->ndim != 2)
        return sg_error(SG_EINVAL, "mat2 must be a matrix, got %d-D tensor", mat2->ndim);
    if (mat1->sizes[1] != mat2->sizes[0])
        return sg_error(SG_EINVAL, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                                   "%lldx%lld)",
                        (long long)mat1->sizes[0], (long long)mat1->sizes[1],
                        (long long)mat2->sizes[0], (long long)mat2->sizes[1]);
    int64_t sizes[2] = {mat1->sizes[0], mat2->sizes[1]};
    sg_mm_meta_set(m, mat1, dtype_of(mat1), sizes, 2);
    return SG_OK;
}

int64_t sg_mm_scalar_to_int(sg_scalar s) {
    switch (s.kind) {
    case SG_SCALAR_BOOL: return s.u.b;
    case SG_SCALAR_INT: return s.u.i;
    default: {
        double d = sg_scalar_to_double(s);
        if (d != d) return 0;
        if (d >= 9.2233720368547758e18) return INT64_MAX;
        if (d <= -9.2233720368547758e18) return INT64_MIN;
        return (int64_t)d;
    }
    }
}

bool sg_mm_matrix_ok(const sg_tensor *t) {
    int32_t n = t->ndim;
    int64_t r = t->sizes[n - 2], c = t->sizes[n - 1], rs = t->strides[n - 2],
            cs = t->strides[n - 1], ld;
    return sg_mm_row_major(r, c, rs, cs, &ld) || sg_mm_row_major(c, r, cs, rs, &ld);
}

sg_status sg_mm_scalars_check(const char *op, sg_dtype t, const sg_tensor *a, sg_scalar beta,
                              sg_scalar alpha) {
    sg_dtype acc = sg_compute_dtype(t);
    if (a->ndim < 1 || a->sizes[a->ndim - 1] == 0) return SG_OK; /* k = 0: beta alone */
    if (sg_scalar_overflows(alpha, acc) || sg_scalar_overflows(beta, acc))
        return sg_error(SG_EINVAL, "%s: value cannot be converted to type %s without overflow",
                        op, sg_cpp_type_name(acc));
    return SG_OK;
}

bool sg_mm_gemm_layout_ok(const sg_tensor *t) {
    if (t->ndim == 3 && t->sizes[0] > 1 && t->strides[0] == 0) return false;
    return sg_mm_matrix_ok(t);
}

sg_status sg_mm_mm_prepare(sg_tensor *self, sg_tensor *mat2, sg_tensor *out) {
    sg_meta   m;
    sg_status st;
    if ((st = sg_mm_meta(self, mat2, &m)) || (st = sg_mm_out_prepare(out, &m))) return st;
    return sg_mm_same_dtype_m1_m2(self, mat2);
}

sg_status sg_mm_addmm_prepare(sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2, sg_tensor *out,
                              sg_tensor **expanded) {
    sg_meta   m;
    sg_status st;
    *expanded = NULL;
    if ((st = sg_mm_addmm_checks(self, mat1, mat2, &m)) ||
        (st = sg_mm_expand_self(self, m.sizes, 2, expanded)))
        return st;
    /* self is read before out is resized: out may be self (addmm_) or share its storage */
    if ((st = sg_mm_out_prepare(out, &m)) || (st = sg_mm_same_dtype_m1_m2(mat1, mat2))) {
        sg_tensor_release(*expanded);
        *expanded = NULL;
    }
    return st;
}

sg_status sg_mm_bmm_prepare(sg_tensor *self, sg_tensor *mat2, sg_tensor *out) {
    sg_meta   m;
    sg_status st;
    if ((st = sg_mm_bmm_checks(self, mat2, &m)) || (st = sg_mm_out_prepare(out, &m))) return st;
    return sg_mm_bmm_dtypes(self, mat2);
}

sg_status sg_mm_baddbmm_prepare(sg_tensor *self, sg_tensor *b1, sg_tensor *b2, sg_tensor *out,
                                sg_tensor **expanded) {
    sg_meta   m;
    sg_status st = sg_mm_baddbmm_checks(self, b1, b2, &m, expanded);
    if (st) return st;
    if ((st = sg_mm_out_prepare(out, &m)) || (st = sg_mm_bmm_dtypes(b1, b2))) {
        sg_tensor_release(*expanded);
        *expanded = NULL;
    }
    return st;
}
