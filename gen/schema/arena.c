/* arena.c: a chunked bump allocator. Rationale: a parse makes many small objects that die
 * together; one free per arena beats tracking each, and an allocator hook lets tests fail
 * allocations on purpose. Every chunk comes from the hook (sys_alloc where none is given).
 *
 * Chunks grow with the arena (see new_chunk), so a big model takes few chunks. Memory is
 * zeroed as it is handed out, not a chunk at a time: the bytes are about to be written anyway,
 * and a chunk's unused tail is then never touched. */
#define _DEFAULT_SOURCE /* madvise */
#include "sg_schema.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

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
    HUGE_PAGE = 2 * 1024 * 1024,
    HDR = (sizeof(chunk) + 15) & ~(size_t)15
};

/* The hook where none is given: malloc and free, except that a block of a whole number of
 * huge pages starts on a huge-page boundary and asks the kernel for transparent huge pages.
 * Rationale: a big model is megabytes of fresh memory, which the kernel otherwise faults in
 * one 4 KiB page at a time, at a cost per page that a large load feels; a huge page is one
 * fault for 2 MiB. Where the kernel gives no huge pages, the advice changes nothing (or
 * fails) and the block serves as any other. */
static void *sys_alloc(void *ud, void *ptr, size_t size) {
    (void)ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    if (size % HUGE_PAGE != 0) return malloc(size);
    void *p = aligned_alloc(HUGE_PAGE, size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p) (void)madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
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

/* A chunk with room for at least n bytes, or NULL. Its size follows the arena's: as large as
 * everything handed out so far (64 KiB to 8 MiB), and at least 2 MiB once that, with n, passes
 * 256 KiB, so that a big model (or a big file read into it) lives in huge pages almost from
 * the start while a small one takes small chunks. One of 2 MiB or more is a whole number of
 * huge pages (see sys_alloc). */
static chunk *new_chunk(sg_arena *a, size_t n) {
    size_t grow = a->total < CHUNK_MIN ? CHUNK_MIN : a->total > CHUNK_MAX ? CHUNK_MAX : a->total;
    if (a->total + n >= HUGE_PAGE / 8 && grow < HUGE_PAGE) grow = HUGE_PAGE;
    if (n > SIZE_MAX - HDR - HUGE_PAGE) return NULL;
    size_t bytes = HDR + n > grow ? HDR + n : grow;
    if (bytes >= HUGE_PAGE) bytes = (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    chunk *c = a->alloc(a->ud, NULL, bytes);
    if (!c) return NULL;
    c->size = bytes - HDR;
    c->used = 0;
    return c;
}

/* n bytes (a multiple of 8), not zeroed, or NULL. */
static void *take(sg_arena *a, size_t n) {
    chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        if (!(c = new_chunk(a, n))) return NULL;
        /* allocations are served from the head: the chunk with more room left after this one */
        if (a->head && a->head->size - a->head->used > c->size - n) {
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

/* n rounded up to a multiple of 8 (at least 8); 0 where n is too large for any arena. */
static size_t rounded(size_t n) {
    if (n > SIZE_MAX / 2) return 0;
    return n ? (n + 7) & ~(size_t)7 : 8;
}

void *sg_arena_alloc(sg_arena *a, size_t n) {
    size_t r = rounded(n);
    void *p = r ? take(a, r) : NULL;
    if (p) memset(p, 0, r);
    return p;
}

bool sg_arena_reserve(sg_arena *a, size_t n) {
    if (a->head && a->head->size - a->head->used >= n) return true;
    chunk *c = new_chunk(a, n);
    if (!c) return false;
    c->next = a->head;
    a->head = c;
    return true;
}

char *sg_arena_strndup(sg_arena *a, const char *s, size_t n) {
    size_t r = n < SIZE_MAX ? rounded(n + 1) : 0;
    char *p = r ? take(a, r) : NULL; /* every byte but the padding is written: no zeroing */
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

bool sg_arena_adopt(sg_arena *a, sg_arena *from) {
    if (a->alloc != from->alloc || a->ud != from->ud) return false;
    chunk *last = from->head;
    while (last && last->next) last = last->next;
    if (last) { /* behind a's head, which keeps serving allocations */
        chunk **at = a->head ? &a->head->next : &a->head;
        last->next = *at;
        *at = from->head;
    }
    a->total += from->total;
    from->alloc(from->ud, from, 0);
    return true;
}

size_t sg_arena_used(const sg_arena *a) { return a->total; }
