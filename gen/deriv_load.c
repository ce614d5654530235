/* deriv_load.c: derivatives.yaml read against the model (deriv.h, docs/autograd.md). Each entry's
 * `name` is a schema; an entry belongs to the op whose schema prints the same (PyTorch matches
 * the text of the schema, so formatting aside the two must agree). Keys name inputs (backward
 * formulas), results (forward formulas), or are `dispatch` and `output_differentiability`. */
#include "deriv.h"
#include "derive.h"
#include "strmap.h"
#include "yaml_tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loader {
    sg_deriv_set    *s;
    const sg_model  *m;
    sg_diag         *d;
    sg_yreader      *r;
    sg_strmap        by_schema;   /* canonical schema (no namespace) -> op */
    sg_strmap        by_name;     /* "name.overload" -> op */
    sg_strmap        seen;        /* canonical schema -> the line of the entry that took it */
} loader;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void err(loader *L, sg_pos pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sg_diag_vreport(L->d, SG_ERROR, pos, fmt, ap);
    va_end(ap);
}

static void *alloc(loader *L, size_t n) {
    void *p = sg_arena_alloc(L->s->a, n ? n : 1);
    if (!p) sg_yaml_oom(L->r);
    return p;
}

/* Where byte off of scalar v is in the source (its spans: quoted and folded scalars). */
static sg_pos pos_in(loader *L, const sg_ynode *v, uint32_t off) {
    uint32_t n;
    const sg_span *sp = sg_yaml_spans(L->r, v, &n);
    sg_pos p = v->pos;
    for (uint32_t i = 0; i < n && sp[i].offset <= off; i++) {
        p = sp[i].pos;
        p.col += off - sp[i].offset;
    }
    return p;
}

/* The schema of s printed canonically, without its namespace, into the arena; NULL: no memory. */
static char *canonical(loader *L, const sg_schema *sc) {
    sg_buf b;
    sg_buf_init(&b);
    sg_schema_print(&b, sc, false);
    char *t = b.oom ? NULL : sg_arena_strndup(L->s->a, b.data, b.len);
    sg_buf_free(&b);
    if (!t) sg_yaml_oom(L->r);
    return t;
}

/* A helper op's kernels, which LIB_autograd.c declares and registers by name (deriv_emit_file.c):
 * C identifiers, or an error where the schema names them. */
static void helper_kernel_names(loader *L, const sg_op *op) {
    for (uint32_t k = 0; k < op->ndispatch; k++)
        if (!sg_derive_c_identifier(op->dispatch[k].kernel, false))
            err(L, op->dispatch[k].kernel_pos, "the kernel of helper op autograd::%s, '%s', is "
                "not a C identifier", op->schema.name, op->dispatch[k].kernel);
}

static bool index_ops(loader *L) {
    const sg_model *m = L->m;
    if (sg_strmap_init(&L->by_schema, L->s->a, m->nops) || sg_strmap_init(&L->by_name, L->s->a,
                                                                              m->nops) ||
        sg_strmap_init(&L->seen, L->s->a, 256))
        return false;
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (op->parsed && !strcmp(op->ns, "autograd")) helper_kernel_names(L, op);
        if (!op->parsed || strcmp(op->ns, "aten") != 0) continue;
        char *c = canonical(L, &op->schema);
        char  nm[512];
        int   n = snprintf(nm, sizeof nm, "%s.%s", op->schema.name, op->schema.overload);
        if (!c || n < 0 || (size_t)n >= sizeof nm) return false;
        if (!sg_strmap_put(&L->by_schema, c, strlen(c), (void *)op) ||
            !sg_strmap_put(&L->by_name, nm, (size_t)n, (void *)op))
            return false;
    }
    return true;
}

int sg_deriv_result_index(const sg_schema *sc, const char *name) {
    for (uint32_t k = 0; k < sc->nrets; k++) {
        char        own[24];
        const char *rn = sc->rets[k].name;
        if (!rn) {
            snprintf(own, sizeof own, sc->nrets == 1 ? "result" : "result%u", k);
            rn = own;
        }
        if (strcmp(rn, name) == 0) return (int)k;
    }
    return -1;
}

int sg_deriv_arg_index(const sg_schema *sc, const char *name) {
    for (uint32_t k = 0; k < sc->nargs; k++)
        if (strcmp(sc->args[k].name, name) == 0) return (int)k;
    return -1;
}

/* "self, other" into its names (trimmed), each an input of op (backward) or each a result
 * (forward); mixing the two, an empty name, or a name that is neither is an error. */
static bool split_key(loader *L, const sg_deriv *dv, const sg_ynode *k, sg_deriv_formula *f,
                      bool *forward) {
    const sg_schema *sc = &dv->op->schema;
    uint32_t n = 1;
    for (size_t i = 0; i < k->len; i++) n += k->text[i] == ',';
    if (!(f->names = alloc(L, n * sizeof *f->names))) return false;
    size_t at = 0;
    for (uint32_t j = 0; j < n; j++) {
        size_t end = at;
        while (end < k->len && k->text[end] != ',') end++;
        size_t a = at, z = end;
        while (a < z && k->text[a] == ' ') a++;
        while (z > a && k->text[z - 1] == ' ') z--;
        sg_pos p = pos_in(L, k, (uint32_t)a);
        char *name = sg_arena_strndup(L->s->a, k->text + a, z - a);
        if (!name) {
            sg_yaml_oom(L->r);
            return false;
        }
        bool is_arg = sg_deriv_arg_index(sc, name) >= 0;
        bool is_ret = sg_deriv_result_index(sc, name) >= 0;
        if (!*name || (!is_arg && !is_ret)) {
            err(L, p, "'%s' is neither an input nor a result of aten::%s%s%s", name,
                sc->name, *sc->overload ? "." : "", sc->overload);
            return false;
        }
        if (is_arg && is_ret) {
            err(L, p, "'%s' is both an input and a result of aten::%s%s%s", name, sc->name,
                *sc->overload ? "." : "", sc->overload);
            return false;
        }
        if (j && is_ret != *forward) {
            err(L, p, "'%s' mixes inputs and results in one key", k->text);
            return false;
        }
        *forward = is_ret;
        f->names[f->nnames++] = name;
        at = end + 1;
    }
    f->key_pos = k->pos;
    return true;
}

static bool push(loader *L, sg_deriv_formula **arr, uint32_t *n, sg_deriv_formula f,
                 uint32_t room) {
    if (!*arr && !(*arr = alloc(L, room * sizeof **arr))) return false;
    (*arr)[(*n)++] = f;
    return true;
}

/* The formula keys of map v (the entry itself, or dispatch's Default) into dv. */
static bool read_formulas(loader *L, sg_deriv *dv, const sg_ynode *v) {
    uint32_t room = v->nitems / 2;
    for (uint32_t i = 0; i + 1 < v->nitems; i += 2) {
        const sg_ynode *k = v->items[i], *x = v->items[i + 1];
        if (k->kind != SG_Y_SCALAR) {
            err(L, k->pos, "a key of a derivatives entry is a name, not a collection");
            return false;
        }
        if (!strcmp(k->text, "name") || !strcmp(k->text, "dispatch") ||
            !strcmp(k->text, "output_differentiability"))
            continue;
        if (x->kind != SG_Y_SCALAR || !x->len) {
            err(L, x->pos, "the formula of '%s' is a C++ expression (a string), not %s", k->text,
                x->kind == SG_Y_SCALAR ? "an empty value"
                : x->kind == SG_Y_SEQ  ? "a list" : "a mapping");
            return false;
        }
        sg_deriv_formula f = {.text = x->text, .pos = x->pos};
        bool forward = false;
        if (!split_key(L, dv, k, &f, &forward)) return false;
        if (!forward && strcmp(x->text, "non_differentiable") == 0) {
            const char **nd = alloc(L, (dv->nnon_diff + f.nnames) * sizeof *nd);
            if (!nd) return false;
            if (dv->nnon_diff) memcpy(nd, dv->non_diff, dv->nnon_diff * sizeof *nd);
            memcpy(nd + dv->nnon_diff, f.names, f.nnames * sizeof *nd);
            dv->non_diff = nd;
            dv->nnon_diff += f.nnames;
            continue;
        }
        /* an input or a result named by two keys */
        for (uint32_t j = 0; j < f.nnames; j++) {
            const sg_deriv_formula *arr = forward ? dv->fwds : dv->grads;
            uint32_t na = forward ? dv->nfwds : dv->ngrads;
            for (uint32_t q = 0; q < na; q++)
                for (uint32_t w = 0; w < arr[q].nnames; w++)
                    if (!strcmp(arr[q].names[w], f.names[j])) {
                        err(L, k->pos, "'%s' has a formula already (line %u)", f.names[j],
                            arr[q].key_pos.line);
                        return false;
                    }
        }
        if (!(forward ? push(L, &dv->fwds, &dv->nfwds, f, room)
                      : push(L, &dv->grads, &dv->ngrads, f, room)))
            return false;
    }
    return true;
}

/* `dispatch: {Default: {...}, AutogradNestedTensor: {...}}`: Default's formulas are the entry's;
 * the other keys' (autograd of layouts and devices we do not have) are counted, not read. */
static bool read_dispatch(loader *L, sg_deriv *dv, const sg_ynode *v) {
    if (v->kind != SG_Y_MAP) {
        err(L, v->pos, "'dispatch' is a mapping of autograd keys to formulas");
        return false;
    }
    bool have_default = false;
    for (uint32_t i = 0; i + 1 < v->nitems; i += 2) {
        const sg_ynode *k = v->items[i], *x = v->items[i + 1];
        if (k->kind != SG_Y_SCALAR || x->kind != SG_Y_MAP) {
            err(L, k->pos, "'dispatch' maps an autograd key to a mapping of formulas");
            return false;
        }
        if (strcmp(k->text, "Default") == 0) {
            have_default = true;
            if (!read_formulas(L, dv, x)) return false;
        } else if (strncmp(k->text, "Autograd", 8) == 0) {
            dv->other_keys++;
        } else {
            err(L, k->pos, "'%s' is not an autograd key (Default, Autograd...)", k->text);
            return false;
        }
    }
    if (!have_default) dv->other_keys++; /* nothing for the keys we have */
    return true;
}

/* output_differentiability: one per result, each True or False, or a condition (C++) kept as
 * true here and marked in out_diff_if: the condition is the translator's to read. */
static bool read_out_diff(loader *L, sg_deriv *dv, const sg_ynode *v) {
    uint32_t nrets = dv->op->schema.nrets;
    if (v->kind != SG_Y_SEQ || v->nitems != nrets) {
        err(L, v->pos, "'output_differentiability' needs one entry per result (%u), not %s",
            nrets, v->kind == SG_Y_SEQ ? "another count" : "a single value");
        return false;
    }
    if (!(dv->out_diff = alloc(L, nrets * sizeof *dv->out_diff)) ||
        !(dv->out_diff_if = alloc(L, nrets * sizeof *dv->out_diff_if)))
        return false;
    dv->nout_diff = nrets;
    for (uint32_t i = 0; i < nrets; i++) {
        const sg_ynode *x = v->items[i];
        if (x->kind != SG_Y_SCALAR || !x->len) {
            err(L, x->pos, "an entry of 'output_differentiability' is True, False or a condition");
            return false;
        }
        bool yes = x->plain && (!strcmp(x->text, "True") || !strcmp(x->text, "true"));
        dv->out_diff[i] = !(x->plain && (!strcmp(x->text, "False") || !strcmp(x->text, "false")));
        dv->out_diff_if[i] = dv->out_diff[i] && !yes;
    }
    return true;
}

/* The entry's op by its schema; false where it is an error. NULL *op (true): skipped. */
static bool find_op(loader *L, const sg_ynode *name, const sg_op **op, char **canon) {
    sg_schema     sc;
    sg_schema_error e;
    *op = NULL;
    if (sg_schema_parse(name->text, name->len, L->s->a, &sc, &e) != SG_SCHEMA_OK) {
        err(L, pos_in(L, name, e.offset), "%s", e.msg);
        return false;
    }
    if (sc.ns && strcmp(sc.ns, "aten") != 0) {
        err(L, name->pos, "derivatives.yaml names aten's ops, not %s's", sc.ns);
        return false;
    }
    if (!(*canon = canonical(L, &sc))) return false;
    *op = sg_strmap_get(&L->by_schema, *canon, strlen(*canon));
    if (*op) return true;
    char nm[512];
    int  n = snprintf(nm, sizeof nm, "%s.%s", sc.name, sc.overload);
    const sg_op *same = n > 0 && (size_t)n < sizeof nm ? sg_strmap_get(&L->by_name, nm, (size_t)n)
                                                        : NULL;
    if (!same) return true; /* an op outside the schema set */
    sg_buf b;
    sg_buf_init(&b);
    sg_schema_print(&b, &same->schema, false);
    sg_buf_putc(&b, '\0');
    err(L, name->pos, "aten::%s%s%s is '%s' (%s:%u), not this schema", sc.name,
        *sc.overload ? "." : "", sc.overload, b.oom ? "?" : b.data, same->pos.src->path,
        same->pos.line);
    sg_buf_free(&b);
    return false;
}

static void on_entry(void *ud, sg_yreader *r, const sg_ynode *e) {
    loader *L = ud;
    L->r = r;
    L->s->entries++;
    if (e->kind != SG_Y_MAP) {
        err(L, e->pos, "a derivatives entry is a mapping (name: ..., self: ...), not %s",
            e->kind == SG_Y_SEQ ? "a list" : "a scalar");
        return;
    }
    const sg_ynode *name = NULL, *dispatch = NULL, *out_diff = NULL;
    for (uint32_t i = 0; i + 1 < e->nitems; i += 2) {
        const sg_ynode *k = e->items[i];
        if (k->kind != SG_Y_SCALAR) continue; /* read_formulas reports it */
        const sg_ynode **slot = !strcmp(k->text, "name")       ? &name
                                : !strcmp(k->text, "dispatch") ? &dispatch
                                : !strcmp(k->text, "output_differentiability") ? &out_diff
                                                                               : NULL;
        if (!slot) continue;
        if (*slot) {
            err(L, k->pos, "'%s' is given twice", k->text);
            return;
        }
        *slot = e->items[i + 1];
    }
    if (!name || name->kind != SG_Y_SCALAR || !name->len) {
        err(L, name ? name->pos : e->pos, "a derivatives entry needs 'name', its op's schema");
        return;
    }
    const sg_op *op;
    char        *canon = NULL;
    if (!find_op(L, name, &op, &canon)) return;
    if (!op) {
        L->s->skipped++;
        return;
    }
    uintptr_t first = (uintptr_t)sg_strmap_get(&L->seen, canon, strlen(canon));
    if (first) {
        err(L, name->pos, "a second entry for '%s' (the first: line %u)", canon, (unsigned)first);
        return;
    }
    sg_deriv dv = {.name = name->text, .pos = name->pos, .op = op};
    if (!read_formulas(L, &dv, e) || (dispatch && !read_dispatch(L, &dv, dispatch)) ||
        (out_diff && !read_out_diff(L, &dv, out_diff)))
        return;
    sg_deriv_set *s = L->s;
    if (s->n == s->cap) {
        uint32_t c = s->cap ? 2 * s->cap : 64;
        sg_deriv *p = realloc(s->items, c * sizeof *p);
        if (!p) {
            sg_yaml_oom(r);
            return;
        }
        s->items = p, s->cap = c;
    }
    s->items[s->n++] = dv;
    if (!sg_strmap_put(&L->seen, canon, strlen(canon), (void *)(uintptr_t)name->pos.line))
        sg_yaml_oom(r);
}

int sg_deriv_init(sg_deriv_set *s) {
    memset(s, 0, sizeof *s);
    s->a = sg_arena_new(NULL, NULL);
    return s->a ? 0 : -1;
}

void sg_deriv_free(sg_deriv_set *s) {
    free(s->items);
    sg_arena_free(s->a);
    memset(s, 0, sizeof *s);
}

static bool same_type(const sg_type *a, const sg_type *b) {
    sg_buf x, y;
    sg_buf_init(&x);
    sg_buf_init(&y);
    sg_type_print(&x, a, false);
    sg_type_print(&y, b, false);
    bool same = !x.oom && !y.oom && x.len == y.len && !memcmp(x.data, y.data, x.len);
    sg_buf_free(&x);
    sg_buf_free(&y);
    return same;
}

/* Whether op is a view op whose formulas serve cp, its view_copy op: a result of op aliases an
 * input, and cp takes the same arguments (annotations aside) and gives as many results. */
static bool view_copy_of(const sg_op *op, const sg_op *cp) {
    const sg_schema *v = &op->schema, *c = &cp->schema;
    bool view = false;
    for (uint32_t r = 0; r < v->nrets; r++)
        view |= sg_type_alias(v->rets[r].type) && !v->rets[r].write;
    if (!view || v->kind != SG_KIND_FUNCTIONAL || c->kind != SG_KIND_FUNCTIONAL ||
        v->nargs != c->nargs || v->nrets != c->nrets)
        return false;
    for (uint32_t i = 0; i < v->nargs; i++)
        if (strcmp(v->args[i].name, c->args[i].name) != 0 ||
            !same_type(v->args[i].type, c->args[i].type))
            return false;
    for (uint32_t r = 0; r < v->nrets; r++)
        if (!same_type(v->rets[r].type, c->rets[r].type)) return false;
    return true;
}

/* torchgen's add_view_copy_derivatives: each view op's entry, once more for its view_copy op
 * where the model has one without an entry of its own. */
static void add_view_copies(loader *L) {
    sg_deriv_set *s = L->s;
    uint32_t      n = s->n;
    for (uint32_t i = 0; i < n; i++) {
        const sg_op *op = s->items[i].op;
        char         nm[512];
        int k = snprintf(nm, sizeof nm, "%s_copy.%s", op->schema.name, op->schema.overload);
        if (k < 0 || (size_t)k >= sizeof nm) continue;
        const sg_op *cp = sg_strmap_get(&L->by_name, nm, (size_t)k);
        if (!cp || !view_copy_of(op, cp)) continue;
        bool own = false; /* an entry of its own */
        for (uint32_t j = 0; j < s->n && !own; j++) own = s->items[j].op == cp;
        if (own) continue;
        sg_deriv dv = s->items[i];
        dv.op = cp;
        dv.copy_of = i + 1;
        /* formulas of its own: each is typed against its entry's op */
        dv.grads = sg_arena_alloc(s->a, (dv.ngrads + 1) * sizeof *dv.grads);
        dv.fwds = sg_arena_alloc(s->a, (dv.nfwds + 1) * sizeof *dv.fwds);
        sg_deriv *p = s->n < s->cap ? s->items : realloc(s->items, 2 * s->cap * sizeof *p);
        if (!dv.grads || !dv.fwds || !p) {
            sg_diag_plain(L->d, SG_ERROR, "out of memory reading '%s'", s->path);
            return;
        }
        if (s->n == s->cap) s->items = p, s->cap *= 2; /* the cap is not 0: s->n is not */
        if (dv.ngrads) memcpy(dv.grads, s->items[i].grads, dv.ngrads * sizeof *dv.grads);
        if (dv.nfwds) memcpy(dv.fwds, s->items[i].fwds, dv.nfwds * sizeof *dv.fwds);
        s->items[s->n++] = dv;
    }
}

int sg_deriv_load(sg_deriv_set *s, const sg_model *m, const sg_source *src, sg_diag *d) {
    uint32_t before = d->nerrors;
    s->path = src->path;
    loader L = {.s = s, .m = m, .d = d};
    if (!index_ops(&L)) {
        sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", src->path);
        return 1;
    }
    sg_yaml_read_piece(src, (sg_yaml_piece){0, src->len, 1}, s->a, d, on_entry, &L);
    if (d->nerrors == before && s->n) add_view_copies(&L);
    return (int)(d->nerrors - before);
}
