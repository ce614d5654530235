/* yaml_heap.c: see yaml_heap.h. */
#include "yaml_heap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct sg_yaml_chunk {
    struct sg_yaml_chunk *next;
    size_t                size;
    /* data follows */
} chunk;
_Static_assert(sizeof(chunk) % 16 == 0, "blocks are 16-byte aligned, as malloc's are");

/* A block's header: its size, so that realloc can copy it. 16 bytes keep blocks aligned as
 * malloc's are. */
typedef struct hdr {
    size_t size, pad;
} hdr;

enum { CHUNK = 256 * 1024 };

static _Thread_local sg_yaml_heap *cur; /* the open window's heap, or NULL */

bool sg_yaml_heap_active(void) {
#ifdef SG_YAML_HEAP
    return true;
#else
    return false;
#endif
}

void sg_yaml_heap_begin(sg_yaml_heap *h) {
    if (!sg_yaml_heap_active()) return;
    if (h->chunks) {
        h->top = (char *)(h->chunks + 1);
        h->end = h->top + h->chunks->size;
    }
    h->last = NULL;
    cur = h;
}

void sg_yaml_heap_end(sg_yaml_heap *h) {
    cur = NULL;
    /* all but the oldest chunk go; it serves the next window */
    chunk *c = h->chunks;
    while (c && c->next) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    h->chunks = c;
    h->top = h->end = h->last = NULL;
}

void sg_yaml_heap_free(sg_yaml_heap *h) {
    sg_yaml_heap_end(h);
    free(h->chunks);
    h->chunks = NULL;
}

static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

static void *heap_get(sg_yaml_heap *h, size_t n) {
    if (n > SIZE_MAX / 2) return NULL;
    size_t need = sizeof(hdr) + round16(n ? n : 1);
    if ((size_t)(h->end - h->top) < need) {
        size_t size = need > CHUNK ? need : CHUNK;
        chunk *c = malloc(sizeof *c + size);
        if (!c) return NULL;
        c->size = size;
        /* a window's first chunk becomes the kept one; later ones go in front of it */
        c->next = h->chunks;
        h->chunks = c;
        h->top = (char *)(c + 1);
        h->end = h->top + size;
    }
    hdr *b = (hdr *)h->top;
    b->size = n;
    h->top += need;
    h->last = (char *)b;
    return b + 1;
}

void *sg_yaml_malloc(size_t n) {
    sg_yaml_heap *h = cur;
    return h ? heap_get(h, n) : malloc(n);
}

void *sg_yaml_realloc(void *p, size_t n) {
    sg_yaml_heap *h = cur;
    if (!h) return realloc(p, n);
    if (!p) return heap_get(h, n);
    hdr *b = (hdr *)p - 1;
    if ((char *)b == h->last) { /* the newest block: it grows or shrinks where it is */
        size_t need = sizeof(hdr) + round16(n ? n : 1);
        if (n <= SIZE_MAX / 2 && need <= (size_t)(h->end - (char *)b)) {
            b->size = n;
            h->top = (char *)b + need;
            return p;
        }
    } else if (n <= b->size) {
        b->size = n;
        return p;
    }
    void *q = heap_get(h, n);
    if (q) memcpy(q, p, b->size < n ? b->size : n);
    return q;
}

void sg_yaml_free(void *p) {
    sg_yaml_heap *h = cur;
    if (!h) {
        free(p);
        return;
    }
    /* the newest block is given back; others wait for the window's end */
    if (p && (char *)((hdr *)p - 1) == h->last) {
        h->top = h->last;
        h->last = NULL;
    }
}

char *sg_yaml_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char  *d = sg_yaml_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
