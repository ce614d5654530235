/* yaml_heap.h: libyaml's memory while a parser of the loader's runs.
 *
 * Where libyaml is linked in (CMakeLists.txt), its four allocator calls are renamed to
 * sg_yaml_malloc, sg_yaml_realloc, sg_yaml_free and sg_yaml_strdup. Between sg_yaml_heap_begin
 * and sg_yaml_heap_end on a thread, they take memory from that heap: a bump allocator whose
 * last block grows and is given back in place, and which forgets everything at once at the
 * end. Outside such a window they are malloc, realloc, free and strdup.
 *
 * Rationale: libyaml allocates every scalar at 16 bytes and doubles it by realloc as it
 * reads, then frees it with its token or event: about a quarter of its instructions on the
 * corpus went to malloc's bookkeeping.
 *
 * A window must hold the whole life of what libyaml allocates in it (from
 * yaml_parser_initialize to yaml_parser_delete, the events deleted in between). */
#ifndef SG_YAML_HEAP_H
#define SG_YAML_HEAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sg_yaml_heap {
    struct sg_yaml_chunk *chunks; /* newest first; the oldest is kept from window to window */
    char                 *top, *end;
    char                 *last;   /* the newest block's header (it may grow in place) */
} sg_yaml_heap;

/* Whether libyaml's calls come here at all (libyaml linked in, renamed). */
bool sg_yaml_heap_active(void);

/* Opens a window on this thread (h zeroed before its first use); _end gives back everything
 * allocated in it and closes it. sg_yaml_heap_free gives back the heap's last chunk. */
void sg_yaml_heap_begin(sg_yaml_heap *h);
void sg_yaml_heap_end(sg_yaml_heap *h);
void sg_yaml_heap_free(sg_yaml_heap *h);

void *sg_yaml_malloc(size_t n);
void *sg_yaml_realloc(void *p, size_t n);
void  sg_yaml_free(void *p);
char *sg_yaml_strdup(const char *s);

#endif
