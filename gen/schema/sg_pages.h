/* sg_pages.h: zeroed memory straight from the operating system, for the arena's chunks and the
 * template engine's big blocks.
 *
 * Rationale: fresh memory is the dearest thing a large run touches on the virtual machines we
 * measure on. A 4 KiB page costs several microseconds the first time it is written, even when
 * mapped with MAP_POPULATE (8 MiB: 6-9 ms to map, write once and unmap); the same 8 MiB as
 * transparent huge pages takes 0.4-0.6 ms, one fault per 2 MiB. So blocks of 2 MiB and more are
 * mapped 2 MiB-aligned and asked to be huge (MADV_HUGEPAGE, which Debian's default "madvise"
 * mode honours); each huge page is then faulted in when first written, so a block may be
 * generous and cost only what is used. Smaller blocks, and big ones where the system gives no
 * huge pages, are faulted in at once (MAP_POPULATE, MADV_POPULATE_WRITE). Elsewhere: calloc. */
#ifndef SG_PAGES_H
#define SG_PAGES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes sg_pages_alloc(n) really maps (n rounded up to pages, or to huge pages). */
size_t sg_pages_size(size_t n);
/* n zeroed bytes, page-aligned (sg_pages_size(n) of them usable); NULL when out of memory. */
void  *sg_pages_alloc(size_t n);
/* Gives back p, with the n it was asked for (or that n's sg_pages_size). */
void   sg_pages_free(void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
