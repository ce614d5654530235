/* keymap.c: see keymap.h. */
#include "keymap.h"

#include <stdlib.h>
#include <string.h>

void sg_keymap_init(sg_keymap *km) {
    memset(km, 0, sizeof *km);
    sg_buf_init(&km->keys);
}

void sg_keymap_free(sg_keymap *km) {
    free(km->slots);
    free(km->hashes);
    free(km->offs);
    free(km->lens);
    sg_buf_free(&km->keys);
    sg_keymap_init(km);
}

static uint32_t hash(const char *k, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15u ^ n; /* eight bytes a step: keys run to hundreds */
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

/* Room for one more entry: false when out of memory. */
static bool grow(sg_keymap *km) {
    if (km->n + 1 > km->room) {
        size_t    room = km->room ? km->room * 2 : 1024;
        uint32_t *h = realloc(km->hashes, room * sizeof *h);
        if (h) km->hashes = h;
        size_t *o = realloc(km->offs, room * sizeof *o);
        if (o) km->offs = o;
        uint32_t *l = realloc(km->lens, room * sizeof *l);
        if (l) km->lens = l;
        if (!h || !o || !l) return false;
        km->room = room;
    }
    if (2 * (km->n + 1) <= km->cap) return true;
    size_t    cap = km->cap ? km->cap * 2 : 2048;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots) return false;
    for (size_t e = 0; e < km->n; e++) {
        size_t i = km->hashes[e] & (cap - 1);
        while (slots[i]) i = (i + 1) & (cap - 1);
        slots[i] = (uint32_t)e + 1;
    }
    free(km->slots);
    km->slots = slots;
    km->cap = cap;
    return true;
}

uint32_t sg_keymap_put(sg_keymap *km, const char *k, size_t n, bool *added) {
    uint32_t h = hash(k, n);
    *added = false;
    for (size_t i = km->cap ? h & (km->cap - 1) : 0; km->cap && km->slots[i];
         i = (i + 1) & (km->cap - 1)) {
        uint32_t e = km->slots[i];
        if (km->hashes[e - 1] == h && km->lens[e - 1] == n &&
            memcmp(km->keys.data + km->offs[e - 1], k, n) == 0)
            return e;
    }
    size_t at = km->keys.len;
    if (n > UINT32_MAX || km->n >= INT32_MAX || !grow(km)) return 0;
    if (n) sg_buf_putn(&km->keys, k, n);
    if (km->keys.oom) return 0;
    size_t i = h & (km->cap - 1);
    while (km->slots[i]) i = (i + 1) & (km->cap - 1);
    km->hashes[km->n] = h;
    km->offs[km->n] = at;
    km->lens[km->n] = (uint32_t)n;
    km->slots[i] = (uint32_t)++km->n;
    *added = true;
    return (uint32_t)km->n;
}
