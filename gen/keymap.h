/* keymap.h: a map from byte strings to entry numbers 1, 2, 3, ... in the order the strings
 * were first put; it keeps a copy of each. lua_model.c finds the tables it shares by
 * content with it. */
#ifndef SG_KEYMAP_H
#define SG_KEYMAP_H

#include "sg_schema.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sg_keymap {
    uint32_t *slots;  /* open addressing: an entry's number, 0 for none */
    uint32_t *hashes; /* by entry number - 1: its key's hash, */
    size_t   *offs;   /* where its key starts in keys, */
    uint32_t *lens;   /* and its key's length */
    size_t    cap, n, room; /* slots, entries, room for entries */
    sg_buf    keys;
} sg_keymap;

/* A map with no entries; zero-initialised memory is one too. */
void sg_keymap_init(sg_keymap *km);
void sg_keymap_free(sg_keymap *km);

/* The entry of key k[0..n): the existing one (*added false) or a new one (*added true);
 * 0 when out of memory. */
uint32_t sg_keymap_put(sg_keymap *km, const char *k, size_t n, bool *added);

#endif
