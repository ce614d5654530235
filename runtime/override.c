/* override.c: conditional overrides (semantics in sg_dispatch.h).
 *
 * A table entry with overrides points at a state made when the table was built: the overrides
 * in order and the stock entry they stand in front of. Rationale: the state is immutable and
 * lives as long as its table, so a call reads it without a lock while registrations go on.
 *
 * Where every override of the entry has typed functions, the entry is SG_ENTRY_OVERRIDE_TYPED
 * and the state begins with the public sg_override_set that generated typed wrappers walk
 * themselves, without boxing; boxed calls of any entry go through run() below. */
#include "rt_dispatch.h"

#include <stdlib.h>
#include <string.h>

typedef struct item {
    sg_override_pred pred;
    sg_boxed_fn      impl;
    void            *ctx; /* boxed: the registrant's; typed: the item's sg_override_typed */
} item;

typedef struct state {
    sg_override_set    set;   /* first: an SG_ENTRY_OVERRIDE_TYPED entry's ctx is the state */
    struct state      *next;  /* the table's chain of states */
    sg_override_typed *typed; /* n, beside items (set.items points here) */
    item               items[];
} state;

static int  enabled = -1; /* -1: not decided yet (the environment is read once) */

bool sg__overrides_on(void) {
    if (enabled < 0) {
        const char *v = getenv("SG_DISABLE_OVERRIDES");
        enabled = !(v && *v && strcmp(v, "0") != 0);
    }
    return enabled;
}

void sg_overrides_set_enabled(bool on) {
    pthread_mutex_lock(&sg__lock);
    sg__overrides_on();
    if (enabled != (int)on) {
        enabled = on;
        /* Rationale: switched off, the tables hold no override entries at all, so the switch
         * costs calls nothing either way. A failed rebuild (out of memory) leaves some tables
         * as they were; the next registration retries. */
        sg__rebuild_all();
    }
    pthread_mutex_unlock(&sg__lock);
}

bool sg_overrides_enabled(void) {
    pthread_mutex_lock(&sg__lock);
    bool on = sg__overrides_on();
    pthread_mutex_unlock(&sg__lock);
    return on;
}

static sg_status run(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args, int32_t nargs,
                     sg_any *rets, int32_t nrets) {
    const state *s = ctx;
    for (int32_t i = 0; i < s->set.n; i++)
        if (s->items[i].pred(s->items[i].ctx, op, ks, args, nargs)) {
            /* a typed implementation's adapter finds it as a kernel's adapter does (sg_kernel) */
            void *ictx = s->typed[i].pred ? (void *)&s->typed[i].impl : s->items[i].ctx;
            return s->items[i].impl(ictx, op, ks, args, nargs, rets, nrets);
        }
    if (s->set.stock_falls)
        return sg_op_redispatch_boxed(op, sg_keyset_below(ks, (sg_key)s->set.key), args, nargs,
                                      rets, nrets);
    return s->set.stock.boxed(s->set.stock.ctx, op, ks, args, nargs, rets, nrets);
}

sg_status sg__override_entry(sg_op *op, sg_key k, const sg_entry *stock, bool stock_falls,
                             tbl *t, sg_entry *out) {
    int32_t n = 0;
    for (const reg *r = op->overrides[k]; r; r = r->next) n++;
    state *s = malloc(sizeof *s + (size_t)n * (sizeof(item) + sizeof(sg_override_typed)));
    if (!s) return sg_error(SG_ENOMEM, "out of memory");
    s->typed = (sg_override_typed *)(void *)&s->items[n];
    s->set = (sg_override_set){.stock = *stock, .op = op, .items = s->typed, .n = n, .key = (uint8_t)k,
                               .stock_falls = stock_falls};
    bool all_typed = true;
    n = 0;
    for (const reg *r = op->overrides[k]; r; r = r->next, n++) {
        s->typed[n] = r->typed;
        s->items[n] = (item){r->pred, r->k.boxed, r->typed.pred ? &s->typed[n] : r->k.ctx};
        all_typed = all_typed && r->typed.pred;
    }
    s->next = t->owned;
    t->owned = s;
    *out = (sg_entry){.unboxed = NULL, .boxed = run, .ctx = s,
                      .kind = all_typed ? SG_ENTRY_OVERRIDE_TYPED : SG_ENTRY_OVERRIDE,
                      .key = (uint8_t)k};
    return SG_OK;
}

void sg__override_free(void *owned) {
    for (state *s = owned, *next; s; s = next) {
        next = s->next;
        free(s);
    }
}
