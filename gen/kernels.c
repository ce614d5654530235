/* kernels.c: which kernels named under `dispatch:` the generated library declares and
 * registers (kernels.h; docs/cli.md, --kernel-keys), with the checks that keep the generated C
 * compiling (docs/derive.md, SG-410..SG-413). */
#include "kernels.h"

#include "derive.h"
#include "sg_key_table.h"
#include "sg_type_table.h"
#include "validate_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- keys -------------------------------------------------------------------------------- */

#define SG_KEY_ROW(id, name) {name, "SG_KEY_" #id},
static const struct runtime_key {
    const char *name, *constant;
} runtime_keys[] = {SG_KEY_TABLE(SG_KEY_ROW)};
#undef SG_KEY_ROW
enum { NRUNTIME_KEYS = sizeof runtime_keys / sizeof runtime_keys[0] };

const char *sg_kernel_key_constant(const char *name) {
    /* row 0, Undefined, is the key nothing is registered at (the runtime refuses it) */
    for (unsigned i = 1; i < NRUNTIME_KEYS; i++)
        if (strcmp(runtime_keys[i].name, name) == 0) return runtime_keys[i].constant;
    return NULL;
}

static bool known_key(const char *name) {
    if (sg_dispatch_key_known(name)) return true;
    for (unsigned i = 0; i < NRUNTIME_KEYS; i++)
        if (strcmp(runtime_keys[i].name, name) == 0) return true;
    return false;
}

void sg_kernel_keys_free(sg_kernel_keys *sel) {
    free(sel->names);
    free(sel->text);
    memset(sel, 0, sizeof *sel);
}

int sg_kernel_keys_parse(sg_kernel_keys *sel, const char *list, char *msg, size_t msglen) {
    memset(sel, 0, sizeof *sel);
    msg[0] = '\0';
    size_t n = strlen(list);
    sel->text = malloc(n + 1);
    sel->names = malloc((n / 2 + 1) * sizeof *sel->names); /* items are one byte and a comma */
    if (!sel->text || !sel->names) {
        sg_kernel_keys_free(sel);
        return -1;
    }
    memcpy(sel->text, list, n + 1);
    bool any = false;
    for (char *p = sel->text, *end; p; p = end) {
        end = strchr(p, ',');
        if (end) *end++ = '\0';
        if (!*p) {
            snprintf(msg, msglen, "--kernel-keys needs dispatch key names separated by commas "
                                  "(CPU,CUDA) or all, not '%s'", list);
            break;
        }
        if (strcmp(p, "all") == 0) {
            sel->all = true;
        } else if (!known_key(p)) {
            snprintf(msg, msglen, "--kernel-keys: '%s' is no dispatch key (CPU, CUDA, Meta, "
                                  "PrivateUse1, CompositeExplicitAutograd, ...)", p);
            break;
        } else {
            bool seen = false;
            for (uint32_t i = 0; i < sel->n && !seen; i++) seen = strcmp(sel->names[i], p) == 0;
            if (!seen) sel->names[sel->n++] = p;
        }
        any = true;
    }
    if (!msg[0] && sel->all && sel->n)
        snprintf(msg, msglen, "--kernel-keys: 'all' selects every key; it takes no others");
    if (!msg[0] && !any) snprintf(msg, msglen, "--kernel-keys needs at least one key, or all");
    if (msg[0]) {
        sg_kernel_keys_free(sel);
        return -1;
    }
    return 0;
}

/* ---- the plan ---------------------------------------------------------------------------- */

/* A registration while the plan is made: its kernel, then what it registers. */
typedef struct flat_reg {
    uint32_t      kernel;
    sg_kernel_reg r;
} flat_reg;

typedef struct planner {
    sg_kernel_set        *set;
    const sg_model       *m;
    const sg_kernel_keys *sel;
    const char           *lib;
    sg_diag              *d;
    sg_strmap             names;  /* kernel name -> its index + 1 */
    sg_strmap             cnames; /* op C name -> op */
    const char          **types;  /* per kernel: its C type (ctype) */
    uint32_t              cap;    /* of set->items and types */
    flat_reg             *regs;
    uint32_t              nregs, capregs;
    sg_buf                tmp;
    bool                  oom;
} planner;

static bool selected(const sg_kernel_keys *sel, const char *key) {
    if (sel->all) return true;
    for (uint32_t i = 0; i < sel->n; i++)
        if (strcmp(sel->names[i], key) == 0) return true;
    return false;
}

/* The C type of op's kernels, as the generated typedef spells it without names:
 * "sg_status(sg_keyset, sg_tensor *, sg_tensor **)". Two ops have one kernel type exactly when
 * these are equal: both come from the type table (sg_type_table.h), as templates/lib/c.lua's
 * parameter lists do. */
static const char *ctype(planner *p, const sg_op *op) {
    sg_buf *b = &p->tmp;
    b->len = 0;
    sg_buf_puts(b, "sg_status(sg_keyset");
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        sg_buf_printf(b, ", %s",
                      sg_type_family_rows[sg_type_family_of(op->schema.args[i].type)].param);
    for (uint32_t r = 0; r < op->schema.nrets; r++) {
        const char *t = sg_type_family_rows[sg_type_family_of(op->schema.rets[r].type)].result;
        sg_buf_printf(b, ", %s%s*", t, t[strlen(t) - 1] == '*' ? "" : " ");
    }
    sg_buf_putc(b, ')');
    const char *s = b->oom ? NULL : sg_arena_strndup(p->set->arena, b->data, b->len);
    if (!s) p->oom = true;
    return s;
}

/* SG-410: why `name` cannot be the C name of a kernel the library declares, or NULL. */
static const char *bad_name(planner *p, const char *name) {
    if (!sg_derive_c_identifier(name, false)) return "is not a C identifier";
    const char *why = sg_derive_user_fn_reserved(name);
    if (why) {
        sg_buf *b = &p->tmp;
        b->len = 0;
        sg_buf_printf(b, "is reserved: %s", why);
        sg_buf_putc(b, '\0');
        return b->oom ? "is reserved" : b->data;
    }
    if (sg_derive_c_declares(&p->cnames, p->lib, name))
        return "is a name the generated library declares itself";
    return NULL;
}

/* "ns::name.overload" of op into buf. */
static const char *op_name(const sg_op *op, char *buf, size_t n) {
    char full[512];
    snprintf(buf, n, "%s::%s", op->ns ? op->ns : "aten", sgv_full_name(op, full, sizeof full));
    return buf;
}

/* What the names map holds for a name refused (SG-410) where it was first named. */
static char refused;

/* The kernel `name` of op (the dispatch entry dl), found or added; -1 where it is refused. */
static int64_t kernel_of(planner *p, const sg_op *op, uint32_t opi, const sg_dispatch *dl) {
    const char *name = dl->kernel;
    char        a[600], b[600];
    sg_strmap_slot *s = sg_strmap_put(&p->names, name, strlen(name), NULL);
    const char     *type = s ? ctype(p, op) : NULL;
    if (!s || !type) {
        p->oom = true;
        return -1;
    }
    if (s->value == &refused) return -1;
    if (s->value) {
        uint32_t k = (uint32_t)((uintptr_t)s->value - 1);
        if (strcmp(p->types[k], type) == 0) return k;
        const sg_kernel *first = &p->set->items[k];
        sg_diag_report(p->d, SG_ERROR, dl->kernel_pos,
                       "kernel '%s' of operator '%s' would have the C type %s, but it is named "
                       "for an operator of another C type as well; give each its own kernel "
                       "[SG-412]",
                       name, op_name(op, a, sizeof a), type);
        sg_diag_report(p->d, SG_NOTE, first->pos, "'%s' is named here for '%s', of the C type %s",
                       name, op_name(p->m->ops[first->type_op], b, sizeof b), p->types[k]);
        return -1;
    }
    const char *why = bad_name(p, name);
    if (why) {
        s->value = &refused;
        sg_diag_report(p->d, SG_ERROR, dl->kernel_pos,
                       "kernel name '%s' of operator '%s' %s, and --kernel-keys declares it as "
                       "a C function; rename the kernel [SG-410]",
                       name, op_name(op, a, sizeof a), why);
        return -1;
    }
    sg_kernel_set *set = p->set;
    if (set->n == p->cap) {
        uint32_t cap = p->cap ? 2 * p->cap : 16;
        sg_kernel *items = realloc(set->items, cap * sizeof *items);
        if (items) set->items = items;
        const char **types = realloc(p->types, cap * sizeof *types);
        if (types) p->types = types;
        if (!items || !types) {
            p->oom = true;
            return -1;
        }
        p->cap = cap;
    }
    p->types[set->n] = type;
    set->items[set->n] = (sg_kernel){.name = name, .type_op = opi, .pos = dl->kernel_pos};
    s->value = (void *)(uintptr_t)(set->n + 1);
    return set->n++;
}

static void add_reg(planner *p, uint32_t kernel, uint32_t opi, const char *key,
                    const char *constant) {
    if (p->nregs == p->capregs) {
        uint32_t cap = p->capregs ? 2 * p->capregs : 32;
        flat_reg *r = realloc(p->regs, cap * sizeof *r);
        if (!r) {
            p->oom = true;
            return;
        }
        p->regs = r, p->capregs = cap;
    }
    p->regs[p->nregs++] = (flat_reg){kernel, {opi, key, constant}};
}

/* One dispatch entry of op: its selected keys, then its kernel. A key is listed once per op
 * (SG-210), so each (op, key) is registered once. */
static void plan_entry(planner *p, const sg_op *op, uint32_t opi, const sg_dispatch *dl) {
    char     a[600];
    uint32_t nsel = 0, nok = 0;
    for (uint32_t k = 0; k < dl->nkeys; k++) {
        if (!selected(p->sel, dl->keys[k])) continue;
        nsel++;
        if (sg_kernel_key_constant(dl->keys[k])) {
            nok++;
            continue;
        }
        sg_diag_report(p->d, SG_ERROR, dl->key_pos[k],
                       "dispatch key '%s' of operator '%s' is selected by --kernel-keys, but the "
                       "runtime has no such key: no kernel can be registered at it; %s [SG-411]",
                       dl->keys[k], op_name(op, a, sizeof a),
                       p->sel->all ? "name the keys to register instead of all"
                                   : "leave it out of --kernel-keys");
    }
    if (!nsel) return;
    if (!op->c || op->schema.varargs || op->schema.varret) {
        sg_diag_report(p->d, SG_ERROR, dl->kernel_pos,
                       "kernel '%s' of operator '%s' cannot be declared: the op takes or returns "
                       "`...`, so it has no typed kernel type; register its kernel boxed "
                       "(sg_op_impl) [SG-413]",
                       dl->kernel, op_name(op, a, sizeof a));
        return;
    }
    int64_t kernel = kernel_of(p, op, opi, dl);
    if (kernel < 0 || !nok) return;
    for (uint32_t k = 0; k < dl->nkeys; k++) {
        const char *c = sg_kernel_key_constant(dl->keys[k]);
        if (c && selected(p->sel, dl->keys[k])) add_reg(p, (uint32_t)kernel, opi, dl->keys[k], c);
    }
}

/* Hands each kernel its registrations (stable: in the order they were planned). */
static void group_regs(planner *p) {
    sg_kernel_set *set = p->set;
    for (uint32_t i = 0; i < p->nregs; i++) set->items[p->regs[i].kernel].nregs++;
    for (uint32_t k = 0; k < set->n && !p->oom; k++) {
        sg_kernel *kn = &set->items[k];
        kn->regs = sg_arena_alloc(set->arena, (kn->nregs ? kn->nregs : 1) * sizeof *kn->regs);
        if (!kn->regs) p->oom = true;
        kn->nregs = 0;
    }
    for (uint32_t i = 0; i < p->nregs && !p->oom; i++) {
        sg_kernel *kn = &set->items[p->regs[i].kernel];
        kn->regs[kn->nregs++] = p->regs[i].r;
    }
}

static void selected_keys(planner *p) {
    sg_kernel_set *set = p->set;
    uint32_t n = p->sel->all ? NRUNTIME_KEYS - 1 : p->sel->n;
    set->keys = sg_arena_alloc(set->arena, (n ? n : 1) * sizeof *set->keys);
    if (!set->keys) {
        p->oom = true;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        set->keys[i] = p->sel->all ? runtime_keys[i + 1].name : p->sel->names[i];
    set->nkeys = n;
}

int sg_kernels_plan(sg_kernel_set *set, const sg_model *m, const sg_kernel_keys *sel,
                    const char *lib, sg_diag *d) {
    uint32_t before = d->nerrors;
    memset(set, 0, sizeof *set);
    planner p = {.set = set, .m = m, .sel = sel, .lib = lib, .d = d};
    sg_buf_init(&p.tmp);
    set->arena = sg_arena_new(NULL, NULL);
    p.oom = !set->arena || sg_strmap_init(&p.names, set->arena, 64) != 0 ||
            sg_strmap_init(&p.cnames, set->arena, m->nops + 16) != 0;
    for (uint32_t i = 0; !p.oom && i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (op->c && op->c->cname && !sg_strmap_put(&p.cnames, op->c->cname,
                                                     strlen(op->c->cname), (void *)op))
            p.oom = true;
    }
    if (!p.oom) selected_keys(&p);
    for (uint32_t i = 0; !p.oom && i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (op->autogen_from) continue; /* its dispatch entry is the generator's (derive.c) */
        for (uint32_t j = 0; !p.oom && j < op->ndispatch; j++)
            plan_entry(&p, op, i, &op->dispatch[j]);
    }
    if (!p.oom) group_regs(&p);
    if (p.oom || p.tmp.oom) sg_diag_plain(d, SG_ERROR, "out of memory");
    free(p.types);
    free(p.regs);
    sg_buf_free(&p.tmp);
    return (int)(d->nerrors - before);
}

void sg_kernels_free(sg_kernel_set *set) {
    free(set->items);
    sg_arena_free(set->arena);
    memset(set, 0, sizeof *set);
}
