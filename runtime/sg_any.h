/* sg_any.h: the boxed value. One 16-byte type carries any schema type through boxed calls.
 *
 * Layout (as tvm-ffi's TVMFFIAny): a 4-byte tag, a 4-byte length for strings and lists, and an
 * 8-byte payload. What does not fit in 8 bytes travels by reference: a complex number points to
 * an sg_complex, a list to its first element, a string to its bytes.
 *
 * Scalars are not a tag of their own: a Scalar argument is a BOOL, INT, FLOAT or COMPLEX value.
 * An optional is None or the value. A Tensor?[] is an OPT_TENSOR_LIST whose NULL items are None.
 *
 * Ownership. Arguments are borrowed: the caller keeps what they point to alive for the call.
 * Results are owned by whoever receives them and given back with sg_any_release: a TENSOR
 * result holds a reference; a list, string or complex result points to memory from malloc
 * (a TENSOR_LIST's tensors are references too). Result slots start as None (zeroed).
 */
#ifndef SG_ANY_H
#define SG_ANY_H

#include "sg_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sg_any_tag {
    SG_ANY_NONE = 0,
    SG_ANY_BOOL,            /* u.b */
    SG_ANY_INT,             /* u.i (int, SymInt, DeviceIndex) */
    SG_ANY_FLOAT,           /* u.f */
    SG_ANY_COMPLEX,         /* u.c -> {re, im} */
    SG_ANY_STR,             /* u.s, len bytes and then a NUL (str, Dimname) */
    SG_ANY_DTYPE,           /* u.i: sg_dtype (ScalarType) */
    SG_ANY_LAYOUT,          /* u.i: sg_layout */
    SG_ANY_MEMORY_FORMAT,   /* u.i: sg_memory_format */
    SG_ANY_DEVICE,          /* u.dev */
    SG_ANY_TENSOR,          /* u.t (never NULL: a missing optional tensor is NONE) */
    SG_ANY_GENERATOR,       /* u.p: an opaque generator */
    SG_ANY_INT_LIST,        /* u.ints, len items (int[], SymInt[], int[N]) */
    SG_ANY_FLOAT_LIST,      /* u.floats, len items */
    SG_ANY_BOOL_LIST,       /* u.bools, len items */
    SG_ANY_TENSOR_LIST,     /* u.tensors, len items, none NULL */
    SG_ANY_OPT_TENSOR_LIST, /* u.tensors, len items, NULL for None */
    SG_ANY_LIST,            /* u.items, len items (Scalar[], str[], Dimname[], ...) */
    SG_ANY_OPAQUE,          /* u.p: Storage, Stream, classes and other handles */
    SG_ANY__COUNT
} sg_any_tag;

typedef struct sg_complex {
    double re, im;
} sg_complex;

typedef struct sg_any sg_any;
struct sg_any {
    int32_t tag; /* sg_any_tag */
    int32_t len; /* STR: bytes; lists: items; otherwise 0 */
    union {
        bool               b;
        int64_t            i;
        double             f;
        const sg_complex  *c;
        const char        *s;
        sg_device          dev;
        sg_tensor         *t;
        void              *p;
        const int64_t     *ints;
        const double      *floats;
        const bool        *bools;
        sg_tensor *const  *tensors;
        const sg_any      *items;
    } u;
};

#ifndef __cplusplus
_Static_assert(sizeof(sg_any) == 16, "sg_any is 16 bytes");
#endif

/* Builders for arguments (borrowed). */
static inline sg_any sg_any_none(void) { sg_any v = {SG_ANY_NONE, 0, {0}}; return v; }
static inline sg_any sg_any_bool(bool b) { sg_any v = {SG_ANY_BOOL, 0, {0}}; v.u.b = b; return v; }
static inline sg_any sg_any_int(int64_t i) { sg_any v = {SG_ANY_INT, 0, {0}}; v.u.i = i; return v; }
static inline sg_any sg_any_float(double f) { sg_any v = {SG_ANY_FLOAT, 0, {0}}; v.u.f = f; return v; }
static inline sg_any sg_any_tensor(sg_tensor *t) { sg_any v = {SG_ANY_TENSOR, 0, {0}}; v.u.t = t; return v; }
static inline sg_any sg_any_device(sg_device d) { sg_any v = {SG_ANY_DEVICE, 0, {0}}; v.u.dev = d; return v; }
static inline sg_any sg_any_dtype(sg_dtype d) { sg_any v = {SG_ANY_DTYPE, 0, {0}}; v.u.i = d; return v; }
static inline sg_any sg_any_str(const char *s, int32_t len) {
    sg_any v = {SG_ANY_STR, len, {0}};
    v.u.s = s;
    return v;
}
static inline sg_any sg_any_int_list(const int64_t *p, int32_t n) {
    sg_any v = {SG_ANY_INT_LIST, n, {0}};
    v.u.ints = p;
    return v;
}
static inline sg_any sg_any_tensor_list(sg_tensor *const *p, int32_t n) {
    sg_any v = {SG_ANY_TENSOR_LIST, n, {0}};
    v.u.tensors = p;
    return v;
}

/* Gives back what a result owns and sets it to None. */
void        sg_any_release(sg_any *v);
const char *sg_any_tag_name(int32_t tag); /* "Tensor", "int[]", ...; "?" for a bad tag */

#ifdef __cplusplus
}
#endif
#endif
