/* any.c: boxed values: names and releasing results. */
#include "sg_any.h"

#include <stdlib.h>

const char *sg_any_tag_name(int32_t tag) {
    static const char *const names[SG_ANY__COUNT] = {
        [SG_ANY_NONE] = "None",
        [SG_ANY_BOOL] = "bool",
        [SG_ANY_INT] = "int",
        [SG_ANY_FLOAT] = "float",
        [SG_ANY_COMPLEX] = "complex",
        [SG_ANY_STR] = "str",
        [SG_ANY_DTYPE] = "ScalarType",
        [SG_ANY_LAYOUT] = "Layout",
        [SG_ANY_MEMORY_FORMAT] = "MemoryFormat",
        [SG_ANY_DEVICE] = "Device",
        [SG_ANY_TENSOR] = "Tensor",
        [SG_ANY_GENERATOR] = "Generator",
        [SG_ANY_INT_LIST] = "int[]",
        [SG_ANY_FLOAT_LIST] = "float[]",
        [SG_ANY_BOOL_LIST] = "bool[]",
        [SG_ANY_TENSOR_LIST] = "Tensor[]",
        [SG_ANY_OPT_TENSOR_LIST] = "Tensor?[]",
        [SG_ANY_LIST] = "list",
        [SG_ANY_OPAQUE] = "opaque",
    };
    return tag >= 0 && tag < SG_ANY__COUNT ? names[tag] : "?";
}

void sg_any_release(sg_any *v) {
    switch (v->tag) {
    case SG_ANY_TENSOR: sg_tensor_release(v->u.t); break;
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST:
        for (int32_t i = 0; i < v->len; i++) sg_tensor_release(v->u.tensors[i]);
        free((void *)v->u.tensors);
        break;
    case SG_ANY_LIST:
        for (int32_t i = 0; i < v->len; i++) sg_any_release((sg_any *)&v->u.items[i]);
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
