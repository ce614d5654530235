/* test_cpu_layout.c: the strides of new results, as aten gives them. A pointwise result (and an
 * out= the op resizes) takes its inputs' memory order by TensorIterator's rule: the first input
 * whose strides tell two dims apart orders them, a broadcast dim tells nothing, and of equal
 * strides the smaller size goes inside. empty_like and clone of a tensor that is not dense keep
 * its order; copy keeps self's geometry, storage offset included; where(condition) gives rows
 * of one tensor. The expected strides are what PyTorch 2.11 gives for the same calls (the
 * conformance suite checks the 2-d cases at scale; these are the orders it does not reach). */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"

#include <string.h>

/* A view of t with sizes and strides (elements) at offset. */
static sg_tensor *view(sg_tensor *t, const int64_t *sizes, const int64_t *strides, int32_t n,
                       int64_t offset) {
    sg_tensor *v = NULL;
    CHECK(sg_tensor_as_strided(t, sizes, strides, n, offset, &v) == SG_OK);
    return v;
}

static bool strides_are(const sg_tensor *t, const int64_t *want, int32_t n) {
    if (!t || t->ndim != n) return false;
    for (int32_t d = 0; d < n; d++)
        if (t->sizes[d] > 1 && t->strides[d] != want[d]) {
            fprintf(stderr, "  dim %d: stride %lld, want %lld\n", d, (long long)t->strides[d],
                    (long long)want[d]);
            return false;
        }
    return true;
}

/* a = randn(2, 3, 4).permute(2, 0, 1) (sizes [4, 2, 3], strides [1, 12, 4]); b contiguous */
static void test_binary_order(void) {
    sg_tensor *base = make(SG_FLOAT32, (int64_t[]){24}, 1, NULL);
    sg_tensor *a = view(base, (int64_t[]){4, 2, 3}, (int64_t[]){1, 12, 4}, 3, 0);
    sg_tensor *b = make(SG_FLOAT32, (int64_t[]){4, 2, 3}, 3, NULL), *r = NULL;
    /* the first input decides: a's order for a + b, b's (contiguous) for b + a */
    CHECK(aten_add_Tensor(a, b, sg_scalar_int(1), &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){1, 12, 4}, 3));
    sg_tensor_release(r);
    CHECK(aten_add_Tensor(b, a, sg_scalar_int(1), &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){6, 3, 1}, 3));
    sg_tensor_release(r);
    /* a unary op and a wrapped number: self's order */
    CHECK(aten_mul_Scalar(a, sg_scalar_int(2), &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){1, 12, 4}, 3));
    sg_tensor_release(r);
    /* an out= the op resizes takes the same order; one of the right shape keeps its own */
    sg_tensor *o = make(SG_FLOAT32, (int64_t[]){0}, 1, NULL);
    CHECK(aten_add_out(a, b, sg_scalar_int(1), o, &r) == SG_OK && r == o);
    CHECK(strides_are(o, (int64_t[]){1, 12, 4}, 3));
    sg_tensor_release(r);
    sg_tensor *o2 = make(SG_FLOAT32, (int64_t[]){4, 2, 3}, 3, NULL);
    CHECK(aten_add_out(a, b, sg_scalar_int(1), o2, &r) == SG_OK);
    CHECK(strides_are(o2, (int64_t[]){6, 3, 1}, 3));
    sg_tensor_release(r);
    sg_tensor_release(o2);
    sg_tensor_release(o);
    sg_tensor_release(b);
    sg_tensor_release(a);
    sg_tensor_release(base);
}

/* broadcast dims tell nothing: [4, 1, 3] + [2, 3] is contiguous either way round */
static void test_broadcast_order(void) {
    sg_tensor *c = make(SG_FLOAT32, (int64_t[]){4, 1, 3}, 3, NULL);
    sg_tensor *d = make(SG_FLOAT32, (int64_t[]){2, 3}, 2, NULL), *r = NULL;
    CHECK(aten_add_Tensor(c, d, sg_scalar_int(1), &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){6, 3, 1}, 3));
    sg_tensor_release(r);
    CHECK(aten_add_Tensor(d, c, sg_scalar_int(1), &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){6, 3, 1}, 3));
    sg_tensor_release(r);
    sg_tensor_release(d);
    sg_tensor_release(c);
}

/* equal strides: the smaller size goes inside. y = randn(3, 1, 2).transpose(0, 2): sizes
 * [2, 1, 3], strides [1, 2, 2] */
static void test_equal_strides(void) {
    sg_tensor *base = make(SG_FLOAT32, (int64_t[]){6}, 1, NULL), *r = NULL;
    sg_tensor *y = view(base, (int64_t[]){2, 1, 3}, (int64_t[]){1, 2, 2}, 3, 0);
    CHECK(aten_mul_Scalar(y, sg_scalar_int(2), &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){1, 2, 2}, 3));
    sg_tensor_release(r);
    CHECK(aten_empty_like(y, NULL, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){1, 2, 2}, 3));
    sg_tensor_release(r);
    sg_tensor_release(y);
    sg_tensor_release(base);
}

/* x = randn(4, 6).t()[::2]: sizes [3, 4], strides [2, 6], not dense. empty_like, clone and
 * sort make dense strides in its order; a pointwise result too */
static void test_not_dense(void) {
    sg_tensor *base = make(SG_FLOAT32, (int64_t[]){24}, 1, NULL), *r = NULL, *i = NULL;
    sg_tensor *x = view(base, (int64_t[]){3, 4}, (int64_t[]){2, 6}, 2, 0);
    int64_t    want[2] = {1, 3};
    CHECK(aten_empty_like(x, NULL, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(strides_are(r, want, 2));
    sg_tensor_release(r);
    CHECK(aten_clone(x, NULL, &r) == SG_OK);
    CHECK(strides_are(r, want, 2));
    sg_tensor_release(r);
    CHECK(aten_sort(x, -1, false, &r, &i) == SG_OK);
    CHECK(strides_are(r, want, 2) && strides_are(i, want, 2));
    sg_tensor_release(r);
    sg_tensor_release(i);
    CHECK(aten_neg(x, &r) == SG_OK);
    CHECK(strides_are(r, want, 2));
    sg_tensor_release(r);
    sg_tensor_release(x);
    sg_tensor_release(base);
}

/* copy(self, src): self's strides and storage offset (z = randn(5, 6)[1:, ::2].t()) */
static void test_copy_geometry(void) {
    sg_tensor *base = make(SG_FLOAT32, (int64_t[]){30}, 1, NULL), *r = NULL;
    sg_tensor *z = view(base, (int64_t[]){3, 4}, (int64_t[]){2, 6}, 2, 6);
    double     v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    sg_tensor *src = make(SG_FLOAT32, (int64_t[]){3, 4}, 2, v);
    CHECK(aten_copy(z, src, false, &r) == SG_OK);
    CHECK(strides_are(r, (int64_t[]){2, 6}, 2) && r->offset == 6);
    for (int64_t k = 0; r && k < 12; k++) CHECK(at(r, k) == v[k]);
    CHECK(r && r->storage != base->storage);
    sg_tensor_release(r);
    sg_tensor_release(src);
    sg_tensor_release(z);
    sg_tensor_release(base);
}

/* where(condition): row d of one [ndim, count] tensor, at offset d * count */
static void test_where_rows(void) {
    double         v[6] = {1, 0, 1, 1, 0, 1};
    sg_tensor     *c = make(SG_BOOL, (int64_t[]){2, 3}, 2, v);
    sg_tensor_list l = {NULL, 0};
    CHECK(aten_where(c, &l) == SG_OK && l.len == 2);
    for (int32_t d = 0; d < l.len; d++) {
        CHECK(l.items[d]->ndim == 1 && l.items[d]->sizes[0] == 4);
        CHECK(l.items[d]->offset == 4 * d && l.items[d]->storage == l.items[0]->storage);
    }
    double rows[2][4] = {{0, 0, 1, 1}, {0, 2, 0, 2}};
    for (int32_t d = 0; d < l.len; d++)
        for (int64_t k = 0; k < 4; k++) CHECK(at(l.items[d], k) == rows[d][k]);
    sg_tensor_list_release(&l);
    sg_tensor_release(c);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_binary_order();
    test_broadcast_order();
    test_equal_strides();
    test_not_dense();
    test_copy_geometry();
    test_where_rows();
    sg_runtime_shutdown();
    return check_result("test_cpu_layout");
}
