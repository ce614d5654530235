/* types.c: facts about dtypes (expanded from sg_dtypes.h's table). Device type names: device_name.c. */
#include "rt_internal.h"
#include "sg_base.h"

typedef struct dtype_info {
    const char *name; /* NULL for a number that is no dtype */
    const char *c10;  /* c10::ScalarType's name */
    uint8_t     kind;   /* KIND_* */
    uint8_t     digits; /* bits of precision */
} dtype_info;

enum { KIND_BOOL = 1, KIND_UINT, KIND_SINT, KIND_FLOAT, KIND_REDUCED, KIND_COMPLEX };

#define INFO(NAME, NUM, KIND, SIZE, CTYPE, SUF, DL, CU, DIGITS, name, c10, ...) \
    [SG_##NAME] = {name, c10, KIND_##KIND, DIGITS},
static const dtype_info dtypes[SG_DTYPE__END] = {SG_DTYPES(INFO)};
#undef INFO

bool sg_dtype_valid(int t) { return t >= 0 && t < SG_DTYPE__END && dtypes[t].name; }
/* the sizes' one table: rt_internal.h's, which the paths making outputs inline */
size_t sg_dtype_size(sg_dtype t) { return sg__dtype_size((int)t); }
int sg_dtype_digits(sg_dtype t) { return sg_dtype_valid((int)t) ? dtypes[t].digits : 0; }
const char *sg_dtype_name(sg_dtype t) { return sg_dtype_valid((int)t) ? dtypes[t].name : "?"; }
const char *sg_dtype_c10_name(sg_dtype t) { return sg_dtype_valid((int)t) ? dtypes[t].c10 : "?"; }
bool sg_dtype_is_floating(sg_dtype t) {
    return sg_dtype_valid((int)t) &&
           (dtypes[t].kind == KIND_FLOAT || dtypes[t].kind == KIND_REDUCED);
}
bool sg_dtype_is_complex(sg_dtype t) {
    return sg_dtype_valid((int)t) && dtypes[t].kind == KIND_COMPLEX;
}
bool sg_dtype_is_integral(sg_dtype t, bool include_bool) {
    return sg_dtype_valid((int)t) &&
           (dtypes[t].kind == KIND_UINT || dtypes[t].kind == KIND_SINT ||
            (include_bool && dtypes[t].kind == KIND_BOOL));
}
bool sg_dtype_can_cast(sg_dtype from, sg_dtype to) {
    if (sg_dtype_is_complex(from) && !sg_dtype_is_complex(to)) return false;
    if (sg_dtype_is_floating(from) && sg_dtype_is_integral(to, true)) return false;
    return from == SG_BOOL || to != SG_BOOL;
}
