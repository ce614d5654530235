/* llama_model.c: the block of llama_model.h. */
#include "llama_model.h"
#include "sg_autograd.h"

#include <math.h>
#include <string.h>

/* ---- checked calls ------------------------------------------------------------------------ */

const char *llama_where_failed;
#define TRY(call)                                     \
    do {                                              \
        if ((call) != SG_OK) {                        \
            llama_where_failed = #call;               \
            goto fail;                                \
        }                                             \
    } while (0)

/* ---- deterministic numbers: splitmix64 of (seed, index), uniform in [-1, 1) ---------------- */

static double uniform(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15u + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* A float32 tensor of the given shape, filled from seed and scaled. */
sg_status llama_filled(uint64_t seed, double scale, const int64_t *sizes, int32_t n,
                        sg_tensor **out) {
    sg_status st = sg_tensor_empty(sizes, n, SG_FLOAT32, SG_CPU, out);
    if (st) return st;
    float  *p = sg_tensor_data(*out);
    int64_t k = sg_tensor_numel(*out);
    for (int64_t i = 0; i < k; i++) p[i] = (float)(uniform(seed, (uint64_t)i) * scale);
    return SG_OK;
}


sg_status llama_make(block *b) {
    memset(b, 0, sizeof *b);
    const int64_t dd[2] = {D, D}, hd_[2] = {HIDDEN, D}, dh[2] = {D, HIDDEN}, d1[1] = {D};
    double        s = 1.0 / sqrt((double)D), sh = 1.0 / sqrt((double)HIDDEN);
    sg_status     st;
    const struct {
        sg_tensor    **t;
        double         scale;
        const int64_t *sizes;
        int32_t        n;
    } w[LLAMA_NPARAMS] = {{&b->wq, s, dd, 2},        {&b->wk, s, dd, 2},     {&b->wv, s, dd, 2},
                          {&b->wo, s, dd, 2},        {&b->w_gate, s, hd_, 2}, {&b->w_up, s, hd_, 2},
                          {&b->w_down, sh, dh, 2},   {&b->norm1, 0.1, d1, 1},
                          {&b->norm2, 0.1, d1, 1}};
    for (int i = 0; i < LLAMA_NPARAMS; i++) /* seeds 1..9 */
        if ((st = llama_filled((uint64_t)i + 1, w[i].scale, w[i].sizes, w[i].n, w[i].t)))
            return st;
    /* norm weights around 1 */
    for (int i = 0; i < D; i++) {
        ((float *)sg_tensor_data(b->norm1))[i] += 1;
        ((float *)sg_tensor_data(b->norm2))[i] += 1;
    }
    /* rotary tables: angle t * 10000^(-2j/HD), each frequency used twice (halves layout) */
    const int64_t th[2] = {T, HD};
    if ((st = sg_tensor_empty(th, 2, SG_FLOAT32, SG_CPU, &b->cos)) ||
        (st = sg_tensor_empty(th, 2, SG_FLOAT32, SG_CPU, &b->sin)))
        return st;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < HD; j++) {
            double inv = pow(10000.0, -2.0 * (j % (HD / 2)) / HD);
            ((float *)sg_tensor_data(b->cos))[t * HD + j] = (float)cos(t * inv);
            ((float *)sg_tensor_data(b->sin))[t * HD + j] = (float)sin(t * inv);
        }
    return SG_OK;
}

/* Moves *t to dev (a no-op for the CPU). */
sg_status llama_move(sg_tensor **t, sg_device dev) {
    if (dev.type == SG_DEV_CPU) return SG_OK;
    sg_tensor *m;
    sg_status  st = sg_tensor_to(*t, dev, &m);
    if (st) return st;
    sg_tensor_release(*t);
    *t = m;
    return SG_OK;
}

sg_status llama_move_block(block *b, sg_device dev) {
    sg_tensor **all[] = {&b->wq, &b->wk, &b->wv, &b->wo, &b->w_gate, &b->w_up, &b->w_down,
                         &b->norm1, &b->norm2, &b->cos, &b->sin};
    sg_status   st = SG_OK;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && !st; i++) st = llama_move(all[i], dev);
    return st;
}

/* Waits for the device's queued work, so a time covers it (any device type: its hook). */
sg_status llama_sync(sg_device dev) { return sg_device_synchronize(dev); }

void llama_free(block *b) {
    sg_tensor *all[] = {b->wq, b->wk, b->wv, b->wo, b->w_gate, b->w_up, b->w_down, b->norm1,
                        b->norm2, b->cos, b->sin};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sg_tensor_release(all[i]);
}

/* rotate_half(x) = cat(-x[..., HD/2:], x[..., :HD/2]); x * cos + rotate_half(x) * sin */
static sg_status rotary(const block *b, sg_tensor *x, sg_tensor **out) {
    sg_tensor *lo = NULL, *hi = NULL, *nhi = NULL, *rot = NULL, *a = NULL, *c = NULL;
    int64_t    half = HD / 2, zero = 0, end = HD;
    sg_status  st;
    if ((st = aten_slice_Tensor(x, -1, &zero, &half, 1, &lo)) ||
        (st = aten_slice_Tensor(x, -1, &half, &end, 1, &hi)) || (st = aten_neg(hi, &nhi)))
        goto done;
    sg_tensor     *parts[2] = {nhi, lo};
    sg_tensor_list l = {parts, 2};
    if ((st = aten_cat(l, -1, &rot)) || (st = aten_mul_Tensor(x, b->cos, &a)) ||
        (st = aten_mul_Tensor(rot, b->sin, &c)) ||
        (st = aten_add_Tensor(a, c, sg_scalar_int(1), out)))
        goto done;
done:
    sg_tensor_release(lo);
    sg_tensor_release(hi);
    sg_tensor_release(nhi);
    sg_tensor_release(rot);
    sg_tensor_release(a);
    sg_tensor_release(c);
    return st;
}

/* [T, D] -> [H, T, HD] */
static sg_status heads(sg_tensor *x, sg_tensor **out) {
    int64_t        shape[3] = {T, H, HD};
    sg_tensor     *v = NULL;
    sg_status      st = aten_view(x, (sg_int_list){shape, 3}, &v);
    if (!st) st = aten_transpose_int(v, 0, 1, out);
    sg_tensor_release(v);
    return st;
}

sg_status llama_forward(const block *b, sg_tensor *x, sg_tensor **out) {
    sg_tensor *n1 = NULL, *q = NULL, *k = NULL, *v = NULL, *qh = NULL, *kh = NULL, *vh = NULL;
    sg_tensor *qr = NULL, *kr = NULL, *att = NULL, *att_t = NULL, *att_c = NULL, *att_d = NULL;
    sg_tensor *proj = NULL, *h = NULL, *n2 = NULL, *g = NULL, *u = NULL, *sg = NULL, *gu = NULL;
    sg_tensor *down = NULL;
    int64_t    d[1] = {D}, td[2] = {T, D};
    sg_int_list norm_shape = {d, 1}, flat = {td, 2};
    TRY(aten_rms_norm(x, norm_shape, b->norm1, NULL, &n1));
    TRY(aten_linear(n1, b->wq, NULL, &q));
    TRY(aten_linear(n1, b->wk, NULL, &k));
    TRY(aten_linear(n1, b->wv, NULL, &v));
    TRY(heads(q, &qh));
    TRY(heads(k, &kh));
    TRY(heads(v, &vh));
    TRY(rotary(b, qh, &qr));
    TRY(rotary(b, kh, &kr));
    TRY(aten_scaled_dot_product_attention(qr, kr, vh, NULL, 0.0, true, NULL, false, &att));
    TRY(aten_transpose_int(att, 0, 1, &att_t));
    TRY(aten_contiguous(att_t, SG_CONTIGUOUS_FORMAT, &att_c));
    TRY(aten_view(att_c, flat, &att_d));
    TRY(aten_linear(att_d, b->wo, NULL, &proj));
    TRY(aten_add_Tensor(x, proj, sg_scalar_int(1), &h));
    TRY(aten_rms_norm(h, norm_shape, b->norm2, NULL, &n2));
    TRY(aten_linear(n2, b->w_gate, NULL, &g));
    TRY(aten_linear(n2, b->w_up, NULL, &u));
    TRY(aten_silu(g, &sg));
    TRY(aten_mul_Tensor(sg, u, &gu));
    TRY(aten_linear(gu, b->w_down, NULL, &down));
    TRY(aten_add_Tensor(h, down, sg_scalar_int(1), out));
    sg_status st = SG_OK;
    if (0) {
    fail:
        st = sg_last_status() ? sg_last_status() : SG_EINVAL;
    }
    sg_tensor *all[] = {n1, q, k, v, qh, kh, vh, qr, kr, att, att_t, att_c, att_d, proj, h, n2,
                        g, u, sg, gu, down};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sg_tensor_release(all[i]);
    return st;
}

/* ---- training: the parameters, the loss, SGD ---------------------------------------------- */

const char *const llama_param_names[LLAMA_NPARAMS] = {"wq",   "wk",     "wv",    "wo",   "w_gate",
                                                      "w_up", "w_down", "norm1", "norm2"};

sg_tensor **llama_param(block *b, int i) {
    sg_tensor **all[LLAMA_NPARAMS] = {&b->wq,   &b->wk,     &b->wv,    &b->wo,   &b->w_gate,
                                      &b->w_up, &b->w_down, &b->norm1, &b->norm2};
    return all[i];
}

/* mean((forward(x) - target)^2) */
sg_status llama_loss(const block *b, sg_tensor *x, sg_tensor *target, sg_tensor **loss) {
    sg_tensor *y = NULL, *d = NULL, *sq = NULL;
    sg_status  st = llama_forward(b, x, &y);
    if (!st) st = aten_sub_Tensor(y, target, sg_scalar_int(1), &d);
    if (!st) st = aten_pow_Tensor_Scalar(d, sg_scalar_int(2), &sq);
    if (!st) st = aten_mean(sq, NULL, loss);
    sg_tensor_release(y), sg_tensor_release(d), sg_tensor_release(sq);
    return st;
}

/* p.add_(p.grad, alpha=-lr) for every parameter, under no_grad, as torch.optim.SGD does; the
 * gradients are cleared */
sg_status llama_sgd(block *b, double lr) {
    bool      was = sg_grad_set_enabled(false);
    sg_status st = SG_OK;
    for (int i = 0; i < LLAMA_NPARAMS && !st; i++) {
        sg_tensor *p = *llama_param(b, i), *g = NULL, *same = NULL;
        if (!(st = sg_tensor_grad(p, &g)) && !g)
            st = sg_error(SG_EINVAL, "sgd: %s has no gradient", llama_param_names[i]);
        if (!st) st = aten_add__Tensor(p, g, sg_scalar_float(-lr), &same);
        if (!st) st = sg_tensor_set_grad(p, NULL);
        sg_tensor_release(g), sg_tensor_release(same);
    }
    sg_grad_set_enabled(was);
    return st;
}
