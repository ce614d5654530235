/* strmap.c: see strmap.h. */
#include "strmap.h"

#include <string.h>

/* Eight bytes a step, then FNV-1a's step for the rest: keys run to hundreds of bytes (the
 * Lua model's shared tables are found by their whole content). */
static uint32_t hash(const char *k, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15u ^ n;
    for (; n >= 8; k += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, k, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 29;
    }
    for (; n; k++, n--) h = (h ^ (unsigned char)*k) * 0x100000001b3u;
    h ^= h >> 32;
    return (uint32_t)h;
}

/* Slots come from the arena (zeroed already). */
static sg_strmap_slot *new_slots(sg_arena *a, uint32_t cap) {
    return sg_arena_alloc(a, (size_t)cap * sizeof(sg_strmap_slot));
}

int sg_strmap_init(sg_strmap *m, sg_arena *arena, uint32_t expected) {
    uint32_t cap = 16;
    while (cap < expected + expected / 2 + 1 && cap < (1u << 30)) cap *= 2;
    m->arena = arena;
    m->slots = new_slots(arena, cap);
    m->cap = m->slots ? cap : 0;
    m->n = 0;
    return m->slots ? 0 : -1;
}

void sg_strmap_free(sg_strmap *m) { memset(m, 0, sizeof *m); /* the arena holds it all */ }

static sg_strmap_slot *find(const sg_strmap *m, uint32_t h, const char *key, size_t len) {
    uint32_t mask = m->cap - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        sg_strmap_slot *sl = &m->slots[i];
        if (!sl->key) return sl;
        if (sl->hash == h && sl->len == len && memcmp(sl->key, key, len) == 0) return sl;
    }
}

void *sg_strmap_get(const sg_strmap *m, const char *key, size_t len) {
    if (!m->cap) return NULL;
    return find(m, hash(key, len), key, len)->value;
}

static int grow(sg_strmap *m) {
    sg_strmap old = *m;
    m->cap = old.cap * 2;
    m->slots = new_slots(m->arena, m->cap);
    if (!m->slots) {
        *m = old;
        return -1;
    }
    for (uint32_t i = 0; i < old.cap; i++)
        if (old.slots[i].key) *find(m, old.slots[i].hash, old.slots[i].key, old.slots[i].len) = old.slots[i];
    return 0;
}

sg_strmap_slot *sg_strmap_put(sg_strmap *m, const char *key, size_t len, void *value) {
    if (len > UINT32_MAX) return NULL;
    if (!m->cap || ((m->n + 1) * 4 > m->cap * 3 && grow(m) != 0)) return NULL;
    uint32_t h = hash(key, len);
    sg_strmap_slot *sl = find(m, h, key, len);
    if (sl->key) return sl;
    const char *k = sg_arena_strndup(m->arena, key, len);
    if (!k) return NULL;
    *sl = (sg_strmap_slot){.key = k, .value = value, .hash = h, .len = (uint32_t)len};
    m->n++;
    return sl;
}
