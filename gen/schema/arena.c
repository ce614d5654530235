/* arena.c: a chunked bump allocator. Rationale: a parse makes many small objects that die
 * together; one free per arena beats tracking each, and an allocator hook lets tests fail
 * allocations on purpose. Every chunk comes from the hook (malloc where none is given).
 *
 * Chunks grow with the arena (each as large as everything before it, 64 KiB to 8 MiB), so a
 * big model takes few chunks. */
#include "sg_schema.h"

#include <stdlib.h>
#include <string.h>

typedef struct chunk {
    struct chunk *next;
    size_t        size, used;
    /* data follows, 8-byte aligned */
} chunk;

struct sg_arena {
    sg_alloc_fn alloc;
    void       *ud;
    chunk      *head;
    size_t      total;
};

enum {
    CHUNK_MIN = 64 * 1024,
    CHUNK_MAX = 8 * 1024 * 1024,
    HDR = (sizeof(chunk) + 15) & ~(size_t)15
};

static void *sys_alloc(void *ud, void *ptr, size_t size) {
    (void)ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return malloc(size);
}

/* Chunk memory, zeroed, of `bytes` bytes from the hook. Rationale: zeroing whole chunks, not
 * each allocation, touches each byte once; without a hook, calloc zeroes only what the system
 * does not hand out zeroed already (big blocks are fresh pages). */
static chunk *chunk_alloc(sg_arena *a, size_t bytes) {
    if (a->alloc == sys_alloc) return calloc(1, bytes);
    chunk *c = a->alloc(a->ud, NULL, bytes);
    if (c) memset(c, 0, bytes);
    return c;
}

sg_arena *sg_arena_new(sg_alloc_fn alloc, void *ud) {
    if (!alloc) alloc = sys_alloc;
    sg_arena *a = alloc(ud, NULL, sizeof *a);
    if (!a) return NULL;
    a->alloc = alloc;
    a->ud = ud;
    a->head = NULL;
    a->total = 0;
    return a;
}

void sg_arena_free(sg_arena *a) {
    if (!a) return;
    for (chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        a->alloc(a->ud, c, 0);
    }
    a->alloc(a->ud, a, 0);
}

/* A chunk of at least HDR + n bytes (more: the arena's growth), or NULL. */
static chunk *new_chunk(sg_arena *a, size_t n, size_t *grow_out) {
    size_t grow = a->total < CHUNK_MIN ? CHUNK_MIN : a->total > CHUNK_MAX ? CHUNK_MAX : a->total;
    size_t size = n > grow / 2 ? n : grow - HDR;
    if (size > SIZE_MAX - HDR) return NULL;
    chunk *c = chunk_alloc(a, HDR + size);
    if (!c) return NULL;
    c->size = size;
    c->used = 0;
    *grow_out = grow;
    return c;
}

void *sg_arena_alloc(sg_arena *a, size_t n) {
    if (n > SIZE_MAX / 2) return NULL;
    n = (n + 7) & ~(size_t)7;
    if (n == 0) n = 8;
    chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t grow;
        if (!(c = new_chunk(a, n, &grow))) return NULL;
        if (a->head && n > grow / 2) { /* keep the current chunk's free space in use */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    char *p = (char *)c + HDR + c->used;
    c->used += n;
    a->total += n;
    return p;
}

bool sg_arena_reserve(sg_arena *a, size_t n) {
    size_t grow;
    if (a->head && a->head->size - a->head->used >= n) return true;
    chunk *c = new_chunk(a, n, &grow);
    if (!c) return false;
    c->next = a->head;
    a->head = c;
    return true;
}

char *sg_arena_strndup(sg_arena *a, const char *s, size_t n) {
    char *p = sg_arena_alloc(a, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

size_t sg_arena_used(const sg_arena *a) { return a->total; }
