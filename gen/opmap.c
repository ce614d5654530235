/* opmap.c: a pointer-keyed open-addressing table of the model's ops (opmap.h). */
#include "opmap.h"

#include <stdint.h>
#include <stdlib.h>

static size_t slot(const opmap *mp, const sg_op *op) {
    size_t h = ((uintptr_t)op >> 4) * 0x9E3779B97F4A7C15u;
    size_t i = h & (mp->cap - 1);
    while (mp->keys[i] && mp->keys[i] != op) i = (i + 1) & (mp->cap - 1);
    return i;
}

bool opmap_init(opmap *mp, const sg_model *m) {
    mp->cap = 64;
    while (mp->cap < 2 * (size_t)m->nops) mp->cap *= 2;
    mp->keys = calloc(mp->cap, sizeof *mp->keys);
    mp->vals = calloc(mp->cap, sizeof *mp->vals);
    if (!mp->keys || !mp->vals) return false;
    for (uint32_t i = 0; i < m->nops; i++) {
        size_t at = slot(mp, m->ops[i]);
        mp->keys[at] = m->ops[i];
        mp->vals[at] = i + 1;
    }
    return true;
}

uint32_t opmap_get(const opmap *mp, const sg_op *op) {
    size_t at = slot(mp, op);
    return mp->keys[at] ? mp->vals[at] : 0;
}

void opmap_free(opmap *mp) {
    free(mp->keys);
    free(mp->vals);
}
