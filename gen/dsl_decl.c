/* dsl_decl.c: DSL declarations (docs/dsl.md, "What a user writes") into sg_dsl_decl, read
 * through the schema loader's YAML tree (positions of every node and every byte of a scalar)
 * and checked against the model (with dsl_read.c's helpers): keys, the op, the expressions,
 * the grid, the prefixes. */
#define _XOPEN_SOURCE 700 /* realpath */

#include "derive.h"
#include "dsl_load.h"
#include "sha256.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ARTIFACTS = 4096 }; /* per declaration: a grid past this is a mistake */

/* ---- header keys --------------------------------------------------------------------------- */

/* "sm_90" -> 90, "sm_90a" -> 90, "sm_100" -> 100: 10 * major + minor; -1 where malformed. */
static int32_t arch_cap(const char *s) {
    if (strncmp(s, "sm_", 3) != 0) return -1;
    s += 3;
    int32_t v = 0, nd = 0;
    for (; *s >= '0' && *s <= '9' && nd < 4; s++, nd++) v = v * 10 + (*s - '0');
    if (*s == 'a') s++;
    return (nd == 2 || nd == 3) && !*s ? v : -1;
}

static bool read_archs(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v) {
    if (!sg_dsl_want_kind(L, "archs", v, SG_Y_SEQ)) return false;
    if (!v->nitems) {
        sg_dsl_err(L, v->pos, "'archs' lists no arch");
        return false;
    }
    dc->caps = sg_dsl_alloc(L, v->nitems * sizeof *dc->caps);
    dc->arch_names = sg_dsl_alloc(L, v->nitems * sizeof *dc->arch_names);
    if (!dc->caps || !dc->arch_names) return false;
    for (uint32_t i = 0; i < v->nitems; i++) {
        const sg_ynode *x = v->items[i];
        if (!sg_dsl_want_scalar(L, "archs", x)) return false;
        int32_t cap = arch_cap(x->text);
        if (cap < 0) {
            sg_dsl_err(L, x->pos, "'%s' is not an arch: write sm_XY (compute capability X.Y), as "
                "sm_90 or sm_90a", x->text);
            return false;
        }
        for (uint32_t j = 0; j < dc->narchs; j++)
            if (dc->caps[j] == cap) {
                sg_dsl_err(L, x->pos, "'%s' names capability %d.%d, as '%s' does", x->text,
                           cap / 10, cap % 10, dc->arch_names[j]);
                return false;
            }
        dc->caps[dc->narchs] = cap;
        dc->arch_names[dc->narchs++] = x->text;
    }
    return true;
}

/* The source, next to the declaration: its absolute path and its hash. */
static bool read_source(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v) {
    if (!sg_dsl_want_scalar(L, "source", v)) return false;
    if (v->text[0] == '/') {
        sg_dsl_err(L, v->pos, "'source' is a path relative to the declaration, not '%s'", v->text);
        return false;
    }
    size_t n = strlen(L->dir) + strlen(v->text) + 1;
    char *joined = malloc(n), *abs = joined ? malloc(PATH_MAX) : NULL;
    bool ok = false;
    FILE *f = NULL;
    if (!joined || !abs) {
        sg_yaml_oom(L->r);
        goto done;
    }
    snprintf(joined, n, "%s%s", L->dir, v->text);
    if (!realpath(joined, abs) || !(f = fopen(abs, "rb"))) {
        sg_dsl_err(L, v->pos, "cannot read the source '%s': %s", joined, strerror(errno));
        goto done;
    }
    sg_sha256 h;
    sg_sha256_init(&h);
    char buf[8192];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) sg_sha256_update(&h, buf, got);
    if (ferror(f)) {
        sg_dsl_err(L, v->pos, "cannot read the source '%s'", joined);
        goto done;
    }
    unsigned char dg[32];
    sg_sha256_final(&h, dg);
    for (int i = 0; i < 32; i++) snprintf(dc->source_sha + 2 * i, 3, "%02x", dg[i]);
    dc->source = v->text;
    dc->source_path = sg_arena_strndup(L->s->a, abs, strlen(abs));
    ok = dc->source_path != NULL;
done:
    if (f) fclose(f);
    free(joined);
    free(abs);
    return ok;
}

const sg_dsl_lang sg_dsl_langs[] = {
    {"triton", "triton", "triton-cubin", false},
    {"cutedsl", "nvidia-cutlass-dsl", "cutedsl-obj", true},
};
const uint32_t sg_dsl_nlangs = sizeof sg_dsl_langs / sizeof sg_dsl_langs[0];

static bool read_dsl(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v) {
    if (!sg_dsl_want_scalar(L, "dsl", v)) return false;
    for (uint32_t i = 0; i < sg_dsl_nlangs; i++)
        if (strcmp(sg_dsl_langs[i].name, v->text) == 0) {
            dc->lang = &sg_dsl_langs[i];
            dc->dsl = v->text;
            return true;
        }
    sg_dsl_err(L, v->pos, "'dsl' is triton or cutedsl, not '%s'", v->text);
    return false;
}

static bool read_compiler(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v) {
    if (!sg_dsl_want_scalar(L, "compiler", v)) return false;
    const char *eq = strstr(v->text, "==");
    const char *pkg = dc->lang->package;
    if (!eq || !eq[2] || (size_t)(eq - v->text) != strlen(pkg) ||
        strncmp(v->text, pkg, strlen(pkg)) != 0) {
        sg_dsl_err(L, v->pos, "'compiler' needs %s==VERSION (the exact version), not '%s'", pkg,
            v->text);
        return false;
    }
    dc->compiler = v->text;
    dc->compiler_version = eq + 2;
    dc->compiler_pos = v->pos;
    return true;
}

static bool read_scalar_key(sg_dsl_loader *L, const char *key, const sg_ynode *v, const char *only,
                            const char **out) {
    if (!sg_dsl_want_scalar(L, key, v)) return false;
    if (only && strcmp(v->text, only) != 0) {
        sg_dsl_err(L, v->pos, "'%s' must be %s for now, not '%s'", key, only, v->text);
        return false;
    }
    *out = v->text;
    return true;
}

/* ---- the grid ------------------------------------------------------------------------------ */

static bool read_grid(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v) {
    if (!sg_dsl_want_kind(L, "grid", v, SG_Y_MAP)) return false;
    uint32_t n = v->nitems / 2;
    dc->grid = sg_dsl_alloc(L, n * sizeof *dc->grid);
    if (!dc->grid) return false;
    uint64_t points = 1;
    for (uint32_t i = 0; i < n; i++) {
        const sg_ynode *k = v->items[2 * i], *list = v->items[2 * i + 1];
        if (!sg_dsl_want_scalar(L, "grid", k)) return false;
        if (!sg_derive_c_identifier(k->text, false)) {
            sg_dsl_err(L, k->pos, "grid variable '%s' is not a name", k->text);
            return false;
        }
        for (uint32_t j = 0; j < dc->nsyms; j++)
            if (strcmp(dc->syms[j].name, k->text) == 0) {
                sg_dsl_err(L, k->pos, "grid variable '%s' has the name of %s", k->text,
                    dc->syms[j].kind == SG_DSLS_ARG   ? "an argument of the op"
                    : dc->syms[j].kind == SG_DSLS_CAP ? "the capability"
                                                      : "another name");
                return false;
            }
        const char *made = sg_dsl_made_name(k->text);
        if (sg_dsl_dtype_find(k->text, k->len) >= 0 || made) {
            sg_dsl_err(L, k->pos, "grid variable '%s' has the name of %s", k->text,
                       made ? made : "a dtype");
            return false;
        }
        if (!sg_dsl_want_kind(L, k->text, list, SG_Y_SEQ)) return false;
        if (!list->nitems) {
            sg_dsl_err(L, list->pos, "grid variable '%s' has no values", k->text);
            return false;
        }
        sg_dsl_gridvar *g = &dc->grid[i];
        *g = (sg_dsl_gridvar){k->text, k->pos, SG_DSLT_ERROR, NULL, list->nitems};
        if (!(g->values = sg_dsl_alloc(L, list->nitems * sizeof *g->values))) return false;
        for (uint32_t j = 0; j < list->nitems; j++) {
            const sg_ynode *x = list->items[j];
            if (!sg_dsl_want_scalar(L, k->text, x)) return false;
            int dt = sg_dsl_dtype_find(x->text, x->len);
            char *end;
            errno = 0;
            long long iv = strtoll(x->text, &end, 10);
            sg_dsl_type t = dt >= 0 && x->plain ? SG_DSLT_DTYPE
                            : !*end && !errno && x->plain ? SG_DSLT_INT : SG_DSLT_ERROR;
            if (t == SG_DSLT_ERROR || (g->type != SG_DSLT_ERROR && t != g->type)) {
                sg_dsl_err(L, x->pos, "grid variable '%s': '%s' is not %s", k->text, x->text,
                    g->type == SG_DSLT_ERROR ? "an integer or a dtype name"
                                             : sg_dsl_type_name(g->type));
                return false;
            }
            g->type = t;
            g->values[j] = (sg_dsl_value){t, t == SG_DSLT_DTYPE ? dt : iv};
            for (uint32_t q = 0; q < j; q++)
                if (g->values[q].i == g->values[j].i) {
                    sg_dsl_err(L, x->pos, "grid variable '%s' lists '%s' twice", k->text, x->text);
                    return false;
                }
        }
        points *= list->nitems;
        if (points > MAX_ARTIFACTS) {
            sg_dsl_err(L, list->pos, "the grid has more than %d points", MAX_ARTIFACTS);
            return false;
        }
        dc->syms[dc->nsyms++] = (sg_dsl_sym){k->text, SG_DSLS_GRID, g->type, false, i, NULL};
        dc->ngrid++;
    }
    dc->npoints = (uint32_t)points;
    return true;
}

/* ---- an entry ------------------------------------------------------------------------------ */

static bool read_entry(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *e) {
    static const char *const keys[] = {"name", "op", "key", "dsl", "compiler", "source",
                                       "kernel", "archs", "?priority", "grid", "when",
                                       "?when_c", "outputs", "?scratch", "launch", "?template",
                                       NULL};
    enum { NAME, OP, KEY, DSL, COMPILER, SOURCE, KERNEL, ARCHS, PRIORITY, GRID, WHEN, WHEN_C,
           OUTPUTS, SCRATCH, LAUNCH, TEMPLATE };
    const sg_ynode *v[16];
    if (e->kind != SG_Y_MAP) {
        sg_dsl_err(L, e->pos, "a DSL declaration is a mapping (name: ..., op: ...), not %s",
            sg_dsl_kind_text(e));
        return false;
    }
    if (!sg_dsl_take_keys(L, e, "a DSL declaration", keys, v)) return false;
    const char *key;
    if (!sg_dsl_want_scalar(L, "name", v[NAME])) return false;
    dc->name = v[NAME]->text;
    if (!sg_derive_c_identifier(dc->name, true) || dc->name[0] == '_') {
        sg_dsl_err(L, v[NAME]->pos, "'name' needs [a-z][a-z0-9_]*, not '%s'", dc->name);
        return false;
    }
    const sg_dsl_decl *other = sg_dsl_find_decl(L->s, dc->name);
    if (other) {
        sg_dsl_err(L, v[NAME]->pos, "a DSL declaration named '%s' exists already (%s:%u)", dc->name,
            other->pos.src->path, other->pos.line);
        return false;
    }
    if (!sg_dsl_read_op_name(L, dc, v[OP]) || !read_scalar_key(L, "key", v[KEY], "CUDA", &key) ||
        !read_dsl(L, dc, v[DSL]) ||
        !read_compiler(L, dc, v[COMPILER]) || !read_source(L, dc, v[SOURCE]) ||
        !read_scalar_key(L, "kernel", v[KERNEL], NULL, &dc->kernel) ||
        !read_archs(L, dc, v[ARCHS]))
        return false;
    if (!sg_derive_c_identifier(dc->kernel, false)) {
        sg_dsl_err(L, v[KERNEL]->pos, "'kernel' needs a function name, not '%s'", dc->kernel);
        return false;
    }
    int64_t prio = 0;
    if (v[PRIORITY] && !sg_dsl_want_int(L, "priority", v[PRIORITY], INT32_MIN, INT32_MAX, &prio))
        return false;
    dc->priority = (int32_t)prio;
    if (v[TEMPLATE]) {
        const char *t = v[TEMPLATE]->text;
        if (!sg_dsl_want_scalar(L, "template", v[TEMPLATE])) return false;
        if (strcmp(t, "true") && strcmp(t, "false")) {
            sg_dsl_err(L, v[TEMPLATE]->pos, "'template' needs true or false, not '%s'", t);
            return false;
        }
        dc->is_template = t[0] == 't';
        if (dc->is_template && v[PRIORITY]) {
            sg_dsl_err(L, v[PRIORITY]->pos, "a template has no priority: it is no override of "
                       "its own (a table's priority orders it)");
            return false;
        }
    }
    const sg_schema *s = &dc->op->schema;
    uint32_t room = s->nrets + (v[GRID]->kind == SG_Y_MAP ? v[GRID]->nitems / 2 : 0) +
                    (v[SCRATCH] && v[SCRATCH]->kind == SG_Y_SEQ ? v[SCRATCH]->nitems : 0);
    if (!sg_dsl_arg_syms(L, dc, room) || !read_grid(L, dc, v[GRID])) return false;
    char scope[300];
    snprintf(scope, sizeof scope, "an argument of %s or a grid variable", dc->op_name);
    if (!sg_dsl_expression(L, dc, v[WHEN], &dc->when, SG_DSLT_BOOL, "the 'when' predicate",
                           (sg_dsl_scope_ud){0}, scope))
        return false;
    if (v[WHEN_C] && (!sg_dsl_want_scalar(L, "when_c", v[WHEN_C]) ||
                      !sg_dsl_when_c(L->s, dc, v[WHEN_C]->text, v[WHEN_C]->pos, L->d)))
        return false;
    return sg_dsl_read_outputs(L, dc, v[OUTPUTS], scope) &&
           (!v[SCRATCH] || sg_dsl_read_scratch(L, dc, v[SCRATCH], scope)) &&
           sg_dsl_read_launch(L, dc, v[LAUNCH], scope);
}

static bool has_key(const sg_ynode *e, const char *key) {
    if (e->kind != SG_Y_MAP) return false;
    for (uint32_t i = 0; i + 1 < e->nitems; i += 2)
        if (e->items[i]->kind == SG_Y_SCALAR && strcmp(e->items[i]->text, key) == 0) return true;
    return false;
}

static void on_entry(void *ud, sg_yreader *r, const sg_ynode *e) {
    sg_dsl_loader *L = ud;
    L->r = r;
    if (has_key(e, "table")) {
        sg_dsl_table_entry(L, e);
        return;
    }
    sg_dsl_set *s = L->s;
    sg_dsl_decl *dc = sg_dsl_alloc(L, sizeof *dc);
    if (!dc) return;
    dc->pos = e->pos;
    dc->file = L->src->path;
    if (!read_entry(L, dc, e)) return;
    if (s->ndecls == s->capdecls) {
        uint32_t c = s->capdecls ? 2 * s->capdecls : 8;
        sg_dsl_decl **p = realloc(s->decls, c * sizeof *p);
        if (!p) {
            sg_yaml_oom(r);
            return;
        }
        s->decls = p, s->capdecls = c;
    }
    s->decls[s->ndecls++] = dc;
    int bad = sg_dsl_expand(s, dc, L->d);
    L->errors += (uint32_t)(bad ? bad : sg_dsl_when_c_reached(s, dc, L->d));
}

/* Reads src, the declaration file `path` (given or read), into s. */
static int load(sg_dsl_set *s, const sg_model *m, const char *path, const char *text, size_t len,
                sg_diag *d) {
    const char **files = realloc(s->files, (s->nfiles + 1) * sizeof *files);
    if (!files) {
        sg_diag_plain(d, SG_ERROR, "out of memory");
        return 1;
    }
    s->files = files;
    s->files[s->nfiles++] = path;
    sg_source *src = text ? sg_dsl_source(s, path, text, len, d) : sg_dsl_read_source(s, path, d);
    if (!src) return 1;
    const char *slash = strrchr(path, '/');
    char *dir = sg_arena_strndup(s->a, path, slash ? (size_t)(slash - path) + 1 : 0);
    sg_dsl_loader L = {.s = s, .m = m, .d = d, .src = src, .dir = dir ? dir : ""};
    uint32_t before = d->nerrors;
    sg_yaml_read_piece(src, (sg_yaml_piece){0, src->len, 1}, s->a, d, on_entry, &L);
    return (int)(d->nerrors - before);
}

int sg_dsl_load(sg_dsl_set *s, const sg_model *m, const char *path, sg_diag *d) {
    return load(s, m, path, NULL, 0, d);
}

int sg_dsl_load_buffer(sg_dsl_set *s, const sg_model *m, const char *path, const char *text,
                       size_t len, sg_diag *d) {
    return load(s, m, path, text ? text : "", len, d);
}
