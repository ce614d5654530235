/* helpers_norm.c: the norms' backward helpers (schemas/autograd.yaml): rms_norm, layer_norm,
 * group_norm. Written as aten calls, so they run on any device. The statistics (mean, rstd)
 * come as the forward kept them: the input's shape with the normalized dims 1 (rms, layer) or
 * [N, group] (group). They may be float32 where the input is half or bfloat16; the work is
 * then done in the statistics' dtype and each gradient given in its input's dtype. */
#include "helpers_util.h"

#include <string.h>

/* Sums t over the leading `lead` dims (none: t itself), viewed as `shape` */
static sg_status sum_lead(sg_tensor *t, int32_t lead, sg_int_list shape, sg_tensor **ret) {
    if (!lead) return aten_reshape(t, shape, ret);
    int64_t dims[SG_MAX_DIMS];
    for (int32_t d = 0; d < lead; d++) dims[d] = d;
    sg_tensor *s = NULL;
    sg_status st = aten_sum_dim_IntList(t, &(sg_int_list){dims, lead}, false, NULL, &s);
    if (st == SG_OK) st = aten_reshape(s, shape, ret);
    sg_tensor_release(s);
    return st;
}

/* the trailing dims normalized_shape names, as a dim list; N their elements */
static sg_status norm_dims(const char *fn, const sg_tensor *x, sg_int_list ns, int64_t *dims,
                           int64_t *N) {
    if (ns.len > x->ndim)
        return sg_error(SG_EINVAL, "autograd::%s: normalized_shape has %d dims, the input %d",
                        fn, (int)ns.len, (int)x->ndim);
    *N = 1;
    for (int32_t i = 0; i < ns.len; i++) {
        int32_t d = x->ndim - ns.len + i;
        if (x->sizes[d] != ns.items[i])
            return sg_error(SG_EINVAL, "autograd::%s: the input's dim %d is %lld, "
                            "normalized_shape says %lld", fn, (int)d, (long long)x->sizes[d],
                            (long long)ns.items[i]);
        dims[i] = d;
        *N *= ns.items[i];
    }
    return SG_OK;
}

/* rms_norm, y = x * r * w with r = rsqrt(mean(x^2) + eps) over the normalized dims:
 *   dx = r * g - x * r^3 / N * (sum(g * x) + drstd_term),  g = dy * w
 * where drstd (the gradient of r itself) adds drstd * dr/dx = -drstd * r^3 * x / N;
 *   dw = sum over the leading dims of dy * x * r. */
sg_status sg_agf_rms_norm_backward(sg_keyset ks, sg_tensor *dy, sg_tensor *drstd, sg_tensor *input,
                                   sg_int_list ns, sg_tensor *rstd, sg_tensor *weight,
                                   sg_bool_list mask, sg_tensor **gx, sg_tensor **gw) {
    (void)ks;
    if (mask.len != 2)
        return sg_error(SG_EINVAL, "autograd::rms_norm_backward: the mask has %d entries, not 2",
                        (int)mask.len);
    int64_t dims[SG_MAX_DIMS], N;
    sg_status st = agf_real("rms_norm_backward", input);
    if (st == SG_OK) st = norm_dims("rms_norm_backward", input, ns, dims, &N);
    if (st != SG_OK) return st;
    sg_dtype ct = (sg_dtype)rstd->dtype;
    sg_tensor *x = NULL, *g = NULL, *gx_ = NULL, *s = NULL, *r2 = NULL, *r3 = NULL, *c = NULL;
    sg_tensor *xc = NULL, *rg = NULL, *xr = NULL, *p = NULL;
    TRY(agf_to(input, ct, &x));
    if (mask.items[0] && (dy || drstd)) {
        TRY(aten_mul_Tensor(rstd, rstd, &r2));
        TRY(aten_mul_Tensor(r2, rstd, &r3));
        if (dy) {
            if (weight) TRY(aten_mul_Tensor(dy, weight, &g));
            else g = sg_tensor_retain(dy);
            TRY(aten_mul_Tensor(g, x, &p));
            TRY(aten_sum_dim_IntList(p, &(sg_int_list){dims, ns.len}, true, NULL, &s));
            if (drstd) {
                sg_tensor_release(p), p = NULL;
                TRY(aten_add_Tensor(s, drstd, sg_scalar_int(1), &p));
                sg_tensor_release(s), s = p, p = NULL;
            }
        } else {
            s = sg_tensor_retain(drstd);
        }
        TRY(aten_mul_Tensor(r3, s, &c));
        TRY(aten_mul_Tensor(x, c, &xc));
        /* 1/N as sub's alpha: one pass over the input fewer */
        if (dy) {
            TRY(aten_mul_Tensor(g, rstd, &rg));
            TRY(aten_sub_Tensor(rg, xc, sg_scalar_float(1.0 / (double)N), &gx_));
        } else {
            TRY(aten_mul_Scalar(xc, sg_scalar_float(-1.0 / (double)N), &gx_));
        }
        TRY(agf_to(gx_, (sg_dtype)input->dtype, gx));
    }
    if (mask.items[1] && weight && dy) {
        sg_tensor_release(p), p = NULL;
        TRY(aten_mul_Tensor(x, rstd, &xr));
        TRY(aten_mul_Tensor(dy, xr, &p));
        sg_tensor *w = NULL;
        TRY(sum_lead(p, input->ndim - ns.len, (sg_int_list){weight->sizes, weight->ndim}, &w));
        st = agf_to(w, (sg_dtype)weight->dtype, gw);
        sg_tensor_release(w);
        if (st != SG_OK) goto done;
    }
done:
    RELEASE(x, g, gx_, s, r2, r3, c, xc, rg, xr, p);
    if (st != SG_OK) {
        sg_tensor_release(*gx), sg_tensor_release(*gw);
        *gx = *gw = NULL;
    }
    return st;
}

sg_status sg_agf_fused_rms_norm_backward(sg_keyset ks, sg_tensor *dy, sg_tensor *input,
                                         sg_int_list ns, sg_tensor *rstd, sg_tensor *weight,
                                         sg_bool_list mask, sg_tensor **gx, sg_tensor **gw) {
    return sg_agf_rms_norm_backward(ks, dy, NULL, input, ns, rstd, weight, mask, gx, gw);
}

/* The shared part of layer_norm and group_norm over `dims` (K elements each), with the
 * statistics broadcast against x:  xhat = (x - mean) * rstd, g = dy * w,
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
 *        + dmean / K - drstd * rstd^2 * xhat / K
 * (each term where its gradient is given); *xhat_out gets xhat where asked. */
static sg_status norm_dx(sg_tensor *dy, sg_tensor *dmean, sg_tensor *drstd, sg_tensor *x,
                         sg_tensor *mean, sg_tensor *rstd, sg_tensor *w, sg_int_list dims,
                         int64_t K, sg_tensor **dx, sg_tensor **xhat_out) {
    sg_tensor *xm = NULL, *xhat = NULL, *g = NULL, *mg = NULL, *gx = NULL, *mgx = NULL;
    sg_tensor *a = NULL, *b = NULL, *acc = NULL, *t = NULL, *u = NULL, *r2 = NULL;
    sg_status st;
    TRY(aten_sub_Tensor(x, mean, sg_scalar_int(1), &xm));
    TRY(aten_mul_Tensor(xm, rstd, &xhat));
    if (dy) {
        if (w) TRY(aten_mul_Tensor(dy, w, &g));
        else g = sg_tensor_retain(dy);
        TRY(aten_mean_dim(g, &dims, true, NULL, &mg));
        TRY(aten_mul_Tensor(g, xhat, &gx));
        TRY(aten_mean_dim(gx, &dims, true, NULL, &mgx));
        TRY(aten_sub_Tensor(g, mg, sg_scalar_int(1), &a));
        TRY(aten_mul_Tensor(xhat, mgx, &b));
        TRY(aten_sub_Tensor(a, b, sg_scalar_int(1), &t));
        TRY(aten_mul_Tensor(t, rstd, &acc));
        sg_tensor_release(t), t = NULL;
    }
    if (dmean) {
        TRY(aten_div_Scalar(dmean, sg_scalar_int(K), &t));
        if (acc) TRY(aten_add_Tensor(acc, t, sg_scalar_int(1), &u));
        else TRY(aten_expand(t, (sg_int_list){x->sizes, x->ndim}, false, &u));
        RELEASE(acc, t), acc = u, t = u = NULL;
    }
    if (drstd) {
        TRY(aten_mul_Tensor(rstd, rstd, &r2));
        TRY(aten_mul_Tensor(r2, drstd, &t));
        sg_tensor *v = NULL;
        TRY(aten_mul_Tensor(xhat, t, &v));
        sg_tensor_release(t), t = NULL;
        st = aten_div_Scalar(v, sg_scalar_int(-K), &t);
        sg_tensor_release(v);
        if (st != SG_OK) goto done;
        if (acc) TRY(aten_add_Tensor(acc, t, sg_scalar_int(1), &u));
        else u = sg_tensor_retain(t);
        RELEASE(acc, t), acc = u, t = u = NULL;
    }
    *dx = acc, acc = NULL;
    if (xhat_out) *xhat_out = xhat, xhat = NULL;
done:
    RELEASE(xm, xhat, g, mg, gx, mgx, a, b, acc, t, u, r2);
    return st;
}

static void release3(sg_status st, sg_tensor **a, sg_tensor **b, sg_tensor **c) {
    if (st == SG_OK) return;
    sg_tensor_release(*a), sg_tensor_release(*b), sg_tensor_release(*c);
    *a = *b = *c = NULL;
}

sg_status sg_agf_native_layer_norm_backward(sg_keyset ks, sg_tensor *dy, sg_tensor *input,
                                            sg_int_list ns, sg_tensor *mean, sg_tensor *rstd,
                                            sg_tensor *weight, sg_tensor *bias,
                                            sg_bool_list mask, sg_tensor **gx, sg_tensor **gw,
                                            sg_tensor **gb) {
    (void)ks;
    if (mask.len != 3)
        return sg_error(SG_EINVAL, "autograd::native_layer_norm_backward: the mask has %d "
                        "entries, not 3", (int)mask.len);
    if (!dy) return SG_OK; /* no gradient in, none out */
    int64_t dims[SG_MAX_DIMS], N;
    sg_status st = agf_real("native_layer_norm_backward", input);
    if (st == SG_OK) st = norm_dims("native_layer_norm_backward", input, ns, dims, &N);
    if (st != SG_OK) return st;
    sg_dtype ct = (sg_dtype)rstd->dtype;
    int32_t lead = input->ndim - ns.len;
    sg_tensor *x = NULL, *g = NULL, *dx = NULL, *xhat = NULL, *p = NULL, *s = NULL;
    TRY(agf_to(input, ct, &x));
    TRY(agf_to(dy, ct, &g));
    TRY(norm_dx(g, NULL, NULL, x, mean, rstd, weight, (sg_int_list){dims, ns.len}, N, &dx,
                &xhat));
    if (mask.items[0]) TRY(agf_to(dx, (sg_dtype)input->dtype, gx));
    if (mask.items[1] && weight) {
        TRY(aten_mul_Tensor(g, xhat, &p));
        TRY(sum_lead(p, lead, (sg_int_list){weight->sizes, weight->ndim}, &s));
        TRY(agf_to(s, (sg_dtype)weight->dtype, gw));
        RELEASE(p, s), p = s = NULL;
    }
    if (mask.items[2] && bias) {
        TRY(sum_lead(g, lead, (sg_int_list){bias->sizes, bias->ndim}, &s));
        TRY(agf_to(s, (sg_dtype)bias->dtype, gb));
    }
done:
    RELEASE(x, g, dx, xhat, p, s);
    release3(st, gx, gw, gb);
    return st;
}

/* group_norm: x viewed as [N, group, C / group, HxW], the statistics as [N, group, 1, 1],
 * the weight as [1, group, C / group, 1]; normalized over the last two. */
sg_status sg_agf_group_norm_backward(sg_keyset ks, sg_tensor *dy, sg_tensor *dmean,
                                     sg_tensor *drstd, sg_tensor *input, sg_tensor *mean,
                                     sg_tensor *rstd, sg_tensor *gamma, int64_t N, int64_t C,
                                     int64_t HxW, int64_t group, double eps, sg_bool_list mask,
                                     sg_tensor **gx, sg_tensor **gw, sg_tensor **gb) {
    (void)ks, (void)eps;
    if (mask.len != 3)
        return sg_error(SG_EINVAL, "autograd::native_group_norm_backward: the mask has %d "
                        "entries, not 3", (int)mask.len);
    if (group <= 0 || C % group || N * C * HxW != sg_tensor_numel(input))
        return sg_error(SG_EINVAL, "autograd::native_group_norm_backward: N=%lld C=%lld "
                        "HxW=%lld group=%lld do not fit an input of %lld elements", (long long)N,
                        (long long)C, (long long)HxW, (long long)group,
                        (long long)sg_tensor_numel(input));
    sg_status st = agf_real("native_group_norm_backward", input);
    if (st != SG_OK) return st;
    sg_dtype ct = (sg_dtype)rstd->dtype;
    const int64_t D = C / group, x4[4] = {N, group, D, HxW}, s4[4] = {N, group, 1, 1};
    const int64_t w4[4] = {1, group, D, 1}, in2[2] = {2, 3}, out2[2] = {0, 3};
    sg_int_list X4 = {x4, 4}, S4 = {s4, 4};
    sg_tensor *x = NULL, *xv = NULL, *g = NULL, *gv = NULL, *m = NULL, *r = NULL, *w = NULL;
    sg_tensor *dm = NULL, *dr = NULL, *dx = NULL, *xhat = NULL, *p = NULL, *s = NULL;
    sg_tensor *t = NULL;
    TRY(agf_to(input, ct, &x));
    TRY(aten_reshape(x, X4, &xv));
    if (dy) {
        TRY(agf_to(dy, ct, &g));
        TRY(aten_reshape(g, X4, &gv));
    }
    TRY(aten_reshape(mean, S4, &m));
    TRY(aten_reshape(rstd, S4, &r));
    if (gamma) {
        TRY(agf_to(gamma, ct, &t));
        TRY(aten_reshape(t, (sg_int_list){w4, 4}, &w));
    }
    if (dmean) TRY(aten_reshape(dmean, S4, &dm));
    if (drstd) TRY(aten_reshape(drstd, S4, &dr));
    if (!gv && !dm && !dr) goto done;
    TRY(norm_dx(gv, dm, dr, xv, m, r, w, (sg_int_list){in2, 2}, D * HxW, &dx, &xhat));
    if (mask.items[0]) {
        sg_tensor_release(t), t = NULL;
        TRY(aten_reshape(dx, (sg_int_list){input->sizes, input->ndim}, &t));
        TRY(agf_to(t, (sg_dtype)input->dtype, gx));
    }
    const int64_t c1[1] = {C};
    if (mask.items[1] && gamma && gv) {
        TRY(aten_mul_Tensor(gv, xhat, &p));
        TRY(aten_sum_dim_IntList(p, &(sg_int_list){out2, 2}, false, NULL, &s));
        sg_tensor_release(t), t = NULL;
        TRY(aten_reshape(s, (sg_int_list){c1, 1}, &t));
        TRY(agf_to(t, (sg_dtype)gamma->dtype, gw));
        RELEASE(s), s = NULL;
    }
    if (mask.items[2] && gv) {
        TRY(aten_sum_dim_IntList(gv, &(sg_int_list){out2, 2}, false, NULL, &s));
        sg_tensor_release(t), t = NULL;
        TRY(aten_reshape(s, (sg_int_list){c1, 1}, &t));
        TRY(agf_to(t, (sg_dtype)(gamma ? gamma->dtype : input->dtype), gb));
    }
done:
    RELEASE(x, xv, g, gv, m, r, w, dm, dr, dx, xhat, p, s, t);
    release3(st, gx, gw, gb);
    return st;
}

sg_status sg_agf_native_group_norm_backward(sg_keyset ks, sg_tensor *dy, sg_tensor *input,
                                            sg_tensor *mean, sg_tensor *rstd, sg_tensor *weight,
                                            int64_t N, int64_t C, int64_t HxW, int64_t group,
                                            sg_bool_list mask, sg_tensor **gx, sg_tensor **gw,
                                            sg_tensor **gb) {
    return sg_agf_group_norm_backward(ks, dy, NULL, NULL, input, mean, rstd, weight, N, C, HxW,
                                      group, 0, mask, gx, gw, gb);
}
