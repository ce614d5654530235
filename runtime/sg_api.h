/* sg_api.h: the C types of the generated typed API, the helpers its wrappers and adapters use
 * to box and unbox, and the static op tables generated libraries carry.
 *
 * Type mapping (docs/types.md has the whole table): a schema type maps to one C parameter type,
 * the same for every op. Optionals of values are pointers (NULL is None); optional tensors and
 * generators are NULL pointers; lists are {items, len} structs passed by value. A Scalar keeps
 * its kind (bool, int, float or complex).
 */
#ifndef SG_API_H
#define SG_API_H

#include "sg_dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values ------------------------------------------------------------------------------- */

typedef enum sg_scalar_kind { SG_SCALAR_BOOL, SG_SCALAR_INT, SG_SCALAR_FLOAT, SG_SCALAR_COMPLEX } sg_scalar_kind;

typedef struct sg_scalar {
    int32_t kind; /* sg_scalar_kind */
    union {
        bool       b;
        int64_t    i;
        double     f;
        sg_complex c;
    } u;
} sg_scalar;

static inline sg_scalar sg_scalar_int(int64_t i) { sg_scalar s; s.kind = SG_SCALAR_INT; s.u.i = i; return s; }
static inline sg_scalar sg_scalar_float(double f) { sg_scalar s; s.kind = SG_SCALAR_FLOAT; s.u.f = f; return s; }
static inline sg_scalar sg_scalar_bool(bool b) { sg_scalar s; s.kind = SG_SCALAR_BOOL; s.u.b = b; return s; }
/* The value as a double (complex: its real part). */
double sg_scalar_to_double(sg_scalar s);

typedef struct sg_generator sg_generator; /* opaque */

typedef struct { sg_tensor *const *items; int32_t len; } sg_tensor_list; /* Tensor?[]: NULL items */
typedef struct { const int64_t *items; int32_t len; } sg_int_list;
typedef struct { const double *items; int32_t len; } sg_float_list;
typedef struct { const bool *items; int32_t len; } sg_bool_list;
typedef struct { const sg_scalar *items; int32_t len; } sg_scalar_list;
typedef struct { const char *const *items; int32_t len; } sg_str_list;

/* Lists a typed call returns (Tensor[] results) own their items: give them back with this. */
void sg_tensor_list_release(sg_tensor_list *l);

/* ---- for generated wrappers and adapters ------------------------------------------------- */

static inline sg_keyset sg_tensor_keys_opt(const sg_tensor *t) { return t ? t->keys : 0; }
static inline sg_keyset sg_tensor_list_keys(sg_tensor_list l) {
    sg_keyset ks = 0;
    for (int32_t i = 0; i < l.len; i++)
        if (l.items[i]) ks |= l.items[i]->keys;
    return ks;
}

/* Boxing (typed -> sg_any). Pointers must outlive the boxed call. */
sg_any sg_box_scalar(const sg_scalar *s);
static inline sg_any sg_box_opt_tensor(sg_tensor *t) { return t ? sg_any_tensor(t) : sg_any_none(); }
/* A string of 2^31 bytes or more has no boxed length: it boxes with length -1, which every
 * boxed call refuses with a message. */
static inline sg_any sg_box_str(const char *s) {
    sg_any v = {SG_ANY_STR, 0, {0}};
    size_t n = 0;
    if (!s) return sg_any_none();
    while (s[n]) n++;
    v.len = n <= (size_t)INT32_MAX ? (int32_t)n : -1;
    v.u.s = s;
    return v;
}
static inline sg_any sg_box_tensor_list(sg_tensor_list l, bool optional_items) {
    sg_any v = {optional_items ? SG_ANY_OPT_TENSOR_LIST : SG_ANY_TENSOR_LIST, l.len, {0}};
    v.u.tensors = l.items;
    return v;
}
static inline sg_any sg_box_float_list(sg_float_list l) { sg_any v = {SG_ANY_FLOAT_LIST, l.len, {0}}; v.u.floats = l.items; return v; }
static inline sg_any sg_box_bool_list(sg_bool_list l) { sg_any v = {SG_ANY_BOOL_LIST, l.len, {0}}; v.u.bools = l.items; return v; }
static inline sg_any sg_box_tag_i(int32_t tag, int64_t i) { sg_any v = {tag, 0, {0}}; v.u.i = i; return v; }
static inline sg_any sg_box_complex(const sg_complex *c) {
    sg_any v = {SG_ANY_COMPLEX, 0, {0}};
    if (!c) return sg_any_none();
    v.u.c = c;
    return v;
}
static inline sg_any sg_box_opaque(int32_t tag, void *p) {
    sg_any v = {tag, 0, {0}};
    if (!p) return sg_any_none();
    v.u.p = p;
    return v;
}
static inline void *sg_unbox_opaque(const sg_any *v) { return v->tag == SG_ANY_NONE ? NULL : v->u.p; }
static inline sg_float_list sg_unbox_float_list(const sg_any *v) {
    sg_float_list l = {v->u.floats, v->len};
    return l;
}
static inline sg_bool_list sg_unbox_bool_list(const sg_any *v) {
    sg_bool_list l = {v->u.bools, v->len};
    return l;
}
/* Scalar[] and str[] travel as SG_ANY_LIST: the caller gives room for l.len boxed items. */
sg_any sg_box_scalar_list(sg_scalar_list l, sg_any *room);
sg_any sg_box_str_list(sg_str_list l, sg_any *room);

/* Unboxing (sg_any -> typed). The boxed call checked the tags already. */
sg_scalar sg_unbox_scalar(const sg_any *v);
/* int[N] may arrive as one int: it is repeated N times into room (N entries). */
sg_int_list sg_unbox_int_list(const sg_any *v, int64_t *room, int32_t n);
static inline sg_tensor_list sg_unbox_tensor_list(const sg_any *v) {
    sg_tensor_list l = {v->u.tensors, v->len};
    return l;
}
/* Scalar[] / str[] from an SG_ANY_LIST: decoded into room (v->len entries; the caller sizes it
 * with sg_unbox_list_len). */
static inline int32_t sg_unbox_list_len(const sg_any *v) { return v->tag == SG_ANY_LIST ? v->len : 0; }
sg_scalar_list sg_unbox_scalar_list(const sg_any *v, sg_scalar *room);
sg_str_list    sg_unbox_str_list(const sg_any *v, const char **room);
static inline const char *sg_unbox_str(const sg_any *v) {
    return v->tag == SG_ANY_STR ? v->u.s : NULL;
}

/* Results: boxing hands ownership to the sg_any; unboxing takes it from v (v becomes None).
 * An unboxing that finds the wrong tag releases v and fails with SG_EINVAL (a boxed kernel
 * returned something its schema does not allow). */
sg_any    sg_box_tensor_list_result(sg_tensor_list l);
sg_any    sg_box_scalar_result(sg_scalar s); /* a complex value is copied to malloc'ed memory */
sg_status sg_unbox_tensor_list_result(sg_any *v, sg_tensor_list *out);
sg_status sg_result_tensor(sg_any *v, sg_tensor **out);
sg_status sg_result_opt_tensor(sg_any *v, sg_tensor **out);
sg_status sg_result_int(sg_any *v, int64_t *out);
sg_status sg_result_float(sg_any *v, double *out);
sg_status sg_result_bool(sg_any *v, bool *out);
sg_status sg_result_scalar(sg_any *v, sg_scalar *out);
sg_status sg_result_dtype(sg_any *v, sg_dtype *out);
sg_status sg_result_any(sg_any *v, sg_any *out);

/* A typed call whose entry is boxed: boxes the arguments that follow sig (one per letter
 * before '>'), calls e->boxed, and unboxes each result into the pointer that follows them (one
 * per letter after '>'). The letters are the type families' (gen/schema/sg_type_table.h,
 * docs/types.md lists them); a result of a family with no typed result is an sg_any ('a'). */
sg_status sg_call_boxed_sig(const sg_entry *e, const sg_op *op, sg_keyset ks, const char *sig,
                            ...);

/* What every op handle of a generated library holds before the library's init defines its ops,
 * and again after sg_runtime_shutdown: a stand-in whose every call fails with SG_ESTATE, saying
 * that the init has not run. (Its type is incomplete here; only its address is used.) */
extern sg_op sg_op_uninit;
/* The cold path of a generated typed wrapper given NULL for the tensor argument `arg`:
 * SG_EINVAL naming the op and the argument (or SG_ESTATE where op is sg_op_uninit). */
sg_status sg_op_null_arg(const sg_op *op, int32_t arg);
/* Whether l, bound to a Tensor[] argument (optional_items false) or a Tensor?[] one, is what a
 * boxed call takes: no negative length, items where there is a length, and in a Tensor[] no
 * NULL item. A generated typed wrapper checks each such argument so before its keys are read;
 * where one is not, sg_op_bad_list is its cold path: SG_EINVAL naming the op, the argument and
 * what is wrong, as a boxed call says it (SG_ESTATE where op is sg_op_uninit). */
static inline bool sg_tensor_list_ok(sg_tensor_list l, bool optional_items) {
    if (l.len < 0 || (l.len > 0 && !l.items)) return false;
    for (int32_t i = 0; !optional_items && i < l.len; i++)
        if (!l.items[i]) return false;
    return true;
}
sg_status sg_op_bad_list(const sg_op *op, int32_t arg, sg_tensor_list l, bool optional_items);

/* ---- composite kernels the generator writes (structured ops, autogen variants) --------- */

/* What a structured op's meta function says of one output: shape, dtype, device, and where
 * the output does not come contiguous, its strides (aten's TensorIterator gives a pointwise
 * op's output its inputs' layout). The caller sets strided false before it calls a meta
 * function, so one that knows nothing of layouts leaves the output contiguous. */
typedef struct sg_meta {
    int32_t   ndim;
    sg_dtype  dtype;
    sg_device device;
    bool      strided; /* false: contiguous, strides unused */
    int64_t   sizes[SG_MAX_DIMS];
    int64_t   strides[SG_MAX_DIMS];
} sg_meta;

/* A new tensor as m describes (contiguous, or with m's strides). */
sg_status sg_meta_empty(const sg_meta *m, sg_tensor **out);
/* SG_OK where t can take what m describes (an in-place structured op writes into t): m's
 * shape exactly, and a dtype m's can be cast to (sg_dtype_can_cast); else aten's error. */
sg_status sg_meta_check(const sg_meta *m, const sg_tensor *t, const char *op);
/* A copy of t: same sizes, dtype and device, contiguous. */
sg_status sg_tensor_clone(const sg_tensor *t, sg_tensor **out);
/* Clones of every tensor of l (owned by *out: sg_tensor_list_release). */
sg_status sg_tensor_list_clone(sg_tensor_list l, sg_tensor_list *out);
/* dst[i] = src[i] for each i; the lists must be as long. */
sg_status sg_tensor_list_copy_(sg_tensor_list dst, sg_tensor_list src);
/* The same into out= arguments (sg_tensor_copy_out_ for each). */
sg_status sg_tensor_list_copy_out_(sg_tensor_list dst, sg_tensor_list src);
/* A list of new references to l's tensors (owned by *out). */
sg_status sg_tensor_list_retain(sg_tensor_list l, sg_tensor_list *out);

/* ---- static op tables -------------------------------------------------------------------- */

typedef struct sg_arg_desc {
    const char *name;         /* NULL for an unnamed return */
    const char *type;         /* as written, without annotation: "SymInt[]?", "Tensor?[]" */
    const char *default_text; /* NULL where none */
    const char *alias;        /* the annotation as written ("a!", "a -> *"), or NULL */
    bool        kwarg_only;
    bool        write;        /* annotated '!' */
} sg_arg_desc;

typedef struct sg_op_desc {
    const char        *name;     /* "aten::add" */
    const char        *overload; /* "Tensor" or "" */
    const char        *schema;   /* canonical, namespace included */
    const char        *cname;    /* "aten_add_Tensor" */
    const sg_arg_desc *args;
    const sg_arg_desc *rets;
    int32_t            nargs, nrets;
    const char *const *tags;
    int32_t            ntags;
    sg_op            **op;       /* where the library's init stores the runtime's op */
} sg_op_desc;

/* Binary search of a table sorted by (name, overload); NULL where absent. A name without "::"
 * is looked for in aten. */
const sg_op_desc *sg_op_desc_find(const sg_op_desc *table, size_t n, const char *name,
                                  const char *overload);
/* Defines every op of a table with the runtime (sg_op_define) and stores the handles. */
sg_status         sg_op_desc_define_all(const sg_op_desc *table, size_t n);

#ifdef __cplusplus
}
#endif
#endif
