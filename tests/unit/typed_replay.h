/* typed_replay.h: the conformance runner's second path (docs/conformance.md, "The typed path").
 *
 * run_case calls each case boxed (sg_call_by_name); typed_replay, right after, calls it again
 * through the public typed C wrappers, on arguments built afresh from the file (an in-place or out= op
 * wrote the first ones), by aten_typed_call, which tests/conformance/templates generates from
 * schemas/aten_core.yaml: it unboxes the arguments as the op's boxing adapter does, calls the
 * wrapper and boxes its results. Both calls must have the same outcome: the same error status,
 * or the same results: each tensor's dtype, device, sizes, strides and storage offset, and its
 * elements bitwise (not where the case's values are not compared, random or uninitialised, nor
 * on Meta, which has none); the arguments the op writes likewise; and the same aliasing: where
 * a boxed result shares storage with an argument, the typed result shares it with the same
 * argument of its own call, and is that argument where the boxed one is (in-place, out=); where
 * the boxed result shares none, neither does the typed. The comparison is with the boxed results
 * as the call returned them, before the runner compares them with PyTorch's (the CUDA run casts
 * some). typed_merge, once the runner has the case's outcome, fails a case whose paths differ.
 *
 * The child that runs a case puts its typed outcome in ref_record.typed; the parent counts it
 * (typed_account) and prints "typed: N agreed, M differed, K not expressible (why)"
 * (typed_report). Included by test_cpu_reference.c after ref_data.h, where SG_REF_TYPED is
 * defined (the conformance builds: the runner then links aten_typed_calls.c). */
#ifndef SG_TEST_TYPED_REPLAY_H
#define SG_TEST_TYPED_REPLAY_H

#include "aten.h"
#include "aten_typed_calls.h"
#include "ref_data.h"

/* ref_record.typed: 0 not run (the case crashed); TYPED_NONDET where the paths differed in a
 * case listed as nondeterministic (two runs of it may differ too); TYPED_HOW + how where
 * aten_typed_call said the case cannot be made typed (how one of aten_typed_how but
 * ATEN_TYPED_CALLED). */
enum { TYPED_NOT_RUN, TYPED_AGREED, TYPED_DIFFERED, TYPED_NONDET, TYPED_NOT_BUILT, TYPED_HOW };
enum { TYPED_CODES = TYPED_HOW + ATEN_TYPED__COUNT };

/* A case as run_case called it boxed. */
typedef struct typed_case {
    const char   *name, *overload;
    const value  *args; /* as the file holds them, nargs */
    int           nargs;
    const sg_any *in;    /* the boxed call's arguments (Device? None made ref_dev's) */
    bool          built; /* all of in was built (else the typed call is not made) */
    sg_status     st;    /* the boxed call's status */
    const sg_any *out;   /* and its results, nrets */
    int32_t       nrets;
    bool          values; /* elements are compared (the file's flags: not random, defined) */
} typed_case;

/* ---- comparing the two calls ------------------------------------------------------------- */

/* t on the host, as *h: a new reference (a copy where t is elsewhere). */
static inline sg_status typed_host(sg_tensor *t, sg_tensor **h) {
    if (t->device.type == SG_DEV_CPU) {
        *h = sg_tensor_retain(t);
        return SG_OK;
    }
    return sg_tensor_to(t, SG_CPU, h);
}

/* Whether b and t (the boxed and the typed call's) are the same tensor: geometry exactly, and
 * with values, their elements bitwise (read through their strides). */
static inline bool typed_same_tensor(sg_tensor *b, sg_tensor *t, bool values, sbuf *why) {
    if (!b || !t) {
        if (b == t) return true;
        sb_printf(why, "boxed %s, typed %s", b ? "a tensor" : "NULL", t ? "a tensor" : "NULL");
        return false;
    }
    char db[128], dt[128];
    bool same = b->dtype == t->dtype && sg_device_eq(b->device, t->device) &&
                b->ndim == t->ndim && b->offset == t->offset;
    for (int32_t d = 0; same && d < b->ndim; d++)
        same = b->sizes[d] == t->sizes[d] && b->strides[d] == t->strides[d];
    if (!same) {
        sg_tensor_describe(b, db, sizeof db);
        sg_tensor_describe(t, dt, sizeof dt);
        sb_printf(why, "boxed %s strides ", db);
        sb_sizes(why, b->strides, b->ndim);
        sb_printf(why, " offset %" PRId64 ", typed %s strides ", b->offset, dt);
        sb_sizes(why, t->strides, t->ndim);
        sb_printf(why, " offset %" PRId64, t->offset);
        return false;
    }
    if (!values || b->device.type == SG_DEV_META || sg_tensor_numel(b) == 0) return true;
    sg_tensor *hb = NULL, *ht = NULL;
    sg_status  st = typed_host(b, &hb);
    if (!st) st = typed_host(t, &ht);
    if (st) {
        sb_printf(why, "copying to the host: %s: %s", sg_status_name(st), sg_last_error());
        sg_tensor_release(hb);
        return false;
    }
    size_t      es = sg_dtype_size((sg_dtype)b->dtype);
    const char *pb = sg_tensor_data(hb), *pt = sg_tensor_data(ht);
    int64_t     n = sg_tensor_numel(b), bad = 0, first = -1;
    for (int64_t i = 0; pb && pt && i < n; i++) {
        int64_t ob = 0, ot = 0, rest = i;
        for (int32_t d = b->ndim - 1; d >= 0; d--) {
            ob += (rest % b->sizes[d]) * hb->strides[d];
            ot += (rest % b->sizes[d]) * ht->strides[d];
            rest /= b->sizes[d];
        }
        if (memcmp(pb + ob * (int64_t)es, pt + ot * (int64_t)es, es) != 0 && !bad++) first = i;
    }
    if (!pb || !pt) {
        sb_printf(why, "a tensor of %" PRId64 " elements with no data", n);
        bad = 1;
    } else if (bad) {
        int64_t idx[SG_MAX_DIMS], rest = first, ob = 0, ot = 0;
        for (int32_t d = b->ndim - 1; d >= 0; d--) {
            idx[d] = rest % b->sizes[d];
            ob += idx[d] * hb->strides[d];
            ot += idx[d] * ht->strides[d];
            rest /= b->sizes[d];
        }
        uint64_t xb = 0, xt = 0;
        memcpy(&xb, pb + ob * (int64_t)es, es);
        memcpy(&xt, pt + ot * (int64_t)es, es);
        sb_printf(why, "element ");
        sb_sizes(why, idx, b->ndim);
        sb_printf(why, ": boxed bits 0x%" PRIx64 ", typed 0x%" PRIx64 "; %" PRId64 " of %" PRId64
                  " elements differ", xb, xt, bad, n);
    }
    sg_tensor_release(hb);
    sg_tensor_release(ht);
    return bad == 0;
}

/* The same for two boxed values (results, or arguments after the calls). */
static inline bool typed_same_value(const sg_any *b, const sg_any *t, bool values, sbuf *why) {
    if (b->tag != t->tag) {
        sb_printf(why, "boxed a %s, typed a %s", sg_any_tag_name(b->tag), sg_any_tag_name(t->tag));
        return false;
    }
    switch (b->tag) {
    case SG_ANY_TENSOR: return typed_same_tensor(b->u.t, t->u.t, values, why);
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST:
        if (b->len != t->len) {
            sb_printf(why, "boxed %d tensors, typed %d", b->len, t->len);
            return false;
        }
        for (int32_t k = 0; k < b->len; k++)
            if (!typed_same_tensor(b->u.tensors[k], t->u.tensors[k], values, why)) {
                sb_printf(why, " (tensor %d of the list)", k);
                return false;
            }
        return true;
    case SG_ANY_INT_LIST:
    case SG_ANY_FLOAT_LIST:
    case SG_ANY_BOOL_LIST: {
        size_t es = b->tag == SG_ANY_BOOL_LIST ? sizeof(bool) : 8;
        if (b->len == t->len && (b->len <= 0 || !memcmp(b->u.p, t->u.p, (size_t)b->len * es)))
            return true;
        sb_printf(why, "the %s results differ", sg_any_tag_name(b->tag));
        return false;
    }
    case SG_ANY_STR:
        if (b->len == t->len && (b->len <= 0 || !memcmp(b->u.s, t->u.s, (size_t)b->len)))
            return true;
        sb_printf(why, "boxed '%.*s', typed '%.*s'", (int)b->len, b->u.s, (int)t->len, t->u.s);
        return false;
    case SG_ANY_COMPLEX:
        if (!memcmp(b->u.c, t->u.c, sizeof *b->u.c)) return true;
        sb_printf(why, "the complex results differ");
        return false;
    default:
        /* plain values: the payload, bitwise */
        if (!memcmp(&b->u, &t->u, sizeof b->u)) return true;
        sb_printf(why, "boxed 0x%" PRIx64 ", typed 0x%" PRIx64, (uint64_t)b->u.i,
                  (uint64_t)t->u.i);
        return false;
    }
}

/* The tensors of args[0..n) (list items included), in order, into ts (at most cap). */
static inline int typed_tensors(const sg_any *args, int n, sg_tensor **ts, int cap) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (args[i].tag == SG_ANY_TENSOR && k < cap) ts[k++] = args[i].u.t;
        if (args[i].tag == SG_ANY_TENSOR_LIST || args[i].tag == SG_ANY_OPT_TENSOR_LIST)
            for (int32_t j = 0; j < args[i].len && k < cap; j++) ts[k++] = args[i].u.tensors[j];
    }
    return k;
}

/* Result r of each call against the arguments of its own call: the same aliasing (above). */
static inline bool typed_same_alias(sg_tensor *rb, sg_tensor *rt, sg_tensor *const *ib,
                                    sg_tensor *const *it, int n, sbuf *why) {
    if (!rb || !rt) return true; /* compared as values already */
    int k = 0;
    while (k < n && !(ib[k] && ib[k]->storage == rb->storage)) k++;
    if (k == n) {
        for (int j = 0; j < n; j++)
            if (it[j] && it[j]->storage == rt->storage) {
                sb_printf(why, "the typed result shares the storage of argument tensor %d; "
                          "the boxed one shares none", j);
                return false;
            }
        return true;
    }
    if (!it[k] || it[k]->storage != rt->storage) {
        sb_printf(why, "the boxed result shares the storage of argument tensor %d; the typed "
                  "one does not", k);
        return false;
    }
    if ((rb == ib[k]) != (rt == it[k])) {
        sb_printf(why, "the %s result is argument tensor %d itself; the %s one a view of it",
                  rb == ib[k] ? "boxed" : "typed", k, rb == ib[k] ? "typed" : "boxed");
        return false;
    }
    return true;
}

enum { TYPED_MAX_TENSORS = 256, TYPED_MAX_ARGS = 255 };

/* Compares the typed call (status st, results out, arguments in) with the boxed one. */
static inline bool typed_compare(const typed_case *c, sg_status st, const sg_any *in,
                                 const sg_any *out, sbuf *why) {
    if (st != c->st || st) {
        if (st == c->st) return true; /* both failed alike */
        sb_printf(why, "boxed %s, typed %s", sg_status_name(c->st), sg_status_name(st));
        if (st) sb_printf(why, " (%s)", sg_last_error());
        return false;
    }
    sg_tensor *ib[TYPED_MAX_TENSORS], *it[TYPED_MAX_TENSORS];
    int        nb = typed_tensors(c->in, c->nargs, ib, TYPED_MAX_TENSORS);
    int        nt = typed_tensors(in, c->nargs, it, TYPED_MAX_TENSORS);
    if (nb != nt) {
        sb_printf(why, "the harness built %d argument tensors boxed, %d typed", nb, nt);
        return false;
    }
    /* random ops draw other values on the second call: a case torch refused has no flags to
     * say so (their values are compared here where ours succeed), so the op's tag does */
    const sg_op_desc *d = aten_find(c->name, c->overload);
    bool              values = c->values;
    for (int32_t k = 0; d && k < d->ntags; k++)
        if (!strcmp(d->tags[k], "nondeterministic_seeded")) values = false;
    for (int32_t i = 0; i < c->nrets; i++) {
        const sg_any *b = &c->out[i], *t = &out[i];
        bool          same = typed_same_value(b, t, values, why);
        if (same && b->tag == SG_ANY_TENSOR)
            same = typed_same_alias(b->u.t, t->u.t, ib, it, nb, why);
        for (int32_t k = 0; same && b->tag == SG_ANY_TENSOR_LIST && k < b->len; k++)
            same = typed_same_alias(b->u.tensors[k], t->u.tensors[k], ib, it, nb, why);
        if (!same) {
            sb_printf(why, " (result %d)", i);
            return false;
        }
    }
    /* what the op wrote into its arguments */
    for (int i = 0; d && i < c->nargs && i < d->nargs; i++) {
        if (d->args[i].write && !typed_same_value(&c->in[i], &in[i], values, why)) {
            sb_printf(why, " (argument %d '%s', which the op writes)", i, d->args[i].name);
            return false;
        }
    }
    return true;
}

/* ---- the hooks in run_case --------------------------------------------------------------- */

/* What the typed call gave: a ref_record.typed code, and how it differs where it does. */
typedef struct typed_outcome {
    int32_t code;
    sbuf    why;
} typed_outcome;

/* Calls c typed and compares, right after its boxed call (before the runner turns to its
 * results); the thread's error message, which the runner reads next, is the boxed call's
 * again after. */
static inline void typed_replay(const typed_case *c, arena *a, typed_outcome *r) {
    memset(r, 0, sizeof *r);
    if (!c->built) {
        r->code = TYPED_NOT_BUILT;
        return;
    }
    char boxed_error[1024];
    if (c->st) snprintf(boxed_error, sizeof boxed_error, "%s", sg_last_error());
    /* the same arguments afresh: tensors built again, the rest as the boxed call had them */
    owned     o = {NULL, 0, 0};
    sg_any    in[TYPED_MAX_ARGS], out[TYPED_MAX_ARGS];
    sg_status st = SG_OK;
    for (int i = 0; i < c->nargs && !st; i++) {
        int32_t tag = c->in[i].tag;
        if (tag == SG_ANY_TENSOR || tag == SG_ANY_TENSOR_LIST || tag == SG_ANY_OPT_TENSOR_LIST)
            st = build_arg(&c->args[i], a, &o, &in[i]);
        else
            in[i] = c->in[i];
    }
    if (st) {
        r->code = TYPED_NOT_BUILT;
    } else {
        sg_error_clear();
        aten_typed_how how = aten_typed_call(c->name, c->overload, in, c->nargs, out, c->nrets,
                                             &st);
        if (how != ATEN_TYPED_CALLED)
            r->code = TYPED_HOW + (int32_t)how;
        else
            r->code = typed_compare(c, st, in, out, &r->why) ? TYPED_AGREED : TYPED_DIFFERED;
        for (int32_t i = 0; i < c->nrets; i++) sg_any_release(&out[i]);
    }
    release_owned(&o);
    free(o.t);
    if (c->st)
        sg_error(c->st, "%s", boxed_error);
    else
        sg_error_clear();
}

/* Puts r into rec, once the runner has its outcome: where the paths differ, the case fails and
 * why says how (after what it said, where it failed already), unless the case is nondeterministic
 * (nondet: a list says two runs of it may differ). */
static inline void typed_merge(const typed_outcome *r, ref_record *rec, sbuf *why, int32_t fail,
                               bool nondet) {
    rec->typed = r->code == TYPED_DIFFERED && nondet ? TYPED_NONDET : r->code;
    if (rec->typed != TYPED_DIFFERED) return;
    if (rec->outcome == fail)
        sb_printf(why, "; and ");
    else
        why->n = 0, why->b[0] = 0;
    sb_printf(why, "the typed path differs from the boxed: %s", r->why.b);
    rec->outcome = fail;
}

/* ---- counting, in the parent ------------------------------------------------------------- */

static int typed_counts[TYPED_CODES];

static inline void typed_account(const ref_record *rec) {
    if (rec->typed >= 0 && rec->typed < TYPED_CODES) typed_counts[rec->typed]++;
}

/* "typed: N agreed, M differed, K not expressible (why: count, ...)" */
static inline void typed_report(void) {
    int k = typed_counts[TYPED_NOT_BUILT];
    for (int h = 1; h < ATEN_TYPED__COUNT; h++) k += typed_counts[TYPED_HOW + h];
    printf("typed: %d agreed, %d differed, ", typed_counts[TYPED_AGREED],
           typed_counts[TYPED_DIFFERED]);
    if (typed_counts[TYPED_NONDET])
        printf("%d differed where the case is nondeterministic, ", typed_counts[TYPED_NONDET]);
    printf("%d not expressible", k);
    const char *sep = " (";
    if (typed_counts[TYPED_NOT_BUILT]) {
        printf("%sthe harness could not build an argument: %d", sep,
               typed_counts[TYPED_NOT_BUILT]);
        sep = "; ";
    }
    for (int h = 1; h < ATEN_TYPED__COUNT; h++) {
        if (!typed_counts[TYPED_HOW + h]) continue;
        printf("%s%s: %d", sep, aten_typed_how_text((aten_typed_how)h),
               typed_counts[TYPED_HOW + h]);
        sep = "; ";
    }
    printf("%s\n", *sep == ';' ? ")" : "");
}

#endif
