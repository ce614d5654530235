/* boxcall.c: a typed call that lands on a boxed entry (a boxed kernel, a fallback, overrides,
 * or the error to report). Rationale: this path is cold, and writing it once, driven by a
 * signature string, instead of once per op, took a third off the generated code and its
 * compile time. The string has one letter per argument, '>', one letter per result
 * (docs/types.md lists the letters). */
#include "sg_api.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { ROOM = 16 };

/* Boxes one argument of family letter c from ap into *v; lists of scalars or strings get
 * malloc'ed item arrays, recorded in *owned for the caller to free. */
static sg_status box_one(char c, va_list *ap, sg_any *v, void **owned) {
    *owned = NULL;
    switch (c) {
    case 't': *v = sg_any_tensor(va_arg(*ap, sg_tensor *)); break;
    case 'T': *v = sg_box_opt_tensor(va_arg(*ap, sg_tensor *)); break;
    case 'l': *v = sg_box_tensor_list(va_arg(*ap, sg_tensor_list), false); break;
    case 'L': *v = sg_box_tensor_list(va_arg(*ap, sg_tensor_list), true); break;
    case 'i': *v = sg_any_int(va_arg(*ap, int64_t)); break;
    case 'f': *v = sg_any_float(va_arg(*ap, double)); break;
    case 'b': *v = sg_any_bool(va_arg(*ap, int) != 0); break;
    case 'd': *v = sg_box_tag_i(SG_ANY_DTYPE, va_arg(*ap, int)); break;
    case 'y': *v = sg_box_tag_i(SG_ANY_LAYOUT, va_arg(*ap, int)); break;
    case 'm': *v = sg_box_tag_i(SG_ANY_MEMORY_FORMAT, va_arg(*ap, int)); break;
    case 'v': *v = sg_any_device(va_arg(*ap, sg_device)); break;
    case 's': *v = sg_box_str(va_arg(*ap, const char *)); break;
    case 'g': *v = sg_box_opaque(SG_ANY_GENERATOR, va_arg(*ap, void *)); break;
    case 'o': *v = sg_box_opaque(SG_ANY_OPAQUE, va_arg(*ap, void *)); break;
    case 'a': {
        const sg_any *p = va_arg(*ap, const sg_any *);
        *v = p ? *p : sg_any_none();
        break;
    }
    case 'c': case 'S': case 'z': case 'w': case 'n': case 'r': case 'k':
        /* values whose boxed form points at them: the caller keeps them in `keep` */
        return SG_EINVAL;
    case 'I': { const int64_t *p = va_arg(*ap, const int64_t *); *v = p ? sg_any_int(*p) : sg_any_none(); break; }
    case 'F': { const double *p = va_arg(*ap, const double *); *v = p ? sg_any_float(*p) : sg_any_none(); break; }
    case 'B': { const bool *p = va_arg(*ap, const bool *); *v = p ? sg_any_bool(*p) : sg_any_none(); break; }
    case 'D': { const sg_dtype *p = va_arg(*ap, const sg_dtype *); *v = p ? sg_box_tag_i(SG_ANY_DTYPE, *p) : sg_any_none(); break; }
    case 'Y': { const sg_layout *p = va_arg(*ap, const sg_layout *); *v = p ? sg_box_tag_i(SG_ANY_LAYOUT, *p) : sg_any_none(); break; }
    case 'M': { const sg_memory_format *p = va_arg(*ap, const sg_memory_format *); *v = p ? sg_box_tag_i(SG_ANY_MEMORY_FORMAT, *p) : sg_any_none(); break; }
    case 'V': { const sg_device *p = va_arg(*ap, const sg_device *); *v = p ? sg_any_device(*p) : sg_any_none(); break; }
    case 'C': *v = sg_box_complex(va_arg(*ap, const sg_complex *)); break;
    case 'Q': *v = sg_box_scalar(va_arg(*ap, const sg_scalar *)); break;
    case 'N': { const sg_int_list *p = va_arg(*ap, const sg_int_list *); *v = p ? sg_any_int_list(p->items, p->len) : sg_any_none(); break; }
    case 'R': { const sg_float_list *p = va_arg(*ap, const sg_float_list *); *v = p ? sg_box_float_list(*p) : sg_any_none(); break; }
    case 'K': { const sg_bool_list *p = va_arg(*ap, const sg_bool_list *); *v = p ? sg_box_bool_list(*p) : sg_any_none(); break; }
    case 'Z': case 'W': {
        const void *p = va_arg(*ap, const void *);
        if (!p) { *v = sg_any_none(); break; }
        int32_t n = c == 'Z' ? ((const sg_scalar_list *)p)->len : ((const sg_str_list *)p)->len;
        sg_any *room = malloc(((size_t)n + 1) * sizeof *room);
        if (!room) return sg_error(SG_ENOMEM, "out of memory");
        *owned = room;
        *v = c == 'Z' ? sg_box_scalar_list(*(const sg_scalar_list *)p, room)
                      : sg_box_str_list(*(const sg_str_list *)p, room);
        break;
    }
    default: return sg_error(SG_EINVAL, "a generated call used the unknown signature letter '%c'", c);
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

static sg_status box_kept(char c, va_list *ap, keep *k, sg_any *v, void **owned) {
    *owned = NULL;
    switch (c) {
    case 'c': k->c = va_arg(*ap, sg_complex); *v = sg_box_complex(&k->c); return SG_OK;
    case 'S': k->s = va_arg(*ap, sg_scalar); *v = sg_box_scalar(&k->s); return SG_OK;
    case 'n': k->n = va_arg(*ap, sg_int_list); *v = sg_any_int_list(k->n.items, k->n.len); return SG_OK;
    case 'r': k->r = va_arg(*ap, sg_float_list); *v = sg_box_float_list(k->r); return SG_OK;
    case 'k': k->k = va_arg(*ap, sg_bool_list); *v = sg_box_bool_list(k->k); return SG_OK;
    default: break;
    }
    sg_any *room;
    int32_t n;
    if (c == 'z') {
        k->z = va_arg(*ap, sg_scalar_list);
        n = k->z.len;
    } else {
        k->w = va_arg(*ap, sg_str_list);
        n = k->w.len;
    }
    room = malloc(((size_t)n + 1) * sizeof *room);
    if (!room) return sg_error(SG_ENOMEM, "out of memory");
    *owned = room;
    *v = c == 'z' ? sg_box_scalar_list(k->z, room) : sg_box_str_list(k->w, room);
    return SG_OK;
}

static sg_status unbox_result(char c, sg_any *v, void *out) {
    switch (c) {
    case 't': return sg_result_tensor(v, out);
    case 'T': return sg_result_opt_tensor(v, out);
    case 'l': return sg_unbox_tensor_list_result(v, out);
    case 'i': return sg_result_int(v, out);
    case 'f': return sg_result_float(v, out);
    case 'b': return sg_result_bool(v, out);
    case 'S': return sg_result_scalar(v, out);
    case 'd': return sg_result_dtype(v, out);
    default: return sg_result_any(v, out);
    }
}

/* Undoes unbox_result for an output already filled: its tensors are released, it is reset. */
static void take_back(char c, void *out) {
    if (c == 't' || c == 'T') {
        sg_tensor **t = out;
        sg_tensor_release(*t);
        *t = NULL;
    } else if (c == 'l') {
        sg_tensor_list_release(out);
    } else if (c == 'a') {
        sg_any_release(out);
    }
}

sg_status sg_call_boxed_sig(const sg_entry *e, const sg_op *op, sg_keyset ks, const char *sig,
                            ...) {
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
        st = strchr("cSnrkzw", c) ? box_kept(c, &ap, &keeps[boxed], &args[boxed], &owned[boxed])
                                  : box_one(c, &ap, &args[boxed], &owned[boxed]);
    }
    if (!st) {
        for (int32_t i = 0; i < nrets; i++) rets[i] = sg_any_none();
        st = e->boxed(e->ctx, op, ks, args, nargs, rets, nrets);
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
