/* spool.c: see spool.h. */
#include "spool.h"

#include "schema/sg_pages.h"

#include <string.h>

/* Two huge pages by default, one at least: a huge page is faulted in for less than a few
 * dozen small ones (sg_pages.h). */
enum { BLOCK = 4u << 20, BLOCK_MIN = 2u << 20 };

struct sg_spool_block {
    sg_spool_block *next;
    size_t          len, cap;
    /* data follows */
};

enum { HDR = (sizeof(sg_spool_block) + 15) & ~(size_t)15 };

static char *data_of(sg_spool_block *b) { return (char *)b + HDR; }

void sg_spool_init(sg_spool *s) { memset(s, 0, sizeof *s); }

void sg_spool_free(sg_spool *s) {
    for (sg_spool_block *b = s->head, *next; b; b = next) {
        next = b->next;
        sg_pages_free(b, HDR + b->cap);
    }
    sg_spool_init(s);
}

char *sg_spool_room(sg_spool *s, size_t need, size_t *avail) {
    sg_spool_block *b = s->tail;
    if (s->oom) return NULL;
    if (!b || b->cap - b->len < need) {
        size_t want = s->block ? HDR + s->block : BLOCK;
        want = want < BLOCK_MIN ? BLOCK_MIN : want;
        size_t bytes = sg_pages_size(need > want - HDR ? HDR + need : want);
        if (!(b = sg_pages_alloc(bytes))) {
            s->oom = true;
            return NULL;
        }
        b->cap = bytes - HDR;
        if (s->tail) s->tail->next = b;
        else s->head = b;
        s->tail = b;
    }
    *avail = b->cap - b->len;
    return data_of(b) + b->len;
}

void sg_spool_commit(sg_spool *s, size_t n) {
    if (s->tail) s->tail->len += n;
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
    sg_spool_init(src);
}

void sg_spool_put(const sg_spool *s, sg_buf *b) {
    if (s->oom) b->oom = true;
    for (sg_spool_block *k = s->head; k && !b->oom; k = k->next) sg_buf_putn(b, data_of(k), k->len);
}
