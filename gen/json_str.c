/* json_str.c: JSON string escapes (json_str.h says which, and why). */
#include "json_str.h"

#include <string.h>

const char sg_json_esc[256] = {
    /* 0x00 - 0x1f: control bytes; those with a two-character escape say its letter */
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    ['"'] = '"',
    ['\\'] = '\\',
    [0x7f] = 'u',
};

size_t sg_json_plain(const char *s, size_t n) {
    size_t   i = 0;
    uint64_t x;
    for (; i + 8 <= n; i += 8) {
        memcpy(&x, s + i, 8);
        if (!sg_json_word_plain(x)) break;
    }
    while (i < n && !sg_json_esc[(unsigned char)s[i]]) i++;
    return i;
}

size_t sg_json_escape(unsigned char c, char out[SG_JSON_ESC_MAX]) {
    static const char hex[] = "0123456789abcdef";
    char e = sg_json_esc[c];
    if (!e) {
        out[0] = (char)c;
        return 1;
    }
    out[0] = '\\';
    out[1] = e;
    if (e != 'u') return 2;
    out[2] = '0';
    out[3] = '0';
    out[4] = hex[c >> 4];
    out[5] = hex[c & 15];
    return 6;
}

void sg_json_put(sg_buf *b, const char *s, size_t n) {
    sg_buf_putc(b, '"');
    for (size_t i = 0; i < n;) {
        size_t run = sg_json_plain(s + i, n - i);
        sg_buf_putn(b, s + i, run);
        i += run;
        if (i == n) break;
        char e[SG_JSON_ESC_MAX];
        sg_buf_putn(b, e, sg_json_escape((unsigned char)s[i++], e));
    }
    sg_buf_putc(b, '"');
}

void sg_json_puts(sg_buf *b, const char *s) {
    if (s)
        sg_json_put(b, s, strlen(s));
    else
        sg_buf_puts(b, "null");
}
