/* spool.h: text kept in a few big blocks of fresh pages, for output made before it may be
 * written (the JSON is rendered while validation runs, and written only if it passes).
 * Rationale: growing one buffer to megabytes reallocates and copies it, and its pages are
 * faulted one by one; blocks from sg_pages_alloc are never moved and are faulted at once.
 * A spool may also refer to text another spool holds (sg_spool_view): the JSON of ops
 * rendered while they were loaded is put together that way, without a copy. */
#ifndef SG_SPOOL_H
#define SG_SPOOL_H

#include "schema/sg_schema.h"

typedef struct sg_spool_block sg_spool_block;

typedef struct sg_spool {
    sg_spool_block *head, *tail;
    size_t          len;   /* bytes held */
    size_t          block; /* what a new block should hold (set after init; 0: 4 MiB; it is
                              2 MiB at least) */
    bool            oom;
} sg_spool;

void sg_spool_init(sg_spool *s);
void sg_spool_free(sg_spool *s);
/* An sg_buf sink (ud: the spool) that appends to it. */
bool sg_spool_sink(void *ud, const char *data, size_t len);
/* Room for at least `need` more bytes in one piece, for a writer to fill in place (a new block
 * is started where the last one has less); *avail tells how many there are. The bytes count
 * once sg_spool_commit says how many were written. NULL (and s->oom) when out of memory. */
char *sg_spool_room(sg_spool *s, size_t need, size_t *avail);
void  sg_spool_commit(sg_spool *s, size_t n);
/* Moves src's text to the end of dst (no copy: its blocks change hands); src is left empty. */
void sg_spool_splice(sg_spool *dst, sg_spool *src);
/* Appends to dst bytes [from, to) of src's text, by reference: src must neither be freed nor
 * written to before dst is done with (dst frees only its references). */
void sg_spool_view(sg_spool *dst, const sg_spool *src, size_t from, size_t to);
/* Appends everything held to b (a sink of b's gets the blocks as they are). */
void sg_spool_put(const sg_spool *s, sg_buf *b);

#endif
