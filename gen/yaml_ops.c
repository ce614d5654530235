/* yaml_ops.c: YAML entries to ops (and tags) through the key table.
 *
 * Each top-level entry that yaml_tree.c reads becomes an sg_op (or, in a tags file, an sg_tag)
 * as soon as it is complete. Every key is kept as written; the keys torchgen knows also fill
 * the op's typed fields, through one table (op_keys) of each key's shape and field. The
 * shape of each value is checked here (a list where a list belongs, True or False for a
 * boolean); what the values mean is validation's (validate_yaml.c).
 */
#include "yaml_ops.h"

#include "yaml_tree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    QUOTE_MAX = 32, /* bytes of a value quoted in a message */
    SMALL_MAP = 16, /* maps up to this many pairs look for duplicate keys pairwise */
};

typedef enum file_kind { FILE_UNKNOWN, FILE_SCHEMA, FILE_TAGS, FILE_DERIVATIVES } file_kind;

typedef struct loader {
    sg_model        *m;
    sg_diag         *d;
    sg_arena        *a;
    sg_yreader      *r;
    const sg_span   *spans; /* the last scalar's spans (the reader's, until it is asked again) */
    uint32_t         nspans;
    file_kind        kind;
    const sg_source *src;
} loader;

/* Fills L->spans for scalar y, a node the reader made. */
static void spans(loader *L, const sg_ynode *y) { L->spans = sg_yaml_spans(L->r, y, &L->nspans); }

/* Position of byte off of the value whose spans are in L->spans. */
static sg_pos spans_pos(const loader *L, const sg_ynode *y, size_t off) {
    sg_op tmp = {.spans = (sg_span *)L->spans, .nspans = L->nspans, .pos = y->pos};
    return sg_op_pos_at(&tmp, (uint32_t)off);
}

/* ---- messages ---------------------------------------------------------------------------- */

static void oom(loader *L) { sg_yaml_oom(L->r); }

/* 'text', cut to QUOTE_MAX bytes, bytes that would break the message line shown as '?'. */
static const char *quoted(char *buf, const char *s, size_t n) {
    size_t k = 0, cut = n > QUOTE_MAX ? QUOTE_MAX : n;
    while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    buf[k++] = '\'';
    for (size_t i = 0; i < cut; i++)
        buf[k++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? '?' : s[i];
    if (cut < n) k += (size_t)sprintf(buf + k, "...");
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

enum { QBUF = QUOTE_MAX + 8 };

/* "a sequence", "a mapping", "an empty value" or the scalar quoted. */
static const char *describe(char *buf, const sg_ynode *n) {
    if (n->kind == SG_Y_SEQ) return "a sequence";
    if (n->kind == SG_Y_MAP) return "a mapping";
    if (n->plain && n->len == 0) return "an empty value";
    return quoted(buf, n->text, n->len);
}

/* An empty value has no characters of its own; its key stands in for it. */
static sg_pos value_pos(const sg_ynode *k, const sg_ynode *v) {
    return v->kind == SG_Y_SCALAR && v->plain && v->len == 0 ? k->pos : v->pos;
}

/* True when v is a non-empty scalar; otherwise says that key k wanted `what`. */
static bool want_scalar(loader *L, const sg_ynode *k, const sg_ynode *v, const char *what) {
    if (v->kind == SG_Y_SCALAR && !(v->plain && v->len == 0)) return true;
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, value_pos(k, v), "expected %s for '%s', not %s", what, k->text,
                   describe(b, v));
    return false;
}

/* ---- duplicate keys ---------------------------------------------------------------------- */

static bool same_key(const sg_ynode *a, const sg_ynode *b) {
    return a->kind == SG_Y_SCALAR && b->kind == SG_Y_SCALAR && a->len == b->len &&
           memcmp(a->text, b->text, a->len) == 0;
}

static size_t hash_key(const sg_ynode *k) {
    size_t h = 2166136261u;
    for (size_t i = 0; i < k->len; i++) h = (h ^ (unsigned char)k->text[i]) * 16777619u;
    return h;
}

/* For each pair of map: the index of the first pair with the same key (itself when unique).
 * Small maps compare pairwise; large ones hash, so a map of many keys stays linear. */
typedef struct dups {
    uint32_t *first;
    uint32_t  small[SMALL_MAP];
} dups;

static bool dups_init(dups *u, const sg_ynode *map) {
    uint32_t n = map->nitems / 2;
    u->first = n <= SMALL_MAP ? u->small : malloc(n * sizeof *u->first);
    if (!u->first) return false;
    size_t cap = 16, *slot = NULL;
    while (n > SMALL_MAP && cap < 2 * (size_t)n) cap *= 2;
    if (n > SMALL_MAP && !(slot = calloc(cap, sizeof *slot))) {
        free(u->first);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const sg_ynode *k = map->items[2 * i];
        u->first[i] = i;
        if (!slot) {
            for (uint32_t j = 0; j < i && u->first[i] == i; j++)
                if (same_key(map->items[2 * j], k)) u->first[i] = j;
            continue;
        }
        if (k->kind != SG_Y_SCALAR) continue;
        size_t h = hash_key(k) & (cap - 1); /* slots hold index + 1; 0 is empty */
        while (slot[h] && !same_key(map->items[2 * (slot[h] - 1)], k)) h = (h + 1) & (cap - 1);
        if (slot[h]) u->first[i] = (uint32_t)slot[h] - 1;
        else slot[h] = i + 1;
    }
    free(slot);
    return true;
}

static void dups_free(dups *u) {
    if (u->first != u->small) free(u->first);
}

/* Reports pair i of map if its key was given before; true when it was. */
static bool is_dup(loader *L, const sg_ynode *map, const dups *u, uint32_t i) {
    uint32_t j = u->first[i];
    if (j == i) return false;
    const sg_ynode *k = map->items[2 * i];
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, k->pos, "duplicate key %s", quoted(b, k->text, k->len));
    sg_diag_report(L->d, SG_NOTE, map->items[2 * j]->pos, "%s was first given here", b);
    return true;
}

/* Duplicate keys anywhere in a tree kept as written (ufunc_inner_loop). */
static void check_tree(loader *L, const sg_ynode *n) {
    dups u;
    if (n->kind == SG_Y_MAP && !dups_init(&u, n)) {
        oom(L);
        return;
    }
    for (uint32_t i = 0; i < n->nitems; i++) {
        if (n->kind == SG_Y_MAP && i % 2 == 0 && is_dup(L, n, &u, i / 2)) i++;
        else if (n->kind != SG_Y_SCALAR) check_tree(L, n->items[i]);
    }
    if (n->kind == SG_Y_MAP) dups_free(&u);
}

/* ---- typed keys -------------------------------------------------------------------------- */

/* The items of a comma-separated scalar ("CPU, CUDA"), trimmed, with their positions. */
static bool split_csv(loader *L, const char *key, const sg_ynode *v, sg_strlist *out) {
    uint32_t n = 1;
    for (size_t i = 0; i < v->len; i++) n += v->text[i] == ',';
    out->items = sg_arena_alloc(L->a, n * sizeof *out->items);
    out->pos = sg_arena_alloc(L->a, n * sizeof *out->pos);
    out->n = 0;
    if (!out->items || !out->pos) {
        oom(L);
        return false;
    }
    spans(L, v);
    bool ok = true;
    for (size_t i = 0, e; i <= v->len; i = e + 1) {
        const char *c = memchr(v->text + i, ',', v->len - i);
        e = c ? (size_t)(c - v->text) : v->len;
        size_t b = i, z = e;
        while (b < z && isspace((unsigned char)v->text[b])) b++;
        while (z > b && isspace((unsigned char)v->text[z - 1])) z--;
        sg_pos p = spans_pos(L, v, b);
        if (b == z) {
            sg_diag_report(L->d, SG_ERROR, p, "empty name in '%s'", key);
            ok = false;
            continue;
        }
        if (!(out->items[out->n] = sg_arena_strndup(L->a, v->text + b, z - b))) {
            oom(L);
            return false;
        }
        out->pos[out->n++] = p;
    }
    return ok;
}

/* A sequence of strings (precomputed, cpp_no_default_args, tags as a list). */
static void seq_list(loader *L, const sg_ynode *k, const sg_ynode *v, sg_strlist *out) {
    char b[QBUF];
    if (v->kind != SG_Y_SEQ) {
        sg_diag_report(L->d, SG_ERROR, value_pos(k, v),
                       "expected a list of strings for '%s', not %s", k->text, describe(b, v));
        return;
    }
    out->items = sg_arena_alloc(L->a, (v->nitems + 1) * sizeof *out->items);
    out->pos = sg_arena_alloc(L->a, (v->nitems + 1) * sizeof *out->pos);
    if (!out->items || !out->pos) {
        oom(L);
        return;
    }
    for (uint32_t i = 0; i < v->nitems; i++) {
        const sg_ynode *it = v->items[i];
        if (it->kind != SG_Y_SCALAR || (it->plain && it->len == 0)) {
            sg_diag_report(L->d, SG_ERROR, it->kind == SG_Y_SCALAR ? v->pos : it->pos,
                           "expected a string in '%s', not %s", k->text, describe(b, it));
            continue;
        }
        spans(L, it);
        out->items[out->n] = it->text;
        out->pos[out->n++] = spans_pos(L, it, 0);
    }
}

static sg_tribool boolean(loader *L, const sg_ynode *k, const sg_ynode *v) {
    static const char *const names[] = {"False", "True", "false", "true"};
    if (!want_scalar(L, k, v, "True or False")) return SG_UNSET;
    for (int i = 0; i < 4 && v->plain; i++)
        if (strcmp(v->text, names[i]) == 0) return i % 2 ? SG_TRUE : SG_FALSE;
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, v->pos, "expected True or False for '%s', not %s", k->text,
                   describe(b, v));
    return SG_UNSET;
}

static void variants(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    sg_strlist l = {0};
    if (!want_scalar(L, k, v, "'function', 'method' or 'function, method'") ||
        !split_csv(L, "variants", v, &l))
        return;
    unsigned mask = 0;
    for (uint32_t i = 0; i < l.n; i++) {
        if (strcmp(l.items[i], "function") == 0) {
            mask |= SG_VARIANT_FUNCTION;
        } else if (strcmp(l.items[i], "method") == 0) {
            mask |= SG_VARIANT_METHOD;
        } else {
            char b[QBUF];
            sg_diag_report(L->d, SG_ERROR, l.pos[i],
                           "unknown variant %s (expected function or method)",
                           quoted(b, l.items[i], strlen(l.items[i])));
            return;
        }
    }
    op->variants = mask;
    op->has_variants = true;
}

/* One "CPU, CUDA: kernel" line of a dispatch table. */
static void dispatch_line(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    char b[QBUF], c[QBUF];
    if (k->kind != SG_Y_SCALAR || (k->plain && k->len == 0)) {
        sg_diag_report(L->d, SG_ERROR, k->pos, "expected dispatch key names, not %s",
                       describe(b, k));
        return;
    }
    if (v->kind != SG_Y_SCALAR || (v->plain && v->len == 0)) {
        sg_diag_report(L->d, SG_ERROR, value_pos(k, v), "expected a kernel name for %s, not %s",
                       quoted(b, k->text, k->len), describe(c, v));
        return;
    }
    sg_strlist keys = {0};
    if (!split_csv(L, "dispatch", k, &keys)) return;
    op->dispatch[op->ndispatch++] = (sg_dispatch){
        .keys = keys.items, .key_pos = keys.pos, .nkeys = keys.n, .kernel = v->text, .pos = k->pos,
        .kernel_pos = v->pos};
}

static void dispatch(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    char b[QBUF];
    dups u;
    if (v->kind != SG_Y_MAP) {
        sg_diag_report(L->d, SG_ERROR, value_pos(k, v),
                       "expected a mapping of dispatch keys to kernels for 'dispatch', not %s",
                       describe(b, v));
        return;
    }
    op->has_dispatch = true;
    op->dispatch = sg_arena_alloc(L->a, (v->nitems / 2 + 1) * sizeof *op->dispatch);
    if (!op->dispatch || !dups_init(&u, v)) {
        oom(L);
        return;
    }
    for (uint32_t i = 0; i < v->nitems / 2 && !sg_yaml_stopped(L->r); i++)
        if (!is_dup(L, v, &u, i)) dispatch_line(L, op, v->items[2 * i], v->items[2 * i + 1]);
    dups_free(&u);
}

static void func(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    if (!want_scalar(L, k, v, "a schema string")) return;
    op->func = v->text;
    spans(L, v);
    op->spans = sg_arena_alloc(L->a, L->nspans * sizeof *op->spans);
    if (!op->spans) {
        oom(L);
        return;
    }
    memcpy(op->spans, L->spans, L->nspans * sizeof *op->spans);
    op->nspans = L->nspans;
    sg_schema_error err;
    int rc = sg_schema_parse(v->text, v->len, L->a, &op->schema, &err);
    if (rc == SG_SCHEMA_ENOMEM) {
        oom(L);
    } else if (rc != SG_SCHEMA_OK) {
        sg_diag_report(L->d, SG_ERROR, sg_op_pos_at(op, err.offset), "%s", err.msg);
    } else {
        op->parsed = true;
        if (op->schema.ns) op->ns = op->schema.ns;
    }
}

static void apply(loader *L, sg_op *op, const sg_op_keydef *kd, const sg_ynode *k,
                  const sg_ynode *v) {
    void *field = (char *)op + kd->off;
    switch (kd->shape) {
    case SG_KEY_FUNC: func(L, op, k, v); break;
    case SG_KEY_VARIANTS: variants(L, op, k, v); break;
    case SG_KEY_DISPATCH: dispatch(L, op, k, v); break;
    case SG_KEY_BOOL: *(sg_tribool *)field = boolean(L, k, v); break;
    case SG_KEY_STR:
        if (want_scalar(L, k, v, "a string")) *(const char **)field = v->text;
        break;
    case SG_KEY_SEQ: seq_list(L, k, v, field); break;
    case SG_KEY_TAGS:
        if (v->kind == SG_Y_SEQ) {
            seq_list(L, k, v, field);
            break;
        }
        /* fall through - "a, b" */
    case SG_KEY_CSV:
        if (want_scalar(L, k, v, "a comma-separated list")) split_csv(L, k->text, v, field);
        break;
    case SG_KEY_MAP:
        if (v->kind != SG_Y_MAP) {
            char b[QBUF];
            sg_diag_report(L->d, SG_ERROR, value_pos(k, v), "expected a mapping for '%s', not %s",
                           k->text, describe(b, v));
            break;
        }
        check_tree(L, v);
        *(sg_ynode **)field = (sg_ynode *)v;
        break;
    }
}

/* ---- entries ----------------------------------------------------------------------------- */

static bool has_key(const sg_ynode *map, const char *key) {
    for (uint32_t i = 0; i + 1 < map->nitems; i += 2)
        if (map->items[i]->kind == SG_Y_SCALAR && strcmp(map->items[i]->text, key) == 0)
            return true;
    return false;
}

/* A key must be a name: reports one that is not. */
static bool key_ok(loader *L, const sg_ynode *k) {
    if (k->kind == SG_Y_SCALAR && k->len) return true;
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, k->pos, "expected a key name, not %s", describe(b, k));
    return false;
}

static void unknown_key(loader *L, const sg_ynode *k) {
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, k->pos, "unknown key %s", quoted(b, k->text, k->len));
}

/* An operator entry. Every key is kept as written; the known ones also fill typed fields.
 * An entry without a usable func is dropped (after its other keys are checked): nothing
 * downstream can name it. */
static void op_entry(loader *L, const sg_ynode *e) {
    sg_op *op = sg_model_add_op(L->m);
    uint32_t np = e->nitems / 2;
    dups u;
    if (!op || !dups_init(&u, e)) {
        oom(L);
        return;
    }
    op->pos = e->pos;
    op->ns = "aten";
    op->keys = sg_arena_alloc(L->a, (np + 1) * sizeof *op->keys);
    op->values = sg_arena_alloc(L->a, (np + 1) * sizeof *op->values);
    bool has_func = false;
    for (uint32_t i = 0; i < np && op->keys && op->values && !sg_yaml_stopped(L->r); i++) {
        const sg_ynode *k = e->items[2 * i], *v = e->items[2 * i + 1];
        if (!key_ok(L, k)) continue;
        op->keys[op->nkeys] = k->text;
        op->values[op->nkeys++] = (sg_ynode *)v;
        const sg_op_keydef *kd = sg_op_keydef_find(k->text);
        if (is_dup(L, e, &u, i)) continue;
        if (!kd) unknown_key(L, k);
        else apply(L, op, kd, k, v);
        has_func |= kd && kd->shape == SG_KEY_FUNC;
    }
    dups_free(&u);
    if (!op->keys || !op->values) oom(L);
    if (!has_func) sg_diag_report(L->d, SG_ERROR, e->pos, "entry has no 'func' key");
    if (!op->func) L->m->nops--; /* it is the last op */
}

/* A tags.yaml entry: tag and desc. */
static void tag_entry(loader *L, const sg_ynode *e) {
    sg_tag *t = sg_model_add_tag(L->m);
    dups u;
    if (!t || !dups_init(&u, e)) {
        oom(L);
        return;
    }
    t->pos = e->pos;
    bool has_tag = false;
    for (uint32_t i = 0; i < e->nitems / 2; i++) {
        const sg_ynode *k = e->items[2 * i], *v = e->items[2 * i + 1];
        if (!key_ok(L, k) || is_dup(L, e, &u, i)) continue;
        bool tag = strcmp(k->text, "tag") == 0;
        has_tag |= tag;
        if (!tag && strcmp(k->text, "desc") != 0)
            unknown_key(L, k);
        else if (want_scalar(L, k, v, "a string"))
            *(tag ? &t->name : &t->desc) = v->text;
    }
    dups_free(&u);
    if (!has_tag) sg_diag_report(L->d, SG_ERROR, e->pos, "entry has no 'tag' key");
    if (!t->name) L->m->ntags--;
}

/* A complete top-level entry. The first one tells a tags file (tag:) and a derivatives file
 * (name:, derivatives.yaml) from a schema file. A derivatives file is only noted here: its
 * entries name ops, so it is read once the model is whole (deriv.h). */
static void entry(void *ud, sg_yreader *r, const sg_ynode *e) {
    loader *L = ud;
    L->r = r;
    if (L->kind == FILE_UNKNOWN && e->kind == SG_Y_MAP) {
        bool func = has_key(e, "func");
        L->kind = has_key(e, "tag") && !func     ? FILE_TAGS
                  : has_key(e, "name") && !func ? FILE_DERIVATIVES
                                                : FILE_SCHEMA;
        if (L->kind == FILE_TAGS) L->m->have_tags = true;
        if (L->kind == FILE_DERIVATIVES) {
            if (L->m->derivatives)
                sg_diag_report(L->d, SG_ERROR, e->pos, "a second derivatives file (the first: %s)",
                               L->m->derivatives->path);
            else
                L->m->derivatives = L->src;
        }
    }
    if (L->kind == FILE_DERIVATIVES) return;
    if (e->kind != SG_Y_MAP) {
        char b[QBUF];
        sg_diag_report(L->d, SG_ERROR, e->pos, "expected an entry (a mapping with '%s:'), not %s",
                       L->kind == FILE_TAGS ? "tag" : "func", describe(b, e));
    } else if (L->kind == FILE_TAGS) {
        tag_entry(L, e);
    } else {
        op_entry(L, e);
    }
}


/* ---- a file ------------------------------------------------------------------------------ */

int sg_yaml_load_piece(sg_model *m, const sg_source *src, sg_yaml_piece piece, sg_diag *d) {
    uint32_t before = d->nerrors;
    loader L = {.m = m, .d = d, .a = m->arena, .src = src};
    sg_yaml_read_piece(src, piece, m->arena, d, entry, &L);
    return (int)(d->nerrors - before);
}

int sg_yaml_load(sg_model *m, const sg_source *src, sg_diag *d) {
    return sg_yaml_load_piece(m, src, (sg_yaml_piece){0, src->len, 1}, d);
}
