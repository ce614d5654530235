/* dsl_read.c: what the readers of DSL declarations share (dsl_decl.c, dsl_table.c,
 * dsl_launch.c): located errors, memory, the checks of a YAML value's kind, the op a
 * declaration names and its arguments as the predicate language sees them, expressions read
 * in a scope, and the names the grid and tables look up. */
#include "dsl_load.h"

#include "schema/sg_type_table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_dsl_err(sg_dsl_loader *L, sg_pos pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sg_diag_vreport(L->d, SG_ERROR, pos, fmt, ap);
    va_end(ap);
    L->errors++;
}

void *sg_dsl_alloc(sg_dsl_loader *L, size_t n) {
    void *p = sg_arena_alloc(L->s->a, n ? n : 1);
    if (!p) sg_yaml_oom(L->r);
    return p;
}

static bool is_scalar(const sg_ynode *v) { return v->kind == SG_Y_SCALAR && !(v->plain && !v->len); }

const char *sg_dsl_kind_text(const sg_ynode *v) {
    return v->kind == SG_Y_SEQ ? "a list" : v->kind == SG_Y_MAP ? "a mapping"
                                          : is_scalar(v) ? "a scalar" : "an empty value";
}

bool sg_dsl_want_scalar(sg_dsl_loader *L, const char *key, const sg_ynode *v) {
    if (is_scalar(v)) return true;
    sg_dsl_err(L, v->pos, "'%s' needs a value, not %s", key, sg_dsl_kind_text(v));
    return false;
}

bool sg_dsl_want_kind(sg_dsl_loader *L, const char *key, const sg_ynode *v, sg_ynode_kind k) {
    if (v->kind == k) return true;
    sg_dsl_err(L, v->pos, "'%s' needs %s, not %s", key, k == SG_Y_SEQ ? "a list" : "a mapping",
        sg_dsl_kind_text(v));
    return false;
}

bool sg_dsl_want_int(sg_dsl_loader *L, const char *key, const sg_ynode *v, int64_t lo, int64_t hi,
                     int64_t *out) {
    if (!sg_dsl_want_scalar(L, key, v)) return false;
    char *end;
    errno = 0;
    long long n = strtoll(v->text, &end, 10);
    if (*end || errno || n < lo || n > hi || !v->plain) {
        sg_dsl_err(L, v->pos, "'%s' needs an integer from %lld to %lld, not '%s'", key,
                   (long long)lo, (long long)hi, v->text);
        return false;
    }
    *out = n;
    return true;
}

bool sg_dsl_take_keys(sg_dsl_loader *L, const sg_ynode *map, const char *what,
                      const char *const *known, const sg_ynode **vals) {
    bool ok = true;
    size_t nk = 0;
    while (known[nk]) vals[nk++] = NULL;
    for (uint32_t i = 0; i + 1 < map->nitems; i += 2) {
        const sg_ynode *k = map->items[i], *v = map->items[i + 1];
        size_t j = 0;
        for (; k->kind == SG_Y_SCALAR && j < nk; j++)
            if (strcmp(known[j] + (known[j][0] == '?'), k->text) == 0) break;
        if (k->kind != SG_Y_SCALAR || j == nk) {
            char list[256] = "";
            for (size_t q = 0; q < nk; q++) {
                strncat(list, q ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, known[q] + (known[q][0] == '?'), sizeof list - strlen(list) - 1);
            }
            sg_dsl_err(L, k->pos, "unknown key '%s' in %s (known: %s)",
                k->kind == SG_Y_SCALAR ? k->text : "?", what, list);
            ok = false;
        } else if (vals[j]) {
            sg_dsl_err(L, k->pos, "key '%s' given twice in %s", k->text, what);
            ok = false;
        } else {
            vals[j] = v;
        }
    }
    for (size_t j = 0; j < nk; j++)
        if (!vals[j] && known[j][0] != '?') {
            sg_dsl_err(L, map->pos, "%s lacks the key '%s'", what, known[j]);
            ok = false;
        }
    return ok;
}

/* ---- the op -------------------------------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b) {
    size_t n = strlen(b), row[128];
    if (n >= 128) return SIZE_MAX;
    for (size_t j = 0; j <= n; j++) row[j] = j;
    for (size_t i = 1; a[i - 1]; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            if (up + 1 < best) best = up + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[n];
}

static const sg_op *find_op(sg_dsl_loader *L, const sg_ynode *v) {
    const char *text = v->text, *sep = strstr(text, "::");
    char ns[128], name[256], full[400];
    const char *rest = sep ? sep + 2 : text;
    size_t nsl = sep ? (size_t)(sep - text) : 4;
    const char *dot = strchr(rest, '.');
    size_t nl = dot ? (size_t)(dot - rest) : strlen(rest);
    const char *ovl = dot ? dot + 1 : "";
    if (nsl >= sizeof ns || nl >= sizeof name || !nl) {
        sg_dsl_err(L, v->pos, "'op' needs ns::name.overload, not '%s'", text);
        return NULL;
    }
    memcpy(ns, sep ? text : "aten", nsl);
    ns[nsl] = '\0';
    memcpy(name, rest, nl);
    name[nl] = '\0';
    const sg_op *best = NULL, *same_name = NULL;
    size_t best_d = 4;
    for (uint32_t i = 0; i < L->m->nops; i++) {
        const sg_op *op = L->m->ops[i];
        if (!op->parsed) continue;
        bool ns_ok = strcmp(op->ns, ns) == 0, name_ok = strcmp(op->schema.name, name) == 0;
        if (ns_ok && name_ok && strcmp(op->schema.overload, ovl) == 0) return op;
        if (ns_ok && name_ok && !same_name) same_name = op;
        snprintf(full, sizeof full, "%s::%s", op->ns, op->schema.name);
        char want[400];
        snprintf(want, sizeof want, "%s::%s", ns, name);
        size_t dd = edit_distance(want, full);
        if (dd < best_d) best_d = dd, best = op;
    }
    if (same_name) {
        char list[512] = "";
        for (uint32_t i = 0; i < L->m->nops; i++) {
            const sg_op *op = L->m->ops[i];
            if (!op->parsed || strcmp(op->ns, ns) || strcmp(op->schema.name, name)) continue;
            strncat(list, list[0] ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, op->schema.overload[0] ? op->schema.overload : "(none)",
                    sizeof list - strlen(list) - 1);
        }
        sg_dsl_err(L, v->pos, "%s::%s has no overload '%s' (its overloads: %s)", ns, name, ovl,
                   list);
    } else if (best) {
        sg_dsl_err(L, v->pos, "no op '%s' in the schemas given; did you mean '%s::%s%s%s'?", text,
            best->ns, best->schema.name, best->schema.overload[0] ? "." : "",
            best->schema.overload);
    } else {
        sg_dsl_err(L, v->pos, "no op '%s' in the schemas given", text);
    }
    return NULL;
}

static sg_dsl_sym arg_sym(const sg_arg *a, uint32_t i) {
    sg_dsl_sym s = {a->name, SG_DSLS_ARG, SG_DSLT_ERROR, false, i, NULL};
    switch (sg_type_family_of(a->type)) {
    case SG_FAM_TENSOR: s.type = SG_DSLT_TENSOR; break;
    case SG_FAM_OPT_TENSOR: s.type = SG_DSLT_TENSOR, s.opt = true; break;
    case SG_FAM_INT: s.type = SG_DSLT_INT; break;
    case SG_FAM_OPT_INT: s.type = SG_DSLT_INT, s.opt = true; break;
    case SG_FAM_FLOAT: s.type = SG_DSLT_FLOAT; break;
    case SG_FAM_OPT_FLOAT: s.type = SG_DSLT_FLOAT, s.opt = true; break;
    case SG_FAM_BOOL: s.type = SG_DSLT_BOOL; break;
    case SG_FAM_OPT_BOOL: s.type = SG_DSLT_BOOL, s.opt = true; break;
    case SG_FAM_DTYPE: s.type = SG_DSLT_DTYPE; break;
    case SG_FAM_OPT_DTYPE: s.type = SG_DSLT_DTYPE, s.opt = true; break;
    case SG_FAM_INT_LIST: s.type = SG_DSLT_INT_LIST; break;
    case SG_FAM_OPT_INT_LIST: s.type = SG_DSLT_INT_LIST, s.opt = true; break;
    default: s.why = "the predicate language has no value of its type"; break;
    }
    return s;
}

bool sg_dsl_arg_syms(sg_dsl_loader *L, sg_dsl_decl *dc, uint32_t room) {
    const sg_schema *s = &dc->op->schema;
    if (!(dc->syms = sg_dsl_alloc(L, (s->nargs + 1 + room) * sizeof *dc->syms))) return false;
    for (uint32_t i = 0; i < s->nargs; i++) dc->syms[dc->nsyms++] = arg_sym(&s->args[i], i);
    dc->syms[dc->nsyms++] = (sg_dsl_sym){"capability", SG_DSLS_CAP, SG_DSLT_INT, false, 0, NULL};
    return true;
}

/* ---- scope --------------------------------------------------------------------------------- */

static const sg_dsl_sym *lookup(void *ud, const char *name) {
    const sg_dsl_scope_ud *u = ud;
    for (uint32_t i = 0; i < u->decl->nsyms; i++) {
        const sg_dsl_sym *s = &u->decl->syms[i];
        if (strcmp(s->name, name) != 0) continue;
        if (u->grid_only && s->kind != SG_DSLS_GRID) return NULL;
        if (!u->outs && (s->kind == SG_DSLS_OUT || s->kind == SG_DSLS_SCRATCH)) return NULL;
        return s;
    }
    return NULL;
}

bool sg_dsl_expression(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v, sg_dsl_expr *e,
                       sg_dsl_type want, const char *what, sg_dsl_scope_ud su,
                       const char *scope) {
    if (!sg_dsl_want_scalar(L, what, v)) return false;
    uint32_t n;
    const sg_span *sp = sg_yaml_spans(L->r, v, &n);
    sg_span *copy = sg_dsl_alloc(L, n * sizeof *copy);
    if (!copy) return false;
    if (n) memcpy(copy, sp, n * sizeof *copy);
    e->text = (sg_dsl_text){v->text, v->len, v->pos, copy, n};
    su.decl = dc;
    sg_dsl_scope sc = {lookup, &su, scope};
    uint32_t before = L->d->nerrors;
    e->node = sg_dsl_parse(L->s->a, &e->text, L->d);
    bool ok = e->node && sg_dsl_check(e->node, &sc, want, what, &e->text, L->d);
    L->errors += L->d->nerrors - before;
    return ok;
}

bool sg_dsl_read_op_name(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v) {
    if (!sg_dsl_want_scalar(L, "op", v) || !(dc->op = find_op(L, v))) return false;
    const sg_schema *s = &dc->op->schema;
    dc->op_name = v->text;
    if (s->varargs || s->varret || sg_schema_kind_of(s) != SG_KIND_FUNCTIONAL || !s->nrets) {
        sg_dsl_err(L, v->pos, "'%s' cannot take a DSL kernel: only functional ops that return "
            "Tensors can", v->text);
        return false;
    }
    for (uint32_t i = 0; i < s->nrets; i++)
        if (sg_type_family_of(s->rets[i].type) != SG_FAM_TENSOR) {
            sg_dsl_err(L, v->pos, "'%s' cannot take a DSL kernel: its result %u is not a Tensor",
                v->text, i);
            return false;
        }
    return true;
}

const char *sg_dsl_made_name(const char *s) {
    static const struct { const char *prefix, *what; } made[] = {
        {"out", "an output"}, {"scratch", "a scratch tensor"}};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        size_t n = strlen(made[i].prefix);
        if (strncmp(s, made[i].prefix, n) != 0 || !s[n]) continue;
        const char *d = s + n;
        while (*d >= '0' && *d <= '9') d++;
        if (!*d) return made[i].what;
    }
    return NULL;
}

const sg_dsl_decl *sg_dsl_find_decl(const sg_dsl_set *s, const char *name) {
    for (uint32_t i = 0; i < s->ndecls; i++)
        if (strcmp(s->decls[i]->name, name) == 0) return s->decls[i];
    for (uint32_t i = 0; i < s->ntables; i++)
        if (strcmp(s->tables[i]->dc->name, name) == 0) return s->tables[i]->dc;
    return NULL;
}
