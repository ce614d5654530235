/* Unit tests of the schema scanner (gen/schema/schema_lex.re): token kinds, bounds, keyword
 * types, and the sentinel at the end of input. */
#include "check.h"
#include "schema/schema_lex.h"
#include "schema/sg_schema.h"

#define MAXTOK 64

typedef struct lexed {
    sg_token t[MAXTOK];
    int      n;
} lexed;

/* Lexes text[0..len) (text[len] is the NUL sentinel) up to and including EOF. */
static lexed lex_n(const char *text, size_t len) {
    lexed out = {.n = 0};
    uint32_t pos = 0;
    do {
        sg_lex(text, len, &pos, &out.t[out.n]);
    } while (out.t[out.n++].kind != SG_T_EOF && out.n < MAXTOK);
    return out;
}

static lexed lex(const char *text) { return lex_n(text, strlen(text)); }

static void check_kinds(const char *text, const sg_tok_kind *want, int n) {
    lexed l = lex(text);
    check_count++;
    bool ok = l.n == n;
    for (int i = 0; ok && i < n; i++) ok = l.t[i].kind == want[i];
    if (!ok) {
        check_failures++;
        fprintf(stderr, "token kinds differ for: %s (got %d tokens)\n", text, l.n);
    }
}

static void test_punctuation(void) {
    static const sg_tok_kind want[] = {
        SG_T_LPAREN, SG_T_RPAREN, SG_T_LBRACKET, SG_T_RBRACKET, SG_T_COMMA, SG_T_STAR,
        SG_T_BANG, SG_T_QUESTION, SG_T_PIPE, SG_T_EQUALS, SG_T_DOT, SG_T_COLONCOLON,
        SG_T_ARROW, SG_T_ELLIPSIS, SG_T_MINUS, SG_T_EOF};
    check_kinds("()[],*!?|=.::->...-", want, (int)(sizeof want / sizeof *want));
    /* '->' and '-' '>' are told apart; '...' is one token, '..' two dots */
    static const sg_tok_kind arrow[] = {SG_T_MINUS, SG_T_BAD, SG_T_DOT, SG_T_DOT, SG_T_EOF};
    check_kinds("- >..", arrow, 5);
}

static void test_names_and_types(void) {
    lexed l = lex("Tensor Tensors int int8 SymInt ScalarType t1 __torch__ Dict");
    CHECK(l.n == 10);
    CHECK(l.t[0].kind == SG_T_IDENT && l.t[0].type == SG_TY_TENSOR);
    CHECK(l.t[1].kind == SG_T_IDENT && l.t[1].type == -1); /* longest match: not Tensor */
    CHECK(l.t[2].type == SG_TY_INT);
    CHECK(l.t[3].type == -1);
    CHECK(l.t[4].type == SG_TY_SYMINT);
    CHECK(l.t[5].type == SG_TY_SCALAR_TYPE);
    CHECK(l.t[6].type == -1);
    CHECK(l.t[7].type == -1);
    CHECK(l.t[8].type == SG_TY_DICT);
    CHECK(l.t[1].start == 7 && l.t[1].end == 14);
}

/* Every named type of the info table lexes as that type, and no other name does. */
static void test_keywords_match_table(void) {
    for (int k = 0; k < SG_TY__COUNT; k++) {
        const char *name = sg_type_infos[k].name;
        if (!name) continue;
        lexed l = lex(name);
        check_count++;
        if (l.n != 2 || l.t[0].kind != SG_T_IDENT || l.t[0].type != k) {
            check_failures++;
            fprintf(stderr, "type name '%s' does not lex as its kind %d\n", name, k);
        }
    }
    lexed l = lex("Tuple");
    CHECK(l.t[0].type == SG_TY_TUPLE); /* spelled by the parser, not the table */
}

static void test_numbers(void) {
    static const sg_tok_kind want[] = {SG_T_INT, SG_T_INT, SG_T_FLOAT, SG_T_FLOAT, SG_T_FLOAT,
                                       SG_T_FLOAT, SG_T_IMAG, SG_T_IMAG, SG_T_EOF};
    check_kinds("12 0x1f 1.5 1e-05 .5 2. 1j 2.5j", want, 9);
    lexed l = lex("-1");
    CHECK(l.n == 3 && l.t[0].kind == SG_T_MINUS && l.t[1].kind == SG_T_INT);
}

static void test_strings(void) {
    lexed l = lex("'a\\'b' \"c\\\"d\" 'x");
    CHECK(l.n == 4);
    CHECK(l.t[0].kind == SG_T_STRING && l.t[0].start == 0 && l.t[0].end == 6);
    CHECK(l.t[1].kind == SG_T_STRING && l.t[1].end == 13);
    CHECK(l.t[2].kind == SG_T_BADSTR && l.t[2].start == 14);
    CHECK(l.t[3].kind == SG_T_EOF);
    /* as in c10's lexer, a string ends on its line; an escaped line break belongs to it */
    l = lex("'a\nb' 'c\\\nd'");
    CHECK(l.n == 2 && l.t[0].kind == SG_T_BADSTR && l.t[0].start == 0);
    l = lex("\"c\\\nd\" x");
    CHECK(l.n == 3 && l.t[0].kind == SG_T_STRING && l.t[0].end == 6 && l.t[1].kind == SG_T_IDENT);
}

static void test_whitespace_and_bad(void) {
    lexed l = lex(" \t\r\n\f\vfoo\n");
    CHECK(l.n == 2 && l.t[0].kind == SG_T_IDENT && l.t[0].start == 6 && l.t[0].end == 9);
    l = lex("a$b");
    CHECK(l.n == 4 && l.t[1].kind == SG_T_BAD && l.t[1].start == 1 && l.t[1].end == 2);
    l = lex("\xc3\xa9");
    CHECK(l.t[0].kind == SG_T_BAD);
    /* a NUL inside the text is a bad character; only the one at len ends it */
    l = lex_n("a\0b", 3);
    CHECK(l.n == 4 && l.t[1].kind == SG_T_BAD && l.t[2].kind == SG_T_IDENT);
    CHECK(l.t[3].kind == SG_T_EOF && l.t[3].start == 3);
    l = lex("");
    CHECK(l.n == 1 && l.t[0].kind == SG_T_EOF && l.t[0].start == 0);
}

static void test_describe(void) {
    CHECK_STR(sg_tok_describe(SG_T_RPAREN), "')'");
    CHECK_STR(sg_tok_describe(SG_T_EOF), "end of schema");
    for (int k = SG_T_EOF; k <= SG_T_BADSTR; k++) CHECK(sg_tok_describe((sg_tok_kind)k) != NULL);
}

int main(void) {
    test_punctuation();
    test_names_and_types();
    test_keywords_match_table();
    test_numbers();
    test_strings();
    test_whitespace_and_bad();
    test_describe();
    return check_result("test_schema_lex");
}
