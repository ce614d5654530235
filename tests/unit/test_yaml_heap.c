/* test_yaml_heap.c: libyaml's allocator (gen/yaml_heap.h). Outside a window it is the C
 * library's; inside one, blocks keep their bytes through realloc, the newest grows in place and
 * is given back by free, big blocks work, and a later window reuses the first one's memory. The
 * loader's use of it is test_yaml_load's (every load goes through it). */
#include "check.h"
#include "yaml_heap.h"

#include <stdint.h>

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i * 7);
}

static int same(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 7)) return 0;
    return 1;
}

/* Outside a window: malloc, realloc, free and strdup as they are. */
static void test_outside(void) {
    unsigned char *p = sg_yaml_malloc(16);
    CHECK(p != NULL);
    fill(p, 16, 1);
    p = sg_yaml_realloc(p, 100000);
    CHECK(p && same(p, 16, 1));
    sg_yaml_free(p);
    char *s = sg_yaml_strdup("tag:yaml.org,2002:str");
    CHECK_STR(s, "tag:yaml.org,2002:str");
    sg_yaml_free(s);
}

static void test_window(void) {
    sg_yaml_heap h = {0};
    sg_yaml_heap_begin(&h);
    /* a scalar as libyaml grows one: 16 bytes, doubled while it is the newest block */
    unsigned char *first = sg_yaml_malloc(16), *p = first;
    fill(p, 16, 3);
    for (size_t n = 32; n <= 65536; n *= 2) {
        unsigned char *q = sg_yaml_realloc(p, n);
        CHECK(q == p); /* in place */
        CHECK(same(q, n / 2, 3));
        fill(q, n, 3);
        p = q;
    }
    /* another block after it: p is no longer the newest, so it moves to grow */
    unsigned char *other = sg_yaml_malloc(40);
    fill(other, 40, 9);
    unsigned char *moved = sg_yaml_realloc(p, 131072);
    CHECK(moved && moved != p && same(moved, 65536, 3));
    CHECK(same(other, 40, 9));
    /* shrinking keeps the bytes; the newest block given back is taken again */
    CHECK(sg_yaml_realloc(other, 8) == other && same(other, 8, 9));
    unsigned char *last = sg_yaml_malloc(24);
    sg_yaml_free(last);
    CHECK(sg_yaml_malloc(24) == last);
    /* bigger than a chunk, and many small ones past the first chunk */
    unsigned char *big = sg_yaml_malloc(3u << 20);
    CHECK(big != NULL);
    fill(big, 3u << 20, 5);
    unsigned char *small[5000];
    for (int i = 0; i < 5000; i++) {
        small[i] = sg_yaml_malloc(100);
        CHECK(small[i] && ((uintptr_t)small[i] & 15) == 0);
        fill(small[i], 100, (unsigned)i);
    }
    int intact = same(big, 3u << 20, 5);
    for (int i = 0; i < 5000; i++) intact &= same(small[i], 100, (unsigned)i);
    CHECK(intact);
    char *s = sg_yaml_strdup("!!map");
    CHECK_STR(s, "!!map");
    sg_yaml_heap_end(&h);
    /* the next window starts where the first did: its memory is reused */
    sg_yaml_heap_begin(&h);
    CHECK(sg_yaml_malloc(16) == first);
    sg_yaml_heap_end(&h);
    /* and after the window, the C library's again */
    test_outside();
    sg_yaml_heap_free(&h);
}

int main(void) {
    test_outside();
    if (!sg_yaml_heap_active()) {
        if (check_failures) return 1;
        SKIP("libyaml is the shared library here (a sanitizer build, or no libyaml.a): its "
             "allocator is the C library's");
    }
    test_window();
    return check_result("test_yaml_heap");
}
