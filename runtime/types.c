/* types.c: facts about dtypes and device types. */
#include "sg_base.h"

typedef struct dtype_info {
    const char *name;
    uint8_t     size;
    uint8_t     cls; /* 0 none, 'b' bool, 'i' integer, 'f' floating, 'c' complex */
} dtype_info;

static const dtype_info dtypes[SG_DTYPE__END] = {
    [SG_UINT8] = {"uint8", 1, 'i'},         [SG_INT8] = {"int8", 1, 'i'},
    [SG_INT16] = {"int16", 2, 'i'},         [SG_INT32] = {"int32", 4, 'i'},
    [SG_INT64] = {"int64", 8, 'i'},         [SG_FLOAT16] = {"float16", 2, 'f'},
    [SG_FLOAT32] = {"float32", 4, 'f'},     [SG_FLOAT64] = {"float64", 8, 'f'},
    [SG_COMPLEX64] = {"complex64", 8, 'c'}, [SG_COMPLEX128] = {"complex128", 16, 'c'},
    [SG_BOOL] = {"bool", 1, 'b'},           [SG_BFLOAT16] = {"bfloat16", 2, 'f'},
};

bool sg_dtype_valid(int t) { return t >= 0 && t < SG_DTYPE__END && dtypes[t].name; }
size_t sg_dtype_size(sg_dtype t) { return sg_dtype_valid((int)t) ? dtypes[t].size : 0; }
const char *sg_dtype_name(sg_dtype t) { return sg_dtype_valid((int)t) ? dtypes[t].name : "?"; }
bool sg_dtype_is_floating(sg_dtype t) { return sg_dtype_valid((int)t) && dtypes[t].cls == 'f'; }
bool sg_dtype_is_complex(sg_dtype t) { return sg_dtype_valid((int)t) && dtypes[t].cls == 'c'; }
bool sg_dtype_is_integral(sg_dtype t, bool include_bool) {
    return sg_dtype_valid((int)t) &&
           (dtypes[t].cls == 'i' || (include_bool && dtypes[t].cls == 'b'));
}

const char *sg_device_type_name(sg_device_type t) {
    static const char *const names[SG_DEV__COUNT] = {
        [SG_DEV_CPU] = "cpu",
        [SG_DEV_CUDA] = "cuda",
        [SG_DEV_META] = "meta",
        [SG_DEV_PRIVATEUSE1] = "privateuseone",
        [SG_DEV_PRIVATEUSE2] = "privateusetwo",
        [SG_DEV_PRIVATEUSE3] = "privateusethree",
    };
    return (unsigned)t < SG_DEV__COUNT ? names[t] : "?";
}
