/* dsl_table.c: decision tables (docs/gemm.md): a tuner's choice of backend per shape class of a
 * matrix product, read as a declaration and checked against the model and the templates read
 * before it: every key, the operands and the m, n, k (and batch) expressions, the functions it
 * calls, each rule's class, backend and configuration, and that no two classes overlap. */
#include "derive.h"
#include "dsl_load.h"

#include "schema/sg_type_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const layouts[4] = {"nn", "nt", "tn", "tt"};

/* The fields of sg_gemm_lt_config (runtime/sg_gemm_table.h), in order: `algo: {...}`; the
 * generated initializers name them, so the compiler holds the two lists together. */
const char *const sg_dsl_lt_keys[SG_DSL_LT_FIELDS + 1] = {
    "algo", "tile", "stages", "splitk", "reduction", "swizzle", "custom", "inner", "cluster",
    NULL};

/* A Tensor argument of the op named by v into *index. */
static bool read_operand(sg_dsl_loader *L, const sg_dsl_decl *dc, const char *key,
                         const sg_ynode *v, uint32_t *index) {
    if (!sg_dsl_want_scalar(L, key, v)) return false;
    const sg_schema *s = &dc->op->schema;
    for (uint32_t i = 0; i < s->nargs; i++)
        if (strcmp(s->args[i].name, v->text) == 0) {
            if (sg_type_family_of(s->args[i].type) != SG_FAM_TENSOR) break;
            *index = i;
            return true;
        }
    sg_dsl_err(L, v->pos, "'%s' needs a Tensor argument of %s, not '%s'", key, dc->op_name,
               v->text);
    return false;
}

/* `tuned`: where and how the table was measured, kept as text for the generated comment. */
static bool read_tuned(sg_dsl_loader *L, sg_dsl_table *t, const sg_ynode *v) {
    static const char *const keys[] = {"device", "capability", "driver", "cuda", "cublaslt",
                                       "?triton", "method", NULL};
    const sg_ynode *val[sizeof keys / sizeof *keys - 1];
    if (!sg_dsl_want_kind(L, "tuned", v, SG_Y_MAP) ||
        !sg_dsl_take_keys(L, v, "'tuned'", keys, val))
        return false;
    int64_t cap;
    if (!sg_dsl_want_int(L, "capability", val[1], 10, 1000, &cap)) return false;
    t->cap = (int32_t)cap;
    if (!(t->tuned = sg_dsl_alloc(L, v->nitems * sizeof *t->tuned))) return false;
    for (uint32_t i = 0; i + 1 < v->nitems; i += 2) {
        if (!sg_dsl_want_scalar(L, v->items[i]->text, v->items[i + 1])) return false;
        t->tuned[t->ntuned++] = v->items[i]->text;
        t->tuned[t->ntuned++] = v->items[i + 1]->text;
    }
    return true;
}

static bool read_int(sg_dsl_loader *L, const char *key, const sg_ynode *v, int64_t *out) {
    return sg_dsl_want_int(L, key, v, 1, INT64_MAX, out);
}

/* An inclusive range [lo, hi] of positive ints (`m`, `batch`). */
static bool read_range(sg_dsl_loader *L, const char *key, const sg_ynode *v, int64_t *lo,
                       int64_t *hi) {
    if (v->kind != SG_Y_SEQ || v->nitems != 2) {
        sg_dsl_err(L, v->pos, "'%s' is a range [first, last], not %s", key, sg_dsl_kind_text(v));
        return false;
    }
    if (!read_int(L, key, v->items[0], lo) || !read_int(L, key, v->items[1], hi)) return false;
    if (*hi < *lo) {
        sg_dsl_err(L, v->pos, "'%s' is an empty range: %lld > %lld", key, (long long)*lo,
                   (long long)*hi);
        return false;
    }
    return true;
}

static bool read_algo(sg_dsl_loader *L, const sg_ynode *v, int32_t algo[9]) {
    const sg_ynode *val[SG_DSL_LT_FIELDS];
    if (!sg_dsl_want_kind(L, "algo", v, SG_Y_MAP) ||
        !sg_dsl_take_keys(L, v, "'algo'", sg_dsl_lt_keys, val))
        return false;
    for (int i = 0; i < SG_DSL_LT_FIELDS; i++) {
        /* cuBLASLt's ranges: split-K may be -1 (its own choice), the inner and cluster shape
         * ids are 16-bit, the rest non-negative 32-bit */
        int64_t lo = i == 3 ? -1 : 0, hi = i >= 7 ? UINT16_MAX : INT32_MAX, x;
        if (!sg_dsl_want_int(L, sg_dsl_lt_keys[i], val[i], lo, hi, &x)) return false;
        algo[i] = (int32_t)x;
    }
    return true;
}

static bool read_rule(sg_dsl_loader *L, sg_dsl_table *t, const sg_ynode *e, sg_dsl_rule *r) {
    static const char *const keys[] = {"dtype", "layout", "m", "n", "k", "use", "?algo",
                                       "?point", "?gain", "?batch", NULL};
    enum { DTYPE, LAYOUT, M, N, K, USE, ALGO, POINT, GAIN, BATCH };
    const sg_ynode *v[10];
    memset(r, 0, sizeof *r);
    r->pos = e->pos;
    if (!sg_dsl_want_kind(L, "rules", e, SG_Y_MAP) ||
        !sg_dsl_take_keys(L, e, "a rule", keys, v) || !sg_dsl_want_scalar(L, "dtype", v[DTYPE]) ||
        !sg_dsl_want_scalar(L, "layout", v[LAYOUT]) || !sg_dsl_want_scalar(L, "use", v[USE]))
        return false;
    if ((r->dtype = sg_dsl_dtype_find(v[DTYPE]->text, v[DTYPE]->len)) < 0) {
        sg_dsl_err(L, v[DTYPE]->pos, "'%s' is not a dtype", v[DTYPE]->text);
        return false;
    }
    for (r->layout = 0; r->layout < 4; r->layout++)
        if (strcmp(layouts[r->layout], v[LAYOUT]->text) == 0) break;
    if (r->layout == 4) {
        sg_dsl_err(L, v[LAYOUT]->pos, "'layout' is nn, nt, tn or tt (A's and B's), not '%s'",
                   v[LAYOUT]->text);
        return false;
    }
    /* float32 runs through TF32 only where the user allows it (PyTorch's allow_tf32): the
     * tuner measured it so, and the table declines float32 where the `tf32` function says no */
    if (strcmp(sg_dsl_dtypes[r->dtype].name, "float32") == 0 && !t->fn[SG_DSL_FN_TF32]) {
        sg_dsl_err(L, v[DTYPE]->pos, "a float32 class needs the table's 'tf32' function (float32 "
                   "runs through TF32 only where the user allows it)");
        return false;
    }
    if (!read_range(L, "m", v[M], &r->m_lo, &r->m_hi) || !read_int(L, "n", v[N], &r->n) ||
        !read_int(L, "k", v[K], &r->k))
        return false;
    /* without its own range a class holds every batch of a batched product, and the product
     * of a table without `batch` has batch 1 */
    r->batch_lo = 1;
    r->batch_hi = t->has_batch ? INT64_MAX : 1;
    if (v[BATCH] && !t->has_batch) {
        sg_dsl_err(L, v[BATCH]->pos, "a class's 'batch' needs the table's 'batch' (the call's "
                   "batch count, an int expression)");
        return false;
    }
    if (v[BATCH] && !read_range(L, "batch", v[BATCH], &r->batch_lo, &r->batch_hi)) return false;
    if (v[GAIN]) {
        char *end;
        if (!sg_dsl_want_scalar(L, "gain", v[GAIN])) return false;
        double g = strtod(v[GAIN]->text, &end);
        if (*end || !(g > 0)) {
            sg_dsl_err(L, v[GAIN]->pos, "'gain' is a positive number, not '%s'", v[GAIN]->text);
            return false;
        }
        r->gain = v[GAIN]->text;
    }
    const char *use = v[USE]->text;
    if (strcmp(use, "heuristic") == 0) {
        r->use = SG_DSL_USE_HEURISTIC;
    } else if (strcmp(use, "cublaslt") == 0) {
        r->use = SG_DSL_USE_CUBLASLT;
        if (!t->fn[SG_DSL_FN_CUBLASLT]) {
            sg_dsl_err(L, v[USE]->pos, "'use: cublaslt' needs the table's 'cublaslt' function");
            return false;
        }
    } else if (strcmp(use, "cublas") == 0) {
        r->use = SG_DSL_USE_CUBLAS;
        if (!t->fn[SG_DSL_FN_CUBLAS]) {
            sg_dsl_err(L, v[USE]->pos, "'use: cublas' needs the table's 'cublas' function");
            return false;
        }
    } else if (!v[POINT]) {
        sg_dsl_err(L, v[USE]->pos, "unknown backend '%s': 'heuristic', 'cublaslt', 'cublas' or a "
                   "template (a declaration with 'template: true', with the rule's 'point')", use);
        return false;
    } else { /* a template, found once every file is read (sg_dsl_link_tables) */
        r->use = SG_DSL_USE_TEMPLATE;
        r->tpl_name = use;
        r->tpl_pos = v[USE]->pos;
        r->point = v[POINT];
    }
    const char *need = r->use == SG_DSL_USE_CUBLASLT ? "algo"
                       : r->use == SG_DSL_USE_TEMPLATE ? "point" : NULL;
    for (int i = ALGO; i <= POINT; i++)
        if (v[i] && (!need || strcmp(keys[i] + 1, need) != 0)) {
            sg_dsl_err(L, v[i]->pos, "'%s' is for %s, not for 'use: %s'", keys[i] + 1,
                       i == ALGO ? "'use: cublaslt'" : "a template", use);
            return false;
        }
    if (need && !v[r->use == SG_DSL_USE_CUBLASLT ? ALGO : POINT]) {
        sg_dsl_err(L, e->pos, "a rule with 'use: %s' needs '%s'", use, need);
        return false;
    }
    if (r->use == SG_DSL_USE_CUBLASLT) return read_algo(L, v[ALGO], r->algo);
    return r->use != SG_DSL_USE_TEMPLATE || sg_dsl_want_kind(L, "point", v[POINT], SG_Y_MAP);
}

static int rule_cmp(const void *x, const void *y) {
    const sg_dsl_rule *a = x, *b = y;
#define SG_CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
    SG_CMP(dtype);
    SG_CMP(layout);
    SG_CMP(n);
    SG_CMP(k);
    SG_CMP(batch_lo);
    SG_CMP(m_lo);
#undef SG_CMP
    return a->pos.line < b->pos.line ? -1 : a->pos.line > b->pos.line;
}

static bool same_group(const sg_dsl_rule *a, const sg_dsl_rule *b) {
    return a->dtype == b->dtype && a->layout == b->layout && a->n == b->n && a->k == b->k;
}

static bool overlap(const sg_dsl_rule *a, const sg_dsl_rule *b) {
    return a->batch_lo <= b->batch_hi && b->batch_lo <= a->batch_hi && a->m_lo <= b->m_hi &&
           b->m_lo <= a->m_hi;
}

/* At the later of p and r (p first in the sorted order), naming the other and both classes. */
static void overlap_err(sg_dsl_loader *L, const sg_dsl_table *t, const sg_dsl_rule *p,
                        const sg_dsl_rule *r) {
    const sg_dsl_rule *late = p->pos.line > r->pos.line ? p : r;
    char batch[128] = "";
    if (t->has_batch)
        snprintf(batch, sizeof batch, "batch [%lld, %lld] and [%lld, %lld], ",
                 (long long)p->batch_lo, (long long)p->batch_hi, (long long)r->batch_lo,
                 (long long)r->batch_hi);
    sg_dsl_err(L, late->pos, "this class overlaps the one at line %u (%s %s, n %lld, k %lld, "
               "%sm [%lld, %lld] and [%lld, %lld])", (late == p ? r : p)->pos.line,
               sg_dsl_dtypes[r->dtype].name, layouts[r->layout], (long long)r->n,
               (long long)r->k, batch, (long long)p->m_lo, (long long)p->m_hi,
               (long long)r->m_lo, (long long)r->m_hi);
}

static bool read_rules(sg_dsl_loader *L, sg_dsl_table *t, const sg_ynode *v) {
    if (!sg_dsl_want_kind(L, "rules", v, SG_Y_SEQ)) return false;
    if (!v->nitems) {
        sg_dsl_err(L, v->pos, "'rules' lists no class");
        return false;
    }
    if (!(t->rules = sg_dsl_alloc(L, v->nitems * sizeof *t->rules)) ||
        !(t->tpls = sg_dsl_alloc(L, v->nitems * sizeof *t->tpls)))
        return false;
    for (uint32_t i = 0; i < v->nitems; i++) {
        sg_dsl_rule *r = &t->rules[t->nrules];
        if (!read_rule(L, t, v->items[i], r)) return false;
        t->nrules++;
        t->nlt += r->use == SG_DSL_USE_CUBLASLT;
        t->nblas += r->use == SG_DSL_USE_CUBLAS;
        t->nf32 += strcmp(sg_dsl_dtypes[r->dtype].name, "float32") == 0;
    }
    qsort(t->rules, t->nrules, sizeof *t->rules, rule_cmp);
    /* two classes of a group (one dtype, layout, n, k) overlap where their batch ranges and
     * their m ranges both meet: every pair, as a group holds a few */
    for (uint32_t g = 0, end; g < t->nrules; g = end) {
        for (end = g + 1; end < t->nrules && same_group(&t->rules[g], &t->rules[end]); end++) {}
        for (uint32_t i = g; i < end; i++)
            for (uint32_t j = i + 1; j < end; j++)
                if (overlap(&t->rules[i], &t->rules[j])) {
                    overlap_err(L, t, &t->rules[i], &t->rules[j]);
                    return false;
                }
    }
    return true;
}

/* A function the generated code calls (`key`: `cublaslt`, `tf32`): a C name that nothing the
 * generated code declares hides or clashes with. */
static bool read_fn_name(sg_dsl_loader *L, const sg_dsl_decl *dc, const char *key,
                         const sg_ynode *v, const char **out) {
    if (!sg_dsl_want_scalar(L, key, v)) return false;
    if (!sg_derive_c_identifier(v->text, false) || sg_derive_c_reserved_word(v->text)) {
        sg_dsl_err(L, v->pos, "'%s' needs a C function name, not '%s'", key, v->text);
        return false;
    }
    uint32_t before = L->d->nerrors;
    if (!sg_dsl_fn_name_free(L->s, dc, key, v->text, v->pos, L->d)) {
        L->errors += L->d->nerrors - before;
        return false;
    }
    *out = v->text;
    return true;
}

const char *const sg_dsl_fn_keys[SG_DSL_NFNS] = {"cublaslt", "cublas", "tf32"};

static bool read_table(sg_dsl_loader *L, sg_dsl_table *t, const sg_ynode *v) {
    static const char *const keys[] = {"tuned", "a", "b", "m", "n", "k", "?batch", "?cublaslt",
                                       "?cublas", "?tf32", "rules", NULL};
    enum { TUNED, A, B, M, N, K, BATCH, CUBLASLT, CUBLAS, TF32, RULES };
    _Static_assert(CUBLAS - CUBLASLT == SG_DSL_FN_CUBLAS && TF32 - CUBLASLT == SG_DSL_FN_TF32,
                   "the function keys in SG_DSL_FN_* order");
    const sg_ynode *val[11];
    sg_dsl_decl *dc = t->dc;
    if (!sg_dsl_want_kind(L, "table", v, SG_Y_MAP) ||
        !sg_dsl_take_keys(L, v, "a decision table", keys, val) || !read_tuned(L, t, val[TUNED]) ||
        !read_operand(L, dc, "a", val[A], &t->a) || !read_operand(L, dc, "b", val[B], &t->b))
        return false;
    char scope[300];
    snprintf(scope, sizeof scope, "an argument of %s", dc->op_name);
    sg_dsl_expr *e[4] = {&t->m, &t->n, &t->k, &t->batch};
    static const char *const what[4] = {"'m'", "'n'", "'k'", "'batch'"};
    for (int i = 0; i < 4; i++)
        if (val[M + i] && !sg_dsl_expression(L, dc, val[M + i], e[i], SG_DSLT_INT, what[i],
                                             (sg_dsl_scope_ud){0}, scope))
            return false;
    t->has_batch = val[BATCH] != NULL;
    /* one C function has one signature: the functions are declared apart */
    for (int i = 0; i < SG_DSL_NFNS; i++) {
        const sg_ynode *fv = val[CUBLASLT + i];
        if (!fv) continue;
        if (!read_fn_name(L, dc, sg_dsl_fn_keys[i], fv, &t->fn[i])) return false;
        t->fn_pos[i] = fv->pos;
        for (int j = 0; j < i; j++)
            if (t->fn[j] && strcmp(t->fn[i], t->fn[j]) == 0) {
                sg_dsl_err(L, fv->pos, "'%s' names '%s', the table's '%s' function: one C "
                           "function has one signature", sg_dsl_fn_keys[i], t->fn[i],
                           sg_dsl_fn_keys[j]);
                return false;
            }
    }
    return read_rules(L, t, val[RULES]);
}

void sg_dsl_table_entry(sg_dsl_loader *L, const sg_ynode *e) {
    static const char *const keys[] = {"name", "op", "key", "?priority", "table", NULL};
    enum { NAME, OP, KEY, PRIORITY, TABLE };
    const sg_ynode *v[5];
    sg_dsl_set *s = L->s;
    sg_dsl_table *t = sg_dsl_alloc(L, sizeof *t);
    sg_dsl_decl *dc = sg_dsl_alloc(L, sizeof *dc);
    if (!t || !dc) return;
    memset(t, 0, sizeof *t);
    memset(dc, 0, sizeof *dc);
    t->dc = dc;
    dc->pos = e->pos;
    dc->file = L->src->path;
    if (!sg_dsl_take_keys(L, e, "a decision table's entry", keys, v) ||
        !sg_dsl_want_scalar(L, "name", v[NAME]) || !sg_dsl_want_scalar(L, "key", v[KEY]))
        return;
    dc->name = v[NAME]->text;
    if (!sg_derive_c_identifier(dc->name, true) || dc->name[0] == '_') {
        sg_dsl_err(L, v[NAME]->pos, "'name' needs [a-z][a-z0-9_]*, not '%s'", dc->name);
        return;
    }
    const sg_dsl_decl *other = sg_dsl_find_decl(s, dc->name);
    if (other) {
        sg_dsl_err(L, v[NAME]->pos, "a declaration named '%s' exists already (%s:%u)", dc->name,
                   other->pos.src->path, other->pos.line);
        return;
    }
    if (strcmp(v[KEY]->text, "CUDA") != 0) {
        sg_dsl_err(L, v[KEY]->pos, "'key' needs CUDA, not '%s'", v[KEY]->text);
        return;
    }
    int64_t prio = 0;
    if (!sg_dsl_read_op_name(L, dc, v[OP]) || !sg_dsl_arg_syms(L, dc, 0) ||
        (v[PRIORITY] && !sg_dsl_want_int(L, "priority", v[PRIORITY], INT32_MIN, INT32_MAX, &prio)))
        return;
    dc->priority = (int32_t)prio;
    if (!read_table(L, t, v[TABLE])) return;
    if (s->ntables == s->captables) {
        uint32_t c = s->captables ? 2 * s->captables : 4;
        sg_dsl_table **p = realloc(s->tables, c * sizeof *p);
        if (!p) {
            sg_yaml_oom(L->r);
            return;
        }
        s->tables = p, s->captables = c;
    }
    s->tables[s->ntables++] = t;
}

/* ---- linking the rules to their templates ------------------------------------------------- */

/* The artifact (its index among tpl's) of r's point at capability cap into r->art; false after
 * an error. */
static bool find_point(const sg_dsl_set *s, const sg_dsl_decl *tpl, int32_t cap, sg_dsl_rule *r,
                       sg_diag *d) {
    const sg_ynode *v = r->point;
    sg_dsl_value want[64];
    bool seen[64] = {false};
    if (tpl->ngrid > 64 || v->nitems / 2 != tpl->ngrid) {
        sg_diag_report(d, SG_ERROR, v->pos, "'point' gives %u of the %u grid variables of '%s'",
                       v->nitems / 2, tpl->ngrid, tpl->name);
        return false;
    }
    for (uint32_t i = 0; i + 1 < v->nitems; i += 2) {
        const sg_ynode *k = v->items[i], *x = v->items[i + 1];
        uint32_t g = 0;
        while (g < tpl->ngrid && strcmp(tpl->grid[g].name, k->text) != 0) g++;
        if (g == tpl->ngrid || seen[g] || x->kind != SG_Y_SCALAR) {
            sg_diag_report(d, SG_ERROR, k->pos, g == tpl->ngrid ? "'%s' is not a grid variable of "
                           "'%s'" : seen[g] ? "'%s' is given twice" : "'%s' needs a value",
                           k->text, tpl->name);
            return false;
        }
        seen[g] = true;
        /* as the grid reads its values: plain scalars, a dtype name or an integer */
        if (tpl->grid[g].type == SG_DSLT_DTYPE) {
            want[g] = (sg_dsl_value){SG_DSLT_DTYPE, sg_dsl_dtype_find(x->text, x->len)};
        } else {
            char *end;
            errno = 0;
            want[g] = (sg_dsl_value){SG_DSLT_INT, strtoll(x->text, &end, 10)};
            if (*end || errno) want[g].type = SG_DSLT_ERROR;
        }
        if (!x->plain) want[g].type = SG_DSLT_ERROR;
    }
    bool in_grid = false;
    for (uint32_t i = 0; i < tpl->nartifacts; i++) {
        const sg_dsl_artifact *a = &s->arts[tpl->first + i];
        bool same = true;
        for (uint32_t g = 0; g < tpl->ngrid && same; g++)
            same = want[g].type == a->vals[g].type && want[g].i == a->vals[g].i;
        if (!same) continue;
        in_grid = true;
        if (tpl->caps[a->arch] == cap) {
            r->art = i;
            return true;
        }
    }
    if (in_grid)
        sg_diag_report(d, SG_ERROR, v->pos, "'%s' is not built for capability %d (its archs do "
                       "not list it), the table's", tpl->name, cap);
    else
        sg_diag_report(d, SG_ERROR, v->pos, "'%s' has no such point: its grid (the artifacts "
                       "exported) does not hold it", tpl->name);
    return false;
}

/* Tables share LIB_dsl.c, where each declares its functions: a name two tables give must be
 * one function, of one key and (but tf32's) one op's arguments. */
static void shared_fns(const sg_dsl_set *s, sg_diag *d) {
    for (uint32_t i = 0; i < s->ntables; i++) {
        const sg_dsl_table *t = s->tables[i];
        for (uint32_t j = 0; j < i; j++) {
            const sg_dsl_table *o = s->tables[j];
            for (int a = 0; a < SG_DSL_NFNS; a++)
                for (int b = 0; b < SG_DSL_NFNS; b++) {
                    const char *mine = t->fn[a];
                    if (!mine || !o->fn[b] || strcmp(mine, o->fn[b]) != 0) continue;
                    if (a == b && (a == SG_DSL_FN_TF32 || t->dc->op == o->dc->op)) continue;
                    sg_diag_report(d, SG_ERROR, t->fn_pos[a], "'%s' names '%s', which table '%s' "
                                   "(%s:%u) names as its '%s' function%s: one C function has one "
                                   "signature", sg_dsl_fn_keys[a], mine, o->dc->name,
                                   o->dc->pos.src->path, o->dc->pos.line, sg_dsl_fn_keys[b],
                                   a == b ? " for another op" : "");
                }
        }
    }
}

int sg_dsl_link_tables(sg_dsl_set *s, sg_diag *d) {
    uint32_t before = d->nerrors;
    shared_fns(s, d);
    for (uint32_t i = 0; i < s->ntables; i++) {
        sg_dsl_table *t = s->tables[i];
        for (uint32_t j = 0; j < t->nrules; j++) {
            sg_dsl_rule *r = &t->rules[j];
            if (r->use != SG_DSL_USE_TEMPLATE) continue;
            const sg_dsl_decl *tpl = sg_dsl_find_decl(s, r->tpl_name);
            if (!tpl) {
                sg_diag_report(d, SG_ERROR, r->tpl_pos, "unknown backend '%s': 'heuristic', "
                               "'cublaslt', 'cublas' or a template (a declaration with "
                               "'template: true')",
                               r->tpl_name);
                continue;
            }
            if (!tpl->is_template) {
                sg_diag_report(d, SG_ERROR, r->tpl_pos, "'%s' is not a template (it needs "
                               "'template: true')", r->tpl_name);
                continue;
            }
            if (tpl->op != t->dc->op) {
                sg_diag_report(d, SG_ERROR, r->tpl_pos, "template '%s' overrides %s, not %s",
                               r->tpl_name, tpl->op_name, t->dc->op_name);
                continue;
            }
            if (!find_point(s, tpl, t->cap, r, d)) continue;
            r->tpl = tpl;
            uint32_t k = 0;
            while (k < t->ntpls && t->tpls[k] != tpl) k++;
            if (k == t->ntpls) t->tpls[t->ntpls++] = tpl;
        }
    }
    return (int)(d->nerrors - before);
}
