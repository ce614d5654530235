/* arena.c: a chunked bump allocator. Rationale: a parse makes many small objects that die
 * together; one free per arena beats tracking each, and an allocator hook lets tests fail
 * allocations on purpose. */
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

enum { CHUNK_MIN = 64 * 1024, HDR = (sizeof(chunk) + 15) & ~(size_t)15 };

static void *sys_alloc(void *ud, void *ptr, size_t size) {
    (void)ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return malloc(size);
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

void *sg_arena_alloc(sg_arena *a, size_t n) {
    n = (n + 7) & ~(size_t)7;
    if (n == 0) n = 8;
    chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = n > CHUNK_MIN / 2 ? n : CHUNK_MIN - HDR;
        c = a->alloc(a->ud, NULL, HDR + size);
        if (!c) return NULL;
        c->size = size;
        c->used = 0;
        if (a->head && n > CHUNK_MIN / 2) { /* keep the current chunk's free space in use */
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
    memset(p, 0, n);
    return p;
}

char *sg_arena_strndup(sg_arena *a, const char *s, size_t n) {
    char *p = sg_arena_alloc(a, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

size_t sg_arena_used(const sg_arena *a) { return a->total; }
