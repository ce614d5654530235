/* any.c: boxed values: names and releasing results. */
#include "sg_any.h"

#include <stdlib.h>

const char *sg_any_tag_name(int32_t tag) {
#define SG_ANY_TAG_NAME(tag, name) [SG_ANY_##tag] = name,
    static const char *const names[SG_ANY__COUNT] = {SG_ANY_TAGS(SG_ANY_TAG_NAME)};
#undef SG_ANY_TAG_NAME
    return tag >= 0 && tag < SG_ANY__COUNT ? names[tag] : "?";
}

/* Rationale: a result may come from a careless kernel, so NULL, a list without items and a
 * negative length are given back as far as they go instead of crashing. */
void sg_any_release(sg_any *v) {
    if (!v) return;
    int32_t n = v->len > 0 ? v->len : 0;
    switch (v->tag) {
    case SG_ANY_TENSOR: sg_tensor_release(v->u.t); break;
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST:
        for (int32_t i = 0; v->u.tensors && i < n; i++) sg_tensor_release(v->u.tensors[i]);
        free((void *)v->u.tensors);
        break;
    case SG_ANY_LIST:
        for (int32_t i = 0; v->u.items && i < n; i++) sg_any_release((sg_any *)&v->u.items[i]);
        free((void *)v->u.items);
        break;
    case SG_ANY_COMPLEX:
    case SG_ANY_STR:
    case SG_ANY_INT_LIST:
    case SG_ANY_FLOAT_LIST:
    case SG_ANY_BOOL_LIST: free((void *)v->u.p); break;
    default: break;
    }
    *v = sg_any_none();
}
