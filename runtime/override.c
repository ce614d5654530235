/* override.c: conditional overrides (semantics in sg_dispatch.h).
 *
 * A table entry with overrides points at a state made when the table was built: the overrides
 * in order and the stock entry they stand in front of. Rationale: the state is immutable and
 * lives as long as its table, so a call reads it without a lock while registrations go on.
 *
 * An entry of typed overrides is SG_ENTRY_OVERRIDE_TYPED: the state begins with the public
 * sg_override_set that generated typed calls walk themselves, without boxing, and boxed calls
 * go through the op's adapter into that typed call. An entry of boxed overrides runs run(). */
#include "rt_dispatch.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
    sg_override_pred pred;
    sg_boxed_fn      impl;
    void            *ctx;
} item;

/* Rationale: one allocation, read without a dependent load: the set, then its typed items
 * (sg_override_items), then the boxed ones. An entry's ctx is the set. */
typedef struct state {
    struct state   *next;  /* the table's chain of states */
    item           *items; /* boxed: n */
    sg_override_set set;   /* last: its items follow it */
} state;
_Static_assert(offsetof(state, set) + sizeof(sg_override_set) == sizeof(state),
               "the typed items follow the set");

static state *state_of(const void *set) {
    return (state *)(void *)((char *)(uintptr_t)set - offsetof(state, set));
}

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

sg_status sg_op_set_overrides_enabled(sg_op *op, bool on) {
    if (op == &sg_op_uninit) return sg__uninit_error("sg_op_set_overrides_enabled");
    if (!op) return sg_error(SG_EINVAL, "sg_op_set_overrides_enabled: no op given (NULL)");
    pthread_mutex_lock(&sg__lock);
    sg_status st = SG_OK;
    if (op->overrides_off == on) {
        op->overrides_off = !on;
        if ((st = sg__rebuild(op)) != SG_OK) op->overrides_off = on;
    }
    pthread_mutex_unlock(&sg__lock);
    return st;
}

bool sg_op_overrides_enabled(const sg_op *op) {
    if (!op || op == &sg_op_uninit) return false;
    pthread_mutex_lock(&sg__lock);
    bool on = !op->overrides_off;
    pthread_mutex_unlock(&sg__lock);
    return on;
}

static sg_status run(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                     int32_t nrets, void *ctx) {
    const state *s = state_of(ctx);
    for (int32_t i = 0; i < s->set.n; i++)
        if (s->items[i].pred(s->items[i].ctx, op, ks, args, op->nargs))
            return s->items[i].impl(op, ks, args, rets, nrets, s->items[i].ctx);
    if (s->set.stock_falls)
        return sg_op_redispatch_boxed(op, sg_keyset_below(ks, (sg_key)s->set.key), args, rets,
                                      nrets);
    return s->set.stock.boxed(op, ks, args, rets, nrets, s->set.stock.ctx);
}

sg_status sg__override_entry(sg_op *op, sg_key k, const sg_entry *stock, bool stock_falls,
                             tbl *t, sg_entry *out) {
    int32_t n = 0;
    for (const reg *r = op->overrides[k]; r; r = r->next) n++;
    state *s = malloc(sizeof *s + (size_t)(n + 1) * sizeof(sg_override_typed) +
                      (size_t)n * sizeof(item));
    if (!s) return sg_error(SG_ENOMEM, "out of memory");
    sg_override_typed *typed = (sg_override_typed *)(void *)(s + 1);
    s->items = (item *)(void *)(typed + n + 1);
    s->set = (sg_override_set){.redispatch = NULL, .stock = *stock, .op = op, .n = n,
                               .key = (uint8_t)k, .stock_falls = stock_falls};
    n = 0;
    for (const reg *r = op->overrides[k]; r; r = r->next, n++) {
        typed[n] = r->typed;
        s->items[n] = (item){r->pred, r->k.boxed, r->k.ctx};
    }
    typed[n] = (sg_override_typed){NULL, stock_falls ? NULL : stock->unboxed, &s->set};
    s->next = t->owned;
    t->owned = s;
    /* the kinds do not mix (sg_op_override_typed), so the first says what all are */
    const reg *first = op->overrides[k];
    if (first->typed.pred) {
        /* boxed calls: the op's adapter unboxes and calls the op's typed redispatch, which
         * finds this entry again and walks it typed */
        s->set.redispatch = first->k.unboxed;
        *out = (sg_entry){.unboxed = NULL, .boxed = first->k.boxed, .ctx = &s->set,
                          .kind = SG_ENTRY_OVERRIDE_TYPED, .key = (uint8_t)k};
    } else {
        *out = (sg_entry){.unboxed = NULL, .boxed = run, .ctx = &s->set, .kind = SG_ENTRY_OVERRIDE,
                          .key = (uint8_t)k};
    }
    return SG_OK;
}

void sg__override_free(void *owned) {
    for (state *s = owned, *next; s; s = next) {
        next = s->next;
        free(s);
    }
}
