/* test_keymap.c: sg_keymap (gen/keymap.c): a key put twice has one entry, numbered in the
 * order keys came first; keys differing in a byte, in length, or only past a NUL are apart;
 * the empty key is a key; and all of that still holds after the map grew many times. */
#include "check.h"
#include "keymap.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    sg_keymap km;
    sg_keymap_init(&km);
    bool added;
    CHECK(sg_keymap_put(&km, "abc", 3, &added) == 1 && added);
    CHECK(sg_keymap_put(&km, "abd", 3, &added) == 2 && added);
    CHECK(sg_keymap_put(&km, "ab", 2, &added) == 3 && added);
    CHECK(sg_keymap_put(&km, "", 0, &added) == 4 && added);
    CHECK(sg_keymap_put(&km, "a\0b", 3, &added) == 5 && added);
    CHECK(sg_keymap_put(&km, "a\0c", 3, &added) == 6 && added);
    CHECK(sg_keymap_put(&km, "abc", 3, &added) == 1 && !added);
    CHECK(sg_keymap_put(&km, "", 0, &added) == 4 && !added);
    CHECK(sg_keymap_put(&km, "a\0c", 3, &added) == 6 && !added);
    /* long keys alike but for their last byte, past the first growths of the map */
    enum { N = 50000 };
    char key[300];
    memset(key, 'k', sizeof key);
    for (int pass = 0; pass < 2; pass++) {
        int wrong = 0;
        for (uint32_t i = 0; i < N; i++) {
            size_t n = 200 + i % 97;
            snprintf(key + n - 12, 13, "%012u", i);
            uint32_t e = sg_keymap_put(&km, key, n, &added);
            if (e != 7 + i || added != (pass == 0)) wrong++;
        }
        CHECK(wrong == 0);
    }
    CHECK(km.n == 6 + N);
    CHECK(sg_keymap_put(&km, "abd", 3, &added) == 2 && !added);
    sg_keymap_free(&km);
    CHECK(km.n == 0);
    CHECK(sg_keymap_put(&km, "abd", 3, &added) == 1 && added);
    sg_keymap_free(&km);
    return check_result("test_keymap");
}
