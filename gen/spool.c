/* spool.c: see spool.h. */
#include "spool.h"

#include "schema/sg_pages.h"

#include <stdlib.h>
#include <string.h>

/* Two huge pages by default, one at least: a huge page is faulted in for less than a few
 * dozen small ones (sg_pages.h). */
enum { BLOCK = 4u << 20, BLOCK_MIN = 2u << 20 };

struct sg_spool_block {
    sg_spool_block *next;
    char           *data; /* just after the header, or another spool's bytes (a view) */
    size_t          len, cap;
    bool            view; /* the header alone is this spool's (malloc) */
};

enum { HDR = (sizeof(sg_spool_block) + 15) & ~(size_t)15 };

void sg_spool_init(sg_spool *s) { memset(s, 0, sizeof *s); }

void sg_spool_free(sg_spool *s) {
    for (sg_spool_block *b = s->head, *next; b; b = next) {
        next = b->next;
        if (b->view) free(b);
        else sg_pages_free(b, HDR + b->cap);
    }
    sg_spool_init(s);
}

static void append(sg_spool *s, sg_spool_block *b) {
    if (s->tail) s->tail->next = b;
    else s->head = b;
    s->tail = b;
}

char *sg_spool_room(sg_spool *s, size_t need, size_t *avail) {
    sg_spool_block *b = s->tail;
    if (s->oom) return NULL;
    if (!b || b->cap - b->len < need) { /* (a view's cap is its len: never written into) */
        size_t want = s->block ? HDR + s->block : BLOCK;
        want = want < BLOCK_MIN ? BLOCK_MIN : want;
        size_t bytes = sg_pages_size(need > want - HDR ? HDR + need : want);
        if (!(b = sg_pages_alloc(bytes))) {
            s->oom = true;
            return NULL;
        }
        b->data = (char *)b + HDR;
        b->cap = bytes - HDR;
        append(s, b);
    }
    *avail = b->cap - b->len;
    return b->data + b->len;
}

void sg_spool_commit(sg_spool *s, size_t n) {
    if (!s->tail) return;
    s->tail->len += n;
    s->len += n;
}

bool sg_spool_sink(void *ud, const char *data, size_t len) {
    sg_spool *s = ud;
    while (len && !s->oom) {
        size_t avail;
        char *p = sg_spool_room(s, 1, &avail);
        if (!p) break;
        size_t n = avail < len ? avail : len;
        memcpy(p, data, n);
        sg_spool_commit(s, n);
        data += n;
        len -= n;
    }
    return !s->oom;
}

void sg_spool_splice(sg_spool *dst, sg_spool *src) {
    dst->oom |= src->oom;
    if (src->head) {
        if (dst->tail) dst->tail->next = src->head;
        else dst->head = src->head;
        dst->tail = src->tail;
    }
    dst->len += src->len;
    sg_spool_init(src);
}

void sg_spool_view(sg_spool *dst, const sg_spool *src, size_t from, size_t to) {
    dst->oom |= src->oom;
    size_t at = 0; /* where block k starts in src's text */
    for (const sg_spool_block *k = src->head; k && at < to && !dst->oom; at += k->len, k = k->next) {
        size_t lo = from > at ? from - at : 0, hi = to - at < k->len ? to - at : k->len;
        if (lo >= hi) continue;
        sg_spool_block *b = malloc(sizeof *b);
        if (!b) {
            dst->oom = true;
            return;
        }
        *b = (sg_spool_block){.data = k->data + lo, .len = hi - lo, .cap = hi - lo, .view = true};
        append(dst, b);
        dst->len += hi - lo;
    }
}

void sg_spool_put(const sg_spool *s, sg_buf *b) {
    if (s->oom) b->oom = true;
    for (sg_spool_block *k = s->head; k && !b->oom; k = k->next) sg_buf_putn(b, k->data, k->len);
}
