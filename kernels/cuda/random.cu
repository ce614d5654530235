/* random.cu: random tensors on CUDA (rand, randn, uniform_, normal_ and its tensor forms,
 * bernoulli), with kernels/cpu/factory.c's checks and messages.
 *
 * The numbers come from Philox4x32-10 (Salmon et al., 2011: the counter-based generator
 * PyTorch's CUDA generator uses), keyed by the generator's 64-bit seed. Each call reserves one
 * 64-bit stream number from the generator (sg_generator_philox_reserve; seeding restarts them),
 * which is the counter's high half; the low half is the block number, one block of four 32-bit
 * words per 4 floats, 2 doubles, 4 float normals (two Box-Muller pairs) or 2 double normals.
 * Element e of the output (in its contiguous order) takes its draws from block e / per, so one
 * seed gives one tensor whatever the grid, and calls in turn give independent streams. The
 * values cannot be the CPU's (a Mersenne Twister drawn in order); they follow the same
 * distributions with the same transforms: uniforms from the low 24 (float), 53 (double), 11
 * (float16) or 8 (bfloat16) bits mapped as from + u * (to - from); normals by Box-Muller,
 * radius sqrt(-2 log(1 - u1)), angle 2 pi u2; bernoulli as a 53-bit uniform below p (24-bit
 * against a float32 p tensor, as the CPU's).
 *
 * A non-contiguous output is drawn into a contiguous temporary and copied. The checks of a p
 * or std tensor (every element in range) read one flag on the host, which waits for the
 * stream: the op returns that error before drawing, as the CPU's does. */
#include "factory.cuh"
#include "sg_generator.h"

#include <math.h>

namespace {

/* ---- Philox4x32-10 ------------------------------------------------------------------------ */

__device__ __forceinline__ uint4 philox(uint64_t seed, uint64_t stream, uint64_t block) {
    uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32);
    uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
#pragma unroll
    for (int r = 0; r < 10; r++) {
        uint32_t hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        uint32_t hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u; /* the Weyl sequence of the key */
        k1 += 0xBB67AE85u;
    }
    return make_uint4(c0, c1, c2, c3);
}

__device__ __forceinline__ double u53(uint32_t hi, uint32_t lo) {
    uint64_t x = ((uint64_t)hi << 32 | lo) & ((UINT64_C(1) << 53) - 1);
    return (double)x * 0x1p-53;
}

enum kind { UNIFORM, NORMAL, BERN_SCALAR, BERN_TENSOR };

struct rparams {
    uint64_t    seed, stream;
    double      a, b;   /* uniform: from, to - from; normal: mean, std; bernoulli: p */
    float       fa, fb; /* uniform in float: from, to - from (rounded as aten's types) */
    uint32_t    mask;   /* uniform below float64: the low sg_dtype_digits bits of a draw, */
    float       unit;   /* times 2^-digits (aten's uniform_real_distribution) */
    const void *p;      /* bernoulli's p per element (double or float, contiguous) */
};

/* Values per Philox block for an output of T. */
template <class T, int KIND, class P> constexpr int per_block() {
    if constexpr (KIND == BERN_SCALAR) return 2;
    else if constexpr (KIND == BERN_TENSOR) return std::is_same<P, double>::value ? 2 : 4;
    else return std::is_same<T, double>::value ? 2 : 4;
}

template <class T, int KIND, class P>
__global__ void __launch_bounds__(SG_CU_BLOCK) random_kernel(T *out, int64_t n, const rparams rp) {
    constexpr int PER = per_block<T, KIND, P>();
    int64_t       step = (int64_t)gridDim.x * blockDim.x, nblk = (n + PER - 1) / PER;
    for (int64_t blk = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; blk < nblk; blk += step) {
        uint4    r = philox(rp.seed, rp.stream, (uint64_t)blk);
        uint32_t w[4] = {r.x, r.y, r.z, r.w};
        T        v[PER];
        if constexpr (KIND == UNIFORM) {
            if constexpr (std::is_same<T, double>::value) {
                for (int j = 0; j < 2; j++) v[j] = __fma_rn(u53(w[2 * j], w[2 * j + 1]), rp.b, rp.a);
            } else {
                for (int j = 0; j < 4; j++) {
                    float u = (float)(w[j] & rp.mask) * rp.unit;
                    v[j] = T(__fmaf_rn(u, rp.fb, rp.fa));
                }
            }
        } else if constexpr (KIND == NORMAL) {
            if constexpr (std::is_same<T, double>::value) {
                double u1 = 1.0 - u53(w[0], w[1]), u2 = u53(w[2], w[3]), s, c;
                double radius = sqrt(-2.0 * log(u1));
                sincospi(2.0 * u2, &s, &c);
                v[0] = radius * c * rp.b + rp.a;
                v[1] = radius * s * rp.b + rp.a;
            } else {
                float mean = (float)rp.a, std = (float)rp.b;
                for (int j = 0; j < 2; j++) {
                    float u1 = 1.0f - (float)(w[2 * j] & 0xffffffu) * 0x1p-24f;
                    float u2 = (float)(w[2 * j + 1] & 0xffffffu) * 0x1p-24f, s, c;
                    float radius = sqrtf(-2.0f * logf(u1));
                    sincospif(2.0f * u2, &s, &c);
                    v[2 * j] = T(radius * c * std + mean);
                    v[2 * j + 1] = T(radius * s * std + mean);
                }
            }
        } else if constexpr (KIND == BERN_SCALAR) {
            for (int j = 0; j < 2; j++) v[j] = sg_cu_convert<T>(u53(w[2 * j], w[2 * j + 1]) < rp.a);
        } else {
            const P *p = (const P *)rp.p;
            for (int j = 0; j < PER; j++) {
                int64_t e = blk * PER + j;
                P       pe = e < n ? p[e] : P(0);
                bool    hit;
                if constexpr (std::is_same<P, double>::value) hit = u53(w[2 * j], w[2 * j + 1]) < pe;
                else hit = (float)(w[j] & 0xffffffu) * 0x1p-24f < pe;
                v[j] = sg_cu_convert<T>(hit);
            }
        }
#pragma unroll
        for (int j = 0; j < PER; j++) {
            int64_t e = blk * PER + j;
            if (e < n) out[e] = v[j];
        }
    }
}

sg_dtype dt(const sg_tensor *t) { return (sg_dtype)t->dtype; }

/* Draws every element of self (CUDA) with KIND; p: bernoulli's probabilities (contiguous
 * float64 or float32 of self's shape, on self's device), else NULL. */
template <int KIND>
sg_status draw(const char *op, sg_tensor *self, sg_generator *gen, rparams rp, const sg_tensor *p,
               unsigned kinds) {
    int64_t n = sg_tensor_numel(self);
    if (n == 0) return SG_OK;
    if (!sg_tensor_writable(self))
        return sg_error(SG_EREADONLY, "%s: the tensor is read-only", op);
    sg_tensor *tmp = NULL, *w = self;
    sg_status  st = SG_OK;
    if (!sg_tensor_is_contiguous(self)) {
        if ((st = sg_tensor_empty(self->sizes, self->ndim, dt(self), self->device, &tmp)))
            return st;
        w = tmp;
    }
    sg_generator_philox_reserve(gen, 1, &rp.seed, &rp.stream);
    if (p) rp.p = sg_tensor_data(p);
    bool p64 = p && dt(p) == SG_FLOAT64;
    (void)p64;
    {
        sg_cu_guard  guard(self->device);
        cudaStream_t s = sg_cu_stream();
        st = sg_cu_visit(dt(self), kinds, op, [&](auto tag) -> sg_status {
            using T = typename decltype(tag)::type;
            auto go = [&](auto ptag) {
                using P = typename decltype(ptag)::type;
                constexpr int per = per_block<T, KIND, P>();
                random_kernel<T, KIND, P><<<sg_cu_blocks(sg_cu_ceil_div(n, per)), SG_CU_BLOCK, 0, s>>>(
                    (T *)sg_tensor_data(w), n, rp);
                return sg_cu_check(op);
            };
            if constexpr (KIND == BERN_TENSOR) {
                if (p64) return go(sg_cu_tag<double>{});
                return go(sg_cu_tag<float>{});
            } else {
                return go(sg_cu_tag<double>{});
            }
        });
    }
    if (!st && tmp) st = sg_cast_copy_(self, tmp);
    sg_tensor_release(tmp);
    return st;
}

/* ---- the checks of a tensor of parameters ------------------------------------------------- */

/* first = the smallest i where v[i] is outside [0, inf) (upper: [0, 1]) */
__global__ void bad_kernel(const double *v, int64_t n, bool upper, unsigned long long *first) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        double x = v[i];
        if (!(x >= 0.0 && (!upper || x <= 1.0))) atomicMin(first, (unsigned long long)i);
    }
}

/* Whether every element of t (any float dtype, any device) is >= 0 (and <= 1 with upper):
 * *found and *value the first that is not. Reads the answer on the host (see the top). */
sg_status first_bad(const char *op, const sg_tensor *t, bool upper, bool *found, double *value) {
    sg_tensor *c = NULL;
    sg_status  st = sg_cast(t, SG_FLOAT64, &c);
    int64_t    n = c ? sg_tensor_numel(c) : 0;
    *found = false;
    if (st || n == 0) {
        sg_tensor_release(c);
        return st;
    }
    const double *v = (const double *)sg_tensor_data(c);
    if (c->device.type != SG_DEV_CUDA) {
        for (int64_t i = 0; i < n && !*found; i++)
            if (!(v[i] >= 0.0 && (!upper || v[i] <= 1.0))) *found = true, *value = v[i];
        sg_tensor_release(c);
        return SG_OK;
    }
    sg_cu_guard  guard(c->device);
    cudaStream_t s = sg_cu_stream();
    sg_tensor   *flag = NULL;
    int64_t      one = 1;
    unsigned long long first = 0;
    if (!(st = sg_tensor_empty(&one, 1, SG_INT64, c->device, &flag))) {
        unsigned long long *f = (unsigned long long *)sg_tensor_data(flag);
        st = sg_cu_status(cudaMemsetAsync(f, 0xff, sizeof *f, s), op);
        if (!st) {
            bad_kernel<<<sg_cu_blocks(n), SG_CU_BLOCK, 0, s>>>(v, n, upper, f);
            st = sg_cu_check(op);
        }
        if (!st)
            st = sg_cu_status(cudaMemcpyAsync(&first, f, sizeof first, cudaMemcpyDeviceToHost, s), op);
        if (!st) st = sg_cu_status(cudaStreamSynchronize(s), op);
        if (!st && first != ~0ull) {
            *found = true;
            st = sg_cu_status(cudaMemcpyAsync(value, v + first, sizeof *value,
                                              cudaMemcpyDeviceToHost, s), op);
            if (!st) st = sg_cu_status(cudaStreamSynchronize(s), op);
        }
    }
    sg_tensor_release(flag);
    sg_tensor_release(c);
    return st;
}

/* ---- the kernels (as factory.c's uniform_run, normal_run, bernoulli_*_run) ---------------- */

sg_status uniform_run(sg_tensor *self, double from, double to, sg_generator *gen) {
    rparams   rp = {};
    sg_status st = sg_factory_uniform_check(dt(self), from, to, &rp.fa, &rp.fb);
    if (st) return st;
    rp.a = from;
    rp.b = to - from;
    if (dt(self) != SG_FLOAT64) { /* a floating dtype, checked */
        uint32_t one = 1u << sg_dtype_digits(dt(self));
        rp.mask = one - 1, rp.unit = 1.0f / (float)one;
    }
    return draw<UNIFORM>("uniform_", self, gen, rp, NULL, SG_CU_FLOATS);
}

sg_status normal_run(sg_tensor *self, double mean, double std, sg_generator *gen) {
    sg_status st = sg_factory_normal_check("normal_kernel_cuda", self, std);
    if (st) return st;
    rparams rp = {};
    rp.a = mean;
    rp.b = std;
    return draw<NORMAL>("normal_", self, gen, rp, NULL, SG_CU_FLOATS);
}

sg_status bernoulli_check_self(const sg_tensor *self) {
    if (sg_dtype_is_complex(dt(self)))
        return sg_not_implemented("bernoulli_scalar_cuda_", dt(self));
    return SG_OK;
}

sg_status bernoulli_float_run(sg_tensor *self, double p, sg_generator *gen) {
    sg_status st = bernoulli_check_self(self);
    if (st || (st = sg_factory_bernoulli_p_check(p))) return st;
    rparams rp = {};
    rp.a = p;
    return draw<BERN_SCALAR>("bernoulli_", self, gen, rp, NULL, SG_CU_ALL);
}

sg_status bernoulli_tensor_run(sg_tensor *self, sg_tensor *p, sg_generator *gen) {
    sg_status st = bernoulli_check_self(self);
    if (st) return st;
    sg_dtype pt = dt(p);
    if (sg_tensor_numel(self) == 0) return SG_OK; /* aten draws nothing before its dispatch */
    if (!sg_dtype_is_floating(pt)) return sg_not_implemented("bernoulli_tensor_cuda_p_", pt);
    bool   bad = false;
    double v = 0;
    if ((st = first_bad("bernoulli_", p, true, &bad, &v))) return st;
    if (bad)
        return sg_error(SG_EINVAL, "bernoulli_: expected all elements of p to be in [0, 1], but "
                                   "found %g",
                        v);
    /* p on self's device, broadcast to its shape, as contiguous float64 or float32 */
    sg_tensor *dev = NULL, *ex = NULL, *pc = NULL;
    st = sg_tensor_to(p, self->device, &dev);
    if (!st) st = sg_tensor_expand(dev, self->sizes, self->ndim, &ex);
    if (!st) st = sg_cast(ex, pt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32, &pc);
    if (!st) st = draw<BERN_TENSOR>("bernoulli_", self, gen, rparams{}, pc, SG_CU_ALL);
    sg_tensor_release(pc);
    sg_tensor_release(ex);
    sg_tensor_release(dev);
    return st;
}

/* The draws into any tensor: the CUDA kernels here, another device's through the dispatcher. */
sg_status uniform_any(sg_tensor *t, sg_generator *gen) {
    if (t->device.type == SG_DEV_CUDA) return uniform_run(t, 0, 1, gen);
    sg_tensor *r = NULL;
    sg_status  st = aten_uniform_(t, 0, 1, gen, &r);
    sg_tensor_release(r);
    return st;
}
sg_status normal_any(sg_tensor *t, double mean, double std, sg_generator *gen) {
    if (t->device.type == SG_DEV_CUDA) return normal_run(t, mean, std, gen);
    sg_tensor *r = NULL;
    sg_status  st = aten_normal_(t, mean, std, gen, &r);
    sg_tensor_release(r);
    return st;
}

/* ---- as ops ------------------------------------------------------------------------------- */

sg_status keep_if(sg_status st, sg_tensor **t) {
    if (st) {
        sg_tensor_release(*t);
        *t = NULL;
    }
    return st;
}

sg_status uniform__k(sg_keyset ks, sg_tensor *self, double from, double to, sg_generator *gen,
                     sg_tensor **ret) {
    (void)ks;
    sg_status st = uniform_run(self, from, to, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

sg_status normal__k(sg_keyset ks, sg_tensor *self, double mean, double std, sg_generator *gen,
                    sg_tensor **ret) {
    (void)ks;
    sg_status st = normal_run(self, mean, std, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

sg_status bernoulli__float_k(sg_keyset ks, sg_tensor *self, double p, sg_generator *gen,
                             sg_tensor **ret) {
    (void)ks;
    sg_status st = bernoulli_float_run(self, p, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

sg_status bernoulli__tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *p, sg_generator *gen,
                              sg_tensor **ret) {
    (void)ks;
    sg_status st = bernoulli_tensor_run(self, p, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

/* A new contiguous tensor like self (its dtype and device). */
sg_status contiguous_like(sg_tensor *self, sg_tensor **ret) {
    sg_memory_format mf = SG_CONTIGUOUS_FORMAT;
    return aten_empty_like(self, NULL, NULL, NULL, NULL, &mf, ret);
}

sg_status bernoulli_k(sg_keyset ks, sg_tensor *self, sg_generator *gen, sg_tensor **ret) {
    (void)ks;
    sg_status st = contiguous_like(self, ret);
    return st ? st : keep_if(bernoulli_tensor_run(*ret, self, gen), ret);
}

sg_status bernoulli_out_k(sg_keyset ks, sg_tensor *self, sg_generator *gen, sg_tensor *out,
                          sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_cu_same_device("bernoulli", out, self->device);
    if (!st) st = sg_tensor_resize_out_(out, self->sizes, self->ndim);
    if (!st) st = bernoulli_tensor_run(out, self, gen);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

sg_status bernoulli_p_k(sg_keyset ks, sg_tensor *self, double p, sg_generator *gen,
                        sg_tensor **ret) {
    (void)ks;
    sg_status st = contiguous_like(self, ret);
    return st ? st : keep_if(bernoulli_float_run(*ret, p, gen), ret);
}

/* rand and randn: a new tensor, then uniform_(0, 1) or normal_(0, 1) */
sg_status rand_make(const char *op, bool normal, sg_int_list size, sg_generator *gen,
                    const sg_dtype *dtype, const sg_layout *layout, const sg_device *device,
                    sg_tensor **ret) {
    sg_factory_opts o;
    sg_status       st = sg_factory_options(op, dtype, SG_FLOAT32, layout, device, SG_CPU, &o);
    *ret = NULL;
    if (st || (st = sg_factory_check_sizes(op, size)) ||
        (st = sg_tensor_empty(size.items, size.len, o.dtype, o.dev, ret)))
        return st;
    return keep_if(normal ? normal_any(*ret, 0, 1, gen) : uniform_any(*ret, gen), ret);
}

sg_status rand_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype, const sg_layout *layout,
                 const sg_device *device, const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("rand", false, size, NULL, dtype, layout, device, ret);
}
sg_status rand_gen_k(sg_keyset ks, sg_int_list size, sg_generator *gen, const sg_dtype *dtype,
                     const sg_layout *layout, const sg_device *device, const bool *pin,
                     sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("rand", false, size, gen, dtype, layout, device, ret);
}
sg_status rand_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                       const sg_dtype *dtype, const sg_layout *layout, const sg_device *device,
                       const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("rand", names);
    *ret = NULL;
    return st ? st : rand_k(ks, size, dtype, layout, device, pin, ret);
}
sg_status rand_gen_names_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                           const sg_str_list *names, const sg_dtype *dtype,
                           const sg_layout *layout, const sg_device *device, const bool *pin,
                           sg_tensor **ret) {
    sg_status st = sg_factory_no_names("rand", names);
    *ret = NULL;
    return st ? st : rand_gen_k(ks, size, gen, dtype, layout, device, pin, ret);
}
sg_status randn_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype, const sg_layout *layout,
                  const sg_device *device, const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("randn", true, size, NULL, dtype, layout, device, ret);
}
sg_status randn_gen_k(sg_keyset ks, sg_int_list size, sg_generator *gen, const sg_dtype *dtype,
                      const sg_layout *layout, const sg_device *device, const bool *pin,
                      sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("randn", true, size, gen, dtype, layout, device, ret);
}
sg_status randn_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                        const sg_dtype *dtype, const sg_layout *layout, const sg_device *device,
                        const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("randn", names);
    *ret = NULL;
    return st ? st : randn_k(ks, size, dtype, layout, device, pin, ret);
}
sg_status randn_gen_names_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                            const sg_str_list *names, const sg_dtype *dtype,
                            const sg_layout *layout, const sg_device *device, const bool *pin,
                            sg_tensor **ret) {
    sg_status st = sg_factory_no_names("randn", names);
    *ret = NULL;
    return st ? st : randn_gen_k(ks, size, gen, dtype, layout, device, pin, ret);
}

/* the out= forms: out takes the size, then is drawn */
sg_status rand_out_run(const char *op, bool normal, sg_int_list size, sg_generator *gen,
                       sg_tensor *out, sg_tensor **ret) {
    sg_status st = sg_factory_check_sizes(op, size);
    if (!st) st = sg_tensor_resize_out_(out, size.items, size.len);
    if (!st) st = normal ? normal_any(out, 0, 1, gen) : uniform_any(out, gen);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}
sg_status rand_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return rand_out_run("rand", false, size, NULL, out, ret);
}
sg_status rand_gen_out_k(sg_keyset ks, sg_int_list size, sg_generator *gen, sg_tensor *out,
                         sg_tensor **ret) {
    (void)ks;
    return rand_out_run("rand", false, size, gen, out, ret);
}
sg_status randn_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return rand_out_run("randn", true, size, NULL, out, ret);
}
sg_status randn_gen_out_k(sg_keyset ks, sg_int_list size, sg_generator *gen, sg_tensor *out,
                          sg_tensor **ret) {
    (void)ks;
    return rand_out_run("randn", true, size, gen, out, ret);
}

/* rand_like and randn_like: empty_like, then the draw */
sg_status rand_like_run(const char *op, bool normal, sg_tensor *self, sg_generator *gen,
                        const sg_dtype *dtype, const sg_layout *layout, const sg_device *device,
                        const bool *pin, const sg_memory_format *mf, sg_tensor **ret) {
    sg_factory_opts o;
    sg_status       st = sg_factory_options(op, dtype, dt(self), layout, device, self->device, &o);
    *ret = NULL;
    if (st || (st = aten_empty_like(self, dtype, layout, device, pin, mf, ret))) return st;
    return keep_if(normal ? normal_any(*ret, 0, 1, gen) : uniform_any(*ret, gen), ret);
}
sg_status rand_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                      const sg_layout *layout, const sg_device *device, const bool *pin,
                      const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks;
    return rand_like_run("rand_like", false, self, NULL, dtype, layout, device, pin, mf, ret);
}
sg_status rand_like_gen_k(sg_keyset ks, sg_tensor *self, sg_generator *gen,
                          const sg_dtype *dtype, const sg_layout *layout,
                          const sg_device *device, const bool *pin, const sg_memory_format *mf,
                          sg_tensor **ret) {
    (void)ks;
    return rand_like_run("rand_like", false, self, gen, dtype, layout, device, pin, mf, ret);
}
sg_status randn_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                       const sg_layout *layout, const sg_device *device, const bool *pin,
                       const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks;
    return rand_like_run("randn_like", true, self, NULL, dtype, layout, device, pin, mf, ret);
}
sg_status randn_like_gen_k(sg_keyset ks, sg_tensor *self, sg_generator *gen,
                           const sg_dtype *dtype, const sg_layout *layout,
                           const sg_device *device, const bool *pin,
                           const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks;
    return rand_like_run("randn_like", true, self, gen, dtype, layout, device, pin, mf, ret);
}

/* normal_functional: a tensor like self, drawn */
sg_status normal_functional_k(sg_keyset ks, sg_tensor *self, double mean, double std,
                              sg_generator *gen, sg_tensor **ret) {
    (void)ks;
    sg_status st = aten_empty_like(self, NULL, NULL, NULL, NULL, NULL, ret);
    return st ? st : keep_if(normal_any(*ret, mean, std, gen), ret);
}

/* Whether every element of std is >= 0 (first_bad's one flag read). */
sg_status std_ok(sg_tensor *std, bool *ok) {
    bool      bad = false;
    double    v = 0;
    sg_status st = first_bad("normal", std, false, &bad, &v);
    *ok = !bad;
    return st;
}

sg_status normal_tensors(sg_tensor *mean_t, double mean, sg_tensor *std_t, double std,
                         sg_generator *gen, sg_tensor *out, sg_tensor **ret) {
    return sg_factory_normal_tensors(mean_t, mean, std_t, std, gen, out, std_ok, normal_any, ret);
}

sg_status normal_tf_k(sg_keyset ks, sg_tensor *mean, double std, sg_generator *gen,
                      sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, NULL, std, gen, NULL, ret);
}
sg_status normal_tf_out_k(sg_keyset ks, sg_tensor *mean, double std, sg_generator *gen,
                          sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, NULL, std, gen, out, ret);
}
sg_status normal_ft_k(sg_keyset ks, double mean, sg_tensor *std, sg_generator *gen,
                      sg_tensor **ret) {
    (void)ks;
    return normal_tensors(NULL, mean, std, 1, gen, NULL, ret);
}
sg_status normal_ft_out_k(sg_keyset ks, double mean, sg_tensor *std, sg_generator *gen,
                          sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return normal_tensors(NULL, mean, std, 1, gen, out, ret);
}
sg_status normal_tt_k(sg_keyset ks, sg_tensor *mean, sg_tensor *std, sg_generator *gen,
                      sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, std, 1, gen, NULL, ret);
}
sg_status normal_tt_out_k(sg_keyset ks, sg_tensor *mean, sg_tensor *std, sg_generator *gen,
                          sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, std, 1, gen, out, ret);
}

sg_status normal_ff_k(sg_keyset ks, double mean, double std, sg_int_list size,
                      sg_generator *gen, const sg_dtype *dtype, const sg_layout *layout,
                      const sg_device *device, const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_status       st = sg_factory_options("normal", dtype, SG_FLOAT32, layout, device, SG_CPU,
                                            &o);
    *ret = NULL;
    if (st || (st = sg_factory_check_sizes("normal", size)) ||
        (st = sg_tensor_empty(size.items, size.len, o.dtype, o.dev, ret)))
        return st;
    return keep_if(normal_any(*ret, mean, std, gen), ret);
}

sg_status normal_ff_out_k(sg_keyset ks, double mean, double std, sg_int_list size,
                          sg_generator *gen, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_factory_check_sizes("normal", size);
    if (!st) st = sg_tensor_resize_out_(out, size.items, size.len);
    if (!st) st = normal_any(out, mean, std, gen);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

} // namespace

sg_status sg_cu_register_random(void) {
    SG_CU_REG(aten_rand, rand_k);
    SG_CU_REG(aten_rand_generator, rand_gen_k);
    SG_CU_REG(aten_rand_names, rand_names_k);
    SG_CU_REG(aten_rand_generator_with_names, rand_gen_names_k);
    SG_CU_REG(aten_rand_out, rand_out_k);
    SG_CU_REG(aten_rand_generator_out, rand_gen_out_k);
    SG_CU_REG(aten_rand_like, rand_like_k);
    SG_CU_REG(aten_rand_like_generator, rand_like_gen_k);
    SG_CU_REG(aten_randn, randn_k);
    SG_CU_REG(aten_randn_generator, randn_gen_k);
    SG_CU_REG(aten_randn_names, randn_names_k);
    SG_CU_REG(aten_randn_generator_with_names, randn_gen_names_k);
    SG_CU_REG(aten_randn_out, randn_out_k);
    SG_CU_REG(aten_randn_generator_out, randn_gen_out_k);
    SG_CU_REG(aten_randn_like, randn_like_k);
    SG_CU_REG(aten_randn_like_generator, randn_like_gen_k);
    SG_CU_REG(aten_uniform_, uniform__k);
    SG_CU_REG(aten_normal_, normal__k);
    SG_CU_REG(aten_normal_functional, normal_functional_k);
    SG_CU_REG(aten_normal_Tensor_float, normal_tf_k);
    SG_CU_REG(aten_normal_Tensor_float_out, normal_tf_out_k);
    SG_CU_REG(aten_normal_float_Tensor, normal_ft_k);
    SG_CU_REG(aten_normal_float_Tensor_out, normal_ft_out_k);
    SG_CU_REG(aten_normal_Tensor_Tensor, normal_tt_k);
    SG_CU_REG(aten_normal_Tensor_Tensor_out, normal_tt_out_k);
    SG_CU_REG(aten_normal_float_float, normal_ff_k);
    SG_CU_REG(aten_normal_float_float_out, normal_ff_out_k);
    SG_CU_REG(aten_bernoulli, bernoulli_k);
    SG_CU_REG(aten_bernoulli_out, bernoulli_out_k);
    SG_CU_REG(aten_bernoulli_p, bernoulli_p_k);
    SG_CU_REG(aten_bernoulli__float, bernoulli__float_k);
    SG_CU_REG(aten_bernoulli__Tensor, bernoulli__tensor_k);
    return SG_OK;
}
