/* test_cuda_autograd_inplace.c: the generated kernels of in-place and out= ops on the GPU
 * (docs/autograd.md, "In-place and out= ops"; test_cpu_autograd_inplace.c checks them against
 * finite differences on the CPU): each case runs on the CPU and on the GPU, and the gradients
 * agree: an in-place chain (add_, mul_, sub_, sigmoid_), CopySlices (mul_ on rows of a view,
 * of a contiguous base and of a column-major one), copy_ of a broadcast source; and on the
 * GPU, versions bumped once per call, a leaf refused in place, an SGD step under no_grad, out=
 * refused and run. Skips (77) without a GPU. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cuda.h"
#include "aten.h"
#include "aten_autograd.h"

#include <string.h>

static const int64_t S34[2] = {3, 4}, S24[2] = {2, 4}, S4[1] = {4};

static bool ok(sg_status st) {
    if (st != SG_OK) fprintf(stderr, "unexpected: %s\n", sg_last_error());
    return st == SG_OK;
}

/* v (n values: base + step * ((i * 7) % n)) on dev; requires grad where asked */
static sg_tensor *on(sg_device dev, const int64_t *sizes, int32_t nd, double base, double step,
                     bool grad) {
    double v[12];
    int    n = (int)(nd == 1 ? sizes[0] : sizes[0] * sizes[1]);
    for (int i = 0; i < n; i++) v[i] = base + step * (double)((i * 7) % n);
    sg_tensor *h = make(SG_FLOAT64, sizes, nd, v), *t = NULL;
    CHECK(ok(sg_tensor_to(h, dev, &t)));
    sg_tensor_release(h);
    if (grad) CHECK(sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

/* t's .grad copied to the CPU into out (n values; NAN where there is none) */
static void grad_to(sg_tensor *t, double *out, int n) {
    sg_tensor *g = NULL, *h = NULL;
    for (int i = 0; i < n; i++) out[i] = NAN;
    CHECK(sg_tensor_grad(t, &g) == SG_OK && g);
    if (g && ok(sg_tensor_to(g, SG_CPU, &h)))
        for (int i = 0; i < n; i++) out[i] = at(h, i);
    sg_tensor_release(h), sg_tensor_release(g);
}

static void same(sg_tensor *self, sg_tensor *r) {
    CHECK(r == self);
    sg_tensor_release(r);
}

/* case k on dev: the gradients of x (12) and of the second leaf (gs, 8 or 4 values) */
static void run_case(int k, sg_device dev, double *gx, double *gs) {
    sg_tensor *x = on(dev, S34, 2, -0.8, 0.19, true), *w = on(dev, S34, 2, 0.4, -0.13, false);
    sg_tensor *s = k == 2 ? on(dev, S4, 1, 1, 0.5, true) : on(dev, S24, 2, 0.2, 0.3, true);
    sg_tensor *xt = NULL, *xc = NULL, *xp = NULL;
    sg_tensor *y = NULL, *r = NULL, *v = NULL, *t = NULL, *p = NULL, *root = NULL;
    int64_t    zero = 0, two = 2;
    if (k == 0) {
        CHECK(ok(aten_mul_Scalar(x, sg_scalar_float(2.0), &y)));
        CHECK(ok(aten_add__Scalar(y, sg_scalar_int(1), sg_scalar_int(1), &r)));
        same(y, r);
        CHECK(ok(aten_sigmoid(x, &t)));
        CHECK(ok(aten_mul__Tensor(y, t, &r)));
        same(y, r);
        CHECK(ok(aten_sub__Tensor(y, x, sg_scalar_float(0.5), &r)));
        same(y, r);
        CHECK(ok(aten_sigmoid_(y, &r)));
        same(y, r);
        CHECK(sg_tensor_version(y) == 4);
    } else if (k == 1 || k == 3) {
        if (k == 3) { /* y column-major: x.t().contiguous().t() * 1.5 */
            CHECK(ok(aten_transpose_int(x, 0, 1, &xt)));
            CHECK(ok(aten_clone(xt, &(sg_memory_format){SG_CONTIGUOUS_FORMAT}, &xc)));
            CHECK(ok(aten_transpose_int(xc, 0, 1, &xp)));
        }
        CHECK(ok(aten_mul_Scalar(k == 3 ? xp : x, sg_scalar_float(1.5), &y)));
        CHECK(y && (k == 1 || y->strides[0] == 1));
        CHECK(ok(aten_slice_Tensor(y, 0, &zero, &two, 1, &v)));
        CHECK(ok(aten_mul__Tensor(v, s, &r)));
        same(v, r);
        CHECK(sg_tensor_grad_fn(y) && !strcmp(sg_tensor_grad_fn(y)->name, "CopySlices"));
    } else {
        CHECK(ok(aten_mul_Scalar(x, sg_scalar_float(1.0), &y)));
        CHECK(ok(aten_copy_(y, s, false, &r)));
        same(y, r);
        CHECK(sg_tensor_grad_fn(y) && !strcmp(sg_tensor_grad_fn(y)->name, "CopyBackwards"));
    }
    CHECK(ok(aten_mul_Tensor(y, w, &p)) && ok(aten_sum(p, NULL, &root)));
    CHECK(root && ok(sg_backward(&root, NULL, 1, false)));
    grad_to(x, gx, 12);
    if (k) grad_to(s, gs, k == 2 ? 4 : 8);
    sg_tensor_release(root), sg_tensor_release(p), sg_tensor_release(t), sg_tensor_release(v);
    sg_tensor_release(xt), sg_tensor_release(xc), sg_tensor_release(xp);
    sg_tensor_release(y), sg_tensor_release(s), sg_tensor_release(w), sg_tensor_release(x);
}

static void test_cases(void) {
    static const char *const names[] = {"chain", "CopySlices", "copy_",
                                        "CopySlices of a column-major base"};
    for (int k = 0; k < 4; k++) {
        double cx[12], cs[8] = {0}, gx[12], gs[8] = {0};
        run_case(k, SG_CPU, cx, cs);
        run_case(k, SG_CUDA(0), gx, gs);
        for (int i = 0; i < 12; i++)
            if (!(fabs(gx[i] - cx[i]) <= 1e-10 * (1 + fabs(cx[i])))) {
                fprintf(stderr, "%s: x.grad[%d] = %.17g on the GPU, %.17g on the CPU\n",
                        names[k], i, gx[i], cx[i]);
                CHECK(false);
                break;
            }
        for (int i = 0; i < 8; i++)
            if (!(fabs(gs[i] - cs[i]) <= 1e-10 * (1 + fabs(cs[i])))) {
                fprintf(stderr, "%s: s.grad[%d] = %.17g on the GPU, %.17g on the CPU\n",
                        names[k], i, gs[i], cs[i]);
                CHECK(false);
                break;
            }
    }
}

static void test_rules(void) {
    sg_device  dev = SG_CUDA(0);
    sg_tensor *x = on(dev, S34, 2, 0.5, 0.1, true), *c = on(dev, S34, 2, 2, 0.5, false);
    sg_tensor *o = on(dev, S34, 2, 0, 0, false), *r = NULL, *p = NULL, *s = NULL, *g = NULL;
    /* a leaf that requires grad, refused; out= with it, refused */
    CHECK(aten_add__Tensor(x, c, sg_scalar_int(1), &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), "aten::add_.Tensor: a leaf Variable that requires grad is being "
                               "used in an in-place operation.");
    CHECK(aten_mul_out(x, c, o, &r) == SG_EINVAL && r == NULL);
    CHECK_HAS(sg_last_error(), "mul(): functions with out=... arguments don't support automatic "
                               "differentiation");
    CHECK(sg_tensor_version(x) == 0 && sg_tensor_version(o) == 0);
    /* an SGD step under no_grad: bumps once, stays a leaf; out= runs too */
    CHECK(ok(aten_mul_Tensor(x, c, &p)) && ok(aten_sum(p, NULL, &s)));
    CHECK(ok(sg_backward(&s, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    bool was = sg_grad_set_enabled(false);
    sg_tensor *u = NULL;
    CHECK(ok(aten_mul_Scalar(g, sg_scalar_float(0.1), &u)));
    CHECK(ok(aten_sub__Tensor(x, u, sg_scalar_int(1), &r)));
    same(x, r);
    CHECK(ok(aten_mul_out(x, c, o, &r)));
    same(o, r);
    sg_grad_set_enabled(was);
    CHECK(sg_tensor_version(x) == 1 && sg_tensor_version(o) == 1 && sg_tensor_is_leaf(x));
    double xv[12];
    sg_tensor *h = NULL;
    CHECK(ok(sg_tensor_to(x, SG_CPU, &h)));
    for (int i = 0; h && i < 12; i++) {
        xv[i] = 0.5 + 0.1 * (double)((i * 7) % 12) - 0.1 * (2 + 0.5 * (double)((i * 7) % 12));
        CHECK(fabs(at(h, i) - xv[i]) < 1e-12);
    }
    sg_tensor_release(h), sg_tensor_release(u), sg_tensor_release(g), sg_tensor_release(s);
    sg_tensor_release(p), sg_tensor_release(o), sg_tensor_release(c), sg_tensor_release(x);
}

int main(void) {
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) == 0) SKIP("no usable GPU: %s", why ? why : "?");
    CHECK(sg_aten_cuda_init() == SG_OK);
    CHECK(aten_autograd_init() == SG_OK);
    test_cases();
    test_rules();
    sg_runtime_shutdown();
    return check_result("test_cuda_autograd_inplace");
}
