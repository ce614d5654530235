/* strmap.h: a map from byte strings to pointers: open addressing, its slots and a copy of
 * each key in an arena, so it is freed with the arena. The validator's name indexes, grouping,
 * derive and the Lua model's shared tables use it. */
#ifndef SG_STRMAP_H
#define SG_STRMAP_H

#include "sg_schema.h"

typedef struct sg_strmap_slot {
    const char *key;   /* NULL: empty */
    void       *value;
    uint32_t    hash;
    uint32_t    len;
} sg_strmap_slot;

typedef struct sg_strmap {
    sg_strmap_slot *slots;
    uint32_t        cap;  /* power of two */
    uint32_t        n;
    sg_arena       *arena;
} sg_strmap;

/* Sized for `expected` keys (it grows past that). Returns 0, or -1 when out of memory. */
int   sg_strmap_init(sg_strmap *m, sg_arena *arena, uint32_t expected);
void  sg_strmap_free(sg_strmap *m); /* forgets it; the memory goes with the arena */
void *sg_strmap_get(const sg_strmap *m, const char *key, size_t len);
/* Inserts key -> value unless key is there; returns the slot that holds key (its value is the
 * old one when key was there; its key is the arena copy), or NULL when out of memory. */
sg_strmap_slot *sg_strmap_put(sg_strmap *m, const char *key, size_t len, void *value);

#endif
