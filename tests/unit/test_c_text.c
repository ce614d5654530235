/* test_c_text.c: text made inert in generated C (gen/c_text.h), as the C writers use it
 * (sg_dsl_c_comment_text, sg_dsl_c_string; the templates' cstr and ccomment are tested through
 * Lua in test_codegen_states): nothing in the text can end or open a comment, splice a line,
 * form a trigraph or end a string literal. */
#include "check.h"
#include "codegen.h"
#include "dsl_emit.h"

static const char *comment(const char *s) {
    static sg_buf b;
    sg_buf_free(&b);
    sg_buf_init(&b);
    sg_dsl_c_comment_text(&b, s);
    sg_buf_putc(&b, '\0');
    return b.data;
}

static const char *literal(const char *s) {
    static sg_buf b;
    sg_buf_free(&b);
    sg_buf_init(&b);
    sg_dsl_c_string(&b, s);
    sg_buf_putc(&b, '\0');
    return b.data;
}

int main(void) {
    CHECK_STR(comment("a/b*c"), "a/b*c");
    CHECK_STR(comment("end */ here"), "end *\\/ here");
    CHECK_STR(comment("open /* here"), "open /\\* here");
    CHECK_STR(comment("x?\?/"), "x?\\?/");
    CHECK_STR(comment("line\nbreak"), "line\\012break");
    CHECK_STR(comment("splice\\  "), "splice\\134  ");
    CHECK_STR(comment("caf\xc3\xa9"), "caf\xc3\xa9");  /* UTF-8 stays */
    CHECK_STR(comment("bad\xff"), "bad\\377");         /* not UTF-8: escaped */
    CHECK_STR(literal("plain"), "\"plain\"");
    CHECK_STR(literal("q\"b\\"), "\"q\\\"b\\\\\"");
    CHECK_STR(literal("%s?\?="), "\"%s?\\?=\"");
    CHECK_STR(literal("tab\t"), "\"tab\\011\"");
    return check_result("test_c_text");
}
