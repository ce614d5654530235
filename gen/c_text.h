/* c_text.h: text from the input made inert in generated C, the one implementation that the
 * templates' cstr and ccomment (lua_state.c) and the C writers (dsl_c.c) share. */
#ifndef SG_C_TEXT_H
#define SG_C_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The most bytes either function writes per input byte (an octal escape), plus the quotes. */
#define SG_C_TEXT_MAX(n) (4 * (n) + 2)

/* s[0..n) as a C string literal, quotes included, into dst (SG_C_TEXT_MAX(n) bytes); returns
 * its length. '"' and '\' get a backslash, a '?' after a '?' too (no trigraph can form),
 * control bytes and 0x7f become octal escapes; other bytes stay. */
size_t sg_c_string(char *dst, const char *s, size_t n);

/* Whether s[0..n) can stand in a C comment as it is (sg_c_comment would copy it). */
bool sg_c_comment_plain(const char *s, size_t n);

/* s[0..n) made inert inside a C comment, into dst (SG_C_TEXT_MAX(n) bytes); returns its
 * length. A star then a slash, or a slash then a star (as the output has them), and "??" (as s
 * has it) get a backslash before their second character; control bytes, a backslash with
 * nothing but blanks after it (a line splice), and bytes past 0x7f where s is not UTF-8
 * become \ooo. */
size_t sg_c_comment(char *dst, const char *s, size_t n);

#endif
