/* call.c: boxed calls, and the kernels that report why a call cannot run. */
#include "rt_dispatch.h"
#include "sg_backend.h"
#include "sg_dtypes.h"

#include <stdio.h>
#include <string.h>

sg_keyset sg_op_keys_of_args(const sg_op *op, const sg_any *args, int32_t nargs) {
    sg_keyset ks = 0;
    if (!op || !args) return 0;
    for (int32_t i = 0; i < op->ntensor_args; i++) {
        int32_t a = op->tensor_args[i];
        if (a >= nargs) break;
        const sg_any *v = &args[a];
        if (v->tag == SG_ANY_TENSOR && v->u.t) {
            ks |= v->u.t->keys;
        } else if ((v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST) &&
                   v->u.tensors) {
            for (int32_t j = 0; j < v->len; j++)
                if (v->u.tensors[j]) ks |= v->u.tensors[j]->keys;
        }
    }
    return ks;
}

static const char *arg_name(const sg_op *op, int32_t i) {
    if (i < 0 || i >= op->nargs) return "?";
    const char *n = op->schema.args[i].name;
    return n ? n : "?";
}

sg_status sg_op_check_writable(const sg_op *op, int32_t arg, const sg_tensor *t) {
    if (SG_UNLIKELY(!op)) return sg_error(SG_EINVAL, "sg_op_check_writable: no op given (NULL)");
    if (!t || sg_tensor_writable(t)) return SG_OK;
    char d[128];
    sg_tensor_describe(t, d, sizeof d);
    return sg_error(SG_EREADONLY, "%s: argument %d '%s' is written by the op, but the tensor "
                                  "bound to it (%s) is read-only",
                    op->name, (int)arg, arg_name(op, arg), d);
}

/* ---- the boxed call ----------------------------------------------------------------------
 * One pass over the arguments checks each tag and gathers the tensors' keys. */

enum { ITEM_DEPTH = 4 }; /* lists in lists (type Any) deeper than this are refused */

/* What is wrong with v (a tag of SG_ANY_CHECKED_TAGS, or a LIST's item of any tag), or NULL
 * where it is well-formed: a pointer where there are items (a string's always), no negative length,
 * an enum in range, a bool 0 or 1, a TENSOR_LIST without NULLs, a list's items of the tags
 * `items` allows. Tensor lists add their tensors' keys to *ks. */
static const char *bad_value(const sg_any *v, uint32_t items, sg_keyset *ks, int depth) {
    unsigned char c;
    switch (v->tag) {
    case SG_ANY_TENSOR: return v->u.t ? NULL : "a NULL tensor (pass None for a missing optional "
                                               "tensor)";
    case SG_ANY_BOOL:
        memcpy(&c, &v->u, 1);
        return c <= 1 ? NULL : "a bool that is neither 0 nor 1";
    case SG_ANY_COMPLEX: return v->u.c ? NULL : "a NULL complex pointer";
    case SG_ANY_STR:
        return v->u.s && v->len >= 0 ? NULL
                                     : "a NULL string or a negative length (2 GiB or more boxed)";
    case SG_ANY_DTYPE:
        return v->u.i >= 0 && v->u.i < SG_DTYPE__END && sg_dtype_valid((int)v->u.i)
                   ? NULL : "a number that is no ScalarType";
    case SG_ANY_LAYOUT:
        return v->u.i >= SG_STRIDED && v->u.i <= SG_JAGGED ? NULL : "a number that is no Layout";
    case SG_ANY_MEMORY_FORMAT:
        return v->u.i >= SG_CONTIGUOUS_FORMAT && v->u.i <= SG_CHANNELS_LAST_3D
                   ? NULL : "a number that is no MemoryFormat";
    case SG_ANY_DEVICE:
        return v->u.dev.type >= 0 && v->u.dev.type < SG_DEV__COUNT && v->u.dev.index >= -1
                   ? NULL : "a device type or index that does not exist";
    default: break;
    }
    /* (the tag is range-checked already) */
    if (!(SG_ANY_TAG_BIT(v->tag) & SG_ANY_CHECKED_TAGS)) return NULL;
    if (v->len < 0) return "a list of negative length";
    if (v->len > 0 && !v->u.p) return "a NULL item pointer with a nonzero length";
    switch (v->tag) {
    case SG_ANY_BOOL_LIST:
        for (int32_t j = 0; j < v->len; j++) {
            memcpy(&c, &v->u.bools[j], 1);
            if (c > 1) return "a bool item that is neither 0 nor 1";
        }
        return NULL;
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST:
        for (int32_t j = 0; j < v->len; j++) {
            const sg_tensor *t = v->u.tensors[j];
            if (t)
                *ks |= t->keys;
            else if (v->tag == SG_ANY_TENSOR_LIST)
                return "a NULL tensor in a Tensor[] (a Tensor?[] takes None items)";
        }
        return NULL;
    case SG_ANY_LIST:
        if (depth >= ITEM_DEPTH) return "lists nested too deep";
        for (int32_t j = 0; j < v->len; j++) {
            const sg_any *it = &v->u.items[j];
            if ((uint32_t)it->tag >= SG_ANY__COUNT || !(items >> it->tag & 1))
                return "an item of a type the list does not take";
            sg_keyset  unused = 0;
            const char *why = bad_value(it, SG_ANY_TAG_BIT(SG_ANY__COUNT) - 1, &unused, depth + 1);
            if (why) return why;
        }
        return NULL;
    default: return NULL;
    }
}

bool sg__arg_value_ok(const sg_op *op, int32_t i, const sg_any *v) {
    sg_keyset unused = 0;
    return (uint32_t)v->tag < SG_ANY__COUNT && (op->argc[i].accepts >> v->tag & 1) &&
           !bad_value(v, op->argc[i].item_accepts, &unused, 0);
}

/* A refused call's result slots: None, as a failed kernel leaves them (sg_op_call_boxed
 * zeroes them on entry). rets may be NULL or nrets not positive: nothing to clear then. */
static sg_status refused(sg_status st, sg_any *rets, int32_t nrets) {
    if (rets)
        for (int32_t i = 0; i < nrets; i++) rets[i] = sg_any_none();
    return st;
}

/* The errors of sg_op_call_boxed's first tests take its parameters as it received them, so
 * reaching them moves nothing on its fast path. A call that leaves trailing arguments out comes
 * here too, and goes on with the defaults filled in. */
static __attribute__((noinline, cold)) sg_status count_error(const sg_op *op, const sg_any *args,
                                                             int32_t nargs, sg_any *rets,
                                                             int32_t nrets) {
    if (!op) return refused(sg_error(SG_EINVAL, "sg_op_call_boxed: no op given (NULL)"), rets,
                            nrets);
    if (op == &sg_op_uninit) return refused(sg__uninit_error("sg_op_call_boxed"), rets, nrets);
    if (nargs >= 0 && nargs < op->nargs) {
        /* (a failed call's slots are None already; the filling's own refusals clear them) */
        sg_status st = sg__call_filling(op, args, nargs, rets, nrets);
        return st ? refused(st, rets, nrets) : SG_OK;
    }
    if (nargs != op->nargs)
        return refused(sg_error(SG_EINVAL, "%s: expected %d argument%s, got %d (schema: %s)",
                                op->name, (int)op->nargs, op->nargs == 1 ? "" : "s", (int)nargs,
                                op->text),
                       rets, nrets);
    return refused(sg_error(SG_EINVAL, "%s: %d result slot%s given for %d result%s", op->name,
                            (int)nrets, nrets == 1 ? "" : "s", (int)op->nrets,
                            op->nrets == 1 ? "" : "s"),
                   rets, nrets);
}

/* what: "args" or "rets" */
static __attribute__((noinline, cold)) sg_status null_error(const sg_op *op, const char *what,
                                                            int32_t n) {
    return sg_error(SG_EINVAL, "%s: %d %s, but %s is NULL", op->name, (int)n,
                    *what == 'a' ? (n == 1 ? "argument" : "arguments")
                                 : (n == 1 ? "result slot" : "result slots"),
                    what);
}

static __attribute__((noinline, cold)) sg_status arg_error(const sg_op *op, const sg_any *args,
                                                           int32_t i) {
    uint32_t  tag = (uint32_t)args[i].tag;
    sg_keyset ks = 0;
    if (tag < SG_ANY__COUNT && (op->argc[i].accepts >> tag & 1)) {
        const char *why = bad_value(&args[i], op->argc[i].item_accepts, &ks, 0);
        return sg_error(SG_EINVAL, "%s: argument %d '%s' holds %s", op->name, (int)i,
                        arg_name(op, i), why ? why : "a malformed value");
    }
    sg_buf b;
    sg_buf_init(&b);
    sg_type_print(&b, op->schema.args[i].type, false);
    char tagname[32];
    if (tag < SG_ANY__COUNT)
        snprintf(tagname, sizeof tagname, "%s", sg_any_tag_name((int32_t)tag));
    else
        snprintf(tagname, sizeof tagname, "tag %u, which is no tag", tag);
    sg_status st = sg_error(SG_EINVAL, "%s: argument %d '%s' expects %s, got %s", op->name,
                            (int)i, arg_name(op, i), b.data ? b.data : "?", tagname);
    sg_buf_free(&b);
    return st;
}

static __attribute__((noinline, cold)) sg_status args_null(const sg_op *op, const sg_any *args,
                                                           int32_t nargs, sg_any *rets,
                                                           int32_t nrets) {
    (void)args;
    return refused(null_error(op, "args", nargs), rets, nrets);
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

/* Adds the keys of a tensor list's tensors; false where a TENSOR_LIST holds a NULL or the list
 * no items where it has a length (bad_value says which). */
static inline bool list_keys(const sg_any *v, sg_keyset *ks) {
    if (SG_UNLIKELY(v->len < 0 || (v->len > 0 && !v->u.tensors))) return false;
    for (int32_t j = 0; j < v->len; j++) {
        const sg_tensor *t = v->u.tensors[j];
        if (t)
            *ks |= t->keys;
        else if (v->tag == SG_ANY_TENSOR_LIST)
            return false;
    }
    return true;
}

/* Checks the arguments of SG_ANY_CHECKED_TAGS other than tensor lists (lists, strings, enums,
 * bools): run where op->checks says an argument may hold one. */
static __attribute__((noinline)) sg_status check_values(const sg_op *op, const sg_any *args) {
    for (int32_t i = 0; i < op->nargs; i++) {
        sg_keyset unused = 0;
        if ((SG_ANY_CHECKED_TAGS >> args[i].tag & 1) &&
            bad_value(&args[i], op->argc[i].item_accepts, &unused, 0))
            return arg_error(op, args, i);
    }
    return SG_OK;
}

/* The end of a boxed call whose arguments passed: the result slots zeroed, the kernel run.
 * Rationale: the kernel's six parameters all travel in registers (sg_boxed), so this ends in a
 * tail jump. */
static inline sg_status finish(const sg_op *op, const sg_any *args, sg_keyset ks, sg_any *rets,
                               int32_t nrets) {
    /* the NULL check of rets sits where the loop over them starts, so a call without results
     * pays nothing for it */
    if (nrets > 0) {
        if (SG_UNLIKELY(!rets)) return null_error(op, "rets", nrets);
        rets[0] = sg_any_none();
        for (int32_t i = 1; i < nrets; i++) rets[i] = sg_any_none();
    }
    ks = sg_tls_apply(ks);
    const sg_entry *e = sg_dispatch_entry(op, ks);
    return e->boxed(op, ks, args, rets, nrets, e->ctx);
}

/* Several backends among ks: aten's same-device rule (CPU scalars may mix) applies. */
static inline bool several_backends(sg_keyset ks) {
    sg_keyset b = ks & SG_KEYSET_BACKENDS;
    return (b & (b - 1)) != 0;
}

/* A boxed call that needs the checks few calls need: values beyond their tags (op->checks),
 * tensors on several devices. */
static __attribute__((noinline)) sg_status call_checked(const sg_op *op, const sg_any *args,
                                                        sg_keyset ks, sg_any *rets,
                                                        int32_t nrets) {
    sg_status st = op->checks & SG_OP_CHECK_VALUES ? check_values(op, args) : SG_OK;
    if (!st && (op->checks & SG_OP_CHECK_WRITTEN)) st = check_written(op, args);
    if (!st && several_backends(ks)) st = sg_check_same_device(op, args, op->nargs);
    return st ? refused(st, rets, nrets) : finish(op, args, ks, rets, nrets);
}

/* A boxed call with an argument the fast loop does not take (a tensor list, a NULL tensor, a
 * tag that is wrong): the whole check from the first argument. */
static __attribute__((noinline)) sg_status call_general(const sg_op *op, const sg_any *args,
                                                        sg_any *rets, int32_t nrets) {
    sg_keyset ks = 0;
    for (int32_t i = 0; i < op->nargs; i++) {
        const sg_any *v = &args[i];
        uint32_t      tag = (uint32_t)v->tag;
        if (SG_UNLIKELY(tag >= SG_ANY__COUNT || !(op->argc[i].accepts >> tag & 1)))
            return refused(arg_error(op, args, i), rets, nrets);
        if (tag == SG_ANY_TENSOR) {
            if (SG_UNLIKELY(!v->u.t)) return refused(arg_error(op, args, i), rets, nrets);
            ks |= v->u.t->keys;
        } else if (tag == SG_ANY_TENSOR_LIST || tag == SG_ANY_OPT_TENSOR_LIST) {
            if (SG_UNLIKELY(!list_keys(v, &ks)))
                return refused(arg_error(op, args, i), rets, nrets);
        }
    }
    if (op->checks || several_backends(ks)) return call_checked(op, args, ks, rets, nrets);
    return finish(op, args, ks, rets, nrets);
}

/* Rationale: the fast path is what a call of tensors and scalars needs: per argument a test
 * that it is an accepted tensor, else that its tag is accepted and no tensor list; then one
 * branch for the rare checks. Anything else goes to call_general or call_checked, and the
 * messages are built out of line, each reached by a tail call, so this function has no calls
 * of its own and no frame. */
sg_status sg_op_call_boxed_generic(const sg_op *op, const sg_any *args, int32_t nargs,
                                   sg_any *rets, int32_t nrets) {
    if (SG_UNLIKELY(!op || nargs != op->nargs || nrets < op->nrets))
        return count_error(op, args, nargs, rets, nrets);
    sg_keyset ks = 0;
    if (nargs > 0) {
        if (SG_UNLIKELY(!args)) return args_null(op, args, nargs, rets, nrets);
        /* Rationale: an argument and its checks are as large (arg_check), so one byte offset
         * walks both, from the last argument down to 0 (no bound to keep). Whatever is not a
         * tensor where one is taken nor a plain value goes to call_general, which checks from
         * the first argument on and names the first that is wrong. */
        const char *a = (const char *)args, *c = (const char *)op->argc;
        size_t      o = (size_t)nargs * sizeof(sg_any);
        do {
            o -= sizeof(sg_any);
            const sg_any    *v = (const sg_any *)(const void *)(a + o);
            const arg_check *k = (const arg_check *)(const void *)(c + o);
            if (SG_LIKELY(v->tag == k->fast_tag)) { /* a tensor where one is taken */
                if (SG_UNLIKELY(!v->u.t)) return call_general(op, args, rets, nrets);
                ks |= v->u.t->keys;
            } else {
                uint32_t tag = (uint32_t)v->tag;
                if (SG_UNLIKELY(tag >= SG_ANY__COUNT || !(k->accepts >> tag & 1) ||
                                tag == SG_ANY_TENSOR_LIST || tag == SG_ANY_OPT_TENSOR_LIST))
                    return call_general(op, args, rets, nrets);
            }
        } while (o);
    }
    sg_keyset b = ks & SG_KEYSET_BACKENDS;
    if (SG_UNLIKELY((op->checks | (b & (b - 1))) != 0)) /* several_backends, in one branch */
        return call_checked(op, args, ks, rets, nrets);
    return finish(op, args, ks, rets, nrets);
}

/* Rationale: the op's entry, where a generated library gave it one, is tried first and reached
 * by a tail jump; an op without one pays a load, a branch and a jump before the generic call.
 * Jumped to rather than inlined: inlined, its error paths made GCC move the parameters between
 * registers before the entry's test, three instructions on every call through an entry. */
sg_status sg_op_call_boxed(const sg_op *op, const sg_any *args, int32_t nargs, sg_any *rets,
                           int32_t nrets) {
    if (SG_LIKELY(op != NULL)) {
        sg_boxed_entry *e = __atomic_load_n(&op->entry, __ATOMIC_ACQUIRE);
        if (e) return e(op, args, nargs, rets, nrets, op->typed);
    }
    return sg_op_call_boxed_generic(op, args, nargs, rets, nrets);
}

sg_status sg_op_set_boxed_entry(sg_op *op, sg_boxed_entry *entry, sg_fn typed) {
    if (!op || op == &sg_op_uninit)
        return op ? sg__uninit_error("sg_op_set_boxed_entry")
                  : sg_error(SG_EINVAL, "sg_op_set_boxed_entry: no op given (NULL)");
    if (!entry || !typed)
        return sg_error(SG_EINVAL, "sg_op_set_boxed_entry: %s: the entry and the typed "
                                   "function it calls are both needed", op->name);
    pthread_mutex_lock(&sg__lock);
    if (!op->entry) { /* the typed function first: a caller that sees the entry sees it */
        op->typed = typed;
        __atomic_store_n(&op->entry, entry, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sg__lock);
    return SG_OK;
}

sg_status sg_op_redispatch_boxed(const sg_op *op, sg_keyset ks, const sg_any *args,
                                 sg_any *rets, int32_t nrets) {
    if (SG_UNLIKELY(!op || (!args && op->nargs > 0) || (!rets && nrets > 0))) {
        if (!op) return sg_error(SG_EINVAL, "sg_op_redispatch_boxed: no op given (NULL)");
        return sg_error(SG_EINVAL, "sg_op_redispatch_boxed: %s: %s is NULL", op->name,
                        args || op->nargs <= 0 ? "rets" : "args");
    }
    const sg_entry *e = sg_dispatch_entry(op, ks);
    return e->boxed(op, ks, args, rets, nrets, e->ctx);
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

/* "cpu", "cuda:0": a device as PyTorch prints it. */
static void device_text(sg_device d, char *buf, size_t n) {
    const char *name = (unsigned)d.type < SG_DEV__COUNT
                           ? sg_device_type_name((sg_device_type)d.type) : "?";
    if (d.type == SG_DEV_CPU || d.type == SG_DEV_META)
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "%s:%d", name, d.index);
}

/* Why a call landed on key: "(tensors on cpu, cuda:0)" from its tensor arguments, else "(its
 * Device argument is cuda:0)", else the thread's included keys. */
static void why_key(const sg_op *op, sg_key key, const sg_any *args, int32_t nargs, char *buf,
                    size_t n) {
    enum { MAX = 4 };
    sg_device seen[MAX];
    int       nseen = 0;
    bool      more = false;
    for (int32_t i = 0; args && i < op->ntensor_args; i++) {
        int32_t a = op->tensor_args[i];
        if (a >= nargs) break;
        const sg_any     *v = &args[a];
        sg_tensor *const *ts = NULL;
        int32_t           nt = 0;
        if (v->tag == SG_ANY_TENSOR && v->u.t) {
            ts = &v->u.t;
            nt = 1;
        } else if ((v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST) &&
                   v->u.tensors) {
            ts = v->u.tensors;
            nt = v->len;
        }
        for (int32_t j = 0; j < nt; j++) {
            if (!ts[j]) continue;
            sg_device d = ts[j]->device;
            bool      dup = false;
            for (int k = 0; k < nseen; k++) dup |= sg_device_eq(seen[k], d);
            if (dup) continue;
            if (nseen == MAX) more = true;
            else seen[nseen++] = d;
        }
    }
    size_t k = 0;
    buf[0] = '\0';
    if (nseen) {
        k += (size_t)snprintf(buf, n, "(tensors on ");
        for (int i = 0; i < nseen && k < n; i++) {
            char d[32];
            device_text(seen[i], d, sizeof d);
            k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", d);
        }
        if (k < n) snprintf(buf + k, n - k, "%s)", more ? ", ..." : "");
    } else if (op->device_arg >= 0 && op->device_arg < nargs && args &&
               args[op->device_arg].tag == SG_ANY_DEVICE) {
        char d[32];
        device_text(args[op->device_arg].u.dev, d, sizeof d);
        snprintf(buf, n, "(its Device argument is %s)", d);
    } else if (op->device_arg >= 0) {
        snprintf(buf, n, "(its Device argument is None: cpu)");
    } else if (key != SG_KEY_UNDEFINED) {
        snprintf(buf, n, "(no tensor arguments; the thread's included keys select it)");
    }
}

/* What the last missing-kernel message was about, so sg_op_error_via can rewrite it: the op
 * that has no kernel, the ops the call went through to reach it (chain[0] outermost), the key
 * and why the call landed there. Valid while seq is the thread's message count. */
enum { CHAIN_MAX = 6 };
static _Thread_local struct missing {
    uint64_t     seq;
    const sg_op *chain[CHAIN_MAX];
    int          n;
    sg_key       key;
    char         why[192];
} missing;

static void op_text(const sg_op *op, char *buf, size_t n) {
    snprintf(buf, n, "%s%s%s", op->name, *op->overload ? "." : "", op->overload);
}

sg_status sg__missing_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                             int32_t nrets, void *ctx) {
    (void)ks, (void)rets, (void)nrets;
    sg_key key = (sg_key)(uintptr_t)ctx;
    char   keys[512], name[256];
    pthread_mutex_lock(&sg__lock);
    registered_keys(op, keys, sizeof keys);
    pthread_mutex_unlock(&sg__lock);
    op_text(op, name, sizeof name);
    why_key(op, key, args, op->nargs, missing.why, sizeof missing.why);
    sg_status st;
    if (key == SG_KEY_UNDEFINED)
        st = sg_error(SG_ENOKERNEL, "could not run '%s': its arguments select no backend (no "
                                    "tensor arguments, and no BackendSelect kernel); kernels "
                                    "are registered for: %s",
                      name, *keys ? keys : "nothing");
    else
        st = sg_error(SG_ENOKERNEL, "could not run '%s' with arguments from the '%s' backend%s%s; "
                                    "kernels are registered for: %s",
                      name, sg_key_name(key), *missing.why ? " " : "", missing.why,
                      *keys ? keys : "nothing");
    missing.seq = sg__error_seq();
    missing.chain[0] = op;
    missing.n = 1;
    missing.key = key;
    return st;
}

sg_status sg_op_error_via(sg_status st, const sg_op *called, const sg_op *inner) {
    if (st != SG_ENOKERNEL || !called || !inner || missing.seq != sg__error_seq() ||
        missing.n < 1 || missing.chain[0] == called)
        return st;
    if (missing.chain[0] != inner && missing.n < CHAIN_MAX) {
        memmove(missing.chain + 1, missing.chain, (size_t)missing.n * sizeof missing.chain[0]);
        missing.chain[0] = inner;
        missing.n++;
    }
    const sg_op *lacking = missing.chain[missing.n - 1];
    char         keys[512], name[256], path[768], one[256];
    size_t       k = 0;
    pthread_mutex_lock(&sg__lock);
    registered_keys(lacking, keys, sizeof keys);
    pthread_mutex_unlock(&sg__lock);
    path[0] = '\0';
    for (int i = 0; i < missing.n && k < sizeof path; i++) {
        op_text(missing.chain[i], one, sizeof one);
        k += (size_t)snprintf(path + k, sizeof path - k, "%s'%s'", i ? ", then " : "", one);
    }
    op_text(called, name, sizeof name);
    sg_key key = missing.key;
    if (key == SG_KEY_UNDEFINED)
        st = sg_error(SG_ENOKERNEL, "could not run '%s': its arguments select no backend; it is "
                                    "computed through %s, which has no kernel for them "
                                    "(kernels are registered for: %s)",
                      name, path, *keys ? keys : "nothing");
    else
        st = sg_error(SG_ENOKERNEL, "could not run '%s' with arguments from the '%s' backend%s%s: "
                                    "it is computed through %s, which has no %s kernel "
                                    "(kernels are registered for: %s)",
                      name, sg_key_name(key), *missing.why ? " " : "", missing.why, path,
                      sg_key_name(key), *keys ? keys : "nothing");
    /* the next caller out names its own op, through this one */
    if (missing.n < CHAIN_MAX) {
        memmove(missing.chain + 1, missing.chain, (size_t)missing.n * sizeof missing.chain[0]);
        missing.chain[0] = called;
        missing.n++;
    }
    missing.seq = sg__error_seq();
    return st;
}

sg_status sg__no_boxed_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                              int32_t nrets, void *ctx) {
    (void)ks, (void)args, (void)rets, (void)nrets;
    const reg *r = ctx;
    return sg_error(SG_EUNSUPPORTED, "cannot call '%s%s%s' boxed: its %s kernel was registered "
                                     "unboxed only, without a boxed adapter",
                    op->name, *op->overload ? "." : "", op->overload, sg_key_name((sg_key)r->key));
}

/* BackendSelect for an op with no tensor arguments and a Device argument: the device picks the
 * backend (None: CPU), as PyTorch's generated BackendSelect kernels do for factory functions. */
sg_status sg__backend_select(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                             int32_t nrets, void *ctx) {
    (void)ctx;
    sg_device dev = SG_CPU;
    if (op->device_arg < op->nargs && args[op->device_arg].tag == SG_ANY_DEVICE)
        dev = args[op->device_arg].u.dev;
    ks = sg_keyset_below(ks, SG_KEY_BACKEND_SELECT) | sg_keyset_of_device(dev);
    return sg_op_redispatch_boxed(op, ks, args, rets, nrets);
}
