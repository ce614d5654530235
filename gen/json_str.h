/* json_str.h: what a JSON string escapes and how, the one table the generator's JSON writers
 * share: --emit=json (emit_json.c), the DSL plan (dsl_plan.c) and the templates' jstr()
 * (lua_state.c).
 *
 * The escapes (RFC 8259, section 7, in its most readable spelling):
 *   "  \\  and the control bytes that have one: \" \\ \b \t \n \f \r
 *   every other byte below 0x20, and 0x7f:     \u00XX (lower-case hex)
 *   everything else, bytes of UTF-8 included:  as it is
 * Rationale for 0x7f: JSON allows it raw, but it is a control character (DEL) that terminals
 * and diffs do not show; escaping it makes every control byte visible in the output, at the
 * cost of a sixth compare in a word scan. '/' is not escaped: JSON does not ask for it.
 * Bytes past 0x7f pass through, so the output is UTF-8 exactly where the input is (YAML input
 * is, libyaml checks it). */
#ifndef SG_JSON_STR_H
#define SG_JSON_STR_H

#include "sg_schema.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest escape of one byte: \u00XX. */
enum { SG_JSON_ESC_MAX = 6 };

/* sg_json_esc[c]: 0 when c goes as it is, 'u' when it becomes \u00XX, otherwise the letter
 * after the backslash of its two-character escape (so '"', '\\', 'b', 't', 'n', 'f', 'r'). */
extern const char sg_json_esc[256];

/* Whether none of the 8 bytes in the word x needs an escape. Rationale: a word-wide test lets
 * a writer scan (and copy) the usual string, which needs none, 8 bytes at a step. Each term is
 * the classic "has a zero byte" (or "has a byte below n") test, exact as to whether any byte
 * matches; the four share their "& ~x" because the bytes they look for all have the high bit
 * clear. Kept equal to sg_json_esc by a unit test (tests/unit/test_json_str.c). */
static inline bool sg_json_word_plain(uint64_t x) {
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\'), del = x ^ (ones * 0x7f);
    uint64_t r = (x - ones * 0x20) | (q - ones) | (bs - ones) | (del - ones);
    return (r & ~x & high) == 0;
}

/* The length of the longest prefix of s[0..n) that needs no escape (n when none does). */
size_t sg_json_plain(const char *s, size_t n);

/* Writes the JSON spelling of the byte c to out (not NUL-terminated) and returns its length:
 * 1 (c itself), 2 (\n, \", ...) or 6 (\u00XX). */
size_t sg_json_escape(unsigned char c, char out[SG_JSON_ESC_MAX]);

/* Appends s[0..n) to b as a JSON string, quotes included. */
void sg_json_put(sg_buf *b, const char *s, size_t n);

/* The same for a NUL-terminated s; NULL gives null. */
void sg_json_puts(sg_buf *b, const char *s);

#endif
