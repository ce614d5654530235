/* boxcall.c: a typed call that lands on a boxed entry (a boxed kernel, a fallback, overrides,
 * or the error to report). Rationale: this path is cold, and writing it once, driven by a
 * signature string, instead of once per op, keeps the generated code and its compile time
 * smaller. The string has one letter per argument, '>', one letter per result: the
 * letters of the type families (gen/schema/sg_type_table.h, docs/types.md). */
#include "rt_dispatch.h"
#include "sg_api.h"
#include "sg_type_table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { ROOM = 16 };

/* Whether a family's boxed form points into its by-value parameter: the caller keeps those
 * in `keep` for the call (box_kept). */
static bool kept(int f) {
    switch (f) {
    case SG_FAM_COMPLEX: case SG_FAM_SCALAR: case SG_FAM_INT_LIST: case SG_FAM_FLOAT_LIST:
    case SG_FAM_BOOL_LIST: case SG_FAM_SCALAR_LIST: case SG_FAM_STR_LIST: return true;
    default: return false;
    }
}

/* Boxes one argument of family f from ap into *v; lists of scalars or strings get malloc'ed
 * item arrays, recorded in *owned for the caller to free. */
static sg_status box_one(int f, va_list *ap, sg_any *v, void **owned) {
    *owned = NULL;
    switch (f) {
    case SG_FAM_TENSOR: *v = sg_any_tensor(va_arg(*ap, sg_tensor *)); break;
    case SG_FAM_OPT_TENSOR: *v = sg_box_opt_tensor(va_arg(*ap, sg_tensor *)); break;
    case SG_FAM_TENSOR_LIST: *v = sg_box_tensor_list(va_arg(*ap, sg_tensor_list), false); break;
    case SG_FAM_OPT_TENSOR_LIST: *v = sg_box_tensor_list(va_arg(*ap, sg_tensor_list), true); break;
    case SG_FAM_INT: *v = sg_any_int(va_arg(*ap, int64_t)); break;
    case SG_FAM_FLOAT: *v = sg_any_float(va_arg(*ap, double)); break;
    case SG_FAM_BOOL: *v = sg_any_bool(va_arg(*ap, int) != 0); break;
    case SG_FAM_DTYPE: *v = sg_box_tag_i(SG_ANY_DTYPE, va_arg(*ap, int)); break;
    case SG_FAM_LAYOUT: *v = sg_box_tag_i(SG_ANY_LAYOUT, va_arg(*ap, int)); break;
    case SG_FAM_MEMORY_FORMAT: *v = sg_box_tag_i(SG_ANY_MEMORY_FORMAT, va_arg(*ap, int)); break;
    case SG_FAM_DEVICE: *v = sg_any_device(va_arg(*ap, sg_device)); break;
    case SG_FAM_STR: case SG_FAM_OPT_STR: *v = sg_box_str(va_arg(*ap, const char *)); break;
    case SG_FAM_GENERATOR: *v = sg_box_opaque(SG_ANY_GENERATOR, va_arg(*ap, void *)); break;
    case SG_FAM_OPAQUE: *v = sg_box_opaque(SG_ANY_OPAQUE, va_arg(*ap, void *)); break;
    case SG_FAM_OPT_TENSOR_LIST_OPT: case SG_FAM_ANY: {
        const sg_any *p = va_arg(*ap, const sg_any *);
        *v = p ? *p : sg_any_none();
        break;
    }
    case SG_FAM_OPT_INT: { const int64_t *p = va_arg(*ap, const int64_t *); *v = p ? sg_any_int(*p) : sg_any_none(); break; }
    case SG_FAM_OPT_FLOAT: { const double *p = va_arg(*ap, const double *); *v = p ? sg_any_float(*p) : sg_any_none(); break; }
    case SG_FAM_OPT_BOOL: { const bool *p = va_arg(*ap, const bool *); *v = p ? sg_any_bool(*p) : sg_any_none(); break; }
    case SG_FAM_OPT_DTYPE: { const sg_dtype *p = va_arg(*ap, const sg_dtype *); *v = p ? sg_box_tag_i(SG_ANY_DTYPE, *p) : sg_any_none(); break; }
    case SG_FAM_OPT_LAYOUT: { const sg_layout *p = va_arg(*ap, const sg_layout *); *v = p ? sg_box_tag_i(SG_ANY_LAYOUT, *p) : sg_any_none(); break; }
    case SG_FAM_OPT_MEMORY_FORMAT: { const sg_memory_format *p = va_arg(*ap, const sg_memory_format *); *v = p ? sg_box_tag_i(SG_ANY_MEMORY_FORMAT, *p) : sg_any_none(); break; }
    case SG_FAM_OPT_DEVICE: { const sg_device *p = va_arg(*ap, const sg_device *); *v = p ? sg_any_device(*p) : sg_any_none(); break; }
    case SG_FAM_OPT_COMPLEX: *v = sg_box_complex(va_arg(*ap, const sg_complex *)); break;
    case SG_FAM_OPT_SCALAR: *v = sg_box_scalar(va_arg(*ap, const sg_scalar *)); break;
    case SG_FAM_OPT_INT_LIST: { const sg_int_list *p = va_arg(*ap, const sg_int_list *); *v = p ? sg_any_int_list(p->items, p->len) : sg_any_none(); break; }
    case SG_FAM_OPT_FLOAT_LIST: { const sg_float_list *p = va_arg(*ap, const sg_float_list *); *v = p ? sg_box_float_list(*p) : sg_any_none(); break; }
    case SG_FAM_OPT_BOOL_LIST: { const sg_bool_list *p = va_arg(*ap, const sg_bool_list *); *v = p ? sg_box_bool_list(*p) : sg_any_none(); break; }
    case SG_FAM_OPT_SCALAR_LIST: case SG_FAM_OPT_STR_LIST: {
        const void *p = va_arg(*ap, const void *);
        if (!p) { *v = sg_any_none(); break; }
        bool    sc = f == SG_FAM_OPT_SCALAR_LIST;
        int32_t n = sc ? ((const sg_scalar_list *)p)->len : ((const sg_str_list *)p)->len;
        sg_any *room = malloc(((size_t)n + 1) * sizeof *room);
        if (!room) return sg_error(SG_ENOMEM, "out of memory");
        *owned = room;
        *v = sc ? sg_box_scalar_list(*(const sg_scalar_list *)p, room)
                : sg_box_str_list(*(const sg_str_list *)p, room);
        break;
    }
    default: return SG_EINVAL; /* kept(f): box_kept boxes those */
    }
    return SG_OK;
}

/* The by-value types whose boxed form points into them: kept here for the call. */
typedef union keep {
    sg_complex     c;
    sg_scalar      s;
    sg_int_list    n;
    sg_float_list  r;
    sg_bool_list   k;
    sg_scalar_list z;
    sg_str_list    w;
} keep;

static sg_status box_kept(int f, va_list *ap, keep *k, sg_any *v, void **owned) {
    *owned = NULL;
    switch (f) {
    case SG_FAM_COMPLEX: k->c = va_arg(*ap, sg_complex); *v = sg_box_complex(&k->c); return SG_OK;
    case SG_FAM_SCALAR: k->s = va_arg(*ap, sg_scalar); *v = sg_box_scalar(&k->s); return SG_OK;
    case SG_FAM_INT_LIST: k->n = va_arg(*ap, sg_int_list); *v = sg_any_int_list(k->n.items, k->n.len); return SG_OK;
    case SG_FAM_FLOAT_LIST: k->r = va_arg(*ap, sg_float_list); *v = sg_box_float_list(k->r); return SG_OK;
    case SG_FAM_BOOL_LIST: k->k = va_arg(*ap, sg_bool_list); *v = sg_box_bool_list(k->k); return SG_OK;
    default: break;
    }
    sg_any *room;
    int32_t n;
    if (f == SG_FAM_SCALAR_LIST) {
        k->z = va_arg(*ap, sg_scalar_list);
        n = k->z.len;
    } else {
        k->w = va_arg(*ap, sg_str_list);
        n = k->w.len;
    }
    room = malloc(((size_t)n + 1) * sizeof *room);
    if (!room) return sg_error(SG_ENOMEM, "out of memory");
    *owned = room;
    *v = f == SG_FAM_SCALAR_LIST ? sg_box_scalar_list(k->z, room) : sg_box_str_list(k->w, room);
    return SG_OK;
}

/* The family of result letter c; unknown letters unbox as `any`. */
static int ret_family(char c) {
    int f = sg_type_family_of_letter(c, true);
    return f < 0 ? SG_FAM_ANY : f;
}

static sg_status unbox_result(char c, sg_any *v, void *out) {
    switch (ret_family(c)) {
    case SG_FAM_TENSOR: return sg_result_tensor(v, out);
    case SG_FAM_OPT_TENSOR: return sg_result_opt_tensor(v, out);
    case SG_FAM_TENSOR_LIST: return sg_unbox_tensor_list_result(v, out);
    case SG_FAM_INT: return sg_result_int(v, out);
    case SG_FAM_FLOAT: return sg_result_float(v, out);
    case SG_FAM_BOOL: return sg_result_bool(v, out);
    case SG_FAM_SCALAR: return sg_result_scalar(v, out);
    case SG_FAM_DTYPE: return sg_result_dtype(v, out);
    default: return sg_result_any(v, out);
    }
}

/* Undoes unbox_result for an output already filled: its tensors are released, it is reset. */
static void take_back(char c, void *out) {
    switch (ret_family(c)) {
    case SG_FAM_TENSOR:
    case SG_FAM_OPT_TENSOR: {
        sg_tensor **t = out;
        sg_tensor_release(*t);
        *t = NULL;
        break;
    }
    case SG_FAM_TENSOR_LIST: sg_tensor_list_release(out); break;
    case SG_FAM_INT: case SG_FAM_FLOAT: case SG_FAM_BOOL: case SG_FAM_SCALAR: case SG_FAM_DTYPE:
        break;
    default: sg_any_release(out); break;
    }
}

/* A boxed value may not hold a NULL tensor (None is how a missing optional one travels), nor a
 * tensor list without items where it has a length: a boxed kernel trusts both. */
static sg_status check_tensors(const sg_op *op, const sg_any *args, int32_t nargs) {
    for (int32_t i = 0; i < nargs; i++) {
        const sg_any *v = &args[i];
        bool          bad = v->tag == SG_ANY_TENSOR && !v->u.t;
        if (v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST) {
            bad = v->len < 0 || (v->len > 0 && !v->u.tensors);
            for (int32_t j = 0; !bad && v->tag == SG_ANY_TENSOR_LIST && j < v->len; j++)
                bad = !v->u.tensors[j];
        }
        if (SG_UNLIKELY(bad)) {
            const char *name = i < op->nargs && op->schema.args[i].name ? op->schema.args[i].name
                                                                        : "?";
            return sg_error(SG_EINVAL, "%s%s%s: argument %d '%s' is a NULL tensor, or a tensor "
                                       "list with a NULL where a tensor must be",
                            op->name, *op->overload ? "." : "", op->overload, (int)i, name);
        }
    }
    return SG_OK;
}

sg_status sg_call_boxed_sig(const sg_entry *e, const sg_op *op, sg_keyset ks, const char *sig,
                            ...) {
    if (SG_UNLIKELY(!e || !op || !sig))
        return sg_error(SG_EINVAL, "sg_call_boxed_sig: no %s given (NULL)",
                        !e ? "entry" : !op ? "op" : "signature");
    const char *arrow = strchr(sig, '>');
    int32_t     nargs = (int32_t)(arrow ? arrow - sig : (ptrdiff_t)strlen(sig));
    int32_t     nrets = arrow ? (int32_t)strlen(arrow + 1) : 0;
    sg_any      args_small[ROOM], rets_small[ROOM];
    keep        keep_small[ROOM];
    void       *owned_small[ROOM];
    bool        big = nargs > ROOM || nrets > ROOM;
    sg_any     *args = big ? calloc((size_t)nargs + 1, sizeof *args) : args_small;
    sg_any     *rets = big ? calloc((size_t)nrets + 1, sizeof *rets) : rets_small;
    keep       *keeps = big ? calloc((size_t)nargs + 1, sizeof *keeps) : keep_small;
    void      **owned = big ? calloc((size_t)nargs + 1, sizeof *owned) : owned_small;
    sg_status   st = SG_OK;
    if (!args || !rets || !keeps || !owned) {
        st = sg_error(SG_ENOMEM, "out of memory");
        goto done;
    }
    va_list ap;
    va_start(ap, sig);
    int32_t boxed = 0;
    for (; boxed < nargs && !st; boxed++) {
        char c = sig[boxed];
        int  f = sg_type_family_of_letter(c, false);
        owned[boxed] = NULL;
        if (f < 0)
            st = sg_error(SG_EINVAL, "a generated call used the unknown signature letter '%c'", c);
        else
            st = kept(f) ? box_kept(f, &ap, &keeps[boxed], &args[boxed], &owned[boxed])
                         : box_one(f, &ap, &args[boxed], &owned[boxed]);
    }
    if (!st) st = check_tensors(op, args, nargs);
    if (!st) {
        for (int32_t i = 0; i < nrets; i++) rets[i] = sg_any_none();
        st = e->boxed(op, ks, args, rets, nrets, e->ctx);
        void *outs[ROOM];
        for (int32_t i = 0; i < nrets; i++) {
            void *out = va_arg(ap, void *);
            if (i < ROOM) outs[i] = out;
            if (!st) st = unbox_result(arrow[1 + i], &rets[i], out);
            else sg_any_release(&rets[i]);
            if (st) {
                /* a result of the wrong kind, or the call failed: what was handed out goes
                 * back, and what is left is released */
                for (int32_t j = 0; j < i && j < ROOM; j++) take_back(arrow[1 + j], outs[j]);
                for (int32_t k = i + 1; k < nrets; k++) sg_any_release(&rets[k]);
                break;
            }
        }
    }
    va_end(ap);
    for (int32_t i = 0; i < boxed; i++) free(owned[i]);
done:
    if (big) {
        free(args);
        free(rets);
        free(keeps);
        free(owned);
    }
    return st;
}
