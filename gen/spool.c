/* spool.c: see spool.h. */
#include "spool.h"

#include "schema/sg_pages.h"

#include <string.h>

enum { BLOCK = 4u << 20 }; /* two huge pages */

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

bool sg_spool_sink(void *ud, const char *data, size_t len) {
    sg_spool *s = ud;
    while (len && !s->oom) {
        sg_spool_block *b = s->tail;
        if (!b || b->len == b->cap) {
            size_t bytes = sg_pages_size(len > BLOCK - HDR ? HDR + len : BLOCK);
            if (!(b = sg_pages_alloc(bytes))) {
                s->oom = true;
                break;
            }
            b->cap = bytes - HDR;
            if (s->tail) s->tail->next = b;
            else s->head = b;
            s->tail = b;
        }
        size_t n = b->cap - b->len < len ? b->cap - b->len : len;
        memcpy(data_of(b) + b->len, data, n);
        b->len += n;
        data += n;
        len -= n;
    }
    return !s->oom;
}

void sg_spool_put(const sg_spool *s, sg_buf *b) {
    if (s->oom) b->oom = true;
    for (sg_spool_block *k = s->head; k && !b->oom; k = k->next) sg_buf_putn(b, data_of(k), k->len);
}
