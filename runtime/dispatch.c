/* dispatch.c: registrations, and the tables they resolve into (the rules are in sg_dispatch.h).
 *
 * Every change happens under sg__lock: it updates the registration lists, then rebuilds the
 * tables of the ops it touches (one op for a kernel, every op for a backend fallback) and
 * publishes each with one atomic store. */
#include "rt_dispatch.h"
#include "rt_internal.h"

#include <stdlib.h>

static reg     *fallbacks[SG_KEY__COUNT]; /* per key, newest first */
static reg     *all_regs;                 /* every registration, for shutdown */
static uint64_t next_seq;

static bool is_backend(int k) { return k >= SG_KEY_CPU && k <= SG_KEY_META; }
static bool is_autograd(int k) { return k >= SG_KEY_AUTOGRAD_CPU && k <= SG_KEY_AUTOGRAD_META; }

/* Keys that fall through where nothing is registered: the layers above the backends. */
static bool falls_by_default(int k) {
    return is_autograd(k) || k == SG_KEY_BACKEND_SELECT || k == SG_KEY_OVERRIDE;
}

static sg_entry entry_of(const reg *r, sg_entry_kind kind) {
    sg_entry e = {0};
    e.unboxed = r->k.unboxed;
    e.boxed = r->k.boxed ? r->k.boxed : sg__no_boxed_kernel;
    if (!r->k.boxed)
        e.ctx = (void *)r; /* for the message of sg__no_boxed_kernel */
    else if (!r->k.ctx && r->k.unboxed)
        e.ctx = (void *)&r->k.unboxed; /* an adapter's way to its typed kernel (sg_kernel) */
    else
        e.ctx = r->k.ctx;
    e.kind = (uint8_t)kind;
    e.key = r->key;
    return e;
}

/* The entry for key k without overrides; *falls when it is a fallthrough. */
static sg_entry resolve(const sg_op *op, int k, bool *falls) {
    const reg *r;
    sg_entry   e = {0};
    *falls = false;
#define TAKE(regp, kind)                                 \
    do {                                                 \
        if ((r = (regp))) {                              \
            if (r->what == REG_FALLTHROUGH) goto through; \
            return entry_of(r, kind);                    \
        }                                                \
    } while (0)
    TAKE(op->regs[k], SG_ENTRY_KERNEL);
    /* Undefined too: an op whose arguments select no backend runs its composite, as in PyTorch */
    if (is_backend(k) || k == SG_KEY_UNDEFINED) {
        TAKE(op->regs[SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD], SG_ENTRY_COMPOSITE_EXPLICIT);
        TAKE(op->regs[SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD], SG_ENTRY_COMPOSITE_IMPLICIT);
    }
    if (is_autograd(k)) {
        /* Rationale: an autograd key takes the composite only where its backend has no kernel
         * of its own, else the composite would shadow that kernel (PyTorch's rule). */
        int backend = k - SG_KEY_AUTOGRAD_CPU + SG_KEY_CPU;
        if (!op->regs[backend] && !op->regs[SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD])
            TAKE(op->regs[SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD], SG_ENTRY_COMPOSITE_IMPLICIT);
        TAKE(op->regs[SG_KEY_AUTOGRAD], SG_ENTRY_AUTOGRAD_ALIAS);
    }
    if (k == SG_KEY_BACKEND_SELECT && op->device_arg >= 0) {
        e.boxed = sg__backend_select;
        e.kind = SG_ENTRY_KERNEL;
        e.key = (uint8_t)k;
        return e;
    }
    TAKE(fallbacks[k], SG_ENTRY_FALLBACK);
#undef TAKE
    if (k != SG_KEY_UNDEFINED && falls_by_default(k)) goto through;
    e.boxed = sg__missing_kernel;
    e.ctx = (void *)(uintptr_t)k;
    e.kind = SG_ENTRY_MISSING;
    e.key = (uint8_t)k;
    return e;
through:
    *falls = true;
    e.boxed = sg__missing_kernel; /* never called: the mask skips it */
    e.ctx = (void *)(uintptr_t)k;
    e.kind = SG_ENTRY_FALLTHROUGH;
    e.key = (uint8_t)k;
    return e;
}

void sg__free_tables(sg_op *op) {
    for (tbl *t = op->current, *older; t; t = older) {
        older = t->retired;
        sg__override_free(t->owned);
        free(t);
    }
    op->current = NULL;
    op->head.table = NULL;
}

sg_status sg__rebuild(sg_op *op) {
    tbl *t = calloc(1, sizeof *t);
    if (!t) return sg_error(SG_ENOMEM, "out of memory");
    bool on = sg__overrides_on() && !op->overrides_off;
    t->t.mask = 1; /* SG_KEY_UNDEFINED: what an empty key set lands on */
    for (int k = 0; k < SG_KEY__COUNT; k++) {
        bool     falls;
        sg_entry e = resolve(op, k, &falls);
        if (on && op->overrides[k]) {
            sg_status st = sg__override_entry(op, (sg_key)k, &e, falls, t, &t->t.entry[k]);
            if (st) {
                sg__override_free(t->owned);
                free(t);
                return st;
            }
            falls = false;
        } else {
            t->t.entry[k] = e;
        }
        if (!falls) t->t.mask |= SG_KEYSET(k);
    }
    t->retired = op->current;
    op->current = t;
    __atomic_store_n(&op->head.table, &t->t, __ATOMIC_RELEASE);
    return SG_OK;
}

sg_status sg__rebuild_all(void) {
    for (sg_op *op = sg__ops; op; op = op->all_next) {
        sg_status st = sg__rebuild(op);
        if (st) return st;
    }
    return SG_OK;
}

/* ---- registering ------------------------------------------------------------------------- */

/* Where key may be registered: a key with a table entry (Undefined aside), or where alias_ok an
 * alias key. Rationale: the registration lists are arrays indexed by key, so a key outside
 * them must never reach one. */
static sg_status check_key(const char *fn, sg_key key, bool alias_ok) {
    if ((key > SG_KEY_UNDEFINED && key < SG_KEY__COUNT) || (alias_ok && sg_key_is_alias(key)))
        return SG_OK;
    const char *name = sg_key_name(key);
    if (name && sg_key_is_alias(key))
        return sg_error(SG_EINVAL, "%s: %s is an alias key, which takes kernels of ops "
                                   "(sg_op_impl), not backend fallbacks",
                        fn, name);
    if (name)
        return sg_error(SG_EINVAL, "%s: %s is a key nothing can be registered for", fn, name);
    return sg_error(SG_EINVAL, "%s: %d is not a dispatch key", fn, (int)key);
}

static sg_status no_op(const char *fn, const sg_op *op) {
    if (op == &sg_op_uninit) return sg__uninit_error(fn);
    return sg_error(SG_EINVAL, "%s: no op given (NULL); a kernel for every op at one key is a "
                               "backend fallback (sg_fallback_impl)",
                    fn);
}

/* Links r in front of *list, rebuilds, and hands out the handle; undoes it all on failure. */
static sg_status publish(reg **list, reg *r, sg_handle **out) {
    r->seq = next_seq++;
    r->next = *list;
    *list = r;
    sg_status st = r->op ? sg__rebuild(r->op) : sg__rebuild_all();
    if (st) {
        *list = r->next;
        if (!r->op) sg__rebuild_all(); /* put back the tables built before the failure */
        free(r);
        return st;
    }
    r->all_next = all_regs;
    all_regs = r;
    if (out) *out = r;
    return SG_OK;
}

static sg_status add(sg_op *op, sg_key key, int what, sg_kernel k, sg_handle **out) {
    reg *r = calloc(1, sizeof *r);
    if (!r) return sg_error(SG_ENOMEM, "out of memory");
    r->op = op;
    r->key = (uint8_t)key;
    r->what = (uint8_t)what;
    r->k = k;
    pthread_mutex_lock(&sg__lock);
    sg_status st = publish(op ? &op->regs[key] : &fallbacks[key], r, out);
    pthread_mutex_unlock(&sg__lock);
    return st;
}

sg_status sg_op_impl(sg_op *op, sg_key key, sg_kernel k, sg_handle **out) {
    if (out) *out = NULL;
    if (!op || op == &sg_op_uninit) return no_op("sg_op_impl", op);
    sg_status st = check_key("sg_op_impl", key, true);
    if (st) return st;
    if (!k.unboxed && !k.boxed)
        return sg_error(SG_EINVAL, "sg_op_impl: %s at %s: a kernel needs an unboxed or a boxed "
                                   "function",
                        op->name, sg_key_name(key));
    return add(op, key, REG_KERNEL, k, out);
}

sg_status sg_op_impl_fallthrough(sg_op *op, sg_key key, sg_handle **out) {
    if (out) *out = NULL;
    if (!op || op == &sg_op_uninit) return no_op("sg_op_impl_fallthrough", op);
    sg_status st = check_key("sg_op_impl_fallthrough", key, true);
    return st ? st : add(op, key, REG_FALLTHROUGH, (sg_kernel){0}, out);
}

sg_status sg_fallback_impl(sg_key key, sg_boxed_fn fn, void *ctx, sg_handle **out) {
    if (out) *out = NULL;
    sg_status st = check_key("sg_fallback_impl", key, false);
    if (st) return st;
    if (!fn) return sg_error(SG_EINVAL, "sg_fallback_impl: a fallback needs a boxed function");
    return add(NULL, key, REG_KERNEL, (sg_kernel){NULL, fn, ctx}, out);
}

sg_status sg_fallback_fallthrough(sg_key key, sg_handle **out) {
    if (out) *out = NULL;
    sg_status st = check_key("sg_fallback_fallthrough", key, false);
    return st ? st : add(NULL, key, REG_FALLTHROUGH, (sg_kernel){0}, out);
}

/* Links an override of (op, key) in: by priority, highest first; equal priorities keep
 * registration order. k: boxed, the implementation and its ctx; typed (typed.pred set), the
 * op's adapter and its typed redispatch. */
static sg_status add_override(sg_op *op, sg_key key, int32_t priority, sg_override_pred pred,
                              sg_kernel k, sg_override_typed typed, sg_handle **out) {
    reg *r = calloc(1, sizeof *r);
    if (!r) return sg_error(SG_ENOMEM, "out of memory");
    r->op = op;
    r->key = (uint8_t)key;
    r->what = REG_OVERRIDE;
    r->k = k;
    r->pred = pred;
    r->typed = typed;
    r->priority = priority;
    pthread_mutex_lock(&sg__lock);
    /* Rationale: a typed call walks typed overrides without boxing and a boxed one reaches them
     * through the op's typed call; a boxed predicate among them would need both ways at once. */
    const reg *other = op->overrides[key];
    if (other && !other->typed.pred != !typed.pred) {
        pthread_mutex_unlock(&sg__lock);
        free(r);
        return sg_error(SG_EEXISTS, "%s%s%s at %s has %s overrides already: typed and boxed "
                                    "overrides of one op and key do not mix",
                        op->name, *op->overload ? "." : "", op->overload, sg_key_name(key),
                        typed.pred ? "boxed" : "typed");
    }
    reg **at = &op->overrides[key];
    while (*at && (*at)->priority >= priority) at = &(*at)->next;
    sg_status st = publish(at, r, out);
    pthread_mutex_unlock(&sg__lock);
    return st;
}

/* The op and key of an override: an op given, a key with a table entry. */
static sg_status check_override(const char *fn, const sg_op *op, sg_key key) {
    if (!op) return sg_error(SG_EINVAL, "%s: no op given (NULL)", fn);
    if (op == &sg_op_uninit) return sg__uninit_error(fn);
    if (key > SG_KEY_UNDEFINED && key < SG_KEY__COUNT) return SG_OK;
    const char *name = sg_key_name(key);
    return sg_error(SG_EINVAL, "%s: %d%s%s%s is not a dispatch key with a table entry (alias "
                               "keys take no overrides)",
                    fn, (int)key, name ? " (" : "", name ? name : "", name ? ")" : "");
}

sg_status sg_op_override(sg_op *op, sg_key key, int32_t priority, sg_override_pred pred,
                         sg_boxed_fn impl, void *ctx, sg_handle **out) {
    if (out) *out = NULL;
    sg_status st = check_override("sg_op_override", op, key);
    if (st) return st;
    if (!pred || !impl)
        return sg_error(SG_EINVAL, "sg_op_override: %s at %s: a predicate and an implementation "
                                   "are both needed",
                        op->name, sg_key_name(key));
    return add_override(op, key, priority, pred, (sg_kernel){NULL, impl, ctx},
                        (sg_override_typed){0}, out);
}

sg_status sg_op_override_typed(sg_op *op, sg_key key, int32_t priority, sg_override_typed o,
                               sg_boxed_fn adapter, sg_fn redispatch, sg_handle **out) {
    if (out) *out = NULL;
    sg_status st = check_override("sg_op_override_typed", op, key);
    if (st) return st;
    if (!o.pred || !o.impl || !adapter || !redispatch)
        return sg_error(SG_EINVAL, "sg_op_override_typed: %s at %s: a predicate, an "
                                   "implementation, the op's adapter and its redispatch are all "
                                   "needed",
                        op->name, sg_key_name(key));
    return add_override(op, key, priority, NULL, (sg_kernel){redispatch, adapter, NULL}, o, out);
}

sg_status sg_handle_release(sg_handle *h) {
    if (!h) return sg_error(SG_EINVAL, "sg_handle_release: no handle given");
    pthread_mutex_lock(&sg__lock);
    if (h->released) {
        pthread_mutex_unlock(&sg__lock);
        return sg_error(SG_ESTATE, "sg_handle_release: this registration was released already");
    }
    reg **list = h->what == REG_OVERRIDE ? &h->op->overrides[h->key]
                 : h->op                 ? &h->op->regs[h->key]
                                         : &fallbacks[h->key];
    while (*list != h) list = &(*list)->next;
    *list = h->next;
    h->released = true;
    sg_status st = h->op ? sg__rebuild(h->op) : sg__rebuild_all();
    if (st) { /* keep the registration rather than leave tables that disagree with the lists */
        h->released = false;
        *list = h;
    }
    pthread_mutex_unlock(&sg__lock);
    return st;
}

sg_entry sg_op_entry(const sg_op *op, sg_key key) {
    sg_entry none = {0};
    none.kind = SG_ENTRY_MISSING;
    if (!op) {
        sg_error(SG_EINVAL, "sg_op_entry: no op given (NULL)");
        return none;
    }
    if ((unsigned)key >= SG_KEY__COUNT) {
        sg_error(SG_EINVAL, "sg_op_entry: %d is not a key with a table entry", (int)key);
        return none;
    }
    const sg_table *t = __atomic_load_n(&op->head.table, __ATOMIC_ACQUIRE);
    return t->entry[key];
}

sg_entry sg_op_registered(const sg_op *op, sg_key key) {
    sg_entry none = {0};
    none.kind = SG_ENTRY_MISSING;
    if (!op || (unsigned)key >= SG_KEY__ALIAS_END) {
        sg_error(SG_EINVAL, "sg_op_registered: %s", !op ? "no op given (NULL)" : "no such key");
        return none;
    }
    pthread_mutex_lock(&sg__lock);
    const reg *r = op->regs[key];
    while (r && r->what == REG_OVERRIDE) r = r->next;
    sg_entry e = r && r->what == REG_KERNEL ? entry_of(r, SG_ENTRY_KERNEL) : none;
    pthread_mutex_unlock(&sg__lock);
    return e;
}

static uint64_t epoch = 1;

uint64_t sg_runtime_epoch(void) { return __atomic_load_n(&epoch, __ATOMIC_ACQUIRE); }

void sg_runtime_shutdown(void) {
    pthread_mutex_lock(&sg__lock);
    __atomic_fetch_add(&epoch, 1, __ATOMIC_ACQ_REL);
    sg__ops_free();
    sg__op_slots_reset();
    for (reg *r = all_regs, *next; r; r = next) {
        next = r->all_next;
        free(r);
    }
    all_regs = NULL;
    for (int k = 0; k < SG_KEY__COUNT; k++) fallbacks[k] = NULL;
    pthread_mutex_unlock(&sg__lock);
    sg__tensor_cache_flush();
    sg__storage_cache_flush();
    sg__cuda_cache_flush();
}
