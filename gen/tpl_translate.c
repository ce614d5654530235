/* tpl_translate.c: a template's text to Lua (the template language is in codegen.h and
 * docs/templates.md).
 *
 * A template is translated to Lua line for line, so Lua's own messages ("ops.h.tpl:12:
 * attempt to index a nil value") point at the template's line; its text lines become calls
 * of _w, which writes into the output. */
#include "tpl.h"

#include <string.h>

static void put_quoted(sg_buf *b, const char *s, size_t n) {
    sg_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            sg_buf_putc(b, '\\');
            sg_buf_putc(b, (char)c);
        } else if (c < 0x20 || c == 0x7f) {
            sg_buf_printf(b, "\\%03u", c);
        } else {
            sg_buf_putc(b, (char)c);
        }
    }
    sg_buf_putc(b, '"');
}

/* The end of the $( ... ) starting at s[i] (s[i] == '('), or 0 where unbalanced: parentheses
 * are counted outside quoted strings. */
static size_t close_paren(const char *s, size_t i, size_t n) {
    int depth = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            for (i++; i < n && s[i] != c; i++)
                if (s[i] == '\\') i++;
        } else if (c == '(') {
            depth++;
        } else if (c == ')' && --depth == 0) {
            return i;
        }
    }
    return 0;
}

/* The output statement being translated: _w(piece, piece, ..., lines), where lines has a
 * byte per piece, its template line less the statement's first (how _w names the line of a
 * piece it cannot write). Rationale: consecutive text lines make one call; written straight
 * into the output, the pieces make no strings of their own (see l_write). */
typedef struct stmt {
    int      pieces; /* 0: none open */
    uint32_t line;   /* its first line */
    sg_buf   lines;
} stmt;

static void add_piece(sg_buf *out, stmt *st, uint32_t line) {
    if (st->pieces++) sg_buf_putc(out, ',');
    sg_buf_putc(&st->lines, (char)(line - st->line));
}

static void close_stmt(sg_buf *out, stmt *st) {
    if (!st->pieces) return;
    sg_buf_putc(out, ',');
    put_quoted(out, st->lines.data, st->lines.len);
    sg_buf_puts(out, ") ");
    st->pieces = 0;
    st->lines.len = 0;
}

/* Lua passes a call's arguments in registers: a statement stops well before their limit. */
enum { MAX_PIECES = 120 };

/* One output line, template line `line`: "text", (expr), "text\n" added to the statement
 * (opened here where none is). Returns false for an unbalanced $(. */
static bool text_line(sg_buf *out, const char *s, size_t n, stmt *st, uint32_t line) {
    if (st->pieces > MAX_PIECES) close_stmt(out, st);
    if (!st->pieces) {
        sg_buf_puts(out, "_w(");
        st->line = line;
    }
    size_t lit = 0, i = 0;
    sg_buf piece;
    sg_buf_init(&piece);
    while (i < n) {
        if (s[i] != '$' || i + 1 == n || (s[i + 1] != '$' && s[i + 1] != '(')) {
            i++;
        } else if (s[i + 1] == '$') { /* $$ is a literal $ */
            sg_buf_putn(&piece, s + lit, i - lit + 1);
            i += 2;
            lit = i;
        } else {
            size_t end = close_paren(s, i + 1, n);
            if (!end) {
                sg_buf_free(&piece);
                return false;
            }
            sg_buf_putn(&piece, s + lit, i - lit);
            if (piece.len) {
                add_piece(out, st, line);
                put_quoted(out, piece.data, piece.len);
                piece.len = 0;
            }
            add_piece(out, st, line);
            sg_buf_putc(out, '(');
            sg_buf_putn(out, s + i + 2, end - i - 2);
            sg_buf_putc(out, ')');
            i = end + 1;
            lit = i;
        }
    }
    sg_buf_putn(&piece, s + lit, n - lit);
    sg_buf_putc(&piece, '\n');
    add_piece(out, st, line);
    put_quoted(out, piece.data, piece.len);
    bool ok = !piece.oom;
    sg_buf_free(&piece);
    return ok;
}

/* Translates a template; header gets the `%!` line's text (or stays empty). Errors: a
 * diagnostic naming label:line. Each template line is one line of Lua, so Lua's messages
 * name template lines. */
bool sg_tpl_translate(const sg_tpl_file *t, sg_buf *lua, sg_buf *header, sg_diag *d) {
    const char *s = t->text, *end = t->text + t->len;
    uint32_t    line = 1;
    stmt        st = {0};
    sg_buf_init(&st.lines);
    sg_buf_puts(lua, "local _w=_w ");
    bool ok = true;
    for (; ok && s < end; line++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t      n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        if (n && s[n - 1] == '\r') n--;
        if (n >= 2 && s[0] == '%' && s[1] == '!') {
            if (line != 1) {
                sg_diag_plain(d, SG_ERROR, "%s:%u: '%%!' (the output line) must be the first line",
                              t->label, line);
                ok = false;
            }
            sg_buf_putn(header, s + 2, n - 2);
        } else if (n >= 1 && s[0] == '%' && (n == 1 || s[1] != '%')) {
            close_stmt(lua, &st);
            sg_buf_putn(lua, s + 1, n - 1);
        } else {
            bool escaped = n >= 2 && s[0] == '%'; /* %% starts a text line with % */
            if (!text_line(lua, s + escaped, n - escaped, &st, line)) {
                sg_diag_plain(d, SG_ERROR, "%s:%u: '$(' without its ')'", t->label, line);
                ok = false;
            }
        }
        sg_buf_putc(lua, '\n');
        s = nl ? nl + 1 : end;
    }
    close_stmt(lua, &st);
    ok = ok && !lua->oom && !header->oom && !st.lines.oom;
    sg_buf_free(&st.lines);
    return ok;
}
