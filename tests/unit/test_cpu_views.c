/* test_cpu_views.c: the view ops through the generated aten API: aliasing (a view shares its
 * input's storage, a *_copy does not), geometry on strided inputs, reshape's copy fallback,
 * in-place view ops, splitting, view.dtype, views of Meta tensors, and aten's errors. Expected
 * values are worked out by hand. */
#include "check.h"
#include "sg_aten_cpu.h"
#include "aten.h"

#include <math.h>
#include <string.h>

static sg_tensor *make(sg_dtype dt, const int64_t *sizes, int32_t n, const double *v) {
    sg_tensor *t = NULL;
    CHECK(sg_tensor_empty(sizes, n, dt, SG_CPU, &t) == SG_OK);
    int64_t k = sg_tensor_numel(t);
    for (int64_t i = 0; i < k; i++) {
        char *p = (char *)sg_tensor_data(t) + i * (int64_t)sg_dtype_size(dt);
        switch (dt) {
        case SG_FLOAT32: *(float *)p = (float)v[i]; break;
        case SG_FLOAT64: *(double *)p = v[i]; break;
        case SG_INT64: *(int64_t *)p = (int64_t)v[i]; break;
        case SG_INT32: *(int32_t *)p = (int32_t)v[i]; break;
        default: break;
        }
    }
    return t;
}

/* 0, 1, 2, ... as float32 */
static sg_tensor *iota(const int64_t *sizes, int32_t n) {
    double v[64];
    for (int i = 0; i < 64; i++) v[i] = i;
    return make(SG_FLOAT32, sizes, n, v);
}

static double at(const sg_tensor *t, int64_t i) {
    int64_t off = 0, rest = i;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        off += (rest % t->sizes[d]) * t->strides[d];
        rest /= t->sizes[d];
    }
    const char *p = (const char *)sg_tensor_data(t) + off * (int64_t)sg_dtype_size((sg_dtype)t->dtype);
    switch (t->dtype) {
    case SG_FLOAT32: return *(const float *)p;
    case SG_FLOAT64: return *(const double *)p;
    case SG_INT64: return (double)*(const int64_t *)p;
    case SG_INT32: return *(const int32_t *)p;
    case SG_INT16: return *(const int16_t *)p;
    default: return NAN;
    }
}

static bool all_eq(const sg_tensor *t, const double *want, int64_t n) {
    if (!t || sg_tensor_numel(t) != n) return false;
    for (int64_t i = 0; i < n; i++)
        if (at(t, i) != want[i]) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i, at(t, i), want[i]);
            return false;
        }
    return true;
}

static bool shape_is(const sg_tensor *t, const int64_t *sizes, int32_t n) {
    if (!t || t->ndim != n) return false;
    for (int32_t i = 0; i < n; i++)
        if (t->sizes[i] != sizes[i]) return false;
    return true;
}

static bool strides_are(const sg_tensor *t, const int64_t *strides) {
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->strides[i] != strides[i]) return false;
    return true;
}

#define L(...) ((sg_int_list){(const int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / 8})

static void test_view_reshape(void) {
    sg_tensor *x = iota((int64_t[]){2, 3}, 2), *r = NULL, *xt = NULL;
    CHECK(aten_view(x, L(3, -1), &r) == SG_OK && shape_is(r, (int64_t[]){3, 2}, 2));
    CHECK(r->storage == x->storage && all_eq(r, (double[]){0, 1, 2, 3, 4, 5}, 6));
    sg_tensor_release(r);
    CHECK(aten_view(x, L(5), &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), "view: shape '[5]' is invalid for input of size 6");
    CHECK(aten_view(x, L(-1, -1), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "only one dimension can be inferred") != NULL);
    /* a transposed tensor cannot be viewed flat, but reshape copies */
    CHECK(aten_transpose_int(x, 0, 1, &xt) == SG_OK && strides_are(xt, (int64_t[]){1, 3}));
    CHECK(aten_view(xt, L(6), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "view size is not compatible with input tensor's size and stride") != NULL);
    CHECK(aten_reshape(xt, L(6), &r) == SG_OK && r->storage != x->storage);
    CHECK(all_eq(r, (double[]){0, 3, 1, 4, 2, 5}, 6));
    sg_tensor_release(r);
    /* reshape of what strides allow is a view */
    CHECK(aten_reshape(x, L(3, 2), &r) == SG_OK && r->storage == x->storage);
    sg_tensor_release(r);
    CHECK(aten_reshape(xt, L(4), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "reshape: shape '[4]' is invalid for input of size 6");
    /* _unsafe_view and _reshape_alias */
    CHECK(aten__unsafe_view(x, L(6), &r) == SG_OK && r->storage == x->storage && r->ndim == 1);
    sg_tensor_release(r);
    CHECK(aten__reshape_alias(x, L(3, 2), L(1, 3), &r) == SG_OK);
    CHECK(all_eq(r, (double[]){0, 3, 1, 4, 2, 5}, 6));
    sg_tensor_release(r);
    /* a zero-size tensor: -1 is ambiguous */
    sg_tensor *z = NULL;
    CHECK(sg_tensor_empty((int64_t[]){0, 3}, 2, SG_FLOAT32, SG_CPU, &z) == SG_OK);
    CHECK(aten_view(z, L(-1, 0), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "the unspecified dimension size -1 can be any value and is ambiguous") != NULL);
    CHECK(aten_view(z, L(3, -1), &r) == SG_OK && shape_is(r, (int64_t[]){3, 0}, 2));
    sg_tensor_release(r);
    sg_tensor_release(z);
    sg_tensor_release(xt);
    sg_tensor_release(x);
}

static void test_transpose_permute_expand(void) {
    sg_tensor *x = iota((int64_t[]){2, 3}, 2), *r = NULL;
    CHECK(aten_transpose_int(x, 0, 2, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "transpose: dimension out of range (expected to be in range of [-2, 1], but got 2)");
    CHECK(aten_transpose_int(x, -1, -2, &r) == SG_OK && shape_is(r, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    CHECK(aten_t(x, &r) == SG_OK && strides_are(r, (int64_t[]){1, 3}));
    CHECK(all_eq(r, (double[]){0, 3, 1, 4, 2, 5}, 6));
    sg_tensor_release(r);
    sg_tensor *x3 = iota((int64_t[]){2, 2, 2}, 3);
    CHECK(aten_t(x3, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t: t() expects a tensor with <= 2 dimensions, but self is 3D");
    /* permute: [2, 2, 2] -> dims (2, 0, 1) */
    CHECK(aten_permute(x3, L(2, 0, 1), &r) == SG_OK && strides_are(r, (int64_t[]){1, 4, 2}));
    CHECK(all_eq(r, (double[]){0, 2, 4, 6, 1, 3, 5, 7}, 8));
    sg_tensor_release(r);
    CHECK(aten_permute(x3, L(0, 0, 1), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "duplicate dims are not allowed") != NULL);
    /* t_ and transpose_ change the tensor itself */
    sg_tensor *y = iota((int64_t[]){2, 3}, 2);
    CHECK(aten_t_(y, &r) == SG_OK && r == y && shape_is(y, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    CHECK(aten_transpose_(y, 0, 1, &r) == SG_OK && r == y && strides_are(y, (int64_t[]){3, 1}));
    sg_tensor_release(r);
    /* expand: a size-1 dim and a new leading dim get stride 0 */
    sg_tensor *col = iota((int64_t[]){3, 1}, 2);
    CHECK(aten_expand(col, L(2, 3, 4), false, &r) == SG_OK && strides_are(r, (int64_t[]){0, 1, 0}));
    CHECK(at(r, 23) == 2 && at(r, 5) == 1 && r->storage == col->storage);
    sg_tensor_release(r);
    CHECK(aten_expand(col, L(-1, 2), false, &r) == SG_OK && shape_is(r, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    CHECK(aten_expand(x, L(2, 4), false, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1") != NULL ||
          strstr(sg_last_error(), "the expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1") != NULL);
    /* expand_copy materialises */
    CHECK(aten_expand_copy(col, L(3, 2), false, &r) == SG_OK && r->storage != col->storage);
    CHECK(sg_tensor_is_contiguous(r) && all_eq(r, (double[]){0, 0, 1, 1, 2, 2}, 6));
    sg_tensor_release(r);
    sg_tensor_release(col);
    sg_tensor_release(y);
    sg_tensor_release(x3);
    sg_tensor_release(x);
}

static void test_slice_select_narrow(void) {
    sg_tensor *x = iota((int64_t[]){4, 5}, 2), *r = NULL, *s = NULL;
    int64_t    one = 1, neg = -1;
    /* x[:, 1:-1:2] */
    CHECK(aten_slice_Tensor(x, 1, &one, &neg, 2, &r) == SG_OK && shape_is(r, (int64_t[]){4, 2}, 2));
    CHECK(strides_are(r, (int64_t[]){5, 2}) && r->offset == 1);
    CHECK(all_eq(r, (double[]){1, 3, 6, 8, 11, 13, 16, 18}, 8));
    /* a slice of the strided slice, along dim 0 with defaults */
    CHECK(aten_slice_Tensor(r, 0, NULL, NULL, 3, &s) == SG_OK && all_eq(s, (double[]){1, 3, 16, 18}, 4));
    sg_tensor_release(s);
    CHECK(aten_slice_Tensor(x, 0, NULL, NULL, 0, &s) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "slice step must be positive") != NULL);
    /* select on the strided view: column 1 of it */
    CHECK(aten_select_int(r, 1, -1, &s) == SG_OK && all_eq(s, (double[]){3, 8, 13, 18}, 4));
    sg_tensor_release(s);
    CHECK(aten_select_int(r, 1, 2, &s) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "index 2 out of range") != NULL);
    sg_tensor_release(r);
    /* narrow: negative start counts from the end */
    CHECK(aten_narrow(x, 0, -2, 2, &r) == SG_OK && r->offset == 10 && shape_is(r, (int64_t[]){2, 5}, 2));
    sg_tensor_release(r);
    CHECK(aten_narrow(x, 1, 4, 2, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "narrow: start (4) + length (2) exceeds dimension size (5).");
    CHECK(aten_narrow(x, 1, 5, 0, &r) == SG_OK && r->sizes[1] == 0);
    sg_tensor_release(r);
    CHECK(aten_narrow(x, 1, 0, -1, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "length must be non-negative") != NULL);
    CHECK(aten_narrow(x, 2, 0, 1, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "expected to be in range of [-2, 1], but got 2") != NULL);
    /* narrow.Tensor: start as a 0-dim tensor */
    sg_tensor *st = make(SG_INT64, NULL, 0, (double[]){3});
    CHECK(aten_narrow_Tensor(x, 1, st, 2, &r) == SG_OK && all_eq(r, (double[]){3, 4, 8, 9, 13, 14, 18, 19}, 8));
    sg_tensor_release(r);
    /* narrow_copy: contiguous and not aliased */
    CHECK(aten_narrow_copy(x, 1, 3, 2, &r) == SG_OK && sg_tensor_is_contiguous(r) && r->storage != x->storage);
    CHECK(all_eq(r, (double[]){3, 4, 8, 9, 13, 14, 18, 19}, 8));
    sg_tensor_release(r);
    sg_tensor *out = NULL, *ret = NULL;
    CHECK(sg_tensor_empty((int64_t[]){1}, 1, SG_FLOAT32, SG_CPU, &out) == SG_OK);
    CHECK(aten_narrow_copy_out(x, 0, 1, 1, out, &ret) == SG_OK && ret == out && shape_is(out, (int64_t[]){1, 5}, 2));
    CHECK(all_eq(out, (double[]){5, 6, 7, 8, 9}, 5));
    sg_tensor_release(ret);
    sg_tensor_release(out);
    /* select_copy and slice_copy */
    CHECK(aten_select_copy_int(x, 0, 3, &r) == SG_OK && r->storage != x->storage);
    CHECK(all_eq(r, (double[]){15, 16, 17, 18, 19}, 5));
    sg_tensor_release(r);
    int64_t two = 2;
    CHECK(aten_slice_copy_Tensor(x, 0, &two, NULL, 1, &r) == SG_OK && r->sizes[0] == 2 && at(r, 0) == 10);
    sg_tensor_release(r);
    sg_tensor_release(st);
    sg_tensor_release(x);
}

static void test_squeeze_flatten(void) {
    sg_tensor *x = iota((int64_t[]){1, 3, 1, 2}, 4), *r = NULL;
    CHECK(aten_squeeze(x, &r) == SG_OK && shape_is(r, (int64_t[]){3, 2}, 2) && r->storage == x->storage);
    sg_tensor_release(r);
    CHECK(aten_squeeze_dim(x, 1, &r) == SG_OK && r->ndim == 4); /* size 3: kept */
    sg_tensor_release(r);
    CHECK(aten_squeeze_dims(x, L(0, -2), &r) == SG_OK && shape_is(r, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    CHECK(aten_squeeze_dims(x, L(0, -4), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "dim 0 appears multiple times in the list of dims") != NULL);
    CHECK(aten_squeeze_dims(x, L(4), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "expected to be in range of [-4, 3], but got 4") != NULL);
    CHECK(aten_unsqueeze(x, -1, &r) == SG_OK && shape_is(r, (int64_t[]){1, 3, 1, 2, 1}, 5));
    sg_tensor_release(r);
    CHECK(aten_unsqueeze(x, 5, &r) == SG_EINVAL);
    /* the in-place forms */
    sg_tensor *y = iota((int64_t[]){1, 3, 1, 2}, 4);
    CHECK(aten_squeeze__dim(y, 0, &r) == SG_OK && r == y && shape_is(y, (int64_t[]){3, 1, 2}, 3));
    sg_tensor_release(r);
    CHECK(aten_unsqueeze_(y, 0, &r) == SG_OK && shape_is(y, (int64_t[]){1, 3, 1, 2}, 4));
    sg_tensor_release(r);
    CHECK(aten_squeeze__dims(y, L(0, 2), &r) == SG_OK && shape_is(y, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    CHECK(aten_unsqueeze_(y, 1, &r) == SG_OK && aten_squeeze_(y, &r) == SG_OK && shape_is(y, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    sg_tensor_release(r);
    /* past the dims its header was made with room for: its sizes and strides move */
    for (int i = 0; i < 5; i++) {
        CHECK(aten_unsqueeze_(y, 0, &r) == SG_OK && r == y);
        sg_tensor_release(r);
    }
    CHECK(shape_is(y, (int64_t[]){1, 1, 1, 1, 1, 3, 2}, 7) && y->strides[6] == 1);
    CHECK(aten_transpose_(y, 0, 6, &r) == SG_OK && shape_is(y, (int64_t[]){2, 1, 1, 1, 1, 3, 1}, 7));
    sg_tensor_release(r);
    /* a 0-dim tensor: dims -1 and 0 name it */
    sg_tensor *s0 = make(SG_FLOAT32, NULL, 0, (double[]){7});
    CHECK(aten_squeeze_dim(s0, -1, &r) == SG_OK && r->ndim == 0);
    sg_tensor_release(r);
    CHECK(aten_unsqueeze(s0, 0, &r) == SG_OK && shape_is(r, (int64_t[]){1}, 1));
    sg_tensor_release(r);
    /* flatten */
    sg_tensor *f = iota((int64_t[]){2, 3, 4}, 3);
    CHECK(aten_flatten_using_ints(f, 1, -1, &r) == SG_OK && shape_is(r, (int64_t[]){2, 12}, 2) && r->storage == f->storage);
    sg_tensor_release(r);
    CHECK(aten_flatten_using_ints(f, 0, 1, &r) == SG_OK && shape_is(r, (int64_t[]){6, 4}, 2));
    sg_tensor_release(r);
    CHECK(aten_flatten_using_ints(f, 2, 1, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "flatten: flatten() has invalid args: start_dim cannot come after end_dim");
    CHECK(aten_flatten_using_ints(s0, 0, -1, &r) == SG_OK && shape_is(r, (int64_t[]){1}, 1) && at(r, 0) == 7);
    sg_tensor_release(r);
    /* flattening a transposed tensor copies */
    sg_tensor *ft = NULL;
    CHECK(aten_transpose_int(f, 0, 2, &ft) == SG_OK);
    CHECK(aten_flatten_using_ints(ft, 0, 1, &r) == SG_OK && shape_is(r, (int64_t[]){12, 2}, 2) && r->storage != f->storage);
    CHECK(at(r, 0) == 0 && at(r, 1) == 12 && at(r, 2) == 4 && at(r, 3) == 16);
    sg_tensor_release(r);
    /* squeeze_copy, unsqueeze_copy */
    CHECK(aten_squeeze_copy(x, &r) == SG_OK && r->storage != x->storage && shape_is(r, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    CHECK(aten_unsqueeze_copy(s0, 0, &r) == SG_OK && r->storage != s0->storage && at(r, 0) == 7);
    sg_tensor_release(r);
    sg_tensor_release(ft);
    sg_tensor_release(f);
    sg_tensor_release(s0);
    sg_tensor_release(y);
    sg_tensor_release(x);
}

static void test_split_chunk(void) {
    sg_tensor     *x = iota((int64_t[]){5, 2}, 2);
    sg_tensor_list l = {NULL, 0};
    CHECK(aten_split_Tensor(x, 2, 0, &l) == SG_OK && l.len == 3);
    CHECK(l.len == 3 && l.items[2]->sizes[0] == 1 && at(l.items[2], 1) == 9 && l.items[1]->offset == 4);
    CHECK(l.len == 3 && l.items[0]->storage == x->storage);
    sg_tensor_list_release(&l);
    CHECK(aten_split_Tensor(x, 0, 0, &l) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "split: split_size can only be 0 if dimension size is 0, but got dimension size of 5");
    CHECK(aten_split_with_sizes(x, L(1, 4), 0, &l) == SG_OK && l.len == 2 && l.items[1]->sizes[0] == 4);
    sg_tensor_list_release(&l);
    CHECK(aten_split_with_sizes(x, L(1, 1), 0, &l) == SG_EINVAL && l.len == 0);
    CHECK_STR(sg_last_error(), "split_with_sizes: split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0), but got split_sizes=[1, 1]");
    CHECK(aten_split_sizes(x, L(1, 1), 1, &l) == SG_OK && l.len == 2 && at(l.items[1], 4) == 9);
    sg_tensor_list_release(&l);
    /* chunk: 5 rows in 3 chunks are 2, 2, 1; 6 chunks of 5 rows are 5 of 1 */
    CHECK(aten_chunk(x, 3, 0, &l) == SG_OK && l.len == 3 && l.items[2]->sizes[0] == 1);
    sg_tensor_list_release(&l);
    CHECK(aten_chunk(x, 6, 0, &l) == SG_OK && l.len == 5);
    sg_tensor_list_release(&l);
    CHECK(aten_chunk(x, 0, 0, &l) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "chunk: chunk expects `chunks` to be greater than 0, got: 0");
    sg_tensor *z = NULL;
    CHECK(sg_tensor_empty((int64_t[]){0, 2}, 2, SG_FLOAT32, SG_CPU, &z) == SG_OK);
    CHECK(aten_chunk(z, 3, 0, &l) == SG_OK && l.len == 3 && l.items[0]->sizes[0] == 0);
    sg_tensor_list_release(&l);
    /* unbind: a select view per index (x is 5x2: along -1, 2 pieces of 5), its copy */
    CHECK(aten_unbind_int(x, -1, &l) == SG_OK && l.len == 2 && l.items[1]->ndim == 1);
    CHECK(l.len == 2 && l.items[1]->sizes[0] == 5 && at(l.items[1], 3) == 7);
    CHECK(l.len == 2 && l.items[1]->storage == x->storage);
    sg_tensor_list_release(&l);
    CHECK(aten_unbind_copy_int(x, 0, &l) == SG_OK && l.len == 5 && at(l.items[4], 1) == 9);
    CHECK(l.len == 5 && l.items[4]->storage != x->storage);
    sg_tensor_list_release(&l);
    CHECK(aten_unbind_int(x, 2, &l) == SG_EINVAL && l.len == 0);
    /* the copies, and their out= forms */
    CHECK(aten_split_copy_Tensor(x, 3, 0, &l) == SG_OK && l.len == 2 && l.items[0]->storage != x->storage);
    CHECK(l.len == 2 && all_eq(l.items[1], (double[]){6, 7, 8, 9}, 4));
    sg_tensor_list_release(&l);
    sg_tensor *o1 = NULL, *o2 = NULL;
    CHECK(sg_tensor_empty((int64_t[]){2}, 1, SG_FLOAT32, SG_CPU, &o1) == SG_OK);
    CHECK(sg_tensor_empty((int64_t[]){3, 2}, 2, SG_FLOAT32, SG_CPU, &o2) == SG_OK);
    sg_tensor *outs[2] = {o1, o2};
    CHECK(aten_split_with_sizes_copy_out(x, L(2, 3), 0, (sg_tensor_list){outs, 2}) == SG_OK);
    CHECK(shape_is(o1, (int64_t[]){2, 2}, 2) && all_eq(o1, (double[]){0, 1, 2, 3}, 4));
    CHECK(all_eq(o2, (double[]){4, 5, 6, 7, 8, 9}, 6));
    CHECK(aten_split_copy_Tensor_out(x, 5, 0, (sg_tensor_list){outs, 2}) == SG_EINVAL);
    sg_tensor_release(o1);
    sg_tensor_release(o2);
    sg_tensor_release(z);
    sg_tensor_release(x);
}

static void test_as_strided_alias_dtype(void) {
    sg_tensor *x = iota((int64_t[]){6}, 1), *r = NULL, *c = NULL;
    int64_t    off = 1;
    CHECK(aten_as_strided(x, L(2, 2), L(2, 1), &off, &r) == SG_OK && all_eq(r, (double[]){1, 2, 3, 4}, 4));
    CHECK(aten_as_strided_copy(r, L(2), L(3), NULL, &c) == SG_OK && all_eq(c, (double[]){1, 4}, 2));
    sg_tensor_release(c);
    sg_tensor_release(r);
    CHECK(aten_as_strided(x, L(2, 2), L(2), NULL, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "mismatch in length of strides and shape") != NULL);
    CHECK(aten_as_strided(x, L(4), L(2), NULL, &r) == SG_EINVAL); /* past the storage */
    /* as_strided_ in place */
    sg_tensor *y = iota((int64_t[]){6}, 1);
    CHECK(aten_as_strided_(y, L(3), L(2), NULL, &r) == SG_OK && r == y && all_eq(y, (double[]){0, 2, 4}, 3));
    sg_tensor_release(r);
    /* alias shares, alias_copy does not */
    CHECK(aten_alias(x, &r) == SG_OK && r != x && r->storage == x->storage);
    sg_tensor_release(r);
    CHECK(aten_alias_copy(x, &r) == SG_OK && r->storage != x->storage && all_eq(r, (double[]){0, 1, 2, 3, 4, 5}, 6));
    sg_tensor_release(r);
    /* view_copy and transpose_copy: contiguous copies */
    sg_tensor *m = iota((int64_t[]){2, 3}, 2);
    CHECK(aten_transpose_copy_int(m, 0, 1, &r) == SG_OK && sg_tensor_is_contiguous(r));
    CHECK(all_eq(r, (double[]){0, 3, 1, 4, 2, 5}, 6));
    sg_tensor_release(r);
    CHECK(aten_t_copy(m, &r) == SG_OK && strides_are(r, (int64_t[]){2, 1}));
    sg_tensor_release(r);
    CHECK(aten_view_copy(m, L(3, 2), &r) == SG_OK && r->storage != m->storage);
    sg_tensor_release(r);
    CHECK(aten_permute_copy(m, L(1, 0), &r) == SG_OK && all_eq(r, (double[]){0, 3, 1, 4, 2, 5}, 6));
    sg_tensor_release(r);
    CHECK(aten__reshape_alias_copy(m, L(6), L(1), &r) == SG_OK && r->storage != m->storage);
    sg_tensor_release(r);
    /* view.dtype: float32 1.0 is 0x3f800000; as int16 the last dim doubles */
    sg_tensor *one = make(SG_FLOAT32, (int64_t[]){2, 2}, 2, (double[]){1, 1, 1, 1});
    CHECK(aten_view_dtype(one, SG_INT32, &r) == SG_OK && r->dtype == SG_INT32 && at(r, 3) == 0x3f800000);
    sg_tensor_release(r);
    CHECK(aten_view_dtype(one, SG_INT16, &r) == SG_OK && shape_is(r, (int64_t[]){2, 4}, 2));
    CHECK(strides_are(r, (int64_t[]){4, 1}) && at(r, 0) == 0 && at(r, 1) == 0x3f80);
    sg_tensor *back = NULL;
    CHECK(aten_view_dtype(r, SG_FLOAT64, &back) == SG_OK && shape_is(back, (int64_t[]){2, 1}, 2));
    sg_tensor_release(back);
    sg_tensor_release(r);
    sg_tensor *ot = NULL;
    CHECK(aten_t(one, &ot) == SG_OK && aten_view_dtype(ot, SG_INT16, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "self.stride(-1) must be 1 to view float32 as int16") != NULL);
    CHECK(aten_view_copy_dtype(one, SG_INT32, &r) == SG_OK && r->storage != one->storage);
    sg_tensor_release(r);
    sg_tensor *odd = iota((int64_t[]){3}, 1);
    CHECK(aten_view_dtype(odd, SG_FLOAT64, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "self.size(-1) must be divisible by 2") != NULL);
    sg_tensor_release(odd);
    sg_tensor_release(ot);
    sg_tensor_release(one);
    sg_tensor_release(m);
    sg_tensor_release(y);
    sg_tensor_release(x);
}

/* Views are CompositeExplicitAutograd: they run on Meta tensors too (shapes only). */
static void test_meta(void) {
    sg_tensor *x = NULL, *r = NULL;
    CHECK(sg_tensor_empty((int64_t[]){2, 3, 4}, 3, SG_FLOAT32, SG_META, &x) == SG_OK);
    CHECK(aten_transpose_int(x, 0, 2, &r) == SG_OK && shape_is(r, (int64_t[]){4, 3, 2}, 3));
    CHECK(r->device.type == SG_DEV_META);
    sg_tensor *c = NULL;
    CHECK(aten_reshape(r, L(-1), &c) == SG_OK && shape_is(c, (int64_t[]){24}, 1) && c->device.type == SG_DEV_META);
    sg_tensor_release(c);
    CHECK(aten_view_copy(x, L(6, 4), &c) == SG_OK && c->device.type == SG_DEV_META);
    sg_tensor_release(c);
    sg_tensor_list l = {NULL, 0};
    CHECK(aten_chunk(x, 2, 2, &l) == SG_OK && l.len == 2 && l.items[1]->device.type == SG_DEV_META);
    sg_tensor_list_release(&l);
    sg_tensor_release(r);
    sg_tensor_release(x);
}

/* The generator's out= kernels of `autogen:` variants resize out= as aten's generated ones do
 * (an empty out= tensor takes the result's sizes), then copy. */
static void test_autogen_out_resizes(void) {
    int64_t    sz[2] = {2, 3}, zero[1] = {0};
    sg_tensor *x, *out, *ret = NULL;
    CHECK(sg_tensor_zeros(sz, 2, SG_FLOAT32, SG_CPU, &x) == SG_OK);
    ((float *)sg_tensor_data(x))[4] = 7;
    CHECK(sg_tensor_empty(zero, 1, SG_FLOAT32, SG_CPU, &out) == SG_OK);
    CHECK(aten_unsqueeze_copy_out(x, 1, out, &ret) == SG_OK && ret == out);
    CHECK(out->ndim == 3 && out->sizes[0] == 2 && out->sizes[1] == 1 && out->sizes[2] == 3);
    CHECK(((float *)sg_tensor_data(out))[4] == 7);
    sg_tensor_release(ret);
    sg_tensor_release(out);
    sg_tensor_release(x);
}

/* A call whose generated kernel goes through another op reports the op the user called
 * (this program registers no CUDA kernels, so add.out has none). */
static void test_error_names_called_op(void) {
    static float buf[4];
    int64_t      sz[1] = {4};
    sg_tensor   *a, *r = NULL;
    CHECK(sg_tensor_from_blob(buf, sz, NULL, 1, SG_FLOAT32, SG_CUDA(0), 0, NULL, NULL, &a) ==
          SG_OK);
    /* in place: no CUDA memory is allocated on the way (this machine may have no GPU) */
    CHECK(aten_add__Tensor(a, a, sg_scalar_int(1), &r) == SG_ENOKERNEL && r == NULL);
    const char *m = sg_last_error();
    CHECK(strstr(m, "could not run 'aten::add_.Tensor'") && strstr(m, "'aten::add.out'"));
    sg_tensor_release(a);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_autogen_out_resizes();
    test_error_names_called_op();
    test_view_reshape();
    test_transpose_permute_expand();
    test_slice_select_narrow();
    test_squeeze_flatten();
    test_split_chunk();
    test_as_strided_alias_dtype();
    test_meta();
    sg_runtime_shutdown();
    return check_result("test_cpu_views");
}
