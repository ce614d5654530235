/* test_cuda_gemm.c: the matrix products of the decision table (kernels/dsl/gemm_h100.yaml,
 * docs/gemm.md) on GPU 0, against float64 products of the same inputs (cuBLASLt in double).
 *
 * Checks, for every shape of bench/gemm_suite.txt in bfloat16 and float16: aten::mm as shipped
 * (whatever the table picks: a cuBLASLt algorithm by configuration, a template point, the
 * heuristic), cuBLASLt's heuristic (sg_cuda_mm_lt without a configuration) and cuBLAS's own
 * choice (sg_cuda_mm_cublas) are within the dtype's tolerance of the float64 product; then
 * every point of each template the build has (aten_dsl_templates_aten_mm: the Triton mm_tpl,
 * mm_persist_tpl and mm_splitk_tpl; the CuTeDSL mm_cute_tpl where the build has it), on shapes
 * whose M and N no tile divides, is too (or declines for the other dtype), an out-of-range point is refused, and so is a shape the template's predicate
 * refuses. Error: the largest |got - ref| over the largest |ref|, at most 4 units of the
 * dtype's last place (split-K reductions round more than once). Inputs: standard normal.
 * Skips (77) where the build has no DSL kernels or no GPU is usable. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "gemm_suite.h"
#include "sg_aten_cuda.h"
#include "sg_iter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SG_HAVE_DSL_KERNELS
int main(void) {
    SKIP("test_cuda_gemm: this build has no DSL kernels (no CUDA toolkit or no pinned Triton "
         "when it was configured: docs/dsl.md)");
}
#else
#include "aten.h"
#include "aten_dsl.h"

static double tolerance(sg_dtype dt) { return dt == SG_BFLOAT16 ? 4.0 / 256 : 4.0 / 2048; }

static const char *name_of(sg_dtype dt) { return dt == SG_BFLOAT16 ? "bfloat16" : "float16"; }

/* A rows x cols tensor of dt on GPU 0, standard normal. */
static sg_tensor *randn(int64_t rows, int64_t cols, sg_dtype dt) {
    int64_t    sizes[2] = {rows, cols};
    sg_dtype   f = SG_FLOAT32;
    sg_device  dev = SG_CUDA(0);
    sg_tensor *r = NULL, *out = NULL;
    if (aten_randn((sg_int_list){sizes, 2}, &f, NULL, &dev, NULL, &r) == SG_OK)
        (void)sg_cast(r, dt, &out);
    sg_tensor_release(r);
    return out;
}

/* The largest |t| on the host; -1 where it cannot be had. */
static double max_abs(sg_tensor *t) {
    sg_tensor *a = NULL, *m = NULL, *h = NULL;
    double     v = -1;
    if (aten_abs(t, &a) == SG_OK && aten_max(a, &m) == SG_OK &&
        sg_tensor_to(m, SG_CPU, &h) == SG_OK)
        v = *(const double *)sg_tensor_data(h);
    sg_tensor_release(a), sg_tensor_release(m), sg_tensor_release(h);
    return v;
}

/* max |got - ref| / max |ref| (ref float64); INFINITY where got is missing or misshapen. */
static double rel_error(sg_tensor *got, sg_tensor *ref, double ref_max) {
    if (!got || got->ndim != 2 || got->sizes[0] != ref->sizes[0] ||
        got->sizes[1] != ref->sizes[1])
        return INFINITY;
    sg_tensor *g = NULL, *d = NULL;
    double     e = INFINITY;
    if (sg_cast(got, SG_FLOAT64, &g) == SG_OK &&
        aten_sub_Tensor(g, ref, sg_scalar_int(1), &d) == SG_OK) {
        double m = max_abs(d);
        if (m >= 0) e = m / (ref_max > 0 ? ref_max : 1);
    }
    sg_tensor_release(g), sg_tensor_release(d);
    return e;
}

typedef struct operands {
    sg_tensor *x, *y, *ref;
    double     ref_max;
} operands;

static bool make(operands *o, int64_t m, int64_t n, int64_t k, sg_dtype dt) {
    memset(o, 0, sizeof *o);
    sg_tensor *xd = NULL, *yd = NULL;
    o->x = randn(m, k, dt), o->y = randn(k, n, dt);
    bool ok = o->x && o->y && sg_cast(o->x, SG_FLOAT64, &xd) == SG_OK &&
              sg_cast(o->y, SG_FLOAT64, &yd) == SG_OK && aten_mm(xd, yd, &o->ref) == SG_OK;
    sg_tensor_release(xd), sg_tensor_release(yd);
    if (ok) o->ref_max = max_abs(o->ref);
    return ok && o->ref_max > 0;
}

static void drop(operands *o) {
    sg_tensor_release(o->x), sg_tensor_release(o->y), sg_tensor_release(o->ref);
}

static void check_shape(int64_t m, int64_t n, int64_t k, sg_dtype dt, double *worst) {
    operands o;
    CHECK(make(&o, m, n, k, dt));
    sg_tensor *c = NULL, *h = NULL, *b = NULL;
    CHECK(aten_mm(o.x, o.y, &c) == SG_OK);
    CHECK(sg_cuda_mm_lt(NULL, 0, o.x, o.y, &h) == SG_OK);
    CHECK(sg_cuda_mm_cublas(0, o.x, o.y, &b) == SG_OK);
    double ec = rel_error(c, o.ref, o.ref_max), eh = rel_error(h, o.ref, o.ref_max);
    double eb = rel_error(b, o.ref, o.ref_max);
    if (!(ec <= tolerance(dt)) || !(eh <= tolerance(dt)) || !(eb <= tolerance(dt))) {
        fprintf(stderr, "test_cuda_gemm: %s %lldx%lldx%lld: aten::mm %.3g, heuristic %.3g, "
                "cuBLAS %.3g\n", name_of(dt), (long long)m, (long long)n, (long long)k, ec, eh,
                eb);
        CHECK(ec <= tolerance(dt) && eh <= tolerance(dt) && eb <= tolerance(dt));
    }
    if (ec > *worst) *worst = ec;
    sg_tensor_release(c), sg_tensor_release(h), sg_tensor_release(b);
    drop(&o);
}

/* The shapes (M, N, K; up to two) each template of aten::mm is checked on (docs/gemm.md,
 * "Templates"): shapes its `when` takes, whose M and N none of its tiles divides; and one its
 * `when` refuses (a K its kernel cannot take). Every template the build has (the generated
 * aten_dsl_templates_aten_mm) needs its row. */
typedef struct mm_template_shapes {
    const char *name;
    int64_t     shapes[2][3];
    int64_t     refused[3];
} mm_template_shapes;

static const mm_template_shapes template_shapes[] = {
    {"mm_tpl", {{77, 1000, 520}}, {77, 1000, 516}},
    /* then more tiles than its 132 programs, so each walks several */
    {"mm_persist_tpl", {{77, 1000, 520}, {2100, 2000, 136}}, {77, 1000, 516}},
    /* K split in runs of whole BK steps, the last partial; then fewer BK steps than SPLIT, so
     * some programs have no K at all and add zeros */
    {"mm_splitk_tpl", {{77, 1000, 4104}, {33, 136, 40}}, {77, 1000, 516}},
    /* M past tiles of 64 and of 128, a last K tile of 8 (its BK is 32); then fewer K tiles
     * than its pipeline holds, the last of them partial, and 8 columns in the last N tile */
    {"mm_cute_tpl", {{197, 1000, 520}, {77, 136, 40}}, {77, 1000, 516}},
};

typedef aten_dsl_template_aten_mm mm_template;

/* Every point of t on shape s: right for its dtype, refused (SG_EINVAL) for the other. */
static void check_points(const mm_template *t, const int64_t *s, sg_dtype dt) {
    operands o;
    CHECK(make(&o, s[0], s[1], s[2], dt));
    const char *p;
    int         taken = 0;
    for (int32_t i = 0; (p = t->point(i)) != NULL; i++) {
        char want[32];
        snprintf(want, sizeof want, "{dtype: %s,", name_of(dt));
        bool       mine = strncmp(p, want, strlen(want)) == 0;
        sg_tensor *c = NULL;
        sg_status  st = t->run(i, o.x, o.y, &c);
        if (!mine) {
            CHECK(st == SG_EINVAL && !c);
        } else {
            double e = rel_error(c, o.ref, o.ref_max);
            if (st != SG_OK || !(e <= tolerance(dt)))
                fprintf(stderr, "test_cuda_gemm: %s point %d %s on %lldx%lldx%lld: %s, error "
                        "%.3g\n", t->name, i, p, (long long)s[0], (long long)s[1],
                        (long long)s[2], sg_status_name(st), e);
            CHECK(st == SG_OK && e <= tolerance(dt));
            taken++;
        }
        sg_tensor_release(c);
    }
    CHECK(taken > 0);
    sg_tensor *c = NULL;
    CHECK(t->run(-1, o.x, o.y, &c) == SG_EINVAL && !c);
    drop(&o);
}

/* No point of t takes the shape r. */
static void check_refused(const mm_template *t, const int64_t *r, sg_dtype dt) {
    operands o;
    CHECK(make(&o, r[0], r[1], r[2], dt));
    const char *p;
    for (int32_t i = 0; (p = t->point(i)) != NULL; i++) {
        sg_tensor *c = NULL;
        sg_status  st = t->run(i, o.x, o.y, &c);
        if (st != SG_EINVAL)
            fprintf(stderr, "test_cuda_gemm: %s point %d %s took %lldx%lldx%lld: %s\n", t->name,
                    i, p, (long long)r[0], (long long)r[1], (long long)r[2], sg_status_name(st));
        CHECK(st == SG_EINVAL && !c);
        sg_tensor_release(c);
    }
    drop(&o);
}

int main(void) {
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) < 1) {
        fprintf(stderr, "test_cuda_gemm: no CUDA device (%s): skipped\n", why ? why : "none");
        return 77;
    }
    CHECK(sg_aten_cuda_init() == SG_OK);
    static sg_gemm_shape shapes[512];
    int                  n = sg_gemm_read_suite(SG_GEMM_SUITE, shapes, 512);
    CHECK(n > 100);
    const sg_dtype dts[2] = {SG_BFLOAT16, SG_FLOAT16};
    for (int d = 0; d < 2; d++) {
        double worst = 0;
        for (int i = 0; i < n; i++)
            check_shape(shapes[i].m, shapes[i].n, shapes[i].k, dts[d], &worst);
        fprintf(stderr, "test_cuda_gemm: %s: %d shapes, worst error of aten::mm %.3g (tolerance "
                        "%.3g)\n", name_of(dts[d]), n, worst, tolerance(dts[d]));
        size_t ntpl = sizeof aten_dsl_templates_aten_mm / sizeof *aten_dsl_templates_aten_mm;
        for (size_t t = 0; t < ntpl; t++) {
            const mm_template        *tp = &aten_dsl_templates_aten_mm[t];
            const mm_template_shapes *ts = NULL;
            for (size_t k = 0; k < sizeof template_shapes / sizeof *template_shapes; k++)
                if (strcmp(template_shapes[k].name, tp->name) == 0) ts = &template_shapes[k];
            if (!ts) fprintf(stderr, "test_cuda_gemm: template %s has no shapes\n", tp->name);
            CHECK(ts != NULL);
            for (int j = 0; ts && j < 2 && ts->shapes[j][0]; j++)
                check_points(tp, ts->shapes[j], dts[d]);
            if (ts) check_refused(tp, ts->refused, dts[d]);
        }
    }

    return check_result("test_cuda_gemm");
}
#endif
