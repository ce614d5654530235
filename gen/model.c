/* model.c: the model container. Objects (sources, ops, strings) live in the model's arena;
 * the lists of them are growable arrays (sources, ops, tags), freed by sg_model_free. */
#include "model.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int sg_model_init(sg_model *m) {
    memset(m, 0, sizeof *m);
    m->arena = sg_arena_new(NULL, NULL);
    return m->arena ? 0 : -1;
}

/* groups is built by group.c from the arena, so it is not freed here. */
void sg_model_free(sg_model *m) {
    free(m->sources);
    free(m->ops);
    free(m->tags);
    sg_arena_free(m->arena);
    memset(m, 0, sizeof *m);
}

/* Makes room for one more element in an array that doubles: returns the (maybe moved) array,
 * or NULL when out of memory (the old array stays valid). */
static void *grow(void *items, uint32_t n, uint32_t *cap, size_t size) {
    if (n < *cap) return items;
    uint32_t c = *cap ? *cap * 2 : 16;
    if (c <= n) return NULL; /* overflow */
    void *p = realloc(items, (size_t)c * size);
    if (p) *cap = c;
    return p;
}

/* text NULL: room for len bytes (zeroed) is made for the caller to fill. */
sg_source *sg_model_add_source(sg_model *m, const char *path, const char *text, size_t len) {
    sg_source **v = grow(m->sources, m->nsources, &m->capsources, sizeof *v);
    if (!v) return NULL;
    m->sources = v;
    sg_source *s = sg_arena_alloc(m->arena, sizeof *s);
    char *p = sg_arena_strndup(m->arena, path, strlen(path));
    char *t = text ? sg_arena_strndup(m->arena, text, len) : sg_arena_alloc(m->arena, len + 1);
    if (!s || !p || !t) return NULL;
    *s = (sg_source){.path = p, .text = t, .len = len};
    m->sources[m->nsources++] = s;
    return s;
}

/* A new op with torchgen's defaults for absent keys: variants function, booleans unset. */
sg_op *sg_model_add_op(sg_model *m) {
    sg_op **v = grow(m->ops, m->nops, &m->capops, sizeof *v);
    if (!v) return NULL;
    m->ops = v;
    sg_op *op = sg_arena_alloc(m->arena, sizeof *op);
    if (!op) return NULL;
    op->variants = SG_VARIANT_FUNCTION;
    op->structured = op->device_guard = op->manual_cpp_binding = SG_UNSET;
    op->manual_kernel_registration = op->use_const_ref_for_mutable_tensors = SG_UNSET;
    m->ops[m->nops++] = op;
    return op;
}

int sg_model_take_ops(sg_model *m, sg_model *from) {
    if (from->nops > UINT32_MAX - m->nops) return -1;
    uint32_t n = m->nops + from->nops;
    if (n > m->capops) {
        sg_op **v = realloc(m->ops, (size_t)n * sizeof *v);
        if (!v) return -1;
        m->ops = v;
        m->capops = n;
    }
    if (!sg_arena_adopt(m->arena, from->arena)) return -1;
    from->arena = NULL;
    if (from->nops) memcpy(m->ops + m->nops, from->ops, from->nops * sizeof *m->ops);
    m->nops = n;
    from->nops = 0;
    return 0;
}

size_t sg_model_memory(const sg_model *m) {
    return sg_arena_used(m->arena);
}

sg_tag *sg_model_add_tag(sg_model *m) {
    sg_tag *v = grow(m->tags, m->ntags, &m->captags, sizeof *v);
    if (!v) return NULL;
    m->tags = v;
    sg_tag *t = &m->tags[m->ntags++];
    memset(t, 0, sizeof *t);
    return t;
}

/* The last span at or before off gives the line; the column advances byte by byte from it. */
sg_pos sg_op_pos_at(const sg_op *op, uint32_t off) {
    if (!op->nspans) return op->pos;
    uint32_t lo = 0, hi = op->nspans; /* find the last span with offset <= off */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (op->spans[mid].offset <= off)
            lo = mid;
        else
            hi = mid;
    }
    const sg_span *s = &op->spans[lo];
    sg_pos p = s->pos;
    if (off > s->offset) p.col += off - s->offset;
    return p;
}

const sg_ynode *sg_op_key(const sg_op *op, const char *key) {
    for (uint32_t i = 0; i < op->nkeys; i++)
        if (strcmp(op->keys[i], key) == 0) return op->values[i];
    return NULL;
}

/* ---- the keys of an entry -------------------------------------------------------------- */

static const sg_op_keydef op_keys[] = {
    {"func", SG_KEY_FUNC, 0},
    {"variants", SG_KEY_VARIANTS, 0},
    {"dispatch", SG_KEY_DISPATCH, 0},
    {"structured", SG_KEY_BOOL, offsetof(sg_op, structured)},
    {"structured_delegate", SG_KEY_STR, offsetof(sg_op, structured_delegate)},
    {"structured_inherits", SG_KEY_STR, offsetof(sg_op, structured_inherits)},
    {"precomputed", SG_KEY_SEQ, offsetof(sg_op, precomputed)},
    {"autogen", SG_KEY_CSV, offsetof(sg_op, autogen)},
    {"tags", SG_KEY_TAGS, offsetof(sg_op, tags)},
    {"device_check", SG_KEY_STR, offsetof(sg_op, device_check)},
    {"device_guard", SG_KEY_BOOL, offsetof(sg_op, device_guard)},
    {"python_module", SG_KEY_STR, offsetof(sg_op, python_module)},
    {"cpp_no_default_args", SG_KEY_SEQ, offsetof(sg_op, cpp_no_default_args)},
    {"manual_cpp_binding", SG_KEY_BOOL, offsetof(sg_op, manual_cpp_binding)},
    {"manual_kernel_registration", SG_KEY_BOOL, offsetof(sg_op, manual_kernel_registration)},
    {"category_override", SG_KEY_STR, offsetof(sg_op, category_override)},
    {"use_const_ref_for_mutable_tensors", SG_KEY_BOOL,
     offsetof(sg_op, use_const_ref_for_mutable_tensors)},
    {"ufunc_inner_loop", SG_KEY_MAP, offsetof(sg_op, ufunc_inner_loop)},
};

const sg_op_keydef *sg_op_keydef_find(const char *name) {
    for (size_t i = 0; i < sizeof op_keys / sizeof *op_keys; i++)
        if (strcmp(op_keys[i].name, name) == 0) return &op_keys[i];
    return NULL;
}

bool sg_op_key_is_bool(const char *key) {
    const sg_op_keydef *kd = sg_op_keydef_find(key);
    return kd && kd->shape == SG_KEY_BOOL;
}
