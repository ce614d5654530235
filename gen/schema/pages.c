/* pages.c: see sg_pages.h. */
#define _DEFAULT_SOURCE
#include "sg_pages.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
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

/* Whether madvised memory gets transparent huge pages (the "enabled" setting is not "never"),
 * read once. */
static bool huge_pages(void) {
    static atomic_int known; /* 0 not read, 1 yes, 2 no */
    int k = atomic_load(&known);
    if (!k) {
        char  line[128] = "";
        FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
        if (f) {
            if (!fgets(line, sizeof line, f)) line[0] = '\0';
            fclose(f);
        }
        k = line[0] && !strstr(line, "[never]") ? 1 : 2;
        atomic_store(&known, k);
    }
    return k == 1;
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
    /* a huge page is faulted in at its first byte: only what is used costs anything */
    if (madvise(p, n, MADV_HUGEPAGE) == 0 && huge_pages()) return p;
#endif
    /* small pages: fault everything in now, in one call rather than a trap per page */
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
