/* sg_attention.h: the parts of scaled_dot_product_attention's math path that the CPU kernel
 * (attention.c) and the CUDA one (kernels/cuda/attention.cu) share: aten's argument and mask
 * checks, and the grouped-query repeat, dropout and output steps, which are built from views
 * and dispatched ops and so run on either device. */
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

/* aten's pre_process_group_query_attention_input: where k or v has fewer heads (dim -3) than
 * q, each of its heads repeated for Hq / Hk consecutive query heads (repeat_interleave). *ko
 * and *vo are new references either way (k and v themselves where nothing repeats), for the
 * caller to release (both left as they were on failure, so k and v may be the tensors *ko and
 * *vo point at). */
sg_status sg_attn_gqa(const sg_tensor *q, sg_tensor *k, sg_tensor *v, sg_tensor **ko,
                      sg_tensor **vo);

/* Whether the mask broadcasts to the scores' shape without growing it (as an in-place add
 * takes it), with aten's messages. */
sg_status sg_attn_mask_fits(const sg_tensor *mask, const sg_tensor *scores);

/* Dropout of the attention weights before they multiply v, as aten's math path does it
 * (nothing to do where dropout_p <= 0: then *a and *vv are probs and v, with a reference each):
 *  - dropout_mask given: *a = probs with the positions where the mask is false zeroed, and
 *    *vv = v * 1 / (1 - p); the weights the op returns stay probs;
 *  - none: *a = probs * bernoulli(1 - p) / (1 - p) from the default generator (p = 1: probs * 0),
 *    *vv = v; the weights the op returns are *a.
 * p above 1 without a mask is refused with aten's message (aten's dropout checks it). */
sg_status sg_attn_dropout(sg_tensor *probs, sg_tensor *v, double p, sg_tensor *dropout_mask,
                          sg_tensor **a, sg_tensor **vv);

/* The op's results in the query's dtype qt: *out from o, and *attn_out (where wanted) from the
 * weights w; nothing is handed over on failure. */
sg_status sg_attn_outputs(sg_tensor *o, sg_tensor *w, sg_dtype qt, sg_tensor **out,
                          sg_tensor **attn_out);

#ifdef __cplusplus
}
#endif
#endif
