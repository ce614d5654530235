/* test_cpu_index.c: joining, indexing, triangles, ordering and the elementwise selections
 * (cat, stack, index_select, gather, scatter, scatter_add, embedding, tril/triu, sort, topk,
 * where, masked_fill, clamp, pow with a Scalar) through the generated aten API: aten's dtype
 * rules (promotion, wrapped numbers, integer exponents), strided inputs, NaN handling, out=
 * resizing and the errors aten gives. Expected values are worked out by hand (several are the
 * examples of PyTorch's documentation). */
#include "check.h"
#include "cpu_tensors.h"
#include "host_device.h"
#include "sg_aten_cpu.h"
#include "aten.h"

#include <math.h>
#include <string.h>



static bool all_eq(const sg_tensor *t, const double *want, int64_t n) {
    if (!t || sg_tensor_numel(t) != n) {
        fprintf(stderr, "  numel %lld, want %lld\n", t ? (long long)sg_tensor_numel(t) : -1LL, (long long)n);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        double g = at(t, i);
        if (!(g == want[i] || (isnan(g) && isnan(want[i])) || fabs(g - want[i]) < 1e-5)) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i, g, want[i]);
            return false;
        }
    }
    return true;
}


#define S(...) (const int64_t[]){__VA_ARGS__}, (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / 8)
#define V(...) (const double[]){__VA_ARGS__}
#define LIST(...) ((sg_tensor_list){(sg_tensor *[]){__VA_ARGS__}, sizeof((sg_tensor *[]){__VA_ARGS__}) / sizeof(sg_tensor *)})

static void test_cat_stack(void) {
    sg_tensor *a = make(SG_FLOAT32, S(2, 2), V(1, 2, 3, 4));
    sg_tensor *b = make(SG_INT32, S(2, 1), V(5, 6));
    sg_tensor *c = make(SG_INT64, S(1, 2), V(7, 8));
    sg_tensor *r = NULL, *ret = NULL;
    /* promoted: float32 with int32 and int64 */
    CHECK(aten_cat(LIST(a, b), 1, &r) == SG_OK && r->dtype == SG_FLOAT32 && shape_is(r, S(2, 3)));
    CHECK(all_eq(r, V(1, 2, 5, 3, 4, 6), 6));
    sg_tensor_release(r);
    CHECK(aten_cat(LIST(a, c), -2, &r) == SG_OK && all_eq(r, V(1, 2, 3, 4, 7, 8), 6));
    sg_tensor_release(r);
    CHECK(aten_cat(LIST(b, b), 0, &r) == SG_OK && r->dtype == SG_INT32 && shape_is(r, S(4, 1)));
    sg_tensor_release(r);
    /* a legacy empty [0] tensor is skipped for shapes, but promotes */
    sg_tensor *e = make(SG_FLOAT64, S(0), V(0));
    CHECK(aten_cat(LIST(a, e), 1, &r) == SG_OK && r->dtype == SG_FLOAT64 && shape_is(r, S(2, 2)));
    CHECK(all_eq(r, V(1, 2, 3, 4), 4));
    sg_tensor_release(r);
    CHECK(aten_cat(LIST(e, e), 0, &r) == SG_OK && shape_is(r, S(0)));
    sg_tensor_release(r);
    /* a transposed input */
    sg_tensor *at_ = NULL;
    CHECK(sg_tensor_transpose(a, 0, 1, &at_) == SG_OK);
    CHECK(aten_cat(LIST(at_, a), 0, &r) == SG_OK && all_eq(r, V(1, 3, 2, 4, 1, 2, 3, 4), 8));
    sg_tensor_release(r);
    /* errors */
    CHECK(aten_cat(LIST(a, b), 0, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "cat: Sizes of tensors must match except in dimension 0. Expected size 2 but got size 1 for tensor number 1 in the list.");
    sg_tensor *z = make(SG_FLOAT32, NULL, 0, V(1)), *v3 = make(SG_FLOAT32, S(3), V(1, 2, 3));
    CHECK(aten_cat(LIST(a, z), 0, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "cat: zero-dimensional tensor (at position 1) cannot be concatenated");
    CHECK(aten_cat(LIST(a, v3), 0, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "cat: Tensors must have same number of dimensions: got 2 and 1");
    CHECK(aten_cat(LIST(a, a), 2, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "expected to be in range of [-2, 1], but got 2") != NULL);
    CHECK(aten_cat((sg_tensor_list){NULL, 0}, 0, &r) == SG_EINVAL);
    /* out=: resized, and of a dtype the result can be cast to */
    sg_tensor *out = make(SG_FLOAT64, S(1), V(0));
    CHECK(aten_cat_out(LIST(a, b), 1, out, &ret) == SG_OK && ret == out && shape_is(out, S(2, 3)));
    CHECK(out->dtype == SG_FLOAT64 && all_eq(out, V(1, 2, 5, 3, 4, 6), 6));
    sg_tensor_release(ret);
    sg_tensor *iout = make(SG_INT32, S(2, 3), V(0, 0, 0, 0, 0, 0));
    CHECK(aten_cat_out(LIST(a, b), 1, iout, &ret) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "cat: input types can't be cast to the desired output type Int");
    CHECK(aten_cat_out(LIST(a, out), 1, out, &ret) == SG_EINVAL); /* out is an input */
    /* stack */
    sg_tensor *p = make(SG_FLOAT32, S(2), V(1, 2)), *q = make(SG_FLOAT32, S(2), V(3, 4));
    CHECK(aten_stack(LIST(p, q), 0, &r) == SG_OK && shape_is(r, S(2, 2)) && all_eq(r, V(1, 2, 3, 4), 4));
    sg_tensor_release(r);
    CHECK(aten_stack(LIST(p, q), -1, &r) == SG_OK && all_eq(r, V(1, 3, 2, 4), 4));
    sg_tensor_release(r);
    CHECK(aten_stack(LIST(p, v3), 0, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "stack: stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
    CHECK(aten_stack(LIST(p, q), 2, &r) == SG_EINVAL);
    CHECK(aten_stack_out(LIST(p, q), 1, out, &ret) == SG_OK && shape_is(out, S(2, 2)) && all_eq(out, V(1, 3, 2, 4), 4));
    sg_tensor_release(ret);
    sg_tensor_release(p);
    sg_tensor_release(q);
    sg_tensor_release(iout);
    sg_tensor_release(out);
    sg_tensor_release(z);
    sg_tensor_release(v3);
    sg_tensor_release(at_);
    sg_tensor_release(e);
    sg_tensor_release(a);
    sg_tensor_release(b);
    sg_tensor_release(c);
}

static void test_index_select_gather_embedding(void) {
    sg_tensor *x = make(SG_FLOAT32, S(3, 3), V(0, 1, 2, 3, 4, 5, 6, 7, 8)), *r = NULL, *ret = NULL;
    sg_tensor *i64 = make(SG_INT64, S(2), V(2, 0)), *i32 = make(SG_INT32, S(2), V(1, 1));
    CHECK(aten_index_select(x, 1, i64, &r) == SG_OK && shape_is(r, S(3, 2)) && all_eq(r, V(2, 0, 5, 3, 8, 6), 6));
    sg_tensor_release(r);
    CHECK(aten_index_select(x, 0, i32, &r) == SG_OK && all_eq(r, V(3, 4, 5, 3, 4, 5), 6));
    sg_tensor_release(r);
    sg_tensor *xt = NULL, *two = make(SG_INT64, S(1), V(2));
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_index_select(xt, 0, two, &r) == SG_OK && all_eq(r, V(2, 5, 8), 3));
    sg_tensor_release(r);
    sg_tensor *oob = make(SG_INT64, S(2), V(0, 3)), *fidx = make(SG_FLOAT32, S(1), V(0));
    CHECK(aten_index_select(x, 0, oob, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "index_select: index out of range in self");
    CHECK(aten_index_select(x, 0, fidx, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "Expected dtype int32 or int64 for index") != NULL);
    sg_tensor *out = make(SG_FLOAT32, S(1), V(0));
    CHECK(aten_index_select_out(x, 1, i64, out, &ret) == SG_OK && ret == out && all_eq(out, V(2, 0, 5, 3, 8, 6), 6));
    sg_tensor_release(ret);
    /* gather: out[i][j] = x[i][index[i][j]] */
    sg_tensor *g = make(SG_FLOAT32, S(2, 2), V(1, 2, 3, 4));
    sg_tensor *gi = make(SG_INT64, S(2, 2), V(0, 0, 1, 0));
    CHECK(aten_gather(g, 1, gi, false, &r) == SG_OK && all_eq(r, V(1, 1, 4, 3), 4));
    sg_tensor_release(r);
    sg_tensor *gi0 = make(SG_INT64, S(1, 2), V(1, 0));
    CHECK(aten_gather(g, 0, gi0, false, &r) == SG_OK && shape_is(r, S(1, 2)) && all_eq(r, V(3, 2), 2));
    sg_tensor_release(r);
    sg_tensor *gi32 = make(SG_INT32, S(2, 2), V(0, 0, 1, 0)), *gbad = make(SG_INT64, S(1, 2), V(0, 2));
    /* an int32 index as an int64 one; int16 refused, as aten does */
    CHECK(aten_gather(g, 1, gi32, false, &r) == SG_OK && all_eq(r, V(1, 1, 4, 3), 4));
    sg_tensor_release(r);
    sg_tensor *gi16 = make(SG_INT16, S(2, 2), V(0, 0, 1, 0));
    CHECK(aten_gather(g, 1, gi16, false, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "gather: gather(): Expected dtype int32/int64 for index");
    sg_tensor_release(gi16);
    CHECK(aten_gather(g, 1, gbad, false, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "gather: index 2 is out of bounds for dimension 1 with size 2");
    sg_tensor *gwide = make(SG_INT64, S(1, 3), V(0, 0, 0));
    CHECK(aten_gather(g, 0, gwide, false, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "gather: Size does not match at dimension 1 expected index [1, 3] to be no larger than self [2, 2] apart from dimension 0");
    /* embedding: the rows the indices name */
    sg_tensor *w = make(SG_FLOAT32, S(4, 3), V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
    sg_tensor *ix = make(SG_INT64, S(2, 2), V(0, 2, 3, 1)), *ix32 = make(SG_INT32, S(2), V(3, 3));
    CHECK(aten_embedding(w, ix, -1, false, false, &r) == SG_OK && shape_is(r, S(2, 2, 3)));
    CHECK(all_eq(r, V(0, 1, 2, 6, 7, 8, 9, 10, 11, 3, 4, 5), 12));
    sg_tensor_release(r);
    CHECK(aten_embedding(w, ix32, 3, false, false, &r) == SG_OK && all_eq(r, V(9, 10, 11, 9, 10, 11), 6));
    sg_tensor_release(r);
    CHECK(aten_embedding(w, fidx, -1, false, false, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "one of the following scalar types: Long, Int; but got torch.FloatTensor instead") != NULL);
    sg_tensor *ix4 = make(SG_INT64, S(1), V(4));
    CHECK(aten_embedding(w, ix4, -1, false, false, &r) == SG_EINVAL);
    CHECK(aten_embedding(i64, ix, -1, false, false, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "embedding: 'weight' must be 2-D");
    sg_tensor_release(ix4);
    sg_tensor_release(ix32);
    sg_tensor_release(ix);
    sg_tensor_release(w);
    sg_tensor_release(gwide);
    sg_tensor_release(gbad);
    sg_tensor_release(gi32);
    sg_tensor_release(gi0);
    sg_tensor_release(gi);
    sg_tensor_release(g);
    sg_tensor_release(out);
    sg_tensor_release(fidx);
    sg_tensor_release(oob);
    sg_tensor_release(two);
    sg_tensor_release(xt);
    sg_tensor_release(i32);
    sg_tensor_release(i64);
    sg_tensor_release(x);
}

static void test_scatter(void) {
    sg_tensor *src = make(SG_INT64, S(2, 5), V(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
    sg_tensor *zeros = make(SG_INT64, S(3, 5), V(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    sg_tensor *idx = make(SG_INT64, S(1, 4), V(0, 1, 2, 0)), *r = NULL, *ret = NULL;
    CHECK(aten_scatter_src(zeros, 0, idx, src, &r) == SG_OK);
    CHECK(all_eq(r, V(1, 0, 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0), 15));
    CHECK(all_eq(zeros, V(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 15)); /* functional */
    sg_tensor_release(r);
    sg_tensor *idx1 = make(SG_INT64, S(2, 3), V(0, 1, 2, 0, 1, 4));
    CHECK(aten_scatter_src(zeros, 1, idx1, src, &r) == SG_OK);
    CHECK(all_eq(r, V(1, 2, 3, 0, 0, 6, 7, 0, 0, 8, 0, 0, 0, 0, 0), 15));
    sg_tensor_release(r);
    /* value, with and without a reduction */
    sg_tensor *twos = make(SG_FLOAT32, S(2, 4), V(2, 2, 2, 2, 2, 2, 2, 2));
    sg_tensor *vi = make(SG_INT64, S(2, 1), V(2, 3));
    CHECK(aten_scatter_value_reduce(twos, 1, vi, sg_scalar_float(1.25), "multiply", &r) == SG_OK);
    CHECK(all_eq(r, V(2, 2, 2.5, 2, 2, 2, 2, 2.5), 8));
    sg_tensor_release(r);
    CHECK(aten_scatter_value_reduce(twos, 1, vi, sg_scalar_float(1.25), "add", &r) == SG_OK);
    CHECK(all_eq(r, V(2, 2, 3.25, 2, 2, 2, 2, 3.25), 8));
    sg_tensor_release(r);
    CHECK(aten_scatter_value(twos, 1, vi, sg_scalar_int(9), &r) == SG_OK && all_eq(r, V(2, 2, 9, 2, 2, 2, 2, 9), 8));
    sg_tensor_release(r);
    CHECK(aten_scatter_value_reduce(twos, 1, vi, sg_scalar_int(1), "max", &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "scatter: reduce argument must be either add or multiply.");
    /* scatter_add sums repeated indices; in place through the generated composite */
    sg_tensor *ones = make(SG_FLOAT32, S(2, 5), V(1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
    sg_tensor *acc = make(SG_FLOAT32, S(3, 5), V(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    sg_tensor *ai = make(SG_INT64, S(2, 5), V(0, 1, 2, 0, 0, 0, 1, 2, 2, 2));
    CHECK(aten_scatter_add_(acc, 0, ai, ones, &ret) == SG_OK && ret == acc);
    CHECK(all_eq(acc, V(2, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0, 2, 1, 1), 15));
    sg_tensor_release(ret);
    CHECK(aten_scatter_reduce(acc, 0, ai, ones, "multiply", &r) == SG_OK); /* x1: unchanged */
    CHECK(all_eq(r, V(2, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 0, 2, 1, 1), 15));
    sg_tensor_release(r);
    /* float16 sums accumulate in float: 0.1123046875 + 3 - 3 is exact there, where rounding
     * each step to half would give 0.11328125 */
    sg_dtype   f16 = SG_FLOAT16, f32 = SG_FLOAT32;
    sg_tensor *s32 = make(SG_FLOAT32, S(1), V(0.1123046875)), *v32 = make(SG_FLOAT32, S(2), V(3, -3));
    sg_tensor *h = NULL, *hv = NULL, *back = NULL, *i00 = make(SG_INT64, S(2), V(0, 0));
    CHECK(aten__to_copy(s32, &f16, NULL, NULL, NULL, false, NULL, &h) == SG_OK);
    CHECK(aten__to_copy(v32, &f16, NULL, NULL, NULL, false, NULL, &hv) == SG_OK);
    CHECK(aten_scatter_add(h, 0, i00, hv, &r) == SG_OK && r->dtype == SG_FLOAT16);
    CHECK(aten__to_copy(r, &f32, NULL, NULL, NULL, false, NULL, &back) == SG_OK && all_eq(back, V(0.1123046875), 1));
    sg_tensor_release(back);
    sg_tensor_release(r);
    sg_tensor_release(i00);
    sg_tensor_release(hv);
    sg_tensor_release(h);
    sg_tensor_release(v32);
    sg_tensor_release(s32);
    /* errors */
    CHECK(aten_scatter_src(acc, 0, ai, src, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "scatter: scatter(): Expected self.dtype to be equal to src.dtype");
    sg_tensor *bad = make(SG_INT64, S(1, 1), V(3));
    CHECK(aten_scatter_add(acc, 0, bad, ones, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "scatter_add: index 3 is out of bounds for dimension 0 with size 3");
    sg_tensor *wide = make(SG_INT64, S(1, 6), V(0, 0, 0, 0, 0, 0));
    CHECK(aten_scatter_src(zeros, 0, wide, src, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "scatter: Expected index [1, 6] to be no larger than self [3, 5] apart from dimension 0 and to be no larger size than src [2, 5]");
    sg_tensor *fi = make(SG_FLOAT32, S(1, 1), V(0));
    CHECK(aten_scatter_value(twos, 0, fi, sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "scatter: scatter(): Expected dtype int32/int64 for index");
    sg_tensor *ai32 = make(SG_INT32, S(1, 1), V(2));
    CHECK(aten_scatter_add(acc, 0, ai32, ones, &r) == SG_OK);
    sg_tensor *want = NULL;
    sg_tensor *ai64 = make(SG_INT64, S(1, 1), V(2));
    CHECK(aten_scatter_add(acc, 0, ai64, ones, &want) == SG_OK);
    for (int64_t i = 0; r && want && i < 15; i++) CHECK(at(r, i) == at(want, i));
    CHECK(r && at(r, 10) == at(acc, 10) + 1);
    sg_tensor_release(r), sg_tensor_release(want), sg_tensor_release(ai32), sg_tensor_release(ai64);
    sg_tensor_release(fi);
    sg_tensor_release(wide);
    sg_tensor_release(bad);
    sg_tensor_release(ai);
    sg_tensor_release(acc);
    sg_tensor_release(ones);
    sg_tensor_release(vi);
    sg_tensor_release(twos);
    sg_tensor_release(idx1);
    sg_tensor_release(idx);
    sg_tensor_release(zeros);
    sg_tensor_release(src);
}

static void test_tril_triu(void) {
    sg_tensor *x = make(SG_FLOAT32, S(3, 4), V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)), *r = NULL, *ret = NULL;
    CHECK(aten_tril(x, 0, &r) == SG_OK && all_eq(r, V(0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0), 12));
    sg_tensor_release(r);
    CHECK(aten_tril(x, 1, &r) == SG_OK && all_eq(r, V(0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11), 12));
    sg_tensor_release(r);
    CHECK(aten_triu(x, 0, &r) == SG_OK && all_eq(r, V(0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11), 12));
    sg_tensor_release(r);
    CHECK(aten_triu(x, -1, &r) == SG_OK && all_eq(r, V(0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11), 12));
    sg_tensor_release(r);
    CHECK(aten_triu(x, 2, &r) == SG_OK && all_eq(r, V(0, 0, 2, 3, 0, 0, 0, 7, 0, 0, 0, 0), 12));
    sg_tensor_release(r);
    /* a transposed input, and a batch */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_tril(xt, 0, &r) == SG_OK && all_eq(r, V(0, 0, 0, 1, 5, 0, 2, 6, 10, 3, 7, 11), 12));
    sg_tensor_release(r);
    sg_tensor *b = make(SG_INT64, S(2, 2, 2), V(0, 1, 2, 3, 4, 5, 6, 7));
    CHECK(aten_tril(b, 0, &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, V(0, 0, 2, 3, 4, 0, 6, 7), 8));
    sg_tensor_release(r);
    /* in place (the generated composite), and out= */
    CHECK(aten_triu_(b, 1, &ret) == SG_OK && ret == b && all_eq(b, V(0, 1, 0, 0, 0, 5, 0, 0), 8));
    sg_tensor_release(ret);
    sg_tensor *out = make(SG_FLOAT32, S(1), V(0));
    CHECK(aten_tril_out(x, -1, out, &ret) == SG_OK && shape_is(out, S(3, 4)) && all_eq(out, V(0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0), 12));
    sg_tensor_release(ret);
    sg_tensor *v = make(SG_FLOAT32, S(3), V(1, 2, 3));
    CHECK(aten_tril(v, 0, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "tril: input tensor must have at least 2 dimensions");
    sg_tensor_release(v);
    sg_tensor_release(out);
    sg_tensor_release(b);
    sg_tensor_release(xt);
    sg_tensor_release(x);
}

static void test_sort_topk(void) {
    sg_tensor *v = make(SG_FLOAT32, S(5), V(3, 1, NAN, 1, 2)), *vals = NULL, *idx = NULL;
    bool       stable = true;
    CHECK(aten_sort_stable(v, &stable, -1, false, &vals, &idx) == SG_OK);
    CHECK(all_eq(vals, V(1, 1, 2, 3, NAN), 5) && idx->dtype == SG_INT64 && all_eq(idx, V(1, 3, 4, 0, 2), 5));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_sort(v, 0, true, &vals, &idx) == SG_OK);
    CHECK(all_eq(vals, V(NAN, 3, 2, 1, 1), 5) && all_eq(idx, V(2, 0, 4, 1, 3), 5));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    /* along dim 0 of a matrix; integers descending */
    sg_tensor *m = make(SG_FLOAT64, S(2, 2), V(3, 1, 0, 5));
    CHECK(aten_sort(m, 0, false, &vals, &idx) == SG_OK && all_eq(vals, V(0, 1, 3, 5), 4) && all_eq(idx, V(1, 0, 0, 1), 4));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    sg_tensor *iv = make(SG_INT64, S(4), V(2, -1, 2, 0));
    CHECK(aten_sort(iv, -1, true, &vals, &idx) == SG_OK && all_eq(vals, V(2, 2, 0, -1), 4) && all_eq(idx, V(0, 2, 3, 1), 4));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    /* out= tensors are resized */
    sg_tensor *ov = make(SG_INT64, S(1), V(0)), *oi = make(SG_INT64, S(1), V(0)), *rv = NULL, *ri = NULL;
    CHECK(aten_sort_values(iv, 0, false, ov, oi, &rv, &ri) == SG_OK && rv == ov && ri == oi);
    CHECK(all_eq(ov, V(-1, 0, 2, 2), 4) && all_eq(oi, V(1, 3, 0, 2), 4));
    sg_tensor_release(rv);
    sg_tensor_release(ri);
    /* topk: NaN counts as the largest */
    sg_tensor *t = make(SG_FLOAT32, S(6), V(1, 5, 3, 5, NAN, 2));
    CHECK(aten_topk(t, 3, -1, true, true, &vals, &idx) == SG_OK);
    CHECK(all_eq(vals, V(NAN, 5, 5), 3) && all_eq(idx, V(4, 1, 3), 3));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_topk(t, 2, 0, false, true, &vals, &idx) == SG_OK && all_eq(vals, V(1, 2), 2) && all_eq(idx, V(0, 5), 2));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_topk(t, 7, 0, true, true, &vals, &idx) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "topk: selected index k out of range");
    sg_tensor *m2 = make(SG_INT32, S(2, 3), V(3, 1, 2, 0, 5, 4));
    CHECK(aten_topk(m2, 1, 1, true, true, &vals, &idx) == SG_OK && shape_is(vals, S(2, 1)));
    CHECK(vals->dtype == SG_INT32 && all_eq(vals, V(3, 5), 2) && all_eq(idx, V(0, 1), 2));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_topk(m2, 1, 0, true, true, &vals, &idx) == SG_OK && all_eq(vals, V(3, 5, 4), 3) && all_eq(idx, V(0, 1, 1), 3));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_topk(m2, 0, 1, true, true, &vals, &idx) == SG_OK && shape_is(vals, S(2, 0)));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    sg_tensor_release(m2);
    sg_tensor_release(t);
    sg_tensor_release(ov);
    sg_tensor_release(oi);
    sg_tensor_release(iv);
    sg_tensor_release(m);
    sg_tensor_release(v);
}

static void test_where_masked_fill(void) {
    sg_tensor *cond = make(SG_BOOL, S(3), V(1, 0, 1)), *r = NULL, *ret = NULL;
    sg_tensor *a = make(SG_INT32, S(3), V(1, 2, 3)), *b = make(SG_FLOAT32, S(1), V(0.5));
    CHECK(aten_where_self(cond, a, b, &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, V(1, 0.5, 3), 3));
    sg_tensor_release(r);
    CHECK(aten_where_ScalarOther(cond, a, sg_scalar_int(9), &r) == SG_OK && r->dtype == SG_INT32);
    CHECK(all_eq(r, V(1, 9, 3), 3));
    sg_tensor_release(r);
    CHECK(aten_where_ScalarSelf(cond, sg_scalar_float(2.5), a, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, V(2.5, 2, 2.5), 3));
    sg_tensor_release(r);
    CHECK(aten_where_Scalar(cond, sg_scalar_int(1), sg_scalar_int(0), &r) == SG_OK && r->dtype == SG_INT64);
    CHECK(all_eq(r, V(1, 0, 1), 3));
    sg_tensor_release(r);
    CHECK(aten_where_Scalar(cond, sg_scalar_float(1), sg_scalar_int(0), &r) == SG_OK && r->dtype == SG_FLOAT32);
    sg_tensor_release(r);
    /* broadcasting the condition [2, 1] with [3] */
    sg_tensor *c2 = make(SG_BOOL, S(2, 1), V(1, 0)), *z = make(SG_INT32, S(3), V(0, 0, 0));
    CHECK(aten_where_self(c2, a, z, &r) == SG_OK && shape_is(r, S(2, 3)) && all_eq(r, V(1, 2, 3, 0, 0, 0), 6));
    sg_tensor_release(r);
    sg_tensor *cu8 = make(SG_UINT8, S(3), V(0, 2, 0)); /* deprecated in aten, still accepted */
    CHECK(aten_where_self(cu8, a, z, &r) == SG_OK && all_eq(r, V(0, 2, 0), 3));
    sg_tensor_release(r);
    sg_tensor *cf = make(SG_FLOAT32, S(3), V(1, 0, 1));
    CHECK(aten_where_self(cf, a, z, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "where: where expected condition to be a boolean tensor, but got a tensor with dtype Float");
    sg_tensor *o64 = make(SG_FLOAT64, S(3), V(0, 0, 0));
    CHECK(aten_where_self_out(cond, a, b, o64, &ret) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "where: Expected out type to be Float but got Double");
    /* where(condition): the coordinates of the true elements */
    sg_tensor     *c3 = make(SG_BOOL, S(3, 2), V(1, 0, 0, 1, 1, 1));
    sg_tensor_list l = {NULL, 0};
    CHECK(aten_where(c3, &l) == SG_OK && l.len == 2);
    CHECK(l.len == 2 && all_eq(l.items[0], V(0, 1, 2, 2), 4) && all_eq(l.items[1], V(0, 1, 0, 1), 4));
    sg_tensor_list_release(&l);
    /* masked_fill: the mask broadcasts over rows */
    sg_tensor *x = make(SG_FLOAT32, S(2, 3), V(1, 2, 3, 4, 5, 6));
    CHECK(aten_masked_fill_Scalar(x, cond, sg_scalar_int(-1), &r) == SG_OK && all_eq(r, V(-1, 2, -1, -1, 5, -1), 6));
    CHECK(all_eq(x, V(1, 2, 3, 4, 5, 6), 6));
    sg_tensor_release(r);
    sg_tensor *val = make(SG_FLOAT64, NULL, 0, V(7.5));
    CHECK(aten_masked_fill__Tensor(x, cond, val, &ret) == SG_OK && ret == x && all_eq(x, V(7.5, 2, 7.5, 7.5, 5, 7.5), 6));
    sg_tensor_release(ret);
    /* functional: self [3] and mask [2, 1] broadcast to [2, 3] */
    CHECK(aten_masked_fill_Scalar(a, c2, sg_scalar_float(2.7), &r) == SG_OK && shape_is(r, S(2, 3)));
    CHECK(r->dtype == SG_INT32 && all_eq(r, V(2, 2, 2, 1, 2, 3), 6));
    sg_tensor_release(r);
    CHECK(aten_masked_fill__Scalar(a, c2, sg_scalar_int(0), &ret) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "masked_fill_: output with shape [3] doesn't match the broadcast shape [2, 1]");
    CHECK(aten_masked_fill__Scalar(x, cu8, sg_scalar_int(0), &ret) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "masked_fill_ only supports boolean masks") != NULL);
    CHECK(aten_masked_fill__Tensor(x, cond, a, &ret) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)") != NULL);
    sg_tensor *i8 = make(SG_INT8, S(2), V(1, 2)), *tt = make(SG_BOOL, S(2), V(1, 1));
    CHECK(aten_masked_fill__Scalar(i8, tt, sg_scalar_int(300), &ret) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "masked_fill_: value cannot be converted to type int8_t without overflow");
    /* a strided self: only the masked elements of the view change */
    sg_tensor *xt = NULL, *m3 = make(SG_BOOL, S(3, 1), V(0, 1, 0));
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_masked_fill__Scalar(xt, m3, sg_scalar_int(0), &ret) == SG_OK && all_eq(x, V(7.5, 0, 7.5, 7.5, 0, 7.5), 6));
    sg_tensor_release(ret);
    sg_tensor_release(xt);
    sg_tensor_release(m3);
    sg_tensor_release(tt);
    sg_tensor_release(i8);
    sg_tensor_release(val);
    sg_tensor_release(x);
    sg_tensor_release(c3);
    sg_tensor_release(o64);
    sg_tensor_release(cf);
    sg_tensor_release(cu8);
    sg_tensor_release(z);
    sg_tensor_release(c2);
    sg_tensor_release(a);
    sg_tensor_release(b);
    sg_tensor_release(cond);
}

static void test_clamp(void) {
    sg_tensor *x = make(SG_FLOAT32, S(4), V(-2, 0.5, 3, NAN)), *r = NULL, *ret = NULL;
    sg_scalar  lo = sg_scalar_int(-1), hi = sg_scalar_float(1), zero = sg_scalar_int(0);
    CHECK(aten_clamp(x, &lo, &hi, &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, V(-1, 0.5, 1, NAN), 4));
    sg_tensor_release(r);
    CHECK(aten_clamp(x, &zero, NULL, &r) == SG_OK && all_eq(r, V(0, 0.5, 3, NAN), 4));
    sg_tensor_release(r);
    CHECK(aten_clamp(x, NULL, &zero, &r) == SG_OK && all_eq(r, V(-2, 0, 0, NAN), 4));
    sg_tensor_release(r);
    CHECK(aten_clamp_min(x, sg_scalar_int(1), &r) == SG_OK && all_eq(r, V(1, 1, 3, NAN), 4));
    sg_tensor_release(r);
    CHECK(aten_clamp_max(x, sg_scalar_int(1), &r) == SG_OK && all_eq(r, V(-2, 0.5, 1, NAN), 4));
    sg_tensor_release(r);
    CHECK(aten_clamp(x, NULL, NULL, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "At least one of 'min' or 'max' must not be None") != NULL);
    /* min above max: everything becomes max */
    sg_scalar two = sg_scalar_int(2), one = sg_scalar_int(1);
    CHECK(aten_clamp(x, &two, &one, &r) == SG_OK && all_eq(r, V(1, 1, 1, NAN), 4));
    sg_tensor_release(r);
    /* integers: int bounds keep int64, a float bound promotes to float32 */
    sg_tensor *i = make(SG_INT64, S(3), V(-5, 0, 5));
    sg_scalar  m1 = sg_scalar_int(-1), half = sg_scalar_float(0.5);
    CHECK(aten_clamp(i, &m1, &two, &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, V(-1, 0, 2), 3));
    sg_tensor_release(r);
    CHECK(aten_clamp(i, &half, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, V(0.5, 0.5, 5), 3));
    sg_tensor_release(r);
    CHECK(aten_clamp_(i, &half, NULL, &ret) == SG_EINVAL); /* no promotion in place */
    CHECK(aten_clamp_(i, &m1, NULL, &ret) == SG_OK && ret == i && all_eq(i, V(-1, 0, 5), 3));
    sg_tensor_release(ret);
    sg_tensor *bl = make(SG_BOOL, S(2), V(0, 1));
    sg_scalar  t = sg_scalar_bool(true);
    CHECK(aten_clamp(bl, &t, NULL, &r) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"clamp_scalar_cpu\" not implemented for 'Bool'");
    /* tensor bounds broadcast and promote; NaN bounds propagate */
    sg_tensor *x2 = make(SG_FLOAT32, S(2, 2), V(-2, 0.5, 3, 4));
    sg_tensor *tlo = make(SG_FLOAT32, S(2), V(0, 1)), *thi = make(SG_FLOAT64, NULL, 0, V(2.5));
    CHECK(aten_clamp_Tensor(x2, tlo, thi, &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, V(0, 1, 2.5, 2.5), 4));
    sg_tensor_release(r);
    sg_tensor *nlo = make(SG_FLOAT32, S(2), V(NAN, 0));
    CHECK(aten_clamp_Tensor(x2, nlo, NULL, &r) == SG_OK && all_eq(r, V(NAN, 0.5, NAN, 4), 4));
    sg_tensor_release(r);
    CHECK(aten_clamp_max_Tensor(x2, tlo, &r) == SG_OK && all_eq(r, V(-2, 0.5, 0, 1), 4));
    sg_tensor_release(r);
    sg_tensor *ti = make(SG_INT32, S(3), V(-5, 0, 5)), *fb = make(SG_FLOAT32, S(3), V(0.5, 0.5, 0.5));
    CHECK(aten_clamp_min_Tensor(ti, fb, &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, V(0.5, 0.5, 5), 3));
    sg_tensor_release(r);
    CHECK(aten_clamp_Tensor(x2, NULL, NULL, &r) == SG_EINVAL);
    /* in place on a strided view, and out= */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x2, 0, 1, &xt) == SG_OK);
    CHECK(aten_clamp_max_(xt, sg_scalar_int(1), &ret) == SG_OK && all_eq(x2, V(-2, 0.5, 1, 1), 4));
    sg_tensor_release(ret);
    /* out= must have the result's dtype (aten's clamp checks every operand's), and is resized */
    sg_tensor *out = make(SG_FLOAT64, S(1), V(0));
    ret = NULL;
    CHECK(aten_clamp_out(x, &lo, &hi, out, &ret) == SG_EINVAL && !ret);
    CHECK_STR(sg_last_error(), "clamp: Found dtype Double but expected Float");
    sg_tensor_release(out);
    out = make(SG_FLOAT32, S(1), V(0));
    CHECK(aten_clamp_out(x, &lo, &hi, out, &ret) == SG_OK && ret == out && shape_is(out, S(4)));
    CHECK(all_eq(out, V(-1, 0.5, 1, NAN), 4));
    sg_tensor_release(ret);
    sg_tensor_release(out);
    sg_tensor_release(xt);
    sg_tensor_release(ti);
    sg_tensor_release(fb);
    sg_tensor_release(nlo);
    sg_tensor_release(tlo);
    sg_tensor_release(thi);
    sg_tensor_release(x2);
    sg_tensor_release(bl);
    sg_tensor_release(i);
    sg_tensor_release(x);
}

static void test_pow(void) {
    sg_tensor *f = make(SG_FLOAT32, S(3), V(1, 2, 4)), *r = NULL, *ret = NULL;
    CHECK(aten_pow_Tensor_Scalar(f, sg_scalar_int(2), &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, V(1, 4, 16), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(f, sg_scalar_float(0.5), &r) == SG_OK && all_eq(r, V(1, sqrt(2.0), 2), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(f, sg_scalar_int(-1), &r) == SG_OK && all_eq(r, V(1, 0.5, 0.25), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(f, sg_scalar_float(-0.5), &r) == SG_OK && all_eq(r, V(1, 1 / sqrt(2.0), 0.5), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(f, sg_scalar_float(1.5), &r) == SG_OK && all_eq(r, V(1, pow(2, 1.5), 8), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(f, sg_scalar_int(0), &r) == SG_OK && all_eq(r, V(1, 1, 1), 3));
    sg_tensor_release(r);
    /* integers: integer powers stay integral and wrap as the type does */
    sg_tensor *i = make(SG_INT64, S(3), V(1, 2, 3));
    CHECK(aten_pow_Tensor_Scalar(i, sg_scalar_int(3), &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, V(1, 8, 27), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(i, sg_scalar_int(-1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "pow: Integers to negative integer powers are not allowed.");
    CHECK(aten_pow_Tensor_Scalar(i, sg_scalar_float(-1), &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, V(1, 0.5, 1.0 / 3), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(i, sg_scalar_float(0.5), &r) == SG_OK && r->dtype == SG_FLOAT32);
    sg_tensor_release(r);
    sg_tensor *i8 = make(SG_INT8, S(2), V(3, -2));
    CHECK(aten_pow_Tensor_Scalar(i8, sg_scalar_int(5), &r) == SG_OK && r->dtype == SG_INT8 && all_eq(r, V(-13, -32), 2));
    sg_tensor_release(r);
    sg_tensor *bl = make(SG_BOOL, S(2), V(1, 0));
    CHECK(aten_pow_Tensor_Scalar(bl, sg_scalar_int(2), &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, V(1, 0), 2));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(bl, sg_scalar_bool(true), &r) == SG_OK && r->dtype == SG_BOOL && all_eq(r, V(1, 0), 2));
    sg_tensor_release(r);
    CHECK(aten_pow_Tensor_Scalar(bl, sg_scalar_int(-2), &r) == SG_EINVAL);
    /* pow(Scalar, Tensor) */
    CHECK(aten_pow_Scalar(sg_scalar_int(2), i, &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, V(2, 4, 8), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Scalar(sg_scalar_float(2), i, &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, V(2, 4, 8), 3));
    sg_tensor_release(r);
    CHECK(aten_pow_Scalar(sg_scalar_int(1), f, &r) == SG_OK && all_eq(r, V(1, 1, 1), 3));
    sg_tensor_release(r);
    /* in place (the generated composite), on a strided view, and out= */
    sg_tensor *m = make(SG_FLOAT64, S(2, 2), V(1, 2, 3, 4)), *mt = NULL;
    CHECK(sg_tensor_transpose(m, 0, 1, &mt) == SG_OK);
    CHECK(aten_pow__Scalar(mt, sg_scalar_int(3), &ret) == SG_OK && ret == mt && all_eq(m, V(1, 8, 27, 64), 4));
    sg_tensor_release(ret);
    CHECK(aten_pow__Scalar(i, sg_scalar_float(0.5), &ret) == SG_EINVAL); /* float into int64 */
    sg_tensor *out = make(SG_FLOAT64, S(1), V(0));
    CHECK(aten_pow_Tensor_Scalar_out(f, sg_scalar_int(2), out, &ret) == SG_OK && ret == out && all_eq(out, V(1, 4, 16), 3));
    sg_tensor_release(ret);
    CHECK(aten_pow_Tensor_Scalar_out(f, sg_scalar_int(1), out, &ret) == SG_OK && all_eq(out, V(1, 2, 4), 3));
    sg_tensor_release(ret);
    sg_tensor_release(out);
    sg_tensor_release(mt);
    sg_tensor_release(m);
    sg_tensor_release(bl);
    sg_tensor_release(i8);
    sg_tensor_release(i);
    sg_tensor_release(f);
}

/* ---- a backend of its own ------------------------------------------------------------------ *
 * A PrivateUse1 device over host memory (host_device.h), with one kernel of its own (where.self).
 * The composite where.Scalar* kernels must reach it through the dispatcher. */

#define PU1 ((sg_device){SG_DEV_PRIVATEUSE1, 0})

static int pu1_where_calls;
/* where.self on PrivateUse1: computed on the CPU, handed back on the device */
static sg_status pu1_where(sg_keyset ks, sg_tensor *cond, sg_tensor *self, sg_tensor *other,
                           sg_tensor **ret) {
    (void)ks;
    pu1_where_calls++;
    sg_tensor *c = NULL, *a = NULL, *b = NULL, *r = NULL;
    sg_status  st = sg_tensor_to(cond, SG_CPU, &c);
    if (!st) st = sg_tensor_to(self, SG_CPU, &a);
    if (!st) st = sg_tensor_to(other, SG_CPU, &b);
    if (!st) st = aten_where_self(c, a, b, &r);
    if (!st) st = sg_tensor_to(r, PU1, ret);
    sg_tensor_release(c);
    sg_tensor_release(a);
    sg_tensor_release(b);
    sg_tensor_release(r);
    return st;
}

static void test_where_other_backend(void) {
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE1, &host_device) == SG_OK);
    CHECK(aten_where_self_register(SG_KEY_PRIVATEUSE1, pu1_where, NULL) == SG_OK);
    sg_tensor *cc = make(SG_BOOL, S(3), V(1, 0, 1)), *ca = make(SG_INT32, S(3), V(1, 2, 3));
    sg_tensor *cond = NULL, *a = NULL, *r = NULL, *h = NULL;
    CHECK(sg_tensor_to(cc, PU1, &cond) == SG_OK && sg_tensor_to(ca, PU1, &a) == SG_OK);
    CHECK(aten_where_ScalarOther(cond, a, sg_scalar_int(9), &r) == SG_OK && pu1_where_calls == 1);
    CHECK(r && sg_device_eq(r->device, PU1) && r->dtype == SG_INT32);
    CHECK(r && sg_tensor_to(r, SG_CPU, &h) == SG_OK && all_eq(h, V(1, 9, 3), 3));
    sg_tensor_release(h);
    sg_tensor_release(r);
    h = r = NULL;
    CHECK(aten_where_ScalarSelf(cond, sg_scalar_float(2.5), a, &r) == SG_OK && pu1_where_calls == 2);
    CHECK(r && sg_tensor_to(r, SG_CPU, &h) == SG_OK && h->dtype == SG_FLOAT32 &&
          all_eq(h, V(2.5, 2, 2.5), 3));
    sg_tensor_release(h);
    sg_tensor_release(r);
    h = r = NULL;
    CHECK(aten_where_Scalar(cond, sg_scalar_int(1), sg_scalar_int(0), &r) == SG_OK && pu1_where_calls == 3);
    CHECK(r && sg_device_eq(r->device, PU1) && sg_tensor_to(r, SG_CPU, &h) == SG_OK &&
          h->dtype == SG_INT64 && all_eq(h, V(1, 0, 1), 3));
    sg_tensor_release(h);
    sg_tensor_release(r);
    sg_tensor_release(a);
    sg_tensor_release(cond);
    sg_tensor_release(ca);
    sg_tensor_release(cc);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_cat_stack();
    test_index_select_gather_embedding();
    test_scatter();
    test_tril_triu();
    test_sort_topk();
    test_where_masked_fill();
    test_where_other_backend();
    test_clamp();
    test_pow();
    sg_runtime_shutdown();
    return check_result("test_cpu_index");
}
