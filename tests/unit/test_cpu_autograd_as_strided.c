/* test_cpu_autograd_as_strided.c: as_strided's gradient (autograd::as_strided_backward, through
 * the formula's TensorGeometry(self)) on aten's CPU ops. Against central differences in
 * float64: sub-views with the storage offset given and None, overlapping outputs (sliding
 * windows, stride 0), inputs that are expanded, transposed, offset (a slice) or themselves
 * overlapping (as_strided of as_strided), 0-dim and empty inputs and outputs, as_strided_ on a
 * clone and as_strided_copy. The helper called directly against PyTorch 2.11's values where
 * finite differences cannot tell: an overlapping input's share of each location, output
 * elements the input does not reach, an empty output; and its refusals. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"
#include "autograd_fd.h"

#include <string.h>

#define L(...)                                                                                \
    ((sg_int_list){(const int64_t[]){__VA_ARGS__},                                            \
                   sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})
#define NOLIST ((sg_int_list){NULL, 0})

/* ---- through sg_backward, against finite differences ------------------------------------- */

static const int64_t *OFF(int64_t v) {
    static int64_t store[4];
    static int n;
    n = (n + 1) % 4;
    store[n] = v;
    return &store[n];
}

/* [3,4] -> [2,2] at the start: the offset None (x's, 0) */
static sg_status f_sub(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, L(2, 2), L(4, 1), NULL, y);
}
/* [12] -> [3,2] from location 1, every other column */
static sg_status f_offset(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, L(3, 2), L(3, 2), OFF(1), y);
}
/* overlapping output: windows of 3 sliding by 1 from location 1 */
static sg_status f_windows(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, L(4, 3), L(1, 1), OFF(1), y);
}
/* overlapping output: a dim of stride 0 (the same row twice) */
static sg_status f_stride0(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, L(2, 3), L(0, 2), NULL, y);
}
/* expanded input: [1,4] expanded to [3,4] (strides 0, 1), then windows over its storage */
static sg_status f_expanded(sg_tensor *x, sg_tensor **y) {
    sg_tensor *e = NULL;
    sg_status st = aten_expand(x, L(3, 4), false, &e);
    if (st == SG_OK) st = aten_as_strided(e, L(2, 2), L(1, 1), OFF(1), y);
    sg_tensor_release(e);
    return st;
}
/* expanded input, output of its own geometry: each location shared by the 3 rows */
static sg_status f_expanded_same(sg_tensor *x, sg_tensor **y) {
    sg_tensor *e = NULL;
    sg_status st = aten_expand(x, L(3, 4), false, &e);
    if (st == SG_OK) st = aten_as_strided(e, L(3, 4), L(0, 1), NULL, y);
    sg_tensor_release(e);
    return st;
}
/* a transposed input (strides 1, 4) */
static sg_status f_transposed(sg_tensor *x, sg_tensor **y) {
    sg_tensor *t = NULL;
    sg_status st = aten_transpose_int(x, 0, 1, &t);
    if (st == SG_OK) st = aten_as_strided(t, L(2, 3), L(2, 3), OFF(1), y);
    sg_tensor_release(t);
    return st;
}
/* an input at offset 4 (rows 1.. of [3,4]); the output's offset None (4) and given (5) */
static sg_status f_slice_none(sg_tensor *x, sg_tensor **y) {
    sg_tensor *s = NULL;
    sg_status st = aten_slice_Tensor(x, 0, OFF(1), NULL, 1, &s);
    if (st == SG_OK) st = aten_as_strided(s, L(2, 3), L(1, 2), NULL, y);
    sg_tensor_release(s);
    return st;
}
static sg_status f_slice_given(sg_tensor *x, sg_tensor **y) {
    sg_tensor *s = NULL;
    sg_status st = aten_slice_Tensor(x, 0, OFF(1), NULL, 1, &s);
    if (st == SG_OK) st = aten_as_strided(s, L(3, 2), L(2, 1), OFF(5), y);
    sg_tensor_release(s);
    return st;
}
/* an overlapping input: as_strided of sliding windows */
static sg_status f_of_windows(sg_tensor *x, sg_tensor **y) {
    sg_tensor *w = NULL;
    sg_status st = aten_as_strided(x, L(3, 3), L(1, 1), NULL, &w);
    if (st == SG_OK) st = aten_as_strided(w, L(2, 2), L(2, 1), OFF(1), y);
    sg_tensor_release(w);
    return st;
}
/* 0-dim input, output repeating it; 0-dim output of one element */
static sg_status f_from_scalar(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, L(3), L(0), NULL, y);
}
static sg_status f_to_scalar(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, NOLIST, NOLIST, OFF(4), y);
}
/* an empty output (its gradient zeros), an empty input */
static sg_status f_empty_out(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, L(0, 3), L(3, 1), NULL, y);
}
static sg_status f_empty_in(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided(x, L(0), L(1), NULL, y);
}
/* in place on a clone (self's geometry before the change is what the formula reads) */
static sg_status f_inplace(sg_tensor *x, sg_tensor **y) {
    sg_tensor *c = NULL;
    sg_status st = aten_clone(x, NULL, &c);
    if (st == SG_OK) st = aten_as_strided_(c, L(3, 3), L(1, 2), OFF(1), y);
    sg_tensor_release(c);
    return st;
}
static sg_status f_inplace_none(sg_tensor *x, sg_tensor **y) {
    sg_tensor *c = NULL;
    sg_status st = aten_clone(x, NULL, &c);
    if (st == SG_OK) st = aten_as_strided_(c, L(2, 4), L(2, 1), NULL, y);
    sg_tensor_release(c);
    return st;
}
static sg_status f_copy(sg_tensor *x, sg_tensor **y) {
    return aten_as_strided_copy(x, L(3, 3), L(1, 1), OFF(2), y);
}

static void test_fd(void) {
    static const struct {
        const char *name;
        ag_fn       f;
        int32_t     nd;
        int64_t     s[2];
        const char *node;
    } cases[] = {
        {"sub-view, offset None", f_sub, 2, {3, 4}, "AsStridedBackward0"},
        {"offset given", f_offset, 1, {12}, "AsStridedBackward0"},
        {"overlapping output (windows)", f_windows, 1, {7}, "AsStridedBackward0"},
        {"overlapping output (stride 0)", f_stride0, 1, {5}, "AsStridedBackward0"},
        {"expanded input", f_expanded, 2, {1, 4}, "AsStridedBackward0"},
        {"expanded input, its own geometry", f_expanded_same, 2, {1, 4}, "AsStridedBackward0"},
        {"transposed input", f_transposed, 2, {3, 4}, "AsStridedBackward0"},
        {"input at an offset, output's None", f_slice_none, 2, {3, 4}, "AsStridedBackward0"},
        {"input at an offset, output's given", f_slice_given, 2, {3, 4}, "AsStridedBackward0"},
        {"overlapping input", f_of_windows, 1, {5}, "AsStridedBackward0"},
        {"0-dim input", f_from_scalar, 0, {0}, "AsStridedBackward0"},
        {"0-dim output", f_to_scalar, 2, {2, 3}, "AsStridedBackward0"},
        {"empty output", f_empty_out, 2, {2, 3}, "AsStridedBackward0"},
        {"empty input", f_empty_in, 2, {0, 3}, "AsStridedBackward0"},
        {"as_strided_ on a clone", f_inplace, 2, {2, 4}, "AsStridedBackward0"},
        {"as_strided_ on a clone, offset None", f_inplace_none, 1, {9}, "AsStridedBackward0"},
        {"as_strided_copy", f_copy, 1, {7}, "AsStridedBackward0_copy"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        sg_tensor *x = ag_leaf(cases[k].s, cases[k].nd, 0.7, 0.3), *y = NULL;
        CHECK(cases[k].f(x, &y) == SG_OK);
        const sg_node *fn = y ? sg_tensor_grad_fn(y) : NULL;
        if (!fn || strcmp(fn->name, cases[k].node) != 0) {
            fprintf(stderr, "%s: y's grad_fn is %s\n", cases[k].name, fn ? fn->name : "none");
            CHECK(false);
        }
        sg_tensor_release(y);
        ag_fd_case(cases[k].name, cases[k].f, x);
        sg_tensor_release(x);
    }
}

/* ---- the helper directly, against PyTorch's values ---------------------------------------- */

/* as_strided_backward of grad (values g, shape out) from the input geometry (in, in_st,
 * in_off) to the output's (out, out_st, out_off: NULL for None) must be want */
static void expect(const char *what, sg_int_list in, sg_int_list in_st, int64_t in_off,
                   sg_int_list out, sg_int_list out_st, const int64_t *out_off, const double *g,
                   const double *want) {
    sg_tensor *gt = make(SG_FLOAT64, out.items, out.len, g), *r = NULL, *c = NULL;
    sg_status st = autograd_as_strided_backward(gt, in, in_st, in_off, out, out_st, out_off, &r);
    if (st != SG_OK) fprintf(stderr, "%s: %s\n", what, sg_last_error());
    CHECK(st == SG_OK && r && shape_is(r, in.items, in.len));
    CHECK(r && (sg_dtype)r->dtype == SG_FLOAT64);
    if (r) CHECK(aten_contiguous(r, SG_CONTIGUOUS_FORMAT, &c) == SG_OK);
    for (int64_t i = 0; c && i < sg_tensor_numel(c); i++)
        if (at(c, i) != want[i]) {
            fprintf(stderr, "%s: [%lld] = %g, PyTorch's %g\n", what, (long long)i, at(c, i),
                    want[i]);
            CHECK(false);
            break;
        }
    sg_tensor_release(gt), sg_tensor_release(r), sg_tensor_release(c);
}

static void test_values(void) {
    /* an expanded input viewed as itself: each location's sum shared by its 3 elements */
    expect("expanded, the same geometry", L(3), L(0), 0, L(3), L(0), NULL,
           (const double[]){1, 2, 3}, (const double[]){2, 2, 2});
    /* locations 1 and 2 each viewed twice by the input: half each; location 0 not by it */
    expect("expanded, another geometry", L(2, 2), L(0, 1), 1, L(3), L(1), OFF(0),
           (const double[]){1, 2, 3}, (const double[]){1, 1.5, 1, 1.5});
    /* the output reaches locations 0 and 1, which the input (from 2) does not: dropped */
    expect("output beyond the input", L(2), L(1), 2, L(4), L(1), OFF(0),
           (const double[]){1, 2, 3, 4}, (const double[]){3, 4});
    /* overlapping windows: each location gets the sum of its elements' gradients */
    expect("overlapping output", L(4), L(1), 0, L(3, 2), L(1, 1), NULL,
           (const double[]){1, 2, 3, 4, 5, 6}, (const double[]){1, 5, 9, 6});
    /* a transposed input at offset 1 (locations 1, 3, 2, 4) under locations 0, 2, 4 */
    expect("transposed input", L(2, 2), L(1, 2), 1, L(3), L(2), OFF(0),
           (const double[]){1, 2, 3}, (const double[]){0, 0, 2, 3});
    /* an empty output: zeros of the input's shape */
    expect("empty output", L(2, 2), L(2, 1), 0, L(0, 3), L(1, 1), NULL, NULL,
           (const double[]){0, 0, 0, 0});
    /* the same one-to-one view: the gradient as it came */
    expect("the same view", L(2, 3), L(1, 2), 3, L(2, 3), L(1, 2), OFF(3),
           (const double[]){1, 2, 3, 4, 5, 6}, (const double[]){1, 2, 3, 4, 5, 6});
}

static void test_refused(void) {
    sg_tensor *g = make(SG_FLOAT64, (const int64_t[]){2}, 1, (const double[]){1, 2}), *r = NULL;
    CHECK(autograd_as_strided_backward(g, L(2), L(1, 1), 0, L(2), L(1), NULL, &r) == SG_EINVAL);
    CHECK(!r && strstr(sg_last_error(), "autograd::as_strided_backward: the input geometry has "
                                        "1 sizes and 2 strides"));
    CHECK(autograd_as_strided_backward(g, L(2), L(1), 0, L(2), L(-1), NULL, &r) == SG_EINVAL);
    CHECK(!r && strstr(sg_last_error(), "the output geometry has size 2 and stride -1 at dim 0"));
    CHECK(autograd_as_strided_backward(g, L(2), L(1), 0, L(2), L(1), OFF(-3), &r) == SG_EINVAL);
    CHECK(!r && strstr(sg_last_error(), "the output storage offset is -3"));
    CHECK(autograd_as_strided_backward(g, L(2), L(1), 0, L(3), L(1), NULL, &r) == SG_EINVAL);
    CHECK(!r && strstr(sg_last_error(), "the gradient's shape is not the output's"));
    CHECK(autograd_as_strided_backward(g, L(2, INT64_MAX), L(1, 2), 0, L(2), L(1), NULL, &r) ==
          SG_EINVAL);
    CHECK(!r && strstr(sg_last_error(), "a geometry reaches past int64"));
    sg_tensor_release(g);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    CHECK(aten_autograd_init() == SG_OK);
    test_fd();
    test_values();
    test_refused();
    sg_runtime_shutdown();
    return check_result("test_cpu_autograd_as_strided");
}
