/* dsl_emit_when.c: a declaration's _when function in LIB_dsl.c (docs/dsl.md, "What schemagen
 * generates"): the op's arguments and a capability in, the index of the artifact whose grid
 * point takes the call out, or -1.
 *
 * Each point's test is a list of conjuncts: the operands of the declaration's `when` at that
 * point, then what the point's compiler assumed and its launch needs. A conjunct whose C is
 * the same at every point is tested once; a point tests only what tells it from the others.
 * The order is by cost: the shared conjuncts that read fields (dtypes, sizes, scalars), then
 * each point's own, cheap ones first, then the shared ones that call into the runtime
 * (contiguity, numel, alignment), once a point is found. Rationale: a predicate runs on every
 * call of its op, most often to say no, and a call no point takes (a size outside the grid)
 * then never pays for the walks. Moving a conjunct ahead of others changes nothing but the
 * cost: each is pure, and a guard that fails makes it false rather than faulting (dsl_expr.h). */
#include "derive.h"
#include "dsl.h"
#include "dsl_emit.h"

#include <stdlib.h>
#include <string.h>

/* Ends a conjunct: each point's conjuncts lie in one buffer, each followed by a '\0'. */
static void end(sg_buf *b) { sg_buf_putc(b, '\0'); }

/* sg_dslg_i32(its numel) for an output with its own sizes: their product, each multiplication
 * guarded. */
static void numel_i32(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_output *o,
                      const sg_dsl_artifact *a) {
    sg_buf_puts(b, "sg_dslg_i32(");
    for (uint32_t k = 1; k < o->nsizes; k++) sg_buf_puts(b, "sg_dslg_mul(");
    for (uint32_t k = 0; k < o->nsizes; k++) {
        if (k) sg_buf_puts(b, ", ");
        sg_dsl_c_expr(b, &o->sizes[k], dc, a);
        if (k) sg_buf_puts(b, ", &sg_ok)");
    }
    sg_buf_putc(b, ')');
    end(b);
}

/* What the artifact's compiler assumed and what its launch needs, as conjuncts. */
static void assumptions(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_artifact *a) {
    const char *const *cname = dc->op->c->arg_cnames;
    for (uint32_t k = 0; k < dc->nparams; k++) {
        const sg_dsl_param *p = &dc->params[k];
        const sg_dsl_sym   *s = sg_dsl_node_sym(p->value.node);
        int pd = p->grid_var >= 0 ? (int)a->vals[p->grid_var].i : p->base;
        if (p->ptr && s->kind == SG_DSLS_ARG) {
            const char *t = cname[s->index];
            sg_buf_printf(b, "sg_dslg_dtype(%s, &sg_ok) == %s /* %s */", t,
                          sg_dsl_dtypes[pd].cenum, p->name);
            end(b);
            if (a->div16 && a->div16[k]) {
                sg_buf_printf(b, "sg_dslg_aligned(%s, 16, &sg_ok)", t);
                end(b);
            }
            if (a->int32 && a->int32[k]) { /* an object's tensors carry an int32 size */
                sg_buf_printf(b, "sg_dslg_i32(sg_dslg_numel(%s, &sg_ok))", t);
                end(b);
            }
        } else if (p->ptr) { /* an output: like's dtype where it has none of its own */
            const sg_dsl_output *o = s->kind == SG_DSLS_OUT ? &dc->outputs[s->index]
                                                            : &dc->scratch[s->index];
            if (o->dtype < 0 && o->dtype_var < 0) {
                sg_buf_printf(b, "sg_dslg_dtype(%s, &sg_ok) == %s /* %s */", cname[o->like],
                              sg_dsl_dtypes[pd].cenum, p->name);
                end(b);
            }
            if (a->int32 && a->int32[k] && o->nsizes) { /* the product of its sizes */
                numel_i32(b, dc, o, a);
            } else if (a->int32 && a->int32[k]) { /* its numel is at most like's */
                sg_buf_printf(b, "sg_dslg_i32(sg_dslg_numel(%s, &sg_ok))", cname[o->like]);
                end(b);
            }
        } else {
            bool i32 = strcmp(sg_dsl_dtypes[pd].triton, "i32") == 0;
            sg_buf_puts(b, i32 ? "sg_dslg_i32(" : "((void)(");
            sg_dsl_c_expr(b, &p->value, dc, a);
            sg_buf_printf(b, i32 ? ") /* %s */" : "), true) /* %s */", p->name);
            end(b);
        }
    }
    for (uint32_t j = 0; j < dc->noutputs + dc->nscratch; j++) {
        uint32_t             i;
        const char          *name;
        const sg_dsl_output *o = sg_dsl_c_made_tensor(dc, j, &name, &i);
        if (o->keep_last) {
            sg_buf_printf(b, "sg_dslg_dim(%s, &sg_ok) >= %lld", cname[o->like],
                          (long long)o->keep_last);
            end(b);
        }
        for (uint32_t k = 0; k < o->nsizes; k++) {
            sg_buf_putc(b, '(');
            sg_dsl_c_expr(b, &o->sizes[k], dc, a);
            sg_buf_printf(b, ") >= 0 /* %s%u's size %u */", name, i, k);
            end(b);
        }
    }
    if (dc->lang->object) return; /* its host function picks its grid */
    sg_buf_puts(b, "sg_dslg_grid_ok(");
    for (int g = 0; g < 3; g++) {
        if (g) sg_buf_puts(b, ", ");
        sg_dsl_c_expr(b, &dc->launch_grid[g], dc, a);
    }
    sg_buf_putc(b, ')');
    end(b);
}

/* One point's conjuncts: their text, and where each starts in it. */
typedef struct point {
    sg_buf       text;
    const char **at;
    bool        *shared; /* tested once, before the points */
    uint32_t     n;
} point;

static bool has(const point *pt, const char *c) {
    for (uint32_t k = 0; k < pt->n; k++)
        if (!strcmp(pt->at[k], c)) return true;
    return false;
}

static bool point_make(point *pt, const sg_dsl_decl *dc, const sg_dsl_artifact *a) {
    sg_buf_init(&pt->text);
    pt->at = NULL, pt->shared = NULL, pt->n = 0;
    uint32_t            nops = sg_dsl_conjuncts(dc->when.node, NULL, 0);
    const sg_dsl_node **ops = malloc(nops * sizeof *ops);
    if (!ops) return false;
    sg_dsl_conjuncts(dc->when.node, ops, nops);
    /* Rationale: the C of a node needs no parentheses of ours: an operator's comes in its own */
    for (uint32_t k = 0; k < nops; k++) {
        sg_dsl_c_node(&pt->text, ops[k], dc, a);
        end(&pt->text);
    }
    free(ops);
    assumptions(&pt->text, dc, a);
    if (pt->text.oom) return false;
    for (size_t i = 0; i < pt->text.len; i++) pt->n += pt->text.data[i] == '\0';
    pt->at = malloc(pt->n * sizeof *pt->at);
    pt->shared = calloc(pt->n, sizeof *pt->shared);
    if (!pt->at || !pt->shared) return false;
    /* a conjunct the point has already (two outputs like one input) is left out */
    const char *c = pt->text.data, *stop = pt->text.data + pt->text.len;
    pt->n = 0;
    for (; c < stop; c += strlen(c) + 1)
        if (!has(pt, c)) pt->at[pt->n++] = c;
    return true;
}

static void point_free(point *pt) {
    sg_buf_free(&pt->text);
    free(pt->at);
    free(pt->shared);
}

/* Marks in every point the conjuncts every point has. */
static void find_shared(point *pts, uint32_t n) {
    for (uint32_t k = 0; k < pts[0].n; k++) {
        const char *c = pts[0].at[k];
        bool        all = true;
        for (uint32_t p = 1; p < n && all; p++) all = has(&pts[p], c);
        for (uint32_t p = 0; p < n && all; p++)
            for (uint32_t m = 0; m < pts[p].n; m++)
                if (!strcmp(pts[p].at[m], c)) pts[p].shared[m] = true;
    }
}

/* Whether conjunct c calls into the runtime to walk or reach through a tensor (contiguity, numel,
 * a data pointer's alignment), where the others read a field or compare: those come after the
 * others, so a call the cheap tests decline never pays for them. */
static bool costly(const char *c) {
    return strstr(c, "sg_dslg_contiguous(") || strstr(c, "sg_dslg_numel(") ||
           strstr(c, "sg_dslg_aligned(");
}

/* "C1\n            && C2...": point pt's conjuncts that are shared (or not), the cheap ones
 * (cost 0), the costly ones (1) or both in that order (2); "true" where there are none. */
static void conjuncts(sg_buf *b, const point *pt, bool shared, int cost, const char *sep) {
    bool any = false;
    for (int pass = 0; pass < 2; pass++) {
        if (cost != 2 && cost != pass) continue;
        for (uint32_t k = 0; k < pt->n; k++) {
            if (pt->shared[k] != shared || costly(pt->at[k]) != (pass == 1)) continue;
            if (any) sg_buf_puts(b, sep);
            sg_buf_puts(b, pt->at[k]);
            any = true;
        }
    }
    if (!any) sg_buf_puts(b, "true");
}

/* Whether pt has a shared conjunct of the cost (0 cheap, 1 costly). */
static bool any_shared(const point *pt, int cost) {
    for (uint32_t k = 0; k < pt->n; k++)
        if (pt->shared[k] && costly(pt->at[k]) == (cost == 1)) return true;
    return false;
}

/* The block that returns -1 where a shared conjunct of the cost fails. */
static void shared_block(sg_buf *b, const point *pt, int cost, const char *what) {
    if (!any_shared(pt, cost)) return;
    sg_buf_printf(b, "    /* %s */\n    {\n        bool sg_ok = true;\n        if (!(", what);
    conjuncts(b, pt, true, cost, "\n              && ");
    sg_buf_puts(b, ")\n            || !sg_ok)\n            return -1;\n    }\n");
}

void sg_dsl_c_when(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_set *s) {
    sg_buf_printf(b, "/* The artifact of %s that takes the call (its index among the "
                  "declaration's), or -1. Pure. */\n", dc->name);
    if (dc->is_template) /* a table or the caller picks the point: only it is tested */
        sg_buf_puts(b, "/* A template's: sg_only is the one artifact tested. */\n");
    /* a template's is called from its table's code: not inlined (SG_DSLG_INLINE) */
    sg_buf_printf(b, "%s int sg_dslg_%s_when(", dc->is_template ? "static" : "SG_DSLG_INLINE",
                  dc->name);
    sg_dsl_c_params(b, dc->op);
    sg_buf_puts(b, dc->is_template ? ", int32_t sg_cap, int sg_only) {\n"
                                   : ", int32_t sg_cap) {\n");
    sg_dsl_c_void_args(b, dc->op);
    sg_buf_puts(b, "    if (");
    for (uint32_t k = 0; k < dc->narchs; k++)
        sg_buf_printf(b, "%ssg_cap != %d", k ? " && " : "", dc->caps[k]);
    sg_buf_puts(b, ") return -1;\n");
    uint32_t n = dc->nartifacts;
    point   *pts = calloc(n ? n : 1, sizeof *pts);
    bool     ok = pts != NULL;
    for (uint32_t i = 0; i < n && ok; i++) ok = point_make(&pts[i], dc, &s->arts[dc->first + i]);
    if (!ok) {
        b->oom = true;
        sg_buf_puts(b, "    return -1;\n}\n\n");
    } else {
        /* a template tests one point a call: nothing to share */
        if (n > 1 && !dc->is_template) find_shared(pts, n);
        shared_block(b, &pts[0], 0, "what every point tests, once: the fields");
        sg_buf_puts(b, "    int sg_pick = -1;\n");
        for (uint32_t i = 0; i < n; i++) {
            sg_buf_puts(b, "    ");
            sg_dsl_c_point_comment(b, dc, &s->arts[dc->first + i]);
            sg_buf_printf(b, "\n    if (sg_pick < 0 && sg_cap == %d",
                          dc->caps[s->arts[dc->first + i].arch]);
            if (dc->is_template) sg_buf_printf(b, " && sg_only == %u", i);
            sg_buf_puts(b, ") {\n        bool sg_ok = true;\n        if (");
            conjuncts(b, &pts[i], false, 2, "\n            && ");
            sg_buf_printf(b, "\n            && sg_ok)\n            sg_pick = %u;\n    }\n", i);
        }
        sg_buf_puts(b, "    if (sg_pick < 0) return -1;\n");
        shared_block(b, &pts[0], 1,
                     "what every point tests, once a point is found: the runtime's walks");
        if (dc->when_c) { /* it sees no point: where it says no, no other point can run */
            sg_buf_printf(b, "    return %s(", dc->when_c);
            sg_dsl_c_args(b, dc->op);
            sg_buf_puts(b, ") ? sg_pick : -1;\n}\n\n");
        } else {
            sg_buf_puts(b, "    return sg_pick;\n}\n\n");
        }
    }
    for (uint32_t i = 0; pts && i < n; i++) point_free(&pts[i]);
    free(pts);
}
