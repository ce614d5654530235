/* sdpa_dropout.h: dropout in scaled_dot_product_attention, checked on any device (the CPU in
 * test_cpu_linalg, CUDA in test_cuda_attention): inputs are made on the CPU and moved, results
 * moved back. Dropout is random, so the checks are its laws rather than PyTorch's numbers: each
 * weight dropped (0) or kept and scaled by 1 / (1 - p), about a fraction p dropped, the output
 * the product of the weights returned with v, the same draw again from the same seed, a given
 * dropout_mask applied as aten's math path applies it, p = 1 dropping all. */
#ifndef SG_TEST_SDPA_DROPOUT_H
#define SG_TEST_SDPA_DROPOUT_H

#include "aten.h"
#include "cpu_tensors.h"
#include "sg_generator.h"

#include <stdio.h>

/* t on the CPU (a new reference) */
static sg_tensor *sdpa_host(sg_tensor *t) {
    sg_tensor *h = NULL;
    CHECK(t && sg_tensor_to(t, SG_CPU, &h) == SG_OK);
    return h;
}

/* t moved to dev (t's reference is handed over) */
static sg_tensor *sdpa_on(sg_tensor *t, sg_device dev) {
    sg_tensor *d = NULL;
    CHECK(sg_tensor_to(t, dev, &d) == SG_OK);
    sg_tensor_release(t);
    return d;
}

/* r [1, L, Ev] == w [1, L, S] . v [1, S, Ev] * vscale, in double (host tensors) */
static bool sdpa_is_product(const sg_tensor *r, const sg_tensor *w, const sg_tensor *v,
                            double vscale) {
    if (!r || !w || !v) return false;
    int64_t L = w->sizes[1], S = w->sizes[2], Ev = v->sizes[2];
    for (int64_t i = 0; i < L; i++)
        for (int64_t e = 0; e < Ev; e++) {
            double want = 0;
            for (int64_t j = 0; j < S; j++) want += at(w, i * S + j) * at(v, j * Ev + e) * vscale;
            if (fabs(at(r, i * Ev + e) - want) > 1e-5 * (1 + fabs(want))) {
                fprintf(stderr, "  [%lld, %lld]: got %g, want %g\n", (long long)i, (long long)e,
                        at(r, i * Ev + e), want);
                return false;
            }
        }
    return true;
}

/* the math variant on dev; out and weights back on the host */
static sg_status sdpa_math(sg_tensor *q, sg_tensor *k, sg_tensor *v, double p, sg_tensor *dm,
                           sg_tensor **r, sg_tensor **w) {
    sg_tensor *rd = NULL, *wd = NULL;
    sg_status  st = aten__scaled_dot_product_attention_math(q, k, v, NULL, p, false, dm, NULL,
                                                            false, &rd, &wd);
    *r = st ? NULL : sdpa_host(rd);
    *w = st ? NULL : sdpa_host(wd);
    sg_tensor_release(rd);
    sg_tensor_release(wd);
    return st;
}

static void check_sdpa_dropout(sg_device dev) {
    enum { L = 48, S = 40, E = 8, EV = 4 };
    double   qd[L * E], kd[S * E], vd[S * EV], md[L * S];
    int64_t  sq[3] = {1, L, E}, sk[3] = {1, S, E}, sv[3] = {1, S, EV}, sm[3] = {1, L, S};
    uint32_t x = 12345;
    for (int i = 0; i < L * E; i++) qd[i] = ((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0 - 0.5;
    for (int i = 0; i < S * E; i++) kd[i] = ((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0 - 0.5;
    for (int i = 0; i < S * EV; i++) vd[i] = ((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0;
    for (int i = 0; i < L * S; i++) md[i] = ((x = x * 1664525u + 1013904223u) >> 30) != 0;
    sg_tensor *vh = make(SG_FLOAT32, sv, 3, vd);
    sg_tensor *q = sdpa_on(make(SG_FLOAT32, sq, 3, qd), dev), *k = sdpa_on(make(SG_FLOAT32, sk, 3, kd), dev);
    sg_tensor *v = sdpa_on(make(SG_FLOAT32, sv, 3, vd), dev), *dm = sdpa_on(make(SG_BOOL, sm, 3, md), dev);
    sg_tensor *r = NULL, *w = NULL, *r0 = NULL, *w0 = NULL, *r2 = NULL, *w2 = NULL;
    CHECK(sdpa_math(q, k, v, 0.0, NULL, &r0, &w0) == SG_OK);
    /* no mask: each weight dropped or kept and scaled; the weights returned are the dropped
     * ones, and the output is their product with v */
    sg_generator_manual_seed(NULL, 7);
    CHECK(sdpa_math(q, k, v, 0.25, NULL, &r, &w) == SG_OK);
    int64_t dropped = 0, bad = 0;
    for (int64_t i = 0; w && w0 && i < L * S; i++) {
        double g = at(w, i), keep = at(w0, i) / 0.75;
        if (g == 0) dropped++;
        else if (fabs(g - keep) > 1e-6 * keep) bad++;
    }
    CHECK(w && bad == 0 && dropped > L * S / 8 && dropped < L * S * 3 / 8); /* about a quarter */
    CHECK(sdpa_is_product(r, w, vh, 1.0));
    /* the default generator's seed gives the same draw again */
    sg_generator_manual_seed(NULL, 7);
    CHECK(sdpa_math(q, k, v, 0.25, NULL, &r2, &w2) == SG_OK);
    for (int64_t i = 0; w && w2 && i < L * S; i++) bad += at(w, i) != at(w2, i);
    for (int64_t i = 0; r && r2 && i < L * EV; i++) bad += at(r, i) != at(r2, i);
    CHECK(r2 && w2 && bad == 0);
    sg_tensor_release(r), sg_tensor_release(w), sg_tensor_release(r2), sg_tensor_release(w2);
    /* a dropout_mask: the weights returned are the softmax's; the output drops where the mask
     * is False and scales v by 1 / (1 - p) */
    CHECK(sdpa_math(q, k, v, 0.5, dm, &r, &w) == SG_OK);
    for (int64_t i = 0; w && w0 && i < L * S; i++) bad += at(w, i) != at(w0, i);
    CHECK(w && bad == 0);
    sg_tensor *mh = make(SG_BOOL, sm, 3, md), *kept = NULL, *not_m = NULL;
    CHECK(w0 && aten_logical_not(mh, &not_m) == SG_OK &&
          aten_masked_fill_Scalar(w0, not_m, sg_scalar_int(0), &kept) == SG_OK);
    CHECK(sdpa_is_product(r, kept, vh, 2.0));
    sg_tensor_release(r), sg_tensor_release(w), sg_tensor_release(kept);
    sg_tensor_release(not_m), sg_tensor_release(mh);
    /* p = 1 drops everything */
    CHECK(sdpa_math(q, k, v, 1.0, NULL, &r, &w) == SG_OK);
    int64_t nonzero = !r || !w;
    for (int64_t i = 0; r && w && i < L * S; i++) nonzero += at(w, i) != 0 || (i < L * EV && at(r, i) != 0);
    CHECK(nonzero == 0);
    sg_tensor_release(r), sg_tensor_release(w);
    /* sdpa itself drops too */
    sg_tensor *rd = NULL;
    CHECK(aten_scaled_dot_product_attention(q, k, v, NULL, 0.5, false, NULL, false, &rd) == SG_OK);
    r = rd ? sdpa_host(rd) : NULL;
    int64_t differ = 0;
    for (int64_t i = 0; r && r0 && i < L * EV; i++) differ += at(r, i) != at(r0, i);
    CHECK(r && r->ndim == 3 && r->sizes[1] == L && r->sizes[2] == EV && differ > 0);
    sg_tensor_release(r), sg_tensor_release(rd);
    rd = NULL;
    CHECK(aten_scaled_dot_product_attention(q, k, v, NULL, 1.5, false, NULL, false, &rd) ==
          SG_EINVAL);
    CHECK_STR(sg_last_error(), "dropout probability has to be between 0 and 1, but got 1.5");
    sg_tensor_release(r0), sg_tensor_release(w0), sg_tensor_release(dm), sg_tensor_release(v);
    sg_tensor_release(k), sg_tensor_release(q), sg_tensor_release(vh);
}

#endif
