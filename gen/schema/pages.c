/* pages.c: see sg_pages.h. */
#define _DEFAULT_SOURCE
#include "sg_pages.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(__linux__) && defined(MAP_POPULATE)
enum { HUGE = 2u << 20, PAGE = 4096 };

/* n (a multiple of HUGE) bytes at a HUGE-aligned address, or NULL: maps HUGE more than asked
 * and gives back the ends. */
static void *map_huge(size_t n) {
    char *p = mmap(NULL, n + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    uintptr_t a = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
    size_t head = (size_t)(a - (uintptr_t)p);
    if (head) munmap(p, head);
    if (HUGE - head) munmap((char *)a + n, HUGE - head);
    return (void *)a;
}

size_t sg_pages_size(size_t n) {
    if (n > SIZE_MAX - 2 * HUGE) return SIZE_MAX;
    return n < HUGE ? (n + PAGE - 1) & ~(size_t)(PAGE - 1) : (n + HUGE - 1) & ~(size_t)(HUGE - 1);
}

void *sg_pages_alloc(size_t n) {
    if (n == 0 || (n = sg_pages_size(n)) == SIZE_MAX) return NULL;
    if (n < HUGE) {
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    char *p = map_huge(n);
    if (!p) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, n, MADV_HUGEPAGE); /* a hint: where refused, the pages are small */
#endif
    /* Fault everything in now (a huge page at its first byte, small ones one by one). */
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, n, MADV_POPULATE_WRITE) == 0) return p;
#endif
    for (size_t i = 0; i < n; i += PAGE) ((volatile char *)p)[i] = 0;
    return p;
}

void sg_pages_free(void *p, size_t n) {
    if (p) munmap(p, sg_pages_size(n));
}
#else
size_t sg_pages_size(size_t n) { return n; }
void  *sg_pages_alloc(size_t n) { return n ? calloc(1, n) : NULL; }
void   sg_pages_free(void *p, size_t n) {
    (void)n;
    free(p);
}
#endif
