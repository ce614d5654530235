/* test_strmap.c: sg_strmap (gen/strmap.c): a key put twice keeps its first value; keys
 * differing in a byte, in length, or only past a NUL are apart; the empty key is a key; and
 * all of that still holds after the map grew many times. */
#include "check.h"
#include "strmap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Puts key k[0..n) -> v; returns the value the map holds for it (v where it was new). */
static uintptr_t put(sg_strmap *m, const char *k, size_t n, uintptr_t v) {
    sg_strmap_slot *sl = sg_strmap_put(m, k, n, (void *)v);
    return sl ? (uintptr_t)sl->value : 0;
}

int main(void) {
    sg_arena *a = sg_arena_new(NULL, NULL);
    sg_strmap m;
    CHECK(a && sg_strmap_init(&m, a, 4) == 0);
    CHECK(put(&m, "abc", 3, 1) == 1);
    CHECK(put(&m, "abd", 3, 2) == 2);
    CHECK(put(&m, "ab", 2, 3) == 3);
    CHECK(put(&m, "", 0, 4) == 4);
    CHECK(put(&m, "a\0b", 3, 5) == 5);
    CHECK(put(&m, "a\0c", 3, 6) == 6);
    CHECK(put(&m, "abc", 3, 99) == 1);
    CHECK(put(&m, "", 0, 99) == 4);
    CHECK(put(&m, "a\0c", 3, 99) == 6);
    CHECK((uintptr_t)sg_strmap_get(&m, "a\0b", 3) == 5);
    CHECK(sg_strmap_get(&m, "a\0d", 3) == NULL);
    /* long keys alike but for their last bytes, past the first growths of the map */
    enum { N = 50000 };
    char key[300];
    memset(key, 'k', sizeof key);
    for (int pass = 0; pass < 2; pass++) {
        int wrong = 0;
        for (uint32_t i = 0; i < N; i++) {
            size_t n = 200 + i % 97;
            snprintf(key + n - 12, 13, "%012u", i);
            if (put(&m, key, n, pass == 0 ? 7 + i : 1) != 7 + i) wrong++;
        }
        CHECK(wrong == 0);
    }
    CHECK(m.n == 6 + N);
    CHECK(put(&m, "abd", 3, 99) == 2);
    sg_strmap_free(&m);
    CHECK(m.n == 0 && sg_strmap_get(&m, "abd", 3) == NULL);
    sg_arena_free(a);
    return check_result("test_strmap");
}
