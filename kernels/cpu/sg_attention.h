/* sg_attention.h: the parts of scaled_dot_product_attention's math path that the CPU kernel
 * (attention.c) and the CUDA one (kernels/cuda/attention.cu) share: aten's argument checks and
 * the dropout step, which is built from dispatched ops and so runs on either device. */
#ifndef SG_ATTENTION_H
#define SG_ATTENTION_H

#include "sg_iter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aten's checks of query, key, value and attn_mask (dtypes, devices, ranks), a floating
 * query, and no explicit mask beside is_causal; with aten's messages. */
sg_status sg_attn_check(const sg_tensor *q, const sg_tensor *k, const sg_tensor *v,
                        const sg_tensor *mask, bool is_causal);

/* Dropout of the attention weights before they multiply v, as aten's math path does it
 * (nothing to do where dropout_p <= 0: then *a and *vv are probs and v, with a reference each):
 *  - dropout_mask given: *a = probs with the positions where the mask is false zeroed, and
 *    *vv = v * 1 / (1 - p); the weights the op returns stay probs;
 *  - none: *a = probs * bernoulli(1 - p) / (1 - p) from the default generator (p = 1: probs * 0),
 *    *vv = v; the weights the op returns are *a.
 * p above 1 without a mask is refused with aten's message (aten's dropout checks it). */
sg_status sg_attn_dropout(sg_tensor *probs, sg_tensor *v, double p, sg_tensor *dropout_mask,
                          sg_tensor **a, sg_tensor **vv);

#ifdef __cplusplus
}
#endif
#endif
