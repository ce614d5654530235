/* helpers_util.h: what the helper kernels of kernels/autograd share: the one-exit error
 * handling and small conversions. Private to kernels/autograd. */
#ifndef SG_AGF_HELPERS_UTIL_H
#define SG_AGF_HELPERS_UTIL_H

#include "aten.h"

#include <stdbool.h>

/* Runs CALL (a call that returns sg_status); on failure, to `done`. */
#define TRY(call)                                                                             \
    do {                                                                                      \
        st = (call);                                                                          \
        if (st != SG_OK) goto done;                                                           \
    } while (0)

/* Releases each of the n tensors (NULL ones too). */
static inline void agf_release(sg_tensor **t, int n) {
    for (int i = 0; i < n; i++) sg_tensor_release(t[i]);
}
#define RELEASE(...)                                                                          \
    agf_release((sg_tensor *[]){__VA_ARGS__},                                                 \
                (int)(sizeof((sg_tensor *[]){__VA_ARGS__}) / sizeof(sg_tensor *)))

/* *out: t in dtype dt (t itself, retained, where it is already) */
static inline sg_status agf_to(sg_tensor *t, sg_dtype dt, sg_tensor **out) {
    if ((sg_dtype)t->dtype == dt) {
        *out = sg_tensor_retain(t);
        return SG_OK;
    }
    return aten_to_dtype(t, dt, false, false, NULL, out);
}

/* An error naming fn where t is complex: the helpers that would need conj() for it (products,
 * logs) refuse it rather than give a wrong gradient. */
static inline sg_status agf_real(const char *fn, const sg_tensor *t) {
    return t && sg_dtype_is_complex((sg_dtype)t->dtype)
               ? sg_error(SG_EUNSUPPORTED, "autograd::%s: complex gradients are not supported "
                          "yet", fn)
               : SG_OK;
}

/* d wrapped into [0, n), or an error naming fn; a 0-dim tensor takes 0 and -1, as in aten */
static inline sg_status agf_wrap_dim(const char *fn, int64_t d, int64_t n, int64_t *out) {
    int64_t m = n ? n : 1, w = d < 0 ? d + m : d;
    if (w < 0 || w >= m)
        return sg_error(SG_EINVAL, "autograd::%s: dim %lld out of range for %lld dims", fn,
                        (long long)d, (long long)n);
    *out = w;
    return SG_OK;
}

/* g with a dim of size 1 put back at each of dims (wrapped against nd), in increasing order:
 * PyTorch's unsqueeze_multiple */
sg_status sg_agf_unsqueeze_multiple(const char *fn, sg_tensor *g, sg_int_list dims, int64_t nd,
                                    sg_tensor **ret);

#endif
