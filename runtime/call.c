/* call.c: boxed calls, and the kernels that report why a call cannot run. */
#include "rt_dispatch.h"
#include "sg_backend.h"

#include <stdio.h>
#include <string.h>

sg_keyset sg_op_keys_of_args(const sg_op *op, const sg_any *args, int32_t nargs) {
    sg_keyset ks = 0;
    for (int32_t i = 0; i < op->ntensor_args; i++) {
        int32_t a = op->tensor_args[i];
        if (a >= nargs) break;
        const sg_any *v = &args[a];
        if (v->tag == SG_ANY_TENSOR) {
            ks |= v->u.t->keys;
        } else if (v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST) {
            for (int32_t j = 0; j < v->len; j++)
                if (v->u.tensors[j]) ks |= v->u.tensors[j]->keys;
        }
    }
    return ks;
}

static const char *arg_name(const sg_op *op, int32_t i) {
    const char *n = op->schema.args[i].name;
    return n ? n : "?";
}

sg_status sg_op_check_writable(const sg_op *op, int32_t arg, const sg_tensor *t) {
    if (!t || sg_tensor_writable(t)) return SG_OK;
    char d[128];
    sg_tensor_describe(t, d, sizeof d);
    return sg_error(SG_EREADONLY, "%s: argument %d '%s' is written by the op, but the tensor "
                                  "bound to it (%s) is read-only",
                    op->name, (int)arg, arg_name(op, arg), d);
}

/* ---- the boxed call ----------------------------------------------------------------------
 * Rationale: one pass over the arguments checks each tag and gathers the tensors' keys; the
 * messages are built out of line, so the pass keeps its registers and needs no frame to speak
 * of. A boxed call costs a few ns, the budget tvm-ffi's boxed calls set. */

static __attribute__((noinline, cold)) sg_status count_error(const sg_op *op, int32_t nargs,
                                                             int32_t nrets) {
    if (nargs != op->nargs)
        return sg_error(SG_EINVAL, "%s: expected %d argument%s, got %d (schema: %s)", op->name,
                        (int)op->nargs, op->nargs == 1 ? "" : "s", (int)nargs, op->text);
    return sg_error(SG_EINVAL, "%s: %d result slot%s given for %d result%s", op->name,
                    (int)nrets, nrets == 1 ? "" : "s", (int)op->nrets, op->nrets == 1 ? "" : "s");
}

static __attribute__((noinline, cold)) sg_status arg_error(const sg_op *op, const sg_any *args,
                                                           int32_t i) {
    uint32_t tag = (uint32_t)args[i].tag;
    if (tag == SG_ANY_TENSOR || tag == SG_ANY_TENSOR_LIST)
        return sg_error(SG_EINVAL, "%s: argument %d '%s' holds a NULL tensor (pass None for a "
                                   "missing optional tensor)",
                        op->name, (int)i, arg_name(op, i));
    sg_buf b;
    sg_buf_init(&b);
    sg_type_print(&b, op->schema.args[i].type, false);
    sg_status st = sg_error(SG_EINVAL, "%s: argument %d '%s' expects %s, got %s", op->name,
                            (int)i, arg_name(op, i), b.data ? b.data : "?",
                            sg_any_tag_name((int32_t)tag));
    sg_buf_free(&b);
    return st;
}

/* Adds the keys of a tensor list's tensors; false where a TENSOR_LIST holds a NULL. */
static bool list_keys(const sg_any *v, sg_keyset *ks) {
    for (int32_t j = 0; j < v->len; j++) {
        const sg_tensor *t = v->u.tensors[j];
        if (t)
            *ks |= t->keys;
        else if (v->tag == SG_ANY_TENSOR_LIST)
            return false;
    }
    return true;
}

static __attribute__((noinline)) sg_status check_written(const sg_op *op, const sg_any *args) {
    for (int32_t w = 0; w < op->nwritten; w++) {
        const sg_any *v = &args[op->written_args[w]];
        sg_status     st = SG_OK;
        if (v->tag == SG_ANY_TENSOR) {
            st = sg_op_check_writable(op, op->written_args[w], v->u.t);
        } else if (v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST) {
            for (int32_t j = 0; j < v->len && !st; j++)
                st = sg_op_check_writable(op, op->written_args[w], v->u.tensors[j]);
        }
        if (st) return st;
    }
    return SG_OK;
}

sg_status sg_op_call_boxed(const sg_op *op, const sg_any *args, int32_t nargs, sg_any *rets,
                           int32_t nrets) {
    if (SG_UNLIKELY(nargs != op->nargs || nrets < op->nrets)) return count_error(op, nargs, nrets);
    sg_keyset       ks = 0;
    const uint32_t *accepts = op->accepts;
    for (int32_t i = 0; i < nargs; i++) {
        uint32_t tag = (uint32_t)args[i].tag;
        if (SG_UNLIKELY(tag >= SG_ANY__COUNT || !(accepts[i] >> tag & 1)))
            return arg_error(op, args, i);
        if (tag == SG_ANY_TENSOR) {
            if (SG_UNLIKELY(!args[i].u.t)) return arg_error(op, args, i);
            ks |= args[i].u.t->keys;
        } else if (tag == SG_ANY_TENSOR_LIST || tag == SG_ANY_OPT_TENSOR_LIST) {
            if (SG_UNLIKELY(!list_keys(&args[i], &ks))) return arg_error(op, args, i);
        }
    }
    if (SG_UNLIKELY(op->nwritten)) {
        sg_status st = check_written(op, args);
        if (st) return st;
    }
    /* tensors of several backends: aten's same-device rule (CPU scalars may mix) */
    if (SG_UNLIKELY((ks & SG_KEYSET_BACKENDS) & ((ks & SG_KEYSET_BACKENDS) - 1))) {
        sg_status st = sg_check_same_device(op, args, nargs);
        if (st) return st;
    }
    for (int32_t i = 0; i < nrets; i++) rets[i] = sg_any_none();
    ks = sg_tls_apply(ks);
    const sg_entry *e = sg_dispatch_entry(op, ks);
    return e->boxed(e->ctx, op, ks, args, nargs, rets, nrets);
}

sg_status sg_op_redispatch_boxed(const sg_op *op, sg_keyset ks, const sg_any *args,
                                 int32_t nargs, sg_any *rets, int32_t nrets) {
    const sg_entry *e = sg_dispatch_entry(op, ks);
    return e->boxed(e->ctx, op, ks, args, nargs, rets, nrets);
}

sg_status sg_call_by_name(const char *name, const char *overload, const sg_any *args,
                          int32_t nargs, sg_any *rets, int32_t nrets) {
    sg_op    *op;
    sg_status st = sg_op_find(name, overload, &op);
    return st ? st : sg_op_call_boxed(op, args, nargs, rets, nrets);
}

/* ---- kernels of last resort -------------------------------------------------------------- */

/* "CPU, Meta, CompositeImplicitAutograd" (kernels registered, fallthroughs left out). */
static void registered_keys(const sg_op *op, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = '\0';
    for (int key = 1; key < SG_KEY__ALIAS_END; key++) {
        const reg *r = op->regs[key];
        if (!r || r->what != REG_KERNEL) continue;
        int w = snprintf(buf + k, n - k, "%s%s", k ? ", " : "", sg_key_name((sg_key)key));
        if (w < 0 || (size_t)w >= n - k) return;
        k += (size_t)w;
    }
}

sg_status sg__missing_kernel(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args,
                             int32_t nargs, sg_any *rets, int32_t nrets) {
    (void)ks, (void)args, (void)nargs, (void)rets, (void)nrets;
    sg_key key = (sg_key)(uintptr_t)ctx;
    char   keys[512];
    pthread_mutex_lock(&sg__lock);
    registered_keys(op, keys, sizeof keys);
    pthread_mutex_unlock(&sg__lock);
    const char *dot = *op->overload ? "." : "";
    if (key == SG_KEY_UNDEFINED)
        return sg_error(SG_ENOKERNEL, "could not run '%s%s%s': its arguments select no backend "
                                      "(no tensor arguments, and no BackendSelect kernel); "
                                      "kernels are registered for: %s",
                        op->name, dot, op->overload, *keys ? keys : "nothing");
    return sg_error(SG_ENOKERNEL, "could not run '%s%s%s' with arguments from the '%s' backend; "
                                  "kernels are registered for: %s",
                    op->name, dot, op->overload, sg_key_name(key), *keys ? keys : "nothing");
}

sg_status sg__no_boxed_kernel(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args,
                              int32_t nargs, sg_any *rets, int32_t nrets) {
    (void)ks, (void)args, (void)nargs, (void)rets, (void)nrets;
    const reg *r = ctx;
    return sg_error(SG_EUNSUPPORTED, "cannot call '%s%s%s' boxed: its %s kernel was registered "
                                     "unboxed only, without a boxed adapter",
                    op->name, *op->overload ? "." : "", op->overload, sg_key_name((sg_key)r->key));
}

/* BackendSelect for an op with no tensor arguments and a Device argument: the device picks the
 * backend (None: CPU), as PyTorch's generated BackendSelect kernels do for factory functions. */
sg_status sg__backend_select(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args,
                             int32_t nargs, sg_any *rets, int32_t nrets) {
    (void)ctx;
    sg_device dev = SG_CPU;
    if (op->device_arg < nargs && args[op->device_arg].tag == SG_ANY_DEVICE)
        dev = args[op->device_arg].u.dev;
    ks = sg_keyset_below(ks, SG_KEY_BACKEND_SELECT) | sg_keyset_of_device(dev);
    return sg_op_redispatch_boxed(op, ks, args, nargs, rets, nrets);
}
