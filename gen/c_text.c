/* c_text.c: text made inert in generated C (c_text.h). */
#include "c_text.h"

#include <stdint.h>

static size_t octal(char *d, unsigned char c) {
    d[0] = '\\';
    d[1] = (char)('0' + (c >> 6));
    d[2] = (char)('0' + ((c >> 3) & 7));
    d[3] = (char)('0' + (c & 7));
    return 4;
}

size_t sg_c_string(char *dst, const char *s, size_t n) {
    char *d = dst;
    *d++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\' || (c == '?' && i && s[i - 1] == '?')) {
            *d++ = '\\';
            *d++ = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            d += octal(d, c);
        } else {
            *d++ = (char)c;
        }
    }
    *d++ = '"';
    return (size_t)(d - dst);
}

/* Whether s[0..n) is UTF-8 as Lua's utf8.len takes it: sequences of one to four bytes, no
 * overlong form, no surrogate, nothing past U+10FFFF. */
static bool utf8_valid(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t   len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (!len || len > n - i) return false;
        /* the second byte's range: narrower after E0, ED, F0 and F4 */
        unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
        unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        if (len > 1 && (s[i + 1] < lo || s[i + 1] > hi)) return false;
        for (size_t k = 2; k < len; k++)
            if ((s[i + k] & 0xc0) != 0x80) return false;
        i += len;
    }
    return true;
}

bool sg_c_comment_plain(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) { /* printable ASCII with nothing to break */
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c > 0x7e || c == '\\') return false;
        if (i && ((c == '/' && s[i - 1] == '*') || (c == '*' && s[i - 1] == '/') ||
                  (c == '?' && s[i - 1] == '?')))
            return false;
    }
    return true;
}

size_t sg_c_comment(char *dst, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    bool   raw_high = utf8_valid(u, n);
    size_t tail = n; /* the backslash that only blanks follow, if any */
    for (size_t k = n; k-- > 0 && tail == n;) {
        if (u[k] == '\\') tail = k;
        else if (u[k] != ' ' && u[k] != '\t') break;
    }
    char         *d = dst;
    unsigned char prev = 0; /* the last byte written */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = u[i];
        if (c < 0x20 || c == 0x7f || (c > 0x7f && !raw_high) || i == tail) {
            d += octal(d, c);
            prev = (unsigned char)d[-1];
            continue;
        }
        if ((c == '/' && prev == '*') || (c == '*' && prev == '/') ||
            (c == '?' && i && u[i - 1] == '?'))
            *d++ = '\\';
        *d++ = (char)c;
        prev = c;
    }
    return (size_t)(d - dst);
}
