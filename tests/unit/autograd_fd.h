/* autograd_fd.h: what the autograd tests of one float64 leaf share: CPU tensors filled with a
 * smooth wave, and a leaf's gradient by sg_backward checked against central differences of
 * the root sum(f(x) * w), w fixed weights of f(x)'s shape. Include after cpu_tensors.h and
 * aten.h. */
#ifndef SG_TEST_AUTOGRAD_FD_H
#define SG_TEST_AUTOGRAD_FD_H

#include "sg_autograd.h"

static inline double ag_wave(int64_t i, double a, double b) { return sin(a * (double)i + b); }

static inline sg_tensor *ag_filled(const int64_t *sizes, int32_t n, double a, double b) {
    sg_tensor *t = make(SG_FLOAT64, sizes, n, NULL);
    int64_t    k = t ? sg_tensor_numel(t) : 0;
    for (int64_t i = 0; i < k; i++) ((double *)sg_tensor_data(t))[i] = ag_wave(i, a, b);
    return t;
}

static inline sg_tensor *ag_leaf(const int64_t *sizes, int32_t n, double a, double b) {
    sg_tensor *t = ag_filled(sizes, n, a, b);
    CHECK(sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

typedef sg_status (*ag_fn)(sg_tensor *x, sg_tensor **y);

/* sum(f(x) * w), w fixed weights of y's shape; *root keeps the graph where wanted */
static inline double ag_root(ag_fn f, sg_tensor *x, sg_tensor **root) {
    sg_tensor *y = NULL, *w = NULL, *p = NULL, *r = NULL;
    sg_status  st = f(x, &y);
    if (st != SG_OK) fprintf(stderr, "forward: %s\n", sg_last_error());
    CHECK(st == SG_OK);
    if (!y) return NAN;
    w = ag_filled(y->sizes, y->ndim, 0.37, 0.1);
    CHECK(aten_mul_Tensor(y, w, &p) == SG_OK);
    CHECK(aten_sum(p, NULL, &r) == SG_OK);
    double v = r ? at(r, 0) : NAN;
    if (root) *root = r;
    else sg_tensor_release(r);
    sg_tensor_release(y), sg_tensor_release(w), sg_tensor_release(p);
    return v;
}

/* x's gradient by sg_backward against central differences */
static inline void ag_fd_case(const char *what, ag_fn f, sg_tensor *x) {
    sg_tensor *root = NULL;
    ag_root(f, x, &root);
    sg_status st = root ? sg_backward(&root, NULL, 1, false) : SG_EINVAL;
    if (st != SG_OK) fprintf(stderr, "%s: %s\n", what, sg_last_error());
    CHECK(st == SG_OK);
    sg_tensor *g = NULL;
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    CHECK(g && shape_is(g, x->sizes, x->ndim));
    bool    was = sg_grad_set_enabled(false);
    double *xd = sg_tensor_data(x);
    for (int64_t i = 0, n = sg_tensor_numel(x); g && i < n; i++) {
        const double h = 1e-6, keep = xd[i];
        xd[i] = keep + h;
        double up = ag_root(f, x, NULL);
        xd[i] = keep - h;
        double down = ag_root(f, x, NULL);
        xd[i] = keep;
        double fd = (up - down) / (2 * h), got = at(g, i);
        if (!(fabs(got - fd) <= 1e-5 * (1 + fabs(fd)))) {
            fprintf(stderr, "%s: grad[%lld] = %.9g, finite differences %.9g\n", what,
                    (long long)i, got, fd);
            CHECK(false);
            break;
        }
    }
    sg_grad_set_enabled(was);
    sg_tensor_release(g), sg_tensor_release(root);
}

#endif
