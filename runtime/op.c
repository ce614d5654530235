/* op.c: defining ops from schema strings, and finding them by name.
 *
 * Lookups take no lock: the name table is an open-addressing array of op pointers that only
 * grows; a bigger copy is published with one atomic store and the old one is kept until
 * shutdown (a reader may still be probing it). Definitions take sg__lock.
 */
#include "rt_dispatch.h"
#include "sg_type_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t sg__lock = PTHREAD_MUTEX_INITIALIZER;
sg_op          *sg__ops;

typedef struct names {
    size_t         cap;    /* a power of two */
    size_t         used;
    struct names  *older;  /* replaced arrays, freed at shutdown */
    sg_op         *slot[]; /* atomic */
} names;

static names *table; /* atomic */

/* FNV-1a over "name.overload" without building it. */
static uint64_t hash_name(const char *ns, size_t nsn, const char *name, const char *overload) {
    uint64_t h = 1469598103934665603u;
#define MIX(c) (h = (h ^ (unsigned char)(c)) * 1099511628211u)
    for (size_t i = 0; i < nsn; i++) MIX(ns[i]);
    for (const char *p = name; *p; p++) MIX(*p);
    MIX('.');
    for (const char *p = overload; *p; p++) MIX(*p);
#undef MIX
    return h;
}

/* Whether op is ns+name with this overload ("aten::" + "add" is "aten::add"). */
static bool same(const sg_op *op, const char *ns, size_t nsn, const char *name,
                 const char *overload) {
    return strncmp(op->name, ns, nsn) == 0 && strcmp(op->name + nsn, name) == 0 &&
           strcmp(op->overload, overload) == 0;
}

static sg_op *lookup(const char *ns, size_t nsn, const char *name, const char *overload) {
    names   *n = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
    if (!n) return NULL;
    uint64_t h = hash_name(ns, nsn, name, overload);
    for (size_t i = h & (n->cap - 1);; i = (i + 1) & (n->cap - 1)) {
        sg_op *op = __atomic_load_n(&n->slot[i], __ATOMIC_ACQUIRE);
        if (!op) return NULL;
        if (same(op, ns, nsn, name, overload)) return op;
    }
}

static void put(names *n, sg_op *op) {
    uint64_t h = hash_name(op->name, strlen(op->name), "", op->overload);
    size_t   i = h & (n->cap - 1);
    while (n->slot[i]) i = (i + 1) & (n->cap - 1);
    __atomic_store_n(&n->slot[i], op, __ATOMIC_RELEASE);
    n->used++;
}

/* Adds op to the name table (lock held). */
static sg_status add_name(sg_op *op) {
    names *n = table;
    if (!n || (n->used + 1) * 2 > n->cap) {
        size_t cap = n ? n->cap * 2 : 256;
        names *bigger = calloc(1, sizeof *bigger + cap * sizeof(sg_op *));
        if (!bigger) return sg_error(SG_ENOMEM, "out of memory");
        bigger->cap = cap;
        bigger->older = n;
        for (size_t i = 0; n && i < n->cap; i++)
            if (n->slot[i]) put(bigger, n->slot[i]);
        __atomic_store_n(&table, bigger, __ATOMIC_RELEASE);
        n = bigger;
    }
    put(n, op);
    return SG_OK;
}

/* Splits "ns::name" into its namespace part (with "::") or "aten::" where none is written. */
static void split_ns(const char *qualified, const char **ns, size_t *nsn, const char **name) {
    const char *colons = strstr(qualified, "::");
    if (colons) {
        *ns = qualified;
        *nsn = (size_t)(colons - qualified) + 2;
        *name = colons + 2;
    } else {
        *ns = "aten::";
        *nsn = 6;
        *name = qualified;
    }
}

/* Edit distance between a and b (at most 64 bytes each are compared; longer names are no near
 * misses of anything). */
static int distance(const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    if (na > 64 || nb > 64) return 1 << 20;
    int row[65];
    for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* The message of a failed lookup (lock held): the overloads the name has, or the defined name
 * nearest to it where one is near (a third of its length, at least one edit). */
static sg_status not_found_locked(const char *ns, size_t nsn, const char *base,
                                  const char *overload) {
    sg_buf b;
    sg_buf_init(&b);
    sg_buf_printf(&b, "no op %.*s%s%s%s is defined", (int)nsn, ns, base, *overload ? "." : "",
                  overload);
    /* every overload of the name, in definition order (sg__ops is newest first) */
    enum { SHOWN = 32 };
    const sg_op *found[SHOWN];
    int          n = 0;
    for (const sg_op *op = sg__ops; op; op = op->all_next)
        if (strncmp(op->name, ns, nsn) == 0 && strcmp(op->name + nsn, base) == 0) {
            if (n < SHOWN) found[n] = op;
            else memmove(found, found + 1, (SHOWN - 1) * sizeof *found), found[SHOWN - 1] = op;
            n++;
        }
    if (n) {
        sg_buf_printf(&b, "; %.*s%s has overload%s: ", (int)nsn, ns, base, n == 1 ? "" : "s");
        int shown = n < SHOWN ? n : SHOWN;
        for (int k = shown - 1; k >= 0; k--)
            sg_buf_printf(&b, "%s%s", k < shown - 1 ? ", " : "",
                          *found[k]->overload ? found[k]->overload : "(none)");
        if (n > SHOWN) sg_buf_printf(&b, ", ... (%d in all)", n);
    } else {
        char want[300];
        snprintf(want, sizeof want, "%.*s%s", (int)nsn, ns, base);
        const sg_op *best = NULL;
        int          best_d = 0, limit = (int)strlen(base) / 3;
        if (limit < 1) limit = 1;
        for (const sg_op *op = sg__ops; op; op = op->all_next) {
            int d = distance(want, op->name);
            if (d <= limit && (!best || d < best_d)) {
                best = op;
                best_d = d;
            }
        }
        if (best) sg_buf_printf(&b, "; did you mean %s?", best->name);
    }
    sg_status st = b.oom ? sg_error(SG_ENOTFOUND, "no op %.*s%s is defined", (int)nsn, ns, base)
                         : sg_error(SG_ENOTFOUND, "%s", b.data);
    sg_buf_free(&b);
    return st;
}

static __attribute__((noinline, cold)) sg_status not_found(const char *ns, size_t nsn,
                                                           const char *base,
                                                           const char *overload) {
    pthread_mutex_lock(&sg__lock);
    sg_status st = not_found_locked(ns, nsn, base, overload);
    pthread_mutex_unlock(&sg__lock);
    return st;
}

sg_status sg_op_find(const char *name, const char *overload, sg_op **out) {
    const char *ns, *base;
    size_t      nsn;
    if (!out) return sg_error(SG_EINVAL, "sg_op_find: no out pointer given (NULL)");
    *out = NULL;
    if (!name) return sg_error(SG_EINVAL, "sg_op_find: no name given");
    if (!overload) overload = "";
    split_ns(name, &ns, &nsn, &base);
    *out = lookup(ns, nsn, base, overload);
    return *out ? SG_OK : not_found(ns, nsn, base, overload);
}

/* ---- what a boxed call checks, from the schema ------------------------------------------- */

#define TAG SG_ANY_TAG_BIT

/* The sg_any tags a value of type ty may take: its family's (sg_type_table.h), None where
 * optional, and one int where a list of ints has a fixed size (PyTorch broadcasts it). */
static uint32_t accepts(const sg_type *ty) {
#define SG_TAG(x) | TAG(SG_ANY_##x)
#define SG_FAM_TAGS(id, name, letter, ret_letter, param, result, tags, spellings) \
    [SG_FAM_##id] = 0 tags,
    static const uint32_t family_tags[SG_FAM__COUNT] = {SG_TYPE_FAMILIES(SG_FAM_TAGS)};
#undef SG_FAM_TAGS
#undef SG_TAG
    sg_type_family_id f = sg_type_family_of(ty);
    uint32_t          t = family_tags[f] ? family_tags[f] : TAG(SG_ANY__COUNT) - 1;
    const sg_type    *u = ty->kind == SG_TY_OPTIONAL ? ty->elems[0] : ty;
    if (ty->kind == SG_TY_OPTIONAL) t |= TAG(SG_ANY_NONE);
    if ((f == SG_FAM_INT_LIST || f == SG_FAM_OPT_INT_LIST) && u->size > 0) t |= TAG(SG_ANY_INT);
    return t;
}

/* Tags whose values a boxed call checks beyond the tag, tensor lists aside (the one pass checks
 * those). */
#define VALUE_TAGS \
    (SG_ANY_CHECKED_TAGS & ~(TAG(SG_ANY_TENSOR_LIST) | TAG(SG_ANY_OPT_TENSOR_LIST)))

/* The tags the items of a LIST bound to ty may carry: its element type's (Scalar[]: bool, int,
 * float, complex; str[]: str); any tag where ty is no list (type Any). */
static uint32_t item_accepts(const sg_type *ty) {
    const sg_type *u = ty->kind == SG_TY_OPTIONAL ? ty->elems[0] : ty;
    if (u->kind != SG_TY_LIST || u->nelems < 1) return TAG(SG_ANY__COUNT) - 1;
    return accepts(u->elems[0]);
}

/* Fills the boxed-call facts of op from its schema (arena allocations). */
static sg_status describe(sg_op *op) {
    const sg_schema *s = &op->schema;
    op->nargs = (int32_t)s->nargs;
    op->nrets = (int32_t)s->nrets;
    op->device_arg = -1;
    size_t n = s->nargs ? s->nargs : 1;
    op->argc = sg_arena_alloc(op->arena, n * sizeof *op->argc);
    op->tensor_args = sg_arena_alloc(op->arena, n * sizeof *op->tensor_args);
    op->written_args = sg_arena_alloc(op->arena, n * sizeof *op->written_args);
    if (!op->argc || !op->tensor_args || !op->written_args)
        return sg_error(SG_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_arg *a = &s->args[i];
        arg_check *c = &op->argc[i];
        c->accepts = accepts(a->type);
        c->item_accepts = item_accepts(a->type);
        c->fast_tag = c->accepts & TAG(SG_ANY_TENSOR) ? SG_ANY_TENSOR : -1;
        c->unused = 0;
        if (c->accepts & VALUE_TAGS) op->checks |= SG_OP_CHECK_VALUES;
        if (sg_type_is_tensor_like(a->type)) {
            op->tensor_args[op->ntensor_args++] = (int32_t)i;
            if (sg_arg_is_write(a)) op->written_args[op->nwritten++] = (int32_t)i;
        }
        const sg_type *base = sg_type_base(a->type);
        if (base->kind == SG_TY_DEVICE && a->type->kind != SG_TY_LIST && op->device_arg < 0)
            op->device_arg = (int32_t)i;
    }
    if (op->nwritten) op->checks |= SG_OP_CHECK_WRITTEN;
    if (op->ntensor_args) op->device_arg = -1; /* tensors pick the backend, not the device */
    return sg__op_defaults(op);
}

/* ---- definitions ------------------------------------------------------------------------- */

static char *dup(sg_arena *a, const char *s, size_t n) { return sg_arena_strndup(a, s, n); }

/* Every op's memory comes from one arena (lock held). Rationale: an arena per op began with a
 * 64 KiB pre-faulted chunk, 29 MB and most of the start-up time for aten's 454 ops. */
static sg_arena *ops_arena;

/* Parses text into a new op in ops_arena (lock held). A failed parse leaves its few bytes in
 * the arena until shutdown. */
static sg_status define(const char *text, sg_op **out) {
    sg_schema_error err;
    if (!ops_arena && !(ops_arena = sg_arena_new(NULL, NULL)))
        return sg_error(SG_ENOMEM, "out of memory");
    sg_arena *arena = ops_arena;
    sg_op    *op = sg_arena_alloc(arena, sizeof *op);
    if (!op) return sg_error(SG_ENOMEM, "out of memory");
    op->arena = arena;
    int rc = sg_schema_parse(text, strlen(text), arena, &op->schema, &err);
    if (rc != SG_SCHEMA_OK)
        return rc == SG_SCHEMA_ENOMEM
                   ? sg_error(SG_ENOMEM, "out of memory")
                   : sg_error(SG_EINVAL, "sg_op_define: %s at column %u of '%s'", err.msg,
                              err.offset + 1, text);
    /* name "ns::name"; text the canonical schema with its namespace, "aten::" where none */
    const char *ns = op->schema.ns ? op->schema.ns : "aten";
    sg_buf      b;
    sg_buf_init(&b);
    sg_buf_printf(&b, "%s::%s", ns, op->schema.name);
    size_t namelen = b.len;
    if (!op->schema.ns) sg_buf_puts(&b, "aten::");
    sg_schema_print(&b, &op->schema, true);
    sg_status st = SG_OK;
    op->name = dup(arena, b.data, namelen);
    op->text = dup(arena, b.data + namelen, b.len - namelen);
    op->overload = dup(arena, op->schema.overload, strlen(op->schema.overload));
    op->source = dup(arena, text, strlen(text));
    if (b.oom || !op->name || !op->text || !op->overload || !op->source)
        st = sg_error(SG_ENOMEM, "out of memory");
    sg_buf_free(&b);
    if (!st) st = describe(op);
    if (!st) *out = op;
    return st;
}

/* The op text names, where it is defined already with exactly this text: a library's init
 * run again finds its ops without parsing them again. The name is read up to '(' (free
 * whitespace allowed, as the parser allows it). */
static sg_op *same_source(const char *text) {
    char        name[256];
    size_t      k = 0;
    const char *p = text;
    for (; *p && *p != '(' && k + 1 < sizeof name; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n') name[k++] = *p;
    if (*p != '(') return NULL;
    name[k] = '\0';
    char *dot = strrchr(name, '.'), *colons = strstr(name, "::");
    if (dot && colons && dot < colons) dot = NULL;
    if (dot) *dot = '\0';
    const char *ns, *base;
    size_t      nsn;
    split_ns(name, &ns, &nsn, &base);
    sg_op *op = lookup(ns, nsn, base, dot ? dot + 1 : "");
    return op && strcmp(op->source, text) == 0 ? op : NULL;
}

sg_status sg_op_define(const char *schema, sg_op **out) {
    sg_op *op = NULL;
    if (!out) return sg_error(SG_EINVAL, "sg_op_define: no out pointer given (NULL)");
    *out = NULL;
    if (!schema) return sg_error(SG_EINVAL, "sg_op_define: no schema given");
    pthread_mutex_lock(&sg__lock);
    if ((*out = same_source(schema))) {
        pthread_mutex_unlock(&sg__lock);
        return SG_OK;
    }
    sg_status st = define(schema, &op);
    if (st) {
        pthread_mutex_unlock(&sg__lock);
        return st;
    }
    const char *ns, *base;
    size_t      nsn;
    split_ns(op->name, &ns, &nsn, &base);
    sg_op *old = lookup(ns, nsn, base, op->overload);
    if (old) {
        bool equal = strcmp(old->text, op->text) == 0; /* canonical: spacing and ns aside */
        st = equal ? SG_OK
                   : sg_error(SG_EEXISTS, "%s%s%s is defined already as '%s'; cannot define it "
                                          "again as '%s'",
                              old->name, *old->overload ? "." : "", old->overload, old->text,
                              op->text);
        pthread_mutex_unlock(&sg__lock);
        *out = equal ? old : NULL;
        return st;
    }
    st = sg__rebuild(op);
    if (!st) st = add_name(op);
    if (st) {
        sg__free_tables(op);
        pthread_mutex_unlock(&sg__lock);
        return st;
    }
    op->all_next = sg__ops;
    sg__ops = op;
    pthread_mutex_unlock(&sg__lock);
    *out = op;
    return SG_OK;
}

/* A NULL op has no name, overload or schema ("") and no counts (-1): these do not fail. */
const char *sg_op_name(const sg_op *op) { return op ? op->name : ""; }
const char *sg_op_overload(const sg_op *op) { return op ? op->overload : ""; }
const char *sg_op_schema(const sg_op *op) { return op ? op->text : ""; }
int32_t     sg_op_nargs(const sg_op *op) { return op ? op->nargs : -1; }
int32_t     sg_op_nrets(const sg_op *op) { return op ? op->nrets : -1; }

void sg__ops_free(void) {
    for (sg_op *op = sg__ops, *next; op; op = next) {
        next = op->all_next;
        sg__free_tables(op);
    }
    sg__ops = NULL;
    if (ops_arena) sg_arena_free(ops_arena);
    ops_arena = NULL;
    for (names *n = table, *older; n; n = older) {
        older = n->older;
        free(n);
    }
    table = NULL;
}
