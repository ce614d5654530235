/* test_dsl_elf.c: the ELF64 symbol lookup that checks a sidecar's symbol against its cubin
 * (sg_dsl_elf_symbol, gen/dsl_sidecar.c): a function symbol is found, an object symbol and an
 * absent one are told apart, and images whose headers, symbol table, string table or symbol
 * names point outside the file are refused (under ASan: without reading past it), as are files
 * that are not 64-bit little-endian ELF. */
#include "check.h"

#include "../../gen/dsl.h"

#include <stdint.h>

enum { STR = 64, SYM = 128, SH = 256, SIZE = SH + 4 * 64 };

static void put(unsigned char *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* A minimal image: sections null, .strtab, .symtab, .text; symbols kern (FUNC) and var
 * (OBJECT). */
static void build(unsigned char *img) {
    memset(img, 0, SIZE);
    memcpy(img, "\177ELF\2\1\1", 7);
    put(img + 0x28, SH, 8);
    put(img + 0x3A, 64, 2);
    put(img + 0x3C, 4, 2);
    memcpy(img + STR, "\0kern\0var\0", 10);
    put(img + SYM + 24 + 0, 1, 4), img[SYM + 24 + 4] = 0x12, put(img + SYM + 24 + 6, 3, 2);
    put(img + SYM + 48 + 0, 6, 4), img[SYM + 48 + 4] = 0x11, put(img + SYM + 48 + 6, 3, 2);
    unsigned char *s1 = img + SH + 64, *s2 = img + SH + 128;
    put(s1 + 4, 3, 4), put(s1 + 0x18, STR, 8), put(s1 + 0x20, 10, 8);
    put(s2 + 4, 2, 4), put(s2 + 0x18, SYM, 8), put(s2 + 0x20, 72, 8), put(s2 + 0x28, 1, 4);
    put(s2 + 0x38, 24, 8);
}

static int look(const unsigned char *img, size_t n, const char *sym, const char **why) {
    /* a copy of exactly n bytes, so ASan sees any read past the end */
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, img, n);
    *why = "";
    int r = sg_dsl_elf_symbol(copy, n, sym, why);
    free(copy);
    return r;
}

int main(void) {
    unsigned char img[SIZE];
    const char *why;
    build(img);
    CHECK(look(img, SIZE, "kern", &why) == 0);
    CHECK(look(img, SIZE, "var", &why) == 1);
    CHECK(look(img, SIZE, "ker", &why) == 2);   /* a prefix of a name is not the name */
    CHECK(look(img, SIZE, "kernel", &why) == 2);
    /* cut short: the section headers are outside */
    CHECK(look(img, SIZE - 1, "kern", &why) == -1);
    CHECK_HAS(why, "section headers");
    CHECK(look(img, 63, "kern", &why) == -1);
    /* not ELF64 little-endian */
    build(img), img[4] = 1;
    CHECK(look(img, SIZE, "kern", &why) == -1 && strstr(why, "64-bit"));
    build(img), img[5] = 2;
    CHECK(look(img, SIZE, "kern", &why) == -1);
    /* a huge section count */
    build(img), put(img + 0x3C, 0xFFFF, 2);
    CHECK(look(img, SIZE, "kern", &why) == -1);
    /* the symbol table past the end, or its size */
    build(img), put(img + SH + 128 + 0x18, SIZE + 8, 8);
    CHECK(look(img, SIZE, "kern", &why) == -1 && strstr(why, "symbol table"));
    build(img), put(img + SH + 128 + 0x20, UINT64_MAX - 7, 8);
    CHECK(look(img, SIZE, "kern", &why) == -1);
    /* its link to a section that does not exist; an entry size that is not 24 */
    build(img), put(img + SH + 128 + 0x28, 9, 4);
    CHECK(look(img, SIZE, "kern", &why) == -1);
    build(img), put(img + SH + 128 + 0x38, 16, 8);
    CHECK(look(img, SIZE, "kern", &why) == -1);
    /* the string table past the end */
    build(img), put(img + SH + 64 + 0x20, SIZE, 8);
    CHECK(look(img, SIZE, "kern", &why) == -1 && strstr(why, "string table"));
    /* a name offset past the string table, and a name not terminated inside it: not found */
    build(img), put(img + SYM + 24, 1000, 4);
    CHECK(look(img, SIZE, "kern", &why) == 2);
    build(img), put(img + SH + 64 + 0x20, 5, 8); /* .strtab ends in "kern" without its NUL */
    CHECK(look(img, SIZE, "kern", &why) == 2);
    /* a function symbol that is not defined (section 0) is not taken */
    build(img), put(img + SYM + 24 + 6, 0, 2);
    CHECK(look(img, SIZE, "kern", &why) == 1);
    return check_result("test_dsl_elf");
}
