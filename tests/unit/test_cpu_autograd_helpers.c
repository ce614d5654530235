/* test_cpu_autograd_helpers.c: the generated backward of the ops whose formulas call the helper
 * ops of kernels/autograd/helpers_{norm,pointwise,reduce,index,matmul}.c (docs/autograd.md), on
 * aten's CPU ops through sg_backward. Each case builds y = f(x...) from float64 leaves and
 * backpropagates sum(y * w) (w fixed weights of y's shape): every leaf's gradient must match
 * central differences of the same root; then the same case from float32 leaves must give the
 * float64 gradients within float32's precision, in float32. Shapes include broadcast batch
 * dims, keepdim and negative dims where the op has them. Also: ties of amax share the gradient,
 * a zero in prod's input, as_strided with overlapping outputs and an expanded input (more in
 * test_cpu_autograd_as_strided.c), a dtype-changing _to_copy brings the gradient back in the
 * input's dtype, and embedding's sparse=true and gather's sparse_grad are refused with a
 * message.
 * Built with SG_AG_CUDA (test_cuda_autograd_helpers.c includes this file), each case runs on the
 * GPU from float64 and float32 leaves, against the float64 gradients the CPU gives; it skips
 * (77) where no GPU is usable. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"
#ifdef SG_AG_CUDA
#include "sg_aten_cuda.h"
#define AG_NAME "test_cuda_autograd_helpers"
#define AG_DEV  SG_CUDA(0)
#else
#define AG_NAME "test_cpu_autograd_helpers"
#define AG_DEV  SG_CPU
#endif

#include <stdlib.h>
#include <string.h>

#define MAXIN 3

enum { GEN, POS, ZERO1, ZEROS }; /* leaf values: any sign, positive, one zero, zeros */

typedef struct {
    int32_t nd;
    int64_t s[4];
    int     kind;
} spec;

typedef sg_status (*case_fn)(sg_tensor *const *x, sg_tensor **y);

typedef struct {
    const char *name;
    case_fn     f;
    int         nin;
    spec        in[MAXIN];
    const char *node; /* y's grad_fn where it is the op's own node */
} tcase;

static double leaf_value(int kind, int k, int64_t i) {
    double v = 1.5 * sin(1.3 * (double)i + 0.7 * k + 0.2);
    switch (kind) {
    case POS: return 0.6 + 0.5 * (1 + v);
    case ZERO1: return i == 2 ? 0 : v;
    case ZEROS: return i == 2 || i == 5 || i == 6 ? 0 : v;
    default: return v;
    }
}

static int64_t numel_of(const spec *s) {
    int64_t n = 1;
    for (int32_t d = 0; d < s->nd; d++) n *= s->s[d];
    return n;
}

/* h (taken over) on dev */
static sg_tensor *moved(sg_tensor *h, sg_device dev) {
    sg_tensor *t = NULL;
    if (h && h->device.type == dev.type && h->device.index == dev.index) return h;
    CHECK(h && sg_tensor_to(h, dev, &t) == SG_OK);
    sg_tensor_release(h);
    return t;
}

/* t's values on the CPU, to read */
static sg_tensor *on_cpu(sg_tensor *t) {
    return t ? moved(sg_tensor_retain(t), SG_CPU) : NULL;
}

static sg_tensor *make_leaf_on(sg_device dev, sg_dtype dt, const spec *s, int k) {
    int64_t n = numel_of(s);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = leaf_value(s->kind, k, i);
    sg_tensor *t = moved(make(dt, s->s, s->nd, v), dev);
    free(v);
    CHECK(t && sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

static sg_tensor *make_leaf(sg_dtype dt, const spec *s, int k) {
    return make_leaf_on(SG_CPU, dt, s, k);
}

/* sum(y * w), w_i = cos(0.37 i + 0.11) of y's shape and dtype */
static sg_tensor *root_of(const tcase *c, sg_tensor *const *x, sg_tensor **yout) {
    sg_tensor *y = NULL, *w = NULL, *p = NULL, *r = NULL;
    sg_status st = c->f(x, &y);
    if (st != SG_OK) fprintf(stderr, "%s: forward: %s\n", c->name, sg_last_error());
    CHECK(st == SG_OK && y);
    if (!y) return NULL;
    int64_t n = sg_tensor_numel(y);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = cos(0.37 * (double)i + 0.11);
    w = moved(make((sg_dtype)y->dtype, y->sizes, y->ndim, v), y->device);
    free(v);
    CHECK(aten_mul_Tensor(y, w, &p) == SG_OK);
    CHECK(aten_sum(p, NULL, &r) == SG_OK);
    if (yout) *yout = y;
    else sg_tensor_release(y);
    sg_tensor_release(w), sg_tensor_release(p);
    return r;
}

static double root_value(const tcase *c, sg_tensor *const *x) {
    sg_tensor *r = root_of(c, x, NULL);
    sg_tensor *h = on_cpu(r);
    double v = h ? at(h, 0) : NAN;
    sg_tensor_release(r), sg_tensor_release(h);
    return v;
}

/* the leaves' gradients (NULL where none came) */
static bool run_backward(const tcase *c, sg_tensor *const *x, sg_tensor **g) {
    sg_tensor *y = NULL, *r = root_of(c, x, &y);
    if (!r) return false;
    if (c->node) {
        const sg_node *fn = sg_tensor_grad_fn(y);
        if (!fn || strcmp(fn->name, c->node) != 0) {
            fprintf(stderr, "%s: y's grad_fn is %s, not %s\n", c->name, fn ? fn->name : "none",
                    c->node);
            CHECK(false);
        }
    }
    sg_status st = sg_backward(&r, NULL, 1, false);
    if (st != SG_OK) fprintf(stderr, "%s: backward: %s\n", c->name, sg_last_error());
    CHECK(st == SG_OK);
    for (int k = 0; k < c->nin; k++) {
        sg_tensor *gd = NULL;
        CHECK(sg_tensor_grad(x[k], &gd) == SG_OK);
        CHECK(!gd || gd->device.type == x[k]->device.type);
        g[k] = on_cpu(gd);
        sg_tensor_release(gd);
    }
    sg_tensor_release(r), sg_tensor_release(y);
    return st == SG_OK;
}

/* the gradients of leaves on dev in dtype dt against the float64 ones g (tolerance tol) */
static void compare_on(const tcase *c, sg_device dev, sg_dtype dt, sg_tensor *const *g,
                       double tol) {
    sg_tensor *x[MAXIN] = {NULL}, *gd[MAXIN] = {NULL};
    for (int k = 0; k < c->nin; k++) x[k] = make_leaf_on(dev, dt, &c->in[k], k);
    if (run_backward(c, x, gd))
        for (int k = 0; k < c->nin; k++) {
            if (!g[k] || !gd[k]) {
                CHECK(gd[k] != NULL);
                continue;
            }
            CHECK((sg_dtype)gd[k]->dtype == dt);
            for (int64_t i = 0; i < sg_tensor_numel(g[k]); i++) {
                double a = at(gd[k], i), b = at(g[k], i);
                if (!(fabs(a - b) <= tol * (1 + fabs(b)))) {
                    fprintf(stderr, "%s: %s %s input %d grad[%lld] = %.9g, float64 on cpu %.9g\n",
                            c->name, dev.type == SG_DEV_CPU ? "cpu" : "cuda",
                            dt == SG_FLOAT32   ? "float32"
                            : dt == SG_FLOAT64 ? "float64"
                                               : "bfloat16",
                            k, (long long)i, a, b);
                    CHECK(false);
                    break;
                }
            }
        }
    for (int k = 0; k < c->nin; k++) sg_tensor_release(x[k]), sg_tensor_release(gd[k]);
}

/* the cases also run from bfloat16 leaves: the norms, whose statistics are float32 there */
static bool in_bf16(const tcase *c) {
    static const char *const names[] = {"_fused_rms_norm [3,4] weight",
                                        "_fused_rms_norm out + rstd", "native_layer_norm [3,4]",
                                        "native_group_norm"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (strcmp(c->name, names[k]) == 0) return true;
    return false;
}

static void check_case(const tcase *c) {
    sg_tensor *x[MAXIN] = {NULL}, *g[MAXIN] = {NULL};
    for (int k = 0; k < c->nin; k++) x[k] = make_leaf(SG_FLOAT64, &c->in[k], k);
    bool ok = run_backward(c, x, g);
#ifndef SG_AG_CUDA
    bool was = sg_grad_set_enabled(false);
    for (int k = 0; ok && k < c->nin; k++) {
        if (!g[k]) {
            fprintf(stderr, "%s: no gradient for input %d\n", c->name, k);
            CHECK(false);
            continue;
        }
        CHECK((sg_dtype)g[k]->dtype == SG_FLOAT64 && shape_is(g[k], x[k]->sizes, x[k]->ndim));
        double *xd = sg_tensor_data(x[k]);
        for (int64_t i = 0; i < sg_tensor_numel(x[k]); i++) {
            const double h = 1e-6, keep = xd[i];
            xd[i] = keep + h;
            double up = root_value(c, x);
            xd[i] = keep - h;
            double down = root_value(c, x);
            xd[i] = keep;
            double fd = (up - down) / (2 * h), got = at(g[k], i);
            if (!(fabs(got - fd) <= 1e-5 * (1 + fabs(fd)))) {
                fprintf(stderr, "%s: input %d grad[%lld] = %.9g, finite differences %.9g\n",
                        c->name, k, (long long)i, got, fd);
                CHECK(false);
                break;
            }
        }
    }
    sg_grad_set_enabled(was);
#else
    if (ok) compare_on(c, AG_DEV, SG_FLOAT64, g, 1e-9);
#endif
    /* float32: the same values, gradients in float32 near the float64 ones */
    if (ok) compare_on(c, AG_DEV, SG_FLOAT32, g, 2e-4);
    if (ok && in_bf16(c)) compare_on(c, AG_DEV, SG_BFLOAT16, g, 5e-2);
    for (int k = 0; k < c->nin; k++) sg_tensor_release(x[k]), sg_tensor_release(g[k]);
}

/* ---- the cases' functions ------------------------------------------------------------------ */

/* a Scalar's address for an optional Scalar argument */
static const sg_scalar *SP(sg_scalar v) {
    static sg_scalar store[8];
    static int n;
    n = (n + 1) % 8;
    store[n] = v;
    return &store[n];
}

#define L(...)                                                                                \
    ((sg_int_list){(const int64_t[]){__VA_ARGS__},                                            \
                   sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})
#define F(name, call)                                                                         \
    static sg_status name(sg_tensor *const *x, sg_tensor **y) { (void)x; return call; }

F(f_abs, aten_abs(x[0], y))
F(f_erf, aten_erf(x[0], y))
F(f_relu, aten_relu(x[0], y))
F(f_gelu, aten_gelu(x[0], "none", y))
F(f_gelu_tanh, aten_gelu(x[0], "tanh", y))
F(f_log_softmax1, aten__log_softmax(x[0], 1, false, y))
F(f_log_softmax0, aten__log_softmax(x[0], 0, false, y))
F(f_log_softmax_neg, aten__log_softmax(x[0], -1, false, y))
F(f_logsumexp, aten_logsumexp(x[0], L(1), false, y))
F(f_logsumexp_keep, aten_logsumexp(x[0], L(0, 2), true, y))
F(f_amax, aten_amax(x[0], L(1), false, y))
F(f_amin_keep, aten_amin(x[0], L(0), true, y))
F(f_amax_all, aten_amax(x[0], (sg_int_list){NULL, 0}, false, y))
F(f_amin_neg, aten_amin(x[0], L(-1, 0), false, y))
F(f_max_all, aten_max(x[0], y))
F(f_min_all, aten_min(x[0], y))
F(f_var_all, aten_var_correction(x[0], NULL, NULL, false, y))
F(f_var_dim, aten_var_correction(x[0], &L(1), NULL, false, y))
F(f_var_keep0, aten_var_correction(x[0], &L(0), SP(sg_scalar_int(0)), true, y))
F(f_var_3d, aten_var_correction(x[0], &L(0, 2), SP(sg_scalar_float(0.5)), false, y))
F(f_std_all, aten_std_correction(x[0], NULL, NULL, false, y))
F(f_std_dim, aten_std_correction(x[0], &L(-1), NULL, true, y))
F(f_std_3d, aten_std_correction(x[0], &L(1), SP(sg_scalar_int(0)), false, y))
F(f_prod, aten_prod(x[0], NULL, y))
F(f_prod_dim, aten_prod_dim_int(x[0], 1, false, NULL, y))
F(f_prod_dim_keep, aten_prod_dim_int(x[0], 0, true, NULL, y))
F(f_cumsum1, aten_cumsum(x[0], 1, NULL, y))
F(f_cumsum0, aten_cumsum(x[0], 0, NULL, y))
F(f_cumsum_neg, aten_cumsum(x[0], -1, NULL, y))
F(f_select1, aten_select_int(x[0], 1, 2, y))
F(f_select_neg, aten_select_int(x[0], 0, -1, y))
F(f_permute, aten_permute(x[0], L(2, 0, 1), y))
F(f_as_strided, aten_as_strided(x[0], L(2, 2), L(4, 1), NULL, y))
F(f_as_strided_windows, aten_as_strided(x[0], L(4, 3), L(1, 1), &(int64_t){1}, y))
F(f_as_strided_copy, aten_as_strided_copy(x[0], L(3, 2), L(0, 2), &(int64_t){3}, y))
F(f_clamp, aten_clamp(x[0], SP(sg_scalar_float(-0.5)), SP(sg_scalar_float(0.8)), y))
F(f_clamp_min, aten_clamp(x[0], SP(sg_scalar_float(-0.5)), NULL, y))
F(f_clamp_max, aten_clamp(x[0], NULL, SP(sg_scalar_int(1)), y))
F(f_clamp_t, aten_clamp_Tensor(x[0], x[1], x[2], y))
F(f_clamp_tmin, aten_clamp_Tensor(x[0], x[1], NULL, y))
F(f_pow_tt, aten_pow_Tensor_Tensor(x[0], x[1], y))
F(f_pow_scalar, aten_pow_Scalar(sg_scalar_float(2.5), x[0], y))
F(f_matmul, aten_matmul(x[0], x[1], y))
F(f_to_copy, aten__to_copy(x[0], &(sg_dtype){SG_FLOAT64}, NULL, NULL, NULL, false, NULL, y))

/* an expanded input (strides 0, 1) viewed by overlapping windows: its share of each location */
static sg_status f_as_strided_expanded(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *e = NULL;
    sg_status st = aten_expand(x[0], L(3, 4), false, &e);
    if (st == SG_OK) st = aten_as_strided(e, L(2, 3), L(1, 1), &(int64_t){0}, y);
    sg_tensor_release(e);
    return st;
}

/* in place on a clone */
static sg_status f_as_strided_(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *c = NULL;
    sg_status st = aten_clone(x[0], NULL, &c);
    if (st == SG_OK) st = aten_as_strided_(c, L(3, 3), L(2, 1), &(int64_t){2}, y);
    sg_tensor_release(c);
    return st;
}

/* a 3x4 mask of elements i % 3 == 0 */
static sg_status f_masked_fill(sg_tensor *const *x, sg_tensor **y) {
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i % 3 == 0;
    sg_tensor *m = moved(make(SG_BOOL, (const int64_t[]){3, 4}, 2, v), x[0]->device);
    sg_status st = aten_masked_fill_Tensor(x[0], m, x[1], y);
    sg_tensor_release(m);
    return st;
}

/* an index on like's device */
static sg_tensor *index_of(const sg_tensor *like, const int64_t *sizes, int32_t nd,
                           const double *v) {
    return moved(make(SG_INT64, sizes, nd, v), like->device);
}

static sg_status f_gather(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *i = index_of(x[0], (const int64_t[]){3, 2}, 2, (const double[]){3, 0, 1, 1, 0, 2});
    sg_status st = aten_gather(x[0], 1, i, false, y);
    sg_tensor_release(i);
    return st;
}

static sg_status f_gather0(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *i = index_of(x[0], (const int64_t[]){2, 4}, 2,
                            (const double[]){2, 0, 1, 2, 2, 2, 0, 1});
    sg_status st = aten_gather(x[0], 0, i, false, y);
    sg_tensor_release(i);
    return st;
}

static sg_status f_index_select0(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *i = index_of(x[0], (const int64_t[]){3}, 1, (const double[]){2, 0, 2});
    sg_status st = aten_index_select(x[0], 0, i, y);
    sg_tensor_release(i);
    return st;
}

static sg_status f_index_select_neg(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *i = index_of(x[0], (const int64_t[]){4}, 1, (const double[]){1, 1, 0, 2});
    sg_status st = aten_index_select(x[0], -1, i, y);
    sg_tensor_release(i);
    return st;
}

static sg_tensor *emb_indices(const sg_tensor *like) {
    return index_of(like, (const int64_t[]){2, 3}, 2, (const double[]){1, 4, 1, 0, 3, 1});
}

static sg_status f_embedding(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *i = emb_indices(x[0]);
    sg_status st = aten_embedding(x[0], i, -1, false, false, y);
    sg_tensor_release(i);
    return st;
}

/* rms_norm: the output only (rstd's gradient undefined: _fused_rms_norm_backward) */
static sg_status rms(sg_tensor *const *x, sg_int_list ns, bool weight, bool use_rstd,
                     sg_tensor **y) {
    sg_tensor *out = NULL, *rstd = NULL, *s = NULL;
    sg_status st = aten__fused_rms_norm(x[0], ns, weight ? x[1] : NULL, &(double){1e-5}, &out,
                                        &rstd);
    if (st == SG_OK && use_rstd) { /* rstd's gradient defined too */
        st = aten_mul_Scalar(rstd, sg_scalar_float(0.7), &s);
        if (st == SG_OK) st = aten_add_Tensor(out, s, sg_scalar_int(1), y);
    } else if (st == SG_OK) {
        *y = out, out = NULL;
    }
    sg_tensor_release(out), sg_tensor_release(rstd), sg_tensor_release(s);
    return st;
}
static sg_status f_rms_w(sg_tensor *const *x, sg_tensor **y) {
    return rms(x, L(4), true, false, y);
}
static sg_status f_rms_3d(sg_tensor *const *x, sg_tensor **y) {
    return rms(x, L(3, 4), true, false, y);
}
static sg_status f_rms_now(sg_tensor *const *x, sg_tensor **y) {
    return rms(x, L(4), false, false, y);
}
static sg_status f_rms_rstd(sg_tensor *const *x, sg_tensor **y) {
    return rms(x, L(3, 4), true, true, y);
}
static sg_status f_rms_rstd_now(sg_tensor *const *x, sg_tensor **y) {
    return rms(x, L(4), false, true, y);
}

/* rstd alone: only its gradient defined */
static sg_status f_rms_only_rstd(sg_tensor *const *x, sg_tensor **y) {
    sg_tensor *out = NULL;
    sg_status st = aten__fused_rms_norm(x[0], L(4), NULL, &(double){1e-5}, &out, y);
    sg_tensor_release(out);
    return st;
}

static sg_status layer(sg_tensor *const *x, sg_int_list ns, bool affine, sg_tensor **y) {
    sg_tensor *mean = NULL, *rstd = NULL;
    sg_status st = aten_native_layer_norm(x[0], ns, affine ? x[1] : NULL, affine ? x[2] : NULL,
                                          1e-5, y, &mean, &rstd);
    sg_tensor_release(mean), sg_tensor_release(rstd);
    return st;
}
static sg_status f_layer(sg_tensor *const *x, sg_tensor **y) {
    return layer(x, L(4), true, y);
}
static sg_status f_layer_3d(sg_tensor *const *x, sg_tensor **y) {
    return layer(x, L(3, 4), true, y);
}
static sg_status f_layer_plain(sg_tensor *const *x, sg_tensor **y) {
    return layer(x, L(4), false, y);
}

/* group_norm of [2, 4, 3] in 2 groups; with_stats: mean and rstd used too (y as [2, 2, 6]) */
static sg_status group(sg_tensor *const *x, bool affine, bool with_stats, sg_tensor **y) {
    sg_tensor *out = NULL, *mean = NULL, *rstd = NULL, *o = NULL, *m = NULL, *r = NULL;
    sg_tensor *a = NULL;
    sg_status st = aten_native_group_norm(x[0], affine ? x[1] : NULL, affine ? x[2] : NULL, 2, 4,
                                          3, 2, 1e-5, &out, &mean, &rstd);
    if (st == SG_OK && !with_stats) {
        *y = out, out = NULL;
    } else if (st == SG_OK) {
        st = aten_view(out, L(2, 2, 6), &o);
        if (st == SG_OK) st = aten_view(mean, L(2, 2, 1), &m);
        if (st == SG_OK) st = aten_view(rstd, L(2, 2, 1), &r);
        if (st == SG_OK) st = aten_add_Tensor(o, m, sg_scalar_float(0.3), &a);
        if (st == SG_OK) st = aten_add_Tensor(a, r, sg_scalar_float(0.5), y);
    }
    sg_tensor_release(out), sg_tensor_release(mean), sg_tensor_release(rstd);
    sg_tensor_release(o), sg_tensor_release(m), sg_tensor_release(r), sg_tensor_release(a);
    return st;
}
static sg_status f_group(sg_tensor *const *x, sg_tensor **y) {
    return group(x, true, false, y);
}
static sg_status f_group_plain(sg_tensor *const *x, sg_tensor **y) {
    return group(x, false, false, y);
}
static sg_status f_group_stats(sg_tensor *const *x, sg_tensor **y) {
    return group(x, true, true, y);
}

#define S(...) {sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t), {__VA_ARGS__}, GEN}
#define SK(k, ...) {sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t), {__VA_ARGS__}, k}
#define S0 {0, {0}, GEN}

static const tcase cases[] = {
    {"abs", f_abs, 1, {S(3, 4)}, "AbsBackward0"},
    {"erf", f_erf, 1, {S(2, 3, 2)}, "ErfBackward0"},
    {"relu", f_relu, 1, {S(3, 4)}, "ReluBackward0"},
    {"relu 1-D", f_relu, 1, {S(5)}, "ReluBackward0"},
    {"gelu", f_gelu, 1, {S(3, 4)}, "GeluBackward0"},
    {"gelu tanh", f_gelu_tanh, 1, {S(2, 3, 2)}, "GeluBackward0"},
    {"_log_softmax dim 1", f_log_softmax1, 1, {S(3, 4)}, "LogSoftmaxBackward0"},
    {"_log_softmax dim 0", f_log_softmax0, 1, {S(3, 4)}, "LogSoftmaxBackward0"},
    {"_log_softmax dim -1", f_log_softmax_neg, 1, {S(2, 3, 4)}, "LogSoftmaxBackward0"},
    {"_fused_rms_norm [3,4] weight", f_rms_w, 2, {S(3, 4), S(4)}, "FusedRmsNormBackward0"},
    {"_fused_rms_norm [2,3,4] over [3,4]", f_rms_3d, 2, {S(2, 3, 4), S(3, 4)},
     "FusedRmsNormBackward0"},
    {"_fused_rms_norm no weight", f_rms_now, 1, {S(3, 4)}, "FusedRmsNormBackward0"},
    {"_fused_rms_norm out + rstd", f_rms_rstd, 2, {S(2, 3, 4), S(3, 4)}, NULL},
    {"_fused_rms_norm out + rstd, no weight", f_rms_rstd_now, 1, {S(3, 4)}, NULL},
    {"_fused_rms_norm rstd alone", f_rms_only_rstd, 1, {S(3, 4)}, "FusedRmsNormBackward0"},
    {"native_layer_norm [3,4]", f_layer, 3, {S(3, 4), S(4), S(4)}, "NativeLayerNormBackward0"},
    {"native_layer_norm [2,3,4] over [3,4]", f_layer_3d, 3, {S(2, 3, 4), S(3, 4), S(3, 4)},
     "NativeLayerNormBackward0"},
    {"native_layer_norm no affine", f_layer_plain, 1, {S(3, 4)}, "NativeLayerNormBackward0"},
    {"native_group_norm", f_group, 3, {S(2, 4, 3), S(4), S(4)}, "NativeGroupNormBackward0"},
    {"native_group_norm no affine", f_group_plain, 1, {S(2, 4, 3)}, "NativeGroupNormBackward0"},
    {"native_group_norm out + mean + rstd", f_group_stats, 3, {S(2, 4, 3), S(4), S(4)}, NULL},
    {"logsumexp dim 1", f_logsumexp, 1, {S(3, 4)}, "LogsumexpBackward0"},
    {"logsumexp dims 0,2 keepdim", f_logsumexp_keep, 1, {S(2, 3, 2)}, "LogsumexpBackward0"},
    {"amax dim 1", f_amax, 1, {S(3, 4)}, "AmaxBackward0"},
    {"amin dim 0 keepdim", f_amin_keep, 1, {S(3, 4)}, "AminBackward0"},
    {"amax all", f_amax_all, 1, {S(2, 3, 2)}, "AmaxBackward0"},
    {"amin dims -1,0", f_amin_neg, 1, {S(2, 3, 2)}, "AminBackward0"},
    {"max()", f_max_all, 1, {S(3, 4)}, "MaxBackward1"},
    {"min()", f_min_all, 1, {S(2, 3, 2)}, "MinBackward1"},
    {"var()", f_var_all, 1, {S(3, 4)}, "VarBackward0"},
    {"var dim 1", f_var_dim, 1, {S(3, 4)}, "VarBackward0"},
    {"var dim 0 keepdim correction 0", f_var_keep0, 1, {S(3, 4)}, "VarBackward0"},
    {"var dims 0,2 correction 0.5", f_var_3d, 1, {S(2, 3, 2)}, "VarBackward0"},
    {"std()", f_std_all, 1, {S(3, 4)}, "StdBackward0"},
    {"std dim -1 keepdim", f_std_dim, 1, {S(3, 4)}, "StdBackward0"},
    {"std dim 1 correction 0", f_std_3d, 1, {S(2, 3, 2)}, "StdBackward0"},
    {"prod()", f_prod, 1, {S(3, 4)}, "ProdBackward0"},
    {"prod() of a 0-dim tensor", f_prod, 1, {S0}, "ProdBackward0"},
    {"prod() one zero", f_prod, 1, {SK(ZERO1, 2, 3)}, "ProdBackward0"},
    {"prod() zeros", f_prod, 1, {SK(ZEROS, 3, 4)}, "ProdBackward0"},
    {"prod dim 1", f_prod_dim, 1, {S(3, 4)}, "ProdBackward1"},
    {"prod dim 1, rows of 0, 1, 2 zeros", f_prod_dim, 1, {SK(ZEROS, 3, 4)}, "ProdBackward1"},
    {"prod dim 0 keepdim", f_prod_dim_keep, 1, {SK(ZERO1, 3, 4)}, "ProdBackward1"},
    {"cumsum dim 1", f_cumsum1, 1, {S(3, 4)}, "CumsumBackward0"},
    {"cumsum dim 0", f_cumsum0, 1, {S(3, 4)}, "CumsumBackward0"},
    {"cumsum dim -1", f_cumsum_neg, 1, {S(2, 3, 2)}, "CumsumBackward0"},
    {"cumsum of a 0-dim tensor, dim -1", f_cumsum_neg, 1, {S0}, "CumsumBackward0"},
    {"gather dim 1", f_gather, 1, {S(3, 4)}, "GatherBackward0"},
    {"gather dim 0", f_gather0, 1, {S(3, 4)}, "GatherBackward0"},
    {"index_select dim 0", f_index_select0, 1, {S(3, 4)}, "IndexSelectBackward0"},
    {"index_select dim -1", f_index_select_neg, 1, {S(2, 3, 3)}, "IndexSelectBackward0"},
    {"select dim 1", f_select1, 1, {S(3, 4)}, "SelectBackward0"},
    {"select dim 0 index -1", f_select_neg, 1, {S(2, 3, 2)}, "SelectBackward0"},
    {"embedding", f_embedding, 1, {S(5, 3)}, "EmbeddingBackward0"},
    {"permute", f_permute, 1, {S(2, 3, 4)}, "PermuteBackward0"},
    {"as_strided, offset None", f_as_strided, 1, {S(3, 4)}, "AsStridedBackward0"},
    {"as_strided overlapping windows", f_as_strided_windows, 1, {S(7)}, "AsStridedBackward0"},
    {"as_strided of an expanded input", f_as_strided_expanded, 1, {S(1, 4)},
     "AsStridedBackward0"},
    {"as_strided_ on a clone", f_as_strided_, 1, {S(3, 4)}, "AsStridedBackward0"},
    {"as_strided_copy, stride 0", f_as_strided_copy, 1, {S(8)}, "AsStridedBackward0_copy"},
    {"masked_fill.Tensor", f_masked_fill, 2, {S(3, 4), S0}, "MaskedFillBackward1"},
    {"clamp(min, max)", f_clamp, 1, {S(3, 4)}, "ClampBackward1"},
    {"clamp(min)", f_clamp_min, 1, {S(3, 4)}, "ClampBackward1"},
    {"clamp(max)", f_clamp_max, 1, {S(3, 4)}, "ClampBackward1"},
    {"clamp.Tensor(min, max)", f_clamp_t, 3, {S(3, 4), S(3, 4), S(3, 4)}, "ClampBackward0"},
    {"clamp.Tensor(min) broadcast", f_clamp_tmin, 2, {S(3, 4), S(4)}, "ClampBackward0"},
    {"pow(x, e)", f_pow_tt, 2, {SK(POS, 3, 4), S(3, 4)}, "PowBackward1"},
    {"pow(x, e) broadcast", f_pow_tt, 2, {SK(POS, 2, 3), S(3)}, "PowBackward1"},
    {"pow(2.5, e)", f_pow_scalar, 1, {S(3, 4)}, "PowBackward2"},
    {"matmul 1-D, 1-D", f_matmul, 2, {S(4), S(4)}, "MatmulBackward0"},
    {"matmul 2-D, 1-D", f_matmul, 2, {S(3, 4), S(4)}, NULL},
    {"matmul 1-D, 2-D", f_matmul, 2, {S(3), S(3, 4)}, NULL},
    {"matmul 2-D, 2-D", f_matmul, 2, {S(3, 4), S(4, 2)}, "MatmulBackward0"},
    {"matmul 3-D, 2-D", f_matmul, 2, {S(2, 3, 4), S(4, 2)}, NULL},
    {"matmul 1-D, 3-D", f_matmul, 2, {S(3), S(2, 3, 4)}, NULL},
    {"matmul 3-D, 1-D", f_matmul, 2, {S(2, 3, 4), S(4)}, NULL},
    {"matmul broadcast batch", f_matmul, 2, {S(2, 1, 3, 4), S(3, 4, 2)}, "MatmulBackward0"},
    {"_to_copy", f_to_copy, 1, {S(3, 4)}, "ToCopyBackward0"},
};

/* ---- direct checks ------------------------------------------------------------------------- */

/* amax over ties: the gradient shared among the maxima */
static void test_ties(void) {
    sg_tensor *x = make(SG_FLOAT64, (const int64_t[]){2, 3}, 2, (const double[]){1, 3, 3, 2, 2, 2});
    CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
    sg_tensor *a = NULL, *s = NULL, *g = NULL;
    CHECK(aten_amax(x, L(1), false, &a) == SG_OK);
    CHECK(aten_sum(a, NULL, &s) == SG_OK);
    CHECK(sg_backward(&s, NULL, 1, false) == SG_OK);
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    static const double want[6] = {0, 0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    for (int i = 0; g && i < 6; i++) CHECK(fabs(at(g, i) - want[i]) < 1e-12);
    sg_tensor_release(a), sg_tensor_release(s), sg_tensor_release(g), sg_tensor_release(x);
}

/* a float32 leaf copied to float64: its gradient comes back float32 */
static void test_to_copy_dtype(void) {
    sg_tensor *x = make(SG_FLOAT32, (const int64_t[]){4}, 1, (const double[]){1, 2, 3, 4});
    sg_tensor *w = make(SG_FLOAT64, (const int64_t[]){4}, 1, (const double[]){0.5, -1, 2, 0});
    CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
    sg_tensor *y = NULL, *p = NULL, *s = NULL, *g = NULL;
    CHECK(aten__to_copy(x, &(sg_dtype){SG_FLOAT64}, NULL, NULL, NULL, false, NULL, &y) == SG_OK);
    CHECK(y && (sg_dtype)y->dtype == SG_FLOAT64);
    CHECK(aten_mul_Tensor(y, w, &p) == SG_OK);
    CHECK(aten_sum(p, NULL, &s) == SG_OK);
    CHECK(sg_backward(&s, NULL, 1, false) == SG_OK);
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g && (sg_dtype)g->dtype == SG_FLOAT32);
    for (int i = 0; g && i < 4; i++) CHECK(at(g, i) == at(w, i));
    sg_tensor_release(y), sg_tensor_release(p), sg_tensor_release(s), sg_tensor_release(g);
    sg_tensor_release(w), sg_tensor_release(x);
}

/* embedding with padding_idx and scale_grad_by_freq: gradients finite differences do not give
 * (PyTorch's choice): row r gets the rows of grad whose index is r, each divided by how often r
 * occurs, and the padding row none */
static void test_embedding_pad_freq(void) {
    static const double idx[6] = {1, 4, 1, 0, 3, 1};
    const int64_t pad = 4;
    sg_tensor *w = make_leaf(SG_FLOAT64, &(spec)S(5, 3), 0), *i = emb_indices(w);
    double gv[18];
    for (int k = 0; k < 18; k++) gv[k] = 0.25 * k - 1;
    sg_tensor *go = make(SG_FLOAT64, (const int64_t[]){2, 3, 3}, 3, gv), *y = NULL, *g = NULL;
    CHECK(aten_embedding(w, i, pad, true, false, &y) == SG_OK);
    CHECK(sg_backward(&y, &go, 1, false) == SG_OK);
    CHECK(sg_tensor_grad(w, &g) == SG_OK && g && shape_is(g, (const int64_t[]){5, 3}, 2));
    for (int r = 0; g && r < 5; r++) {
        int count = 0;
        for (int p = 0; p < 6; p++) count += idx[p] == r;
        for (int c = 0; c < 3; c++) {
            double want = 0;
            for (int p = 0; p < 6; p++)
                if (idx[p] == r && r != pad) want += gv[p * 3 + c] / count;
            CHECK(fabs(at(g, r * 3 + c) - want) < 1e-12);
        }
    }
    sg_tensor_release(y), sg_tensor_release(g), sg_tensor_release(go), sg_tensor_release(i);
    sg_tensor_release(w);
}

/* sparse gradients are refused at backward, with a message naming the helper and the flag */
static void test_sparse_refused(void) {
    sg_tensor *w = make_leaf(SG_FLOAT64, &(spec)S(5, 3), 0), *i = emb_indices(w);
    sg_tensor *y = NULL, *s = NULL;
    CHECK(aten_embedding(w, i, -1, false, true, &y) == SG_OK);
    CHECK(aten_sum(y, NULL, &s) == SG_OK);
    CHECK(sg_backward(&s, NULL, 1, false) == SG_EUNSUPPORTED);
    CHECK(strstr(sg_last_error(), "autograd::embedding_backward: sparse gradients "
                                  "(sparse=true) are not supported") != NULL);
    sg_tensor_release(y), sg_tensor_release(s);
    sg_tensor *x = make_leaf(SG_FLOAT64, &(spec)S(3, 4), 0), *gi = NULL;
    gi = index_of(x, (const int64_t[]){3, 1}, 2, (const double[]){0, 1, 2});
    CHECK(aten_gather(x, 1, gi, true, &y) == SG_OK);
    CHECK(aten_sum(y, NULL, &s) == SG_OK);
    CHECK(sg_backward(&s, NULL, 1, false) == SG_EUNSUPPORTED);
    CHECK(strstr(sg_last_error(), "autograd::gather_backward: sparse gradients") != NULL);
    sg_tensor_release(y), sg_tensor_release(s), sg_tensor_release(gi), sg_tensor_release(x);
    sg_tensor_release(i), sg_tensor_release(w);
}

/* rstd alone from a weighted rms_norm: the weight gets no gradient (it does not reach rstd),
 * the input rstd's */
static void test_rms_rstd_weight(void) {
    sg_tensor *x = make_leaf(SG_FLOAT64, &(spec)S(3, 4), 0);
    sg_tensor *w = make_leaf(SG_FLOAT64, &(spec)S(4), 1), *out = NULL, *rstd = NULL;
    sg_tensor *s = NULL, *gx = NULL, *gw = NULL;
    CHECK(aten__fused_rms_norm(x, L(4), w, &(double){1e-5}, &out, &rstd) == SG_OK);
    CHECK(aten_sum(rstd, NULL, &s) == SG_OK);
    sg_status st = sg_backward(&s, NULL, 1, false);
    if (st != SG_OK) fprintf(stderr, "rms rstd with weight: %s\n", sg_last_error());
    CHECK(st == SG_OK);
    CHECK(sg_tensor_grad(x, &gx) == SG_OK && gx);
    CHECK(sg_tensor_grad(w, &gw) == SG_OK);
    for (int64_t i = 0; gw && i < 4; i++) CHECK(at(gw, i) == 0);
    /* d(sum r)/dx = -r^3 x / N per row */
    for (int64_t i = 0; gx && i < 12; i++) {
        double ss = 0, xi = at(x, i);
        for (int64_t j = 0; j < 4; j++) ss += at(x, i / 4 * 4 + j) * at(x, i / 4 * 4 + j);
        double r = 1 / sqrt(ss / 4 + 1e-5);
        CHECK(fabs(at(gx, i) - (-r * r * r * xi / 4)) < 1e-9);
    }
    sg_tensor_release(out), sg_tensor_release(rstd), sg_tensor_release(s);
    sg_tensor_release(gx), sg_tensor_release(gw), sg_tensor_release(x), sg_tensor_release(w);
}

/* a helper called wrongly says which and what, and gives nothing; one called directly */
static void test_helper_errors(void) {
    sg_tensor *a = make_leaf(SG_FLOAT64, &(spec)S(3, 4), 0);
    sg_tensor *b = make_leaf(SG_FLOAT64, &(spec)S(4), 1);
    sg_tensor *g = make_leaf(SG_FLOAT64, &(spec)S(3), 2), *r0 = NULL, *r1 = NULL;
    bool one[1] = {true}, two[2] = {true, true};
    CHECK(autograd_matmul_backward(g, a, b, (sg_bool_list){one, 1}, &r0, &r1) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "autograd::matmul_backward: the mask has 1 entries, not 2"));
    CHECK(!r0 && !r1);
    sg_tensor *rstd = make_leaf(SG_FLOAT64, &(spec)S(3, 1), 3);
    CHECK(autograd__fused_rms_norm_backward(a, a, L(5), rstd, NULL, (sg_bool_list){two, 2}, &r0,
                                            &r1) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "autograd::rms_norm_backward: the input's dim 1 is 4, "
                                  "normalized_shape says 5"));
    CHECK(!r0 && !r1);
    CHECK(autograd_gelu_backward(a, a, "fast", &r0) == SG_EINVAL && !r0);
    CHECK(strstr(sg_last_error(), "autograd::gelu_backward: approximate is 'fast', not 'none' "
                                  "or 'tanh'"));
    sg_tensor *i = index_of(a, (const int64_t[]){1}, 1, (const double[]){0});
    CHECK(autograd_index_select_backward(a, L(3, 4), 5, i, &r0) == SG_EINVAL && !r0);
    CHECK(strstr(sg_last_error(), "autograd::index_select_backward: dim 5 out of range for 2 "
                                  "dims"));
    /* complex operands are refused where the gradient would need conj() */
    sg_tensor *z = NULL;
    CHECK(sg_tensor_empty((const int64_t[]){3, 4}, 2, SG_COMPLEX64, SG_CPU, &z) == SG_OK);
    sg_tensor *z4 = NULL;
    CHECK(sg_tensor_empty((const int64_t[]){4}, 1, SG_COMPLEX64, SG_CPU, &z4) == SG_OK);
    CHECK(autograd_matmul_backward(z, z, z4, (sg_bool_list){two, 2}, &r0, &r1) ==
          SG_EUNSUPPORTED);
    CHECK(strstr(sg_last_error(), "autograd::matmul_backward: complex gradients are not "
                                  "supported yet"));
    CHECK(!r0 && !r1);
    sg_tensor_release(z), sg_tensor_release(z4);
    /* log_softmax's gradient comes in the input's dtype (half_to_float's y is wider) */
    sg_tensor *y32 = make_leaf(SG_FLOAT32, &(spec)S(3, 4), 4);
    CHECK(autograd__log_softmax_backward_data(y32, y32, 1, SG_FLOAT64, &r0) == SG_OK);
    CHECK(r0 && (sg_dtype)r0->dtype == SG_FLOAT64 && shape_is(r0, y32->sizes, 2));
    sg_tensor_release(r0), sg_tensor_release(y32);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(g), sg_tensor_release(rstd);
    sg_tensor_release(i);
}

int main(void) {
#ifdef SG_AG_CUDA
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) == 0) SKIP("no usable GPU: %s", why ? why : "?");
    CHECK(sg_aten_cuda_init() == SG_OK);
#else
    CHECK(sg_aten_cpu_init() == SG_OK);
#endif
    CHECK(aten_autograd_init() == SG_OK);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) check_case(&cases[k]);
#ifndef SG_AG_CUDA /* these read and write values in place: CPU tensors */
    test_ties();
    test_to_copy_dtype();
    test_embedding_pad_freq();
    test_sparse_refused();
    test_helper_errors();
    test_rms_rstd_weight();
#else /* CPU-only checks, compiled in both builds */
    (void)test_ties, (void)test_to_copy_dtype, (void)test_embedding_pad_freq;
    (void)test_sparse_refused, (void)test_helper_errors, (void)test_rms_rstd_weight;
    (void)root_value;
#endif
    sg_runtime_shutdown();
    return check_result(AG_NAME);
}
