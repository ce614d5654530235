/* arena.c: a chunked bump allocator. Rationale: a parse makes many small objects that die
 * together; one free per arena beats tracking each, and an allocator hook lets tests fail
 * allocations on purpose.
 *
 * Chunks grow with the arena (each as large as everything before it, up to 8 MiB; from 2 MiB
 * once the arena is past 256 KiB or a block asked for is that big), so a big model takes few
 * chunks. Without a hook they come from sg_pages_alloc (sg_pages.h: pages faulted in at once,
 * huge ones from 2 MiB up), which on virtual machines costs a fraction of faulting small pages
 * one by one as they are first written. */
#include "sg_pages.h"
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

/* Past BIG_FROM bytes an arena is a big one: its chunks jump to BIG_MIN, the size from which
 * sg_pages_alloc hands out huge pages. */
enum {
    CHUNK_MIN = 64 * 1024,
    BIG_FROM = 256 * 1024,
    BIG_MIN = 2 * 1024 * 1024,
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

/* Chunk memory, zeroed, of at least *bytes (set to what was really taken): the hook's, or
 * pages from the system. Rationale: zeroing whole chunks, not each allocation, touches each
 * byte once. */
static chunk *chunk_alloc(sg_arena *a, size_t *bytes) {
    if (a->alloc == sys_alloc) {
        *bytes = sg_pages_size(*bytes);
        return sg_pages_alloc(*bytes);
    }
    chunk *c = a->alloc(a->ud, NULL, *bytes);
    if (c) memset(c, 0, *bytes);
    return c;
}

static void chunk_free(sg_arena *a, chunk *c) {
    if (a->alloc == sys_alloc) sg_pages_free(c, HDR + c->size);
    else a->alloc(a->ud, c, 0);
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
        chunk_free(a, c);
    }
    a->alloc(a->ud, a, 0);
}

/* A chunk of at least HDR + n bytes (more: the arena's growth), or NULL. */
static chunk *new_chunk(sg_arena *a, size_t n, size_t *grow_out) {
    size_t grow = a->total < CHUNK_MIN   ? CHUNK_MIN
                  : a->total < BIG_FROM ? a->total
                  : a->total < BIG_MIN  ? BIG_MIN
                  : a->total > CHUNK_MAX ? CHUNK_MAX
                                        : a->total;
    if (n >= BIG_FROM && grow < BIG_MIN) grow = BIG_MIN; /* a big block: huge pages too */
    size_t size = n > grow / 2 ? n : grow - HDR, bytes = HDR + size;
    chunk *c = chunk_alloc(a, &bytes);
    if (!c) return NULL;
    c->size = bytes - HDR;
    c->used = 0;
    *grow_out = grow;
    return c;
}

void *sg_arena_alloc(sg_arena *a, size_t n) {
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
