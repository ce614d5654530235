/* test_cpu_factory.c: factories (empty, zeros, ones, full, arange and the _like forms), the CPU
 * generator and the random ops, and the copies (copy_, _to_copy, to, clone, contiguous), through
 * the generated aten API; the cross-device copies where a CUDA device exists. Deterministic
 * values are worked out by hand; the random ones are PyTorch 2.11's own for the same seeds
 * (torch.Generator().manual_seed(s), as IEEE bit patterns), from its x86 vector kernels and from
 * its portable ones (ATEN_CPU_CAPABILITY=default), which the two modes reproduce bit for bit. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "sg_generator.h"

#include <math.h>
#include <string.h>


static const char *elem_ptr(const sg_tensor *t, int64_t i) {
    int64_t off = 0, rest = i;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        off += (rest % t->sizes[d]) * t->strides[d];
        rest /= t->sizes[d];
    }
    return (const char *)sg_tensor_data(t) + off * (int64_t)sg_dtype_size((sg_dtype)t->dtype);
}


static bool all_eq(const sg_tensor *t, const double *want, int64_t n) {
    if (!t || sg_tensor_numel(t) != n) return false;
    for (int64_t i = 0; i < n; i++)
        if (!(at(t, i) == want[i] || fabs(at(t, i) - want[i]) < 1e-6)) {
            fprintf(stderr, "  element %lld: got %.9g, want %.9g\n", (long long)i, at(t, i), want[i]);
            return false;
        }
    return true;
}

/* float32 elements (logical order) against IEEE bit patterns */
static bool bits32(const sg_tensor *t, const uint32_t *want, int64_t n) {
    if (!t || t->dtype != SG_FLOAT32 || sg_tensor_numel(t) != n) return false;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, elem_ptr(t, i), 4);
        if (u != want[i]) {
            fprintf(stderr, "  element %lld: got %08x, want %08x\n", (long long)i, u, want[i]);
            return false;
        }
    }
    return true;
}

static bool bits64(const sg_tensor *t, const uint64_t *want, int64_t n) {
    if (!t || t->dtype != SG_FLOAT64 || sg_tensor_numel(t) != n) return false;
    for (int64_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, elem_ptr(t, i), 8);
        if (u != want[i]) {
            fprintf(stderr, "  element %lld: got %016llx, want %016llx\n", (long long)i,
                    (unsigned long long)u, (unsigned long long)want[i]);
            return false;
        }
    }
    return true;
}


#define L(...) ((sg_int_list){(const int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / 8})

static void test_fill_factories(void) {
    sg_tensor *r = NULL;
    sg_dtype   i32 = SG_INT32, f64 = SG_FLOAT64, u8 = SG_UINT8;
    CHECK(aten_zeros(L(2, 3), NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, (double[]){0, 0, 0, 0, 0, 0}, 6));
    sg_tensor_release(r);
    CHECK(aten_ones(L(3), &i32, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_INT32);
    CHECK(all_eq(r, (double[]){1, 1, 1}, 3));
    sg_tensor_release(r);
    /* full infers bool, int64 or float32 from the value */
    CHECK(aten_full(L(2), sg_scalar_int(7), NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_INT64);
    CHECK(all_eq(r, (double[]){7, 7}, 2));
    sg_tensor_release(r);
    CHECK(aten_full(L(2), sg_scalar_float(2.5), NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32);
    sg_tensor_release(r);
    CHECK(aten_full(L(2), sg_scalar_bool(true), NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_BOOL);
    CHECK(all_eq(r, (double[]){1, 1}, 2));
    sg_tensor_release(r);
    CHECK(aten_full(L(2), sg_scalar_float(2.5), &f64, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_FLOAT64);
    CHECK(all_eq(r, (double[]){2.5, 2.5}, 2));
    sg_tensor_release(r);
    /* a value the dtype cannot hold; uint8 takes small negatives (they wrap), as c10 does */
    CHECK(aten_full(L(2), sg_scalar_int(300), &u8, NULL, NULL, NULL, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "full: value cannot be converted to type uint8_t without overflow");
    CHECK(aten_full(L(1), sg_scalar_int(-1), &u8, NULL, NULL, NULL, &r) == SG_OK && at(r, 0) == 255);
    sg_tensor_release(r);
    CHECK(aten_zeros(L(2, -1), NULL, NULL, NULL, NULL, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "zeros: Trying to create tensor with negative dimension -1: [2, -1]");
    sg_layout sparse = SG_SPARSE_COO;
    CHECK(aten_ones(L(2), NULL, &sparse, NULL, NULL, &r) == SG_EUNSUPPORTED);
    /* empty: contiguous, or channels_last; preserve is refused */
    sg_memory_format cl = SG_CHANNELS_LAST, keep = SG_PRESERVE_FORMAT;
    CHECK(aten_empty_memory_format(L(2, 3, 4, 5), NULL, NULL, NULL, NULL, &cl, &r) == SG_OK);
    CHECK(r->strides[0] == 60 && r->strides[1] == 1 && r->strides[2] == 15 && r->strides[3] == 3);
    sg_tensor_release(r);
    CHECK(aten_empty_memory_format(L(2, 3), NULL, NULL, NULL, NULL, &cl, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "required rank 4 tensor to use channels_last format") != NULL);
    CHECK(aten_empty_memory_format(L(2), NULL, NULL, NULL, NULL, &keep, &r) == SG_EINVAL);
    CHECK(aten_empty_strided(L(2, 3), L(1, 2), NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(r->strides[0] == 1 && r->strides[1] == 2);
    sg_tensor_release(r);
    /* on Meta: shapes, no data */
    sg_device meta = SG_META;
    CHECK(aten_full(L(4, 4), sg_scalar_float(1), NULL, NULL, &meta, NULL, &r) == SG_OK);
    CHECK(r->device.type == SG_DEV_META && shape_is(r, (int64_t[]){4, 4}, 2));
    sg_tensor_release(r);
    /* out= forms resize */
    sg_tensor *out = make(SG_FLOAT64, (int64_t[]){1}, 1, (double[]){9}), *ret = NULL;
    CHECK(aten_full_out(L(2, 2), sg_scalar_int(3), out, &ret) == SG_OK && ret == out);
    CHECK(shape_is(out, (int64_t[]){2, 2}, 2) && all_eq(out, (double[]){3, 3, 3, 3}, 4));
    sg_tensor_release(ret);
    CHECK(aten_zeros_out(L(3), out, &ret) == SG_OK && all_eq(out, (double[]){0, 0, 0}, 3));
    sg_tensor_release(ret);
    CHECK(aten_ones_out(L(3), out, &ret) == SG_OK && all_eq(out, (double[]){1, 1, 1}, 3));
    sg_tensor_release(ret);
    CHECK(aten_empty_out(L(5), NULL, out, &ret) == SG_OK && shape_is(out, (int64_t[]){5}, 1));
    sg_tensor_release(ret);
    sg_tensor_release(out);
}

static void test_like(void) {
    sg_tensor *x = make(SG_INT64, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6});
    sg_tensor *xt = NULL, *r = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    /* preserve: a transposed (dense) input keeps its strides */
    CHECK(aten_empty_like(xt, NULL, NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_INT64);
    CHECK(shape_is(r, (int64_t[]){3, 2}, 2) && r->strides[0] == 1 && r->strides[1] == 3);
    sg_tensor_release(r);
    sg_memory_format cf = SG_CONTIGUOUS_FORMAT;
    CHECK(aten_zeros_like(xt, NULL, NULL, NULL, NULL, &cf, &r) == SG_OK && sg_tensor_is_contiguous(r));
    sg_tensor_release(r);
    sg_dtype f32 = SG_FLOAT32;
    CHECK(aten_ones_like(x, &f32, NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, (double[]){1, 1, 1, 1, 1, 1}, 6));
    sg_tensor_release(r);
    CHECK(aten_full_like(xt, sg_scalar_float(2.75), NULL, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(r->dtype == SG_INT64 && all_eq(r, (double[]){2, 2, 2, 2, 2, 2}, 6)); /* truncated */
    sg_tensor_release(r);
    /* a strided slice (not dense) gets contiguous strides */
    sg_tensor *sl = NULL;
    CHECK(sg_tensor_slice(x, 1, 0, 3, 2, &sl) == SG_OK);
    CHECK(aten_empty_like(sl, NULL, NULL, NULL, NULL, NULL, &r) == SG_OK && sg_tensor_is_contiguous(r));
    sg_tensor_release(r);
    sg_tensor_release(sl);
    sg_tensor_release(xt);
    sg_tensor_release(x);
}

static void test_arange(void) {
    sg_tensor *r = NULL;
    CHECK(aten_arange(sg_scalar_int(5), NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_INT64);
    CHECK(all_eq(r, (double[]){0, 1, 2, 3, 4}, 5));
    sg_tensor_release(r);
    CHECK(aten_arange_start_step(sg_scalar_int(0), sg_scalar_int(1), sg_scalar_float(0.25), NULL, NULL,
                                 NULL, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, (double[]){0, 0.25, 0.5, 0.75}, 4));
    sg_tensor_release(r);
    /* ceil((end - start) / step): 10, 7, 4, 1 */
    CHECK(aten_arange_start_step(sg_scalar_int(10), sg_scalar_int(0), sg_scalar_int(-3), NULL, NULL,
                                 NULL, NULL, &r) == SG_OK && all_eq(r, (double[]){10, 7, 4, 1}, 4));
    sg_tensor_release(r);
    CHECK(aten_arange_start(sg_scalar_float(1), sg_scalar_float(2.5), NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(r->dtype == SG_FLOAT32 && all_eq(r, (double[]){1, 2}, 2));
    sg_tensor_release(r);
    /* 0.1 steps: 10 elements from 0 to 1 */
    sg_dtype f64 = SG_FLOAT64;
    CHECK(aten_arange_start_step(sg_scalar_int(0), sg_scalar_int(1), sg_scalar_float(0.1), &f64, NULL,
                                 NULL, NULL, &r) == SG_OK && sg_tensor_numel(r) == 10);
    CHECK(fabs(at(r, 9) - 0.9) < 1e-15);
    sg_tensor_release(r);
    CHECK(aten_arange_start_step(sg_scalar_int(0), sg_scalar_int(5), sg_scalar_int(0), NULL, NULL, NULL,
                                 NULL, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "arange: step must be nonzero");
    CHECK(aten_arange_start_step(sg_scalar_int(0), sg_scalar_int(5), sg_scalar_int(-1), NULL, NULL,
                                 NULL, NULL, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "arange: upper bound and larger bound inconsistent with step sign");
    CHECK(aten_arange(sg_scalar_float(INFINITY), NULL, NULL, NULL, NULL, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "unsupported range: 0 -> inf") != NULL);
    sg_dtype b = SG_BOOL;
    CHECK(aten_arange(sg_scalar_int(3), &b, NULL, NULL, NULL, &r) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"arange_cpu\" not implemented for 'Bool'");
    /* out=: resized where the count differs; the out's dtype rules */
    sg_tensor *out = make(SG_INT32, (int64_t[]){2}, 1, (double[]){0, 0}), *ret = NULL;
    CHECK(aten_arange_start_out(sg_scalar_int(1), sg_scalar_int(7), sg_scalar_int(2), out, &ret) == SG_OK);
    CHECK(ret == out && shape_is(out, (int64_t[]){3}, 1) && all_eq(out, (double[]){1, 3, 5}, 3));
    sg_tensor_release(ret);
    CHECK(aten_arange_out(sg_scalar_int(3), out, &ret) == SG_OK && all_eq(out, (double[]){0, 1, 2}, 3));
    sg_tensor_release(ret);
    sg_tensor_release(out);
    sg_device meta = SG_META;
    CHECK(aten_arange(sg_scalar_int(6), NULL, NULL, &meta, NULL, &r) == SG_OK && r->device.type == SG_DEV_META);
    CHECK(shape_is(r, (int64_t[]){6}, 1));
    sg_tensor_release(r);
}

static void test_generator(void) {
    sg_generator *g = NULL;
    /* mt19937 with the C++ standard's default seed: its 1st and 10000th outputs */
    CHECK(sg_generator_new(5489, &g) == SG_OK);
    CHECK(sg_generator_random(g) == 3499211612u);
    for (int i = 1; i < 9999; i++) sg_generator_random(g);
    CHECK(sg_generator_random(g) == 4123659995u);
    CHECK(sg_generator_initial_seed(g) == 5489);
    /* only the low 32 bits of the seed count */
    sg_generator_manual_seed(g, (UINT64_C(1) << 32) | 5489);
    CHECK(sg_generator_random(g) == 3499211612u);
    /* random64: two draws, high word first */
    sg_generator_manual_seed(g, 5489);
    uint64_t r64 = sg_generator_random64(g);
    CHECK(r64 >> 32 == 3499211612u);
    sg_generator_free(g);
    CHECK(sg_generator_initial_seed(NULL) == SG_GENERATOR_DEFAULT_SEED);
    sg_generator_free(sg_generator_default()); /* a no-op */
}

/* PyTorch's values: torch.Generator() (seed 67280421310721), then manual_seed(s). vec: those of
 * its x86 vector kernels (our default on x86-64), else those of its portable ones. */
static void test_rand_matches_pytorch(bool vec) {
    sg_generator *g = NULL;
    sg_tensor    *r = NULL, *e = NULL, *ret = NULL;
    sg_dtype      f64 = SG_FLOAT64, f16 = SG_FLOAT16;
    CHECK(sg_generator_new(SG_GENERATOR_DEFAULT_SEED, &g) == SG_OK);
    CHECK(aten_rand_generator(L(5), g, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(bits32(r, (uint32_t[]){0x3e88daec, 0x3f5f5e04, 0x3eabaafa, 0x3ece5818, 0x3f4980ad}, 5));
    sg_tensor_release(r);
    sg_generator_manual_seed(g, 42);
    CHECK(aten_rand_generator(L(5), g, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(bits32(r, (uint32_t[]){0x3f61dc66, 0x3f6a3db3, 0x3ec406b8, 0x3f75950e, 0x3ec7e8d4}, 5));
    sg_tensor_release(r);
    CHECK(aten_rand_generator(L(3), g, &f64, NULL, NULL, NULL, &r) == SG_OK); /* the stream goes on */
    CHECK(bits64(r, (uint64_t[]){0x3fe9d4479941aebc, 0x3fd658284fe1accc, 0x3fb0c3c93f7a0e90}, 3));
    sg_tensor_release(r);
    /* randn of 5 float32: scalar Box-Muller; the next call starts with the cached sine */
    sg_generator_manual_seed(g, 7);
    CHECK(aten_randn_generator(L(5), g, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(bits32(r, (uint32_t[]){0xbe165174, 0x3f49408e, 0x3f7262e7, 0xbf8ea2d3, 0x3fd86bd0}, 5));
    sg_tensor_release(r);
    CHECK(aten_randn_generator(L(3), g, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(bits32(r, (uint32_t[]){0xbf651371, 0xbeb6147c, 0x3f9dbed1}, 3));
    sg_tensor_release(r);
    /* randn of 20 float32: normal_fill (16 + a redrawn last block of 16) */
    sg_generator_manual_seed(g, 7);
    CHECK(aten_randn_generator(L(20), g, NULL, NULL, NULL, NULL, &r) == SG_OK);
    if (vec) /* the vectorised Cephes log and sincos */
        CHECK(bits32(r, (uint32_t[]){0xbf51f456, 0x3eca902b, 0x3f661ede, 0xbfb1b738, 0x3e4b352e, 0x3f4835ea,
                                     0x3f85017b, 0xbf397989, 0xbf595213, 0xbf9bc458, 0xbda5eea5, 0x3fae4525,
                                     0xc003ef41, 0x3f2c91dd, 0xbfa96365, 0xbfae0ce9, 0xbf5de028, 0xbf1062be,
                                     0xc0039d15, 0xbeb6a456},
                     20));
    else /* logf, cosf, sinf */
        CHECK(bits32(r, (uint32_t[]){0xbf51f456, 0x3eca9023, 0x3f661ed5, 0xbfb1b739, 0x3e4b34eb, 0x3f4835ea,
                                     0x3f85017b, 0xbf397993, 0xbf595212, 0xbf9bc459, 0xbda5eea5, 0x3fae4525,
                                     0xc003ef41, 0x3f2c91dd, 0xbfa96365, 0xbfae0ce5, 0xbf5de028, 0xbf1062b9,
                                     0xc0039d15, 0xbeb6a456},
                     20));
    sg_tensor_release(r);
    sg_generator_manual_seed(g, 7);
    CHECK(aten_randn_generator(L(5), g, &f64, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(bits64(r, (uint64_t[]){0xbfc2ca2e8774a1c0, 0x3fe92811cc01ae83, 0x3fee4c5cd4ba2dcf,
                                 0xbff1d45a657cf2b6, 0x3ffb0d79f26af9af},
                 5));
    sg_tensor_release(r);
    sg_generator_manual_seed(g, 7);
    CHECK(aten_randn_generator(L(20), g, &f64, NULL, NULL, NULL, &r) == SG_OK);
    const uint64_t *w = r ? sg_tensor_data(r) : NULL;
    CHECK(w && w[0] == 0x3fb0f6e8d3a53973 && w[3] == 0x3ff5e20f53cc4c77 && w[15] == 0x3fdcf6ff3d1fa92f &&
          w[19] == 0x3fe51bdf321a248a);
    sg_tensor_release(r);
    /* uniform_(-2, 3), normal_(1, 2) in float64 */
    sg_generator_manual_seed(g, 3);
    e = make(SG_FLOAT32, (int64_t[]){7}, 1, (double[]){0, 0, 0, 0, 0, 0, 0});
    CHECK(aten_uniform_(e, -2, 3, g, &ret) == SG_OK && ret == e);
    CHECK(bits32(e, (uint32_t[]){0xbffd4577, 0xbfbc6f84, vec ? 0xbf121f23 : 0xbf121f24, 0xbfeebfb8,
                                 0x3eb75530, 0xbfd9868c, 0x3fedfe80},
                 7)); /* x * (to - from) + from, fused or not */
    sg_tensor_release(ret);
    sg_tensor_release(e);
    sg_generator_manual_seed(g, 3);
    e = make(SG_FLOAT64, (int64_t[]){5}, 1, (double[]){0, 0, 0, 0, 0});
    CHECK(aten_normal_(e, 1, 2, g, &ret) == SG_OK);
    CHECK(bits64(e, (uint64_t[]){0x4004da38045153d6, 0x3ff5983c334c3d14, 0x3ff2d8e8970649fa,
                                 0xbfcd1c9f9429f330, 0x3ff17a539ef4531b},
                 5));
    sg_tensor_release(ret);
    sg_tensor_release(e);
    /* a transposed tensor is drawn in memory order */
    sg_generator_manual_seed(g, 11);
    sg_tensor *m = make(SG_FLOAT32, (int64_t[]){3, 4}, 2, (double[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    CHECK(sg_tensor_transpose(m, 0, 1, &e) == SG_OK);
    CHECK(aten_uniform_(e, 0, 1, g, &ret) == SG_OK);
    CHECK(bits32(e, (uint32_t[]){0x3e189e64, 0x3f157d51, 0x3f1276a1, 0x3ef91d7e, 0x3f318fb7, 0x3f6cc247,
                                 0x3f7c5450, 0x3f15450d, 0x3e89e6a4, 0x3e2c716c, 0x3e038530, 0x3f484f18},
                 12));
    sg_tensor_release(ret);
    sg_tensor_release(e);
    sg_tensor_release(m);
    /* float16 uniforms: 11 bits of each draw */
    sg_generator_manual_seed(g, 13);
    CHECK(aten_rand_generator(L(6), g, &f16, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_FLOAT16);
    const uint16_t *h = sg_tensor_data(r);
    CHECK(h[0] == 0x3148 && h[1] == 0x2d80); /* 0.16552734375, 0.0859375 */
    sg_tensor_release(r);
    /* 33 float32 normals with mean 0.5 and std 3 */
    sg_generator_manual_seed(g, 17);
    e = make(SG_FLOAT32, (int64_t[]){33}, 1, (double[33]){0});
    CHECK(aten_normal_(e, 0.5, 3.0, g, &ret) == SG_OK);
    const uint32_t *u = sg_tensor_data(e);
    CHECK(u[0] == 0xc028de67 && u[5] == (vec ? 0x3fec155c : 0x3fec1560) && u[16] == 0x3f03cc42 &&
          u[17] == (vec ? 0xbc256f10 : 0xbc256d80) && u[32] == 0x40033fce);
    sg_tensor_release(ret);
    sg_tensor_release(e);
    /* float64 normal_ with a mean and std (scalar Box-Muller), and uniform_ with bounds */
    sg_generator_manual_seed(g, 21);
    e = make(SG_FLOAT64, (int64_t[]){5}, 1, (double[5]){0});
    CHECK(aten_normal_(e, 0.3, 3.7, g, &ret) == SG_OK);
    CHECK(bits64(e, (uint64_t[]){0x3fe66639d1da2077, 0xbff51a861dc2b644,
                                 vec ? 0xc00461f9c6cab140 : 0xc00461f9c6cab141, 0xbfda7b68bef0f843,
                                 0xbff0aa1b50b74195},
                 5));
    sg_tensor_release(ret);
    sg_tensor_release(e);
    sg_generator_manual_seed(g, 21);
    e = make(SG_FLOAT32, (int64_t[]){9}, 1, (double[9]){0});
    CHECK(aten_uniform_(e, -1.3, 2.9, g, &ret) == SG_OK);
    u = sg_tensor_data(e);
    CHECK(u[0] == (vec ? 0x3f30617f : 0x3f30617e) && u[5] == (vec ? 0xbe6fa173 : 0xbe6fa170) && u[8] == 0x3fdaa4f0);
    sg_tensor_release(ret);
    sg_tensor_release(e);
    /* bernoulli with a float p and with a tensor p */
    sg_generator_manual_seed(g, 5);
    e = make(SG_FLOAT32, (int64_t[]){10}, 1, (double[10]){0});
    CHECK(aten_bernoulli__float(e, 0.3, g, &ret) == SG_OK);
    CHECK(all_eq(e, (double[]){0, 1, 0, 0, 1, 0, 0, 0, 0, 0}, 10));
    sg_tensor_release(ret);
    sg_tensor_release(e);
    sg_tensor *p = make(SG_FLOAT32, (int64_t[]){6}, 1, (double[]){0.1, 0.5, 0.9, 0.5, 0.5, 0.2});
    sg_generator_manual_seed(g, 5);
    e = make(SG_FLOAT32, (int64_t[]){6}, 1, (double[6]){0});
    CHECK(aten_bernoulli__Tensor(e, p, g, &ret) == SG_OK && all_eq(e, (double[]){0, 1, 0, 0, 0, 1}, 6));
    sg_tensor_release(ret);
    sg_tensor_release(e);
    sg_tensor *pd = make(SG_FLOAT64, (int64_t[]){6}, 1, (double[]){0.1f, 0.5, 0.9f, 0.5, 0.5, 0.2f});
    sg_generator_manual_seed(g, 5); /* a float64 p compares 53-bit uniforms */
    e = make(SG_FLOAT32, (int64_t[]){6}, 1, (double[6]){0});
    CHECK(aten_bernoulli__Tensor(e, pd, g, &ret) == SG_OK && all_eq(e, (double[]){0, 1, 1, 1, 1, 0}, 6));
    sg_tensor_release(ret);
    sg_tensor_release(e);
    sg_tensor_release(pd);
    sg_tensor_release(p);
    sg_generator_free(g);
}

static void test_random_rules(void) {
    sg_tensor *r = NULL, *ret = NULL;
    sg_dtype   i64 = SG_INT64;
    /* the default generator: reseeding it repeats the stream */
    sg_generator_manual_seed(NULL, 123);
    CHECK(aten_rand(L(4), NULL, NULL, NULL, NULL, &r) == SG_OK);
    double first = at(r, 0), last = at(r, 3);
    sg_tensor_release(r);
    sg_generator_manual_seed(NULL, 123);
    CHECK(aten_rand(L(4), NULL, NULL, NULL, NULL, &r) == SG_OK && at(r, 0) == first && at(r, 3) == last);
    sg_tensor_release(r);
    /* errors as aten's */
    CHECK(aten_rand(L(2), &i64, NULL, NULL, NULL, &r) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"check_uniform_bounds\" not implemented for 'Long'");
    CHECK(aten_randn(L(2), &i64, NULL, NULL, NULL, &r) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"normal_kernel_cpu\" not implemented for 'Long'");
    sg_tensor *x = make(SG_FLOAT32, (int64_t[]){3}, 1, (double[]){0, 0, 0});
    CHECK(aten_uniform_(x, 1, 0, NULL, &ret) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "uniform_: uniform_ expects to return a [from, to) range, but found from=1 > to=0");
    CHECK(aten_normal_(x, 0, -1, NULL, &ret) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "normal_: normal expects std >= 0.0, but found std -1");
    CHECK(aten_bernoulli__float(x, 1.5, NULL, &ret) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "bernoulli_ expects p to be in [0, 1], but got p=1.5") != NULL);
    /* uniform_ on a range stays in it; normal of many is standard */
    CHECK(aten_uniform_(x, 5, 6, NULL, &ret) == SG_OK && at(x, 0) >= 5 && at(x, 2) < 6);
    sg_tensor_release(ret);
    CHECK(aten_randn(L(20000), NULL, NULL, NULL, NULL, &r) == SG_OK);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < 20000; i++) s += at(r, i), s2 += at(r, i) * at(r, i);
    double mean = s / 20000, var = s2 / 20000 - mean * mean;
    CHECK(fabs(mean) < 0.05 && fabs(var - 1) < 0.05);
    sg_tensor_release(r);
    /* the _like forms and the out= forms */
    sg_tensor *xt = NULL, *m = make(SG_FLOAT64, (int64_t[]){2, 3}, 2, (double[6]){0});
    CHECK(sg_tensor_transpose(m, 0, 1, &xt) == SG_OK);
    CHECK(aten_rand_like(xt, NULL, NULL, NULL, NULL, NULL, &r) == SG_OK && r->dtype == SG_FLOAT64);
    CHECK(r->strides[0] == 1 && r->strides[1] == 3); /* preserve */
    sg_tensor_release(r);
    CHECK(aten_randn_like(xt, NULL, NULL, NULL, NULL, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){3, 2}, 2));
    sg_tensor_release(r);
    CHECK(aten_randn_out(L(4, 4), m, &ret) == SG_OK && ret == m && shape_is(m, (int64_t[]){4, 4}, 2));
    sg_tensor_release(ret);
    /* normal with tensors: std 0 gives the mean; mean 0 with std 0 gives zeros */
    sg_tensor *mu = make(SG_FLOAT32, (int64_t[]){3}, 1, (double[]){1, 2, 3});
    CHECK(aten_normal_Tensor_float(mu, 0, NULL, &r) == SG_OK && all_eq(r, (double[]){1, 2, 3}, 3));
    sg_tensor_release(r);
    sg_tensor *sd = make(SG_FLOAT32, (int64_t[]){2, 1}, 2, (double[]){0, 0});
    CHECK(aten_normal_Tensor_Tensor(mu, sd, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){2, 3}, 2));
    CHECK(all_eq(r, (double[]){1, 2, 3, 1, 2, 3}, 6));
    sg_tensor_release(r);
    CHECK(aten_normal_float_Tensor(4.0, sd, NULL, &r) == SG_OK && all_eq(r, (double[]){4, 4}, 2));
    sg_tensor_release(r);
    sg_tensor *neg = make(SG_FLOAT32, (int64_t[]){2}, 1, (double[]){1, -1});
    CHECK(aten_normal_float_Tensor(0, neg, NULL, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "normal expects all elements of std >= 0.0") != NULL);
    CHECK(aten_normal_float_float(2, 0, L(2), NULL, NULL, NULL, NULL, NULL, &r) == SG_OK);
    CHECK(all_eq(r, (double[]){2, 2}, 2));
    sg_tensor_release(r);
    /* bernoulli(self): self's elements are the probabilities */
    sg_tensor *pr = make(SG_FLOAT32, (int64_t[]){4}, 1, (double[]){0, 1, 1, 0});
    CHECK(aten_bernoulli(pr, NULL, &r) == SG_OK && all_eq(r, (double[]){0, 1, 1, 0}, 4));
    sg_tensor_release(r);
    CHECK(aten_bernoulli_p(pr, 1.0, NULL, &r) == SG_OK && all_eq(r, (double[]){1, 1, 1, 1}, 4));
    sg_tensor_release(r);
    sg_tensor *bad = make(SG_FLOAT32, (int64_t[]){4}, 1, (double[]){0, 2, 1, 0});
    CHECK(aten_bernoulli(bad, NULL, &r) == SG_EINVAL);
    /* Meta: shapes only */
    sg_device meta = SG_META;
    CHECK(aten_randn(L(3, 3), NULL, NULL, &meta, NULL, &r) == SG_OK && r->device.type == SG_DEV_META);
    sg_tensor *mm = NULL;
    CHECK(aten_normal_Tensor_Tensor(r, r, NULL, &mm) == SG_OK && mm->device.type == SG_DEV_META && shape_is(mm, (int64_t[]){3, 3}, 2));
    sg_tensor_release(mm);
    sg_tensor_release(r);
    sg_tensor_release(bad);
    sg_tensor_release(pr);
    sg_tensor_release(neg);
    sg_tensor_release(sd);
    sg_tensor_release(mu);
    sg_tensor_release(xt);
    sg_tensor_release(m);
    sg_tensor_release(x);
}

static void test_copies(void) {
    sg_tensor *x = make(SG_FLOAT32, (int64_t[]){2, 3}, 2, (double[]){1.5, -2.5, 3, 4.75, 5, 6});
    sg_tensor *r = NULL, *ret = NULL;
    /* copy_: converts (float -> int truncates) and broadcasts */
    sg_tensor *i = make(SG_INT32, (int64_t[]){2, 3}, 2, (double[6]){0});
    CHECK(aten_copy_(i, x, false, &ret) == SG_OK && ret == i);
    CHECK(all_eq(i, (double[]){1, -2, 3, 4, 5, 6}, 6));
    sg_tensor_release(ret);
    sg_tensor *row = make(SG_FLOAT64, (int64_t[]){3}, 1, (double[]){7, 8, 9});
    CHECK(aten_copy_(i, row, false, &ret) == SG_OK && all_eq(i, (double[]){7, 8, 9, 7, 8, 9}, 6));
    sg_tensor_release(ret);
    sg_tensor *bad = make(SG_FLOAT32, (int64_t[]){2}, 1, (double[]){1, 2});
    CHECK(aten_copy_(i, bad, false, &ret) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "copy_: the size of src [2] cannot be broadcast to the size of self [2, 3]");
    /* into a transposed destination */
    sg_tensor *d = make(SG_FLOAT64, (int64_t[]){3, 2}, 2, (double[6]){0}), *dt = NULL;
    CHECK(sg_tensor_transpose(d, 0, 1, &dt) == SG_OK);
    CHECK(aten_copy_(dt, x, false, &ret) == SG_OK && all_eq(d, (double[]){1.5, 4.75, -2.5, 5, 3, 6}, 6));
    sg_tensor_release(ret);
    /* functional copy */
    CHECK(aten_copy(i, x, false, &r) == SG_OK && r != i && r->dtype == SG_INT32);
    CHECK(all_eq(r, (double[]){1, -2, 3, 4, 5, 6}, 6));
    sg_tensor_release(r);
    /* _to_copy and to */
    sg_dtype f64 = SG_FLOAT64, f32 = SG_FLOAT32;
    CHECK(aten__to_copy(x, &f64, NULL, NULL, NULL, false, NULL, &r) == SG_OK && r->dtype == SG_FLOAT64);
    CHECK(all_eq(r, (double[]){1.5, -2.5, 3, 4.75, 5, 6}, 6));
    sg_tensor_release(r);
    CHECK(aten_to_dtype(x, SG_FLOAT32, false, false, NULL, &r) == SG_OK && r == x); /* nothing changes */
    sg_tensor_release(r);
    CHECK(aten_to_dtype(x, SG_FLOAT32, false, true, NULL, &r) == SG_OK && r != x && r->storage != x->storage);
    sg_tensor_release(r);
    CHECK(aten_to_dtype_layout(x, &f32, NULL, &(sg_device){SG_DEV_CPU, 0}, NULL, false, false, NULL, &r) == SG_OK && r == x);
    sg_tensor_release(r);
    CHECK(aten_to_other(x, i, false, false, NULL, &r) == SG_OK && r->dtype == SG_INT32);
    CHECK(all_eq(r, (double[]){1, -2, 3, 4, 5, 6}, 6));
    sg_tensor_release(r);
    CHECK(aten_to_device(x, SG_CPU, SG_INT64, false, false, NULL, &r) == SG_OK && r->dtype == SG_INT64);
    sg_tensor_release(r);
    /* to Meta and back: shapes travel, data does not */
    CHECK(aten_to_device(x, SG_META, SG_FLOAT32, false, false, NULL, &r) == SG_OK && r->device.type == SG_DEV_META);
    sg_tensor *back = NULL;
    CHECK(aten_copy_(i, r, false, &back) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "Cannot copy out of meta tensor; no data!") != NULL);
    sg_tensor_release(r);
    /* clone keeps dense strides (preserve), or makes them contiguous */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_clone(xt, NULL, &r) == SG_OK && r->strides[0] == 1 && r->strides[1] == 3 && r->storage != x->storage);
    CHECK(all_eq(r, (double[]){1.5, 4.75, -2.5, 5, 3, 6}, 6));
    sg_tensor_release(r);
    sg_memory_format cf = SG_CONTIGUOUS_FORMAT, keep = SG_PRESERVE_FORMAT;
    CHECK(aten_clone(xt, &cf, &r) == SG_OK && sg_tensor_is_contiguous(r) && all_eq(r, (double[]){1.5, 4.75, -2.5, 5, 3, 6}, 6));
    sg_tensor_release(r);
    /* contiguous: self where it is already */
    CHECK(aten_contiguous(x, SG_CONTIGUOUS_FORMAT, &r) == SG_OK && r == x);
    sg_tensor_release(r);
    CHECK(aten_contiguous(xt, SG_CONTIGUOUS_FORMAT, &r) == SG_OK && r != xt && sg_tensor_is_contiguous(r));
    sg_tensor_release(r);
    CHECK(aten_contiguous(xt, SG_PRESERVE_FORMAT, &r) == SG_EINVAL);
    (void)keep;
    /* channels_last */
    sg_tensor *img = NULL;
    CHECK(aten_ones(L(1, 2, 2, 2), NULL, NULL, NULL, NULL, &img) == SG_OK);
    CHECK(aten_contiguous(img, SG_CHANNELS_LAST, &r) == SG_OK && r->strides[1] == 1 && r->strides[3] == 2);
    sg_tensor *r2 = NULL;
    CHECK(aten_contiguous(r, SG_CHANNELS_LAST, &r2) == SG_OK && r2 == r);
    sg_tensor_release(r2);
    sg_tensor_release(r);
    sg_tensor_release(img);
    sg_tensor_release(xt);
    sg_tensor_release(dt);
    sg_tensor_release(d);
    sg_tensor_release(bad);
    sg_tensor_release(row);
    sg_tensor_release(i);
    sg_tensor_release(x);
}

/* Cross-device paths, where a CUDA device exists (skipped otherwise): conversions are computed
 * on the CPU, bytes move through the runtime. */
static void test_cuda(void) {
    if (sg_device_count(SG_DEV_CUDA, NULL) == 0) {
        printf("test_cpu_factory: no CUDA device, cross-device checks skipped\n");
        return;
    }
    sg_device  cuda = SG_CUDA(0);
    sg_tensor *x = make(SG_FLOAT32, (int64_t[]){2, 3}, 2, (double[]){1.5, -2.5, 3, 4, 5, 6});
    sg_tensor *g = NULL, *h = NULL, *ret = NULL, *v = NULL;
    /* to(cuda, float64) and back */
    CHECK(aten_to_device(x, cuda, SG_FLOAT64, false, false, NULL, &g) == SG_OK);
    CHECK(g && g->device.type == SG_DEV_CUDA && g->dtype == SG_FLOAT64);
    CHECK(aten_to_device(g, SG_CPU, SG_FLOAT32, false, false, NULL, &h) == SG_OK && h->device.type == SG_DEV_CPU);
    CHECK(all_eq(h, (double[]){1.5, -2.5, 3, 4, 5, 6}, 6));
    sg_tensor_release(h);
    /* copy_ from CUDA into CPU int32 (converting), and a CPU row broadcast into CUDA */
    sg_tensor *i = make(SG_INT32, (int64_t[]){2, 3}, 2, (double[6]){0});
    CHECK(aten_copy_(i, g, false, &ret) == SG_OK && all_eq(i, (double[]){1, -2, 3, 4, 5, 6}, 6));
    sg_tensor_release(ret);
    sg_tensor *row = make(SG_INT64, (int64_t[]){3}, 1, (double[]){7, 8, 9});
    CHECK(aten_copy_(g, row, false, &ret) == SG_OK && ret == g);
    sg_tensor_release(ret);
    CHECK(aten__to_copy(g, NULL, NULL, &(sg_device){SG_DEV_CPU, 0}, NULL, false, NULL, &h) == SG_OK);
    CHECK(h->dtype == SG_FLOAT64 && all_eq(h, (double[]){7, 8, 9, 7, 8, 9}, 6));
    sg_tensor_release(h);
    /* views, reshape's copy and contiguous on a CUDA tensor */
    CHECK(aten_transpose_int(g, 0, 1, &v) == SG_OK && v->device.type == SG_DEV_CUDA);
    sg_tensor *flat = NULL, *c = NULL;
    CHECK(aten_reshape(v, (sg_int_list){(int64_t[]){6}, 1}, &flat) == SG_OK && flat->storage != g->storage);
    CHECK(aten_to_device(flat, SG_CPU, SG_FLOAT64, false, false, NULL, &h) == SG_OK);
    CHECK(all_eq(h, (double[]){7, 7, 8, 8, 9, 9}, 6));
    sg_tensor_release(h);
    CHECK(aten_contiguous(v, SG_CONTIGUOUS_FORMAT, &c) == SG_OK && sg_tensor_is_contiguous(c) && c->device.type == SG_DEV_CUDA);
    sg_tensor_release(c);
    CHECK(aten_clone(v, NULL, &c) == SG_OK && c->strides[0] == 1 && c->device.type == SG_DEV_CUDA);
    sg_tensor_release(c);
    /* factories with device=cuda */
    CHECK(aten_full(L(2, 2), sg_scalar_float(2.5), NULL, NULL, &cuda, NULL, &c) == SG_OK && c->device.type == SG_DEV_CUDA);
    CHECK(aten_to_device(c, SG_CPU, SG_FLOAT32, false, false, NULL, &h) == SG_OK && all_eq(h, (double[]){2.5, 2.5, 2.5, 2.5}, 4));
    sg_tensor_release(h);
    sg_tensor_release(c);
    CHECK(aten_zeros(L(3), NULL, NULL, &cuda, NULL, &c) == SG_OK && c->device.type == SG_DEV_CUDA);
    sg_tensor_release(c);
    CHECK(aten_arange(sg_scalar_int(4), NULL, NULL, &cuda, NULL, &c) == SG_OK && c->device.type == SG_DEV_CUDA);
    CHECK(aten_to_device(c, SG_CPU, SG_INT64, false, false, NULL, &h) == SG_OK && all_eq(h, (double[]){0, 1, 2, 3}, 4));
    sg_tensor_release(h);
    sg_tensor_release(c);
    CHECK(aten_ones_like(g, NULL, NULL, NULL, NULL, NULL, &c) == SG_OK && c->device.type == SG_DEV_CUDA);
    sg_tensor_release(c);
    CHECK(aten_rand(L(2), NULL, NULL, &cuda, NULL, &c) != SG_OK); /* the CPU generator only */
    sg_tensor_release(flat);
    sg_tensor_release(v);
    sg_tensor_release(row);
    sg_tensor_release(i);
    sg_tensor_release(g);
    sg_tensor_release(x);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_fill_factories();
    test_like();
    test_arange();
    test_generator();
    /* the kernels registered follow the vector build on x86-64 unless the environment asks
     * for PyTorch's portable one */
    const char *cap = getenv("ATEN_CPU_CAPABILITY");
#if defined(__x86_64__)
    test_rand_matches_pytorch(!(cap && strcmp(cap, "default") == 0));
#else
    (void)cap;
    test_rand_matches_pytorch(false);
#endif
    test_random_rules();
    test_copies();
    test_cuda();
    sg_runtime_shutdown();
    /* PyTorch's portable kernels, chosen as PyTorch chooses them (read at registration) */
    setenv("ATEN_CPU_CAPABILITY", "default", 1);
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_rand_matches_pytorch(false);
    unsetenv("ATEN_CPU_CAPABILITY");
    sg_runtime_shutdown();
    return check_result("test_cpu_factory");
}
