/* override.c: conditional overrides (semantics in sg_dispatch.h).
 *
 * A table entry with overrides points at a state made when the table was built: the overrides
 * in order and the stock entry they stand in front of. Rationale: the state is immutable and
 * lives as long as its table, so a call reads it without a lock while registrations go on. */
#include "rt_dispatch.h"

#include <stdlib.h>
#include <string.h>

typedef struct item {
    sg_override_pred pred;
    sg_boxed_fn      impl;
    void            *ctx;
} item;

typedef struct state {
    struct state *next;  /* the table's chain of states */
    sg_key        key;
    bool          stock_falls; /* nothing stands behind: redispatch below key */
    sg_entry      stock;
    int32_t       n;
    item          items[];
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
    for (int32_t i = 0; i < s->n; i++)
        if (s->items[i].pred(s->items[i].ctx, op, ks, args, nargs))
            return s->items[i].impl(s->items[i].ctx, op, ks, args, nargs, rets, nrets);
    if (s->stock_falls)
        return sg_op_redispatch_boxed(op, sg_keyset_below(ks, s->key), args, nargs, rets, nrets);
    return s->stock.boxed(s->stock.ctx, op, ks, args, nargs, rets, nrets);
}

sg_status sg__override_entry(sg_op *op, sg_key k, const sg_entry *stock, bool stock_falls,
                             tbl *t, sg_entry *out) {
    int32_t n = 0;
    for (const reg *r = op->overrides[k]; r; r = r->next) n++;
    state *s = malloc(sizeof *s + (size_t)n * sizeof(item));
    if (!s) return sg_error(SG_ENOMEM, "out of memory");
    s->key = k;
    s->stock_falls = stock_falls;
    s->stock = *stock;
    s->n = n;
    n = 0;
    for (const reg *r = op->overrides[k]; r; r = r->next)
        s->items[n++] = (item){r->pred, r->k.boxed, r->k.ctx};
    s->next = t->owned;
    t->owned = s;
    *out = (sg_entry){.unboxed = NULL, .boxed = run, .ctx = s, .kind = SG_ENTRY_OVERRIDE,
                      .key = (uint8_t)k};
    return SG_OK;
}

void sg__override_free(void *owned) {
    for (state *s = owned, *next; s; s = next) {
        next = s->next;
        free(s);
    }
}
