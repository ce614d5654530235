/* sg_any.h: the boxed value. One 16-byte type carries any schema type through boxed calls.
 *
 * Layout (as tvm-ffi's TVMFFIAny): a 4-byte tag, a 4-byte length for strings and lists, and an
 * 8-byte payload. What does not fit in 8 bytes travels by reference: a complex number points to
 * an sg_complex, a list to its first element, a string to its bytes.
 *
 * Which tags each schema type travels as is the type-family table's (gen/schema/sg_type_table.h,
 * docs/types.md): a Scalar, for one, is a BOOL, INT, FLOAT or COMPLEX value; an optional is None
 * or the value. An OPT_TENSOR_LIST's NULL items are None.
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

/* The tags: X(TAG, name) for SG_ANY_TAG, its name in messages (sg_any_tag_name), and the
 * payload it holds. The order is the ABI's: new tags go last. */
#define SG_ANY_TAGS(X)                                                                        \
    X(NONE, "None")                    /* no payload */                                       \
    X(BOOL, "bool")                    /* u.b */                                              \
    X(INT, "int")                      /* u.i */                                              \
    X(FLOAT, "float")                  /* u.f */                                              \
    X(COMPLEX, "complex")              /* u.c -> {re, im} */                                  \
    X(STR, "str")                      /* u.s, len bytes and then a NUL */                    \
    X(DTYPE, "ScalarType")             /* u.i: sg_dtype */                                    \
    X(LAYOUT, "Layout")                /* u.i: sg_layout */                                   \
    X(MEMORY_FORMAT, "MemoryFormat")   /* u.i: sg_memory_format */                            \
    X(DEVICE, "Device")                /* u.dev */                                            \
    X(TENSOR, "Tensor")                /* u.t, never NULL (None where missing) */             \
    X(GENERATOR, "Generator")          /* u.p: an opaque generator */                         \
    X(INT_LIST, "int[]")               /* u.ints, len items */                                \
    X(FLOAT_LIST, "float[]")           /* u.floats, len items */                              \
    X(BOOL_LIST, "bool[]")             /* u.bools, len items */                               \
    X(TENSOR_LIST, "Tensor[]")         /* u.tensors, len items, none NULL */                  \
    X(OPT_TENSOR_LIST, "Tensor?[]")    /* u.tensors, len items, NULL for None */              \
    X(LIST, "list")                    /* u.items, len items */                               \
    X(OPAQUE, "opaque")                /* u.p: a handle */

#define SG_ANY_TAG_ENUM(tag, name) SG_ANY_##tag,
typedef enum sg_any_tag { SG_ANY_TAGS(SG_ANY_TAG_ENUM) SG_ANY__COUNT } sg_any_tag;
#undef SG_ANY_TAG_ENUM

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
_Static_assert(SG_ANY_OPAQUE == 18, "the tags' numbers are the ABI's: new tags go last");
#endif

/* The tags whose payload a kernel follows or indexes a table with: a boxed call checks their
 * values beyond the tag (a bool 0 or 1, an enum in range, a list's pointer and items). */
#define SG_ANY_TAG_BIT(t) (1u << (t))
#define SG_ANY_CHECKED_TAGS                                                                    \
    (SG_ANY_TAG_BIT(SG_ANY_BOOL) | SG_ANY_TAG_BIT(SG_ANY_COMPLEX) | SG_ANY_TAG_BIT(SG_ANY_STR) | \
     SG_ANY_TAG_BIT(SG_ANY_DTYPE) | SG_ANY_TAG_BIT(SG_ANY_LAYOUT) |                            \
     SG_ANY_TAG_BIT(SG_ANY_MEMORY_FORMAT) | SG_ANY_TAG_BIT(SG_ANY_DEVICE) |                    \
     SG_ANY_TAG_BIT(SG_ANY_INT_LIST) | SG_ANY_TAG_BIT(SG_ANY_FLOAT_LIST) |                     \
     SG_ANY_TAG_BIT(SG_ANY_BOOL_LIST) | SG_ANY_TAG_BIT(SG_ANY_TENSOR_LIST) |                   \
     SG_ANY_TAG_BIT(SG_ANY_OPT_TENSOR_LIST) | SG_ANY_TAG_BIT(SG_ANY_LIST))

/* v carries one of `tags` (a mask of 1u << SG_ANY_x) whose value needs no check: what a
 * generated boxed entry (sg_boxed_entry) takes of a plain argument without the boxed call's
 * checks. A checked tag in the mask never passes. */
static inline bool sg_any_plain(const sg_any *v, uint32_t tags) {
    return (uint32_t)v->tag < 32u && ((tags & ~(uint32_t)SG_ANY_CHECKED_TAGS) >> v->tag & 1u);
}

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

/* Gives back what a result owns and sets it to None. NULL is a no-op; a list without items or
 * with a negative length gives back no item, only its array. */
void        sg_any_release(sg_any *v);
const char *sg_any_tag_name(int32_t tag); /* "Tensor", "int[]", ...; "?" for a bad tag */

#ifdef __cplusplus
}
#endif
#endif
