/* yaml_load.c: reads schema files and tags files into the model.
 *
 * libyaml's event API drives a small tree builder: each top-level entry becomes an sg_ynode
 * tree in the model's arena and is turned into an sg_op (or an sg_tag) as soon as it is
 * complete, so diagnostics come out in file order. The document API is not used: it builds a
 * second tree of its own, and the event loop alone is most of the loader's time.
 *
 * Positions: libyaml counts characters, the model counts bytes (sg_pos.col is a byte column,
 * as gcc's is). A cursor walks the text once, converting libyaml's character index of each
 * event into a byte offset, line and column; where the text is all ASCII and breaks lines with
 * '\n' alone (nearly always), libyaml's own line and column are used as they are. The
 * characters of a scalar's value are mapped back to the source by re-reading the scalar's
 * source (quotes, escapes, folded lines): see spans().
 */
#define _POSIX_C_SOURCE 200809L /* fstat, fileno */

#include "model.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

enum {
    MAX_DEPTH = 64, /* nesting of sequences and mappings; deeper files are refused */
    QUOTE_MAX = 32, /* bytes of a value quoted in a message */
    SMALL_MAP = 16, /* maps up to this many pairs look for duplicate keys pairwise */
};

/* A node as the loader made it: what is needed to find its characters in the source again. */
typedef struct ynode {
    sg_ynode n; /* first, so an sg_ynode the loader made is a ynode */
    uint32_t off;   /* byte offset of the event's start (anchor or tag included) */
    int32_t  style; /* yaml_scalar_style_t */
} ynode;

typedef struct cursor {
    size_t   chr, byte, line_start;
    uint32_t line;
} cursor;

typedef struct frame {
    ynode *node;
    size_t first; /* its children are stack[first..] */
} frame;

typedef enum file_kind { FILE_UNKNOWN, FILE_SCHEMA, FILE_TAGS } file_kind;

typedef struct loader {
    sg_model        *m;
    sg_diag         *d;
    const sg_source *src;
    sg_arena        *a;
    size_t           base; /* byte offset in src of what libyaml reads (a part of a file) */
    cursor           home; /* the cursor at base */
    cursor           cur;
    sg_ynode       **stack; /* children of the open containers */
    size_t           nstack, capstack;
    frame            open[MAX_DEPTH];
    int              depth;
    sg_span         *spans; /* scratch: the last scalar's spans */
    uint32_t         nspans, capspans;
    file_kind        kind;
    uint32_t         nentries;
    sg_pos           root;
    bool             simple; /* all ASCII, no '\r': a character is a byte, a break a '\n' */
    bool             stop; /* a problem after which the rest of the file is not read */
} loader;

/* ---- positions --------------------------------------------------------------------------- */

static size_t u8len(unsigned char c) { return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/* Length of the ASCII prefix of p[0..max), a word at a time. */
static size_t ascii_run(const unsigned char *p, size_t max) {
    size_t k = 0;
    for (uint64_t w; k + 8 <= max; k += 8) {
        memcpy(&w, p + k, 8);
        if (w & 0x8080808080808080u) break;
    }
    while (k < max && p[k] < 0x80) k++;
    return k;
}

/* Moves the cursor to libyaml's character index chr. Events come in order, so the walk over
 * the whole file is linear; a jump back (an error's context mark) starts again from the top.
 * ASCII runs (one byte, one character) go at memchr's speed. */
static void seek(loader *L, size_t chr) {
    cursor *c = &L->cur;
    if (chr < c->chr) *c = L->home;
    const char *t = L->src->text;
    size_t n = L->src->len;
    while (c->chr < chr && c->byte < n) {
        size_t want = chr - c->chr, left = n - c->byte;
        size_t run = ascii_run((const unsigned char *)t + c->byte, want < left ? want : left);
        const char *q = t + c->byte, *e = q + run;
        for (; (q = memchr(q, '\n', (size_t)(e - q))); q++) {
            c->line++;
            c->line_start = (size_t)(q - t) + 1;
        }
        c->byte += run;
        c->chr += run;
        if (run == 0) { /* one character that is not ASCII */
            c->byte += u8len((unsigned char)t[c->byte]);
            c->chr++;
        }
    }
    if (c->byte > n) c->byte = n;
}

static sg_pos mark_pos(loader *L, yaml_mark_t mk, size_t *off) {
    if (L->simple) { /* libyaml's own line and column are ours */
        if (off) *off = L->base + mk.index;
        return (sg_pos){L->src, L->home.line + (uint32_t)mk.line, (uint32_t)mk.column + 1};
    }
    seek(L, mk.index);
    if (off) *off = L->cur.byte;
    return (sg_pos){L->src, L->cur.line, (uint32_t)(L->cur.byte - L->cur.line_start + 1)};
}

/* Position of a byte offset (libyaml's reader errors give bytes, not characters). */
static sg_pos byte_pos(const sg_source *s, size_t off) {
    sg_pos p = {s, 1, 1};
    size_t ls = 0;
    if (off > s->len) off = s->len;
    for (const char *q = s->text; (q = memchr(q, '\n', off - (size_t)(q - s->text))); q++) {
        p.line++;
        ls = (size_t)(q - s->text) + 1;
    }
    p.col = (uint32_t)(off - ls + 1);
    return p;
}

/* ---- spans: value bytes -> source positions ---------------------------------------------- */

typedef struct walk {
    const unsigned char *s;
    size_t               j, n;
    uint32_t             line, col;
} walk;

static void step(walk *w) {
    if (w->s[w->j] == '\n') {
        w->line++;
        w->col = 0;
    }
    w->col++;
    w->j++;
}

static bool at(const walk *w, char c) { return w->j < w->n && w->s[w->j] == (unsigned char)c; }
static bool at_blank(const walk *w) { return at(w, ' ') || at(w, '\t'); }

/* Length of the line break at s[j] (0: none). YAML 1.1 breaks lines at NEL, LS and PS too;
 * libyaml reads NEL as '\n' and keeps LS and PS as they are. */
static size_t brk_at(const unsigned char *s, size_t j, size_t n) {
    if (j >= n) return 0;
    if (s[j] == '\r') return j + 1 < n && s[j + 1] == '\n' ? 2 : 1;
    if (s[j] == '\n') return 1;
    if (s[j] == 0xC2 && j + 1 < n && s[j + 1] == 0x85) return 2;
    if (s[j] == 0xE2 && j + 2 < n && s[j + 1] == 0x80 && (s[j + 2] == 0xA8 || s[j + 2] == 0xA9))
        return 3;
    return 0;
}

static bool at_break(const walk *w) { return brk_at(w->s, w->j, w->n) != 0; }

static void step_break(walk *w) {
    for (size_t k = brk_at(w->s, w->j, w->n); k; k--) step(w);
}

/* Records that value byte off sits at the walk's position (offsets strictly increase). */
static void emit(loader *L, uint32_t off, const walk *w) {
    sg_pos p = {L->src, w->line, w->col};
    if (L->nspans && L->spans[L->nspans - 1].offset == off) {
        L->spans[L->nspans - 1].pos = p;
        return;
    }
    if (L->nspans == L->capspans) {
        uint32_t cap = L->capspans ? L->capspans * 2 : 64;
        sg_span *s = realloc(L->spans, cap * sizeof *s);
        if (!s) return; /* positions degrade to the last span; not worth failing the load */
        L->spans = s;
        L->capspans = cap;
    }
    L->spans[L->nspans++] = (sg_span){off, p};
}

/* Skips an anchor (&a) or a tag (!!str) written before the scalar, and the blanks, breaks and
 * comments after it. */
static void skip_props(walk *w) {
    while (at(w, '&') || at(w, '!')) {
        bool anchor = at(w, '&'); /* an anchor's name is [0-9A-Za-z_-]+; a tag ends at a blank */
        step(w);
        while (w->j < w->n && !at_blank(w) && !at_break(w) &&
               (!anchor || isalnum(w->s[w->j]) || at(w, '_') || at(w, '-')))
            step(w);
        for (;;) {
            while (at_blank(w)) step(w);
            if (at(w, '#'))
                while (w->j < w->n && !at_break(w)) step(w);
            if (!at_break(w)) break;
            step_break(w);
        }
    }
}

/* A block scalar's indentation: the first non-empty source line's, less the spaces the value
 * keeps at the start of its first non-empty line. */
static size_t block_indent(const walk *w, const char *v, size_t vn) {
    size_t j = w->j, k, i = 0, m;
    for (;; j = k + 1) {
        for (k = j; k < w->n && w->s[k] == ' '; k++) {}
        if (k >= w->n || (w->s[k] != '\n' && w->s[k] != '\r')) break;
        if (w->s[k] == '\r' && k + 1 < w->n && w->s[k + 1] == '\n') k++;
    }
    for (;; i = m + 1) {
        for (m = i; m < vn && v[m] == ' '; m++) {}
        if (m >= vn || v[m] != '\n') break;
    }
    return k - j > m - i ? (k - j) - (m - i) : 0;
}

static void skip_spaces(walk *w, size_t max) {
    for (size_t k = 0; k < max && at(w, ' '); k++) step(w);
}

static uint32_t hexval(const walk *w, size_t from, size_t n) {
    uint32_t v = 0;
    for (size_t k = from; k < from + n && k < w->n; k++) {
        unsigned c = w->s[k];
        v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* Line breaks in a flow scalar (plain or quoted), with the empty lines after them: a lone
 * break folds into a space, otherwise the first break vanishes and each further one is a '\n'.
 * After an escaped break (escaped), every break is a '\n'. */
static void fold(loader *L, walk *w, const char *v, size_t vn, size_t *i, bool escaped) {
    walk first = *w;
    size_t nb = escaped, k;
    bool kept = false; /* the first break was an LS or PS, kept in the value */
    while ((k = brk_at(w->s, w->j, w->n))) {
        if (k == 3 && *i + 3 <= vn && memcmp(v + *i, w->s + w->j, 3) == 0) {
            emit(L, (uint32_t)*i, w);
            *i += 3;
            kept |= nb == 0;
        } else if (nb > 0 && *i < vn && v[*i] == '\n') {
            emit(L, (uint32_t)(*i)++, w);
        }
        nb++;
        step_break(w);
        while (at_blank(w)) step(w);
    }
    if (nb == 1 && !escaped && !kept && *i < vn && v[*i] == ' ') emit(L, (uint32_t)(*i)++, &first);
}

/* A double-quoted escape at the walk: maps the value bytes it stands for to the backslash. */
static void dq_escape(loader *L, walk *w, const char *v, size_t vn, size_t *i) {
    if (brk_at(w->s, w->j + 1, w->n)) { /* an escaped line break joins the lines */
        step(w);
        step_break(w);
        while (at_blank(w)) step(w);
        fold(L, w, v, vn, i, true);
        return;
    }
    unsigned char e = w->j + 1 < w->n ? w->s[w->j + 1] : 0;
    size_t hex = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0, nb = 1;
    if (hex) {
        uint32_t cp = hexval(w, w->j + 2, hex);
        nb = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    } else if (e == 'N' || e == '_') {
        nb = 2;
    } else if (e == 'L' || e == 'P') {
        nb = 3;
    }
    emit(L, (uint32_t)*i, w);
    *i += nb;
    for (size_t k = 0; k < 2 + hex && w->j < w->n; k++) step(w);
}

/* Blanks that end a line are not part of a flow scalar's value, even where the value has a
 * space there (an escaped one, further on): skips them and says so. Blanks before *inner are
 * known to be content, so a long run is looked at once. */
static bool skip_trailing(walk *w, size_t *inner) {
    if (w->j < *inner || !at_blank(w)) return false;
    size_t e = w->j;
    while (e < w->n && (w->s[e] == ' ' || w->s[e] == '\t')) e++;
    if (e < w->n && !brk_at(w->s, e, w->n)) {
        *inner = e;
        return false;
    }
    while (w->j < e) step(w);
    return true;
}

/* The general case: walks source and value together. Where they advance in step, one span
 * covers the run; every break, escape, doubled quote or skipped blank starts a new one. */
static void spans_walk(loader *L, walk *w, const ynode *y) {
    const char *v = y->n.text;
    size_t vn = y->n.len, i = 0, indent = 0, inner = 0;
    bool block = y->style == YAML_LITERAL_SCALAR_STYLE || y->style == YAML_FOLDED_SCALAR_STYLE;
    bool open = false;
    if (block) { /* past the header line (| or > and its indicators) */
        while (w->j < w->n && !at_break(w)) step(w);
        step_break(w);
        indent = block_indent(w, v, vn);
        skip_spaces(w, indent);
    }
    while (i < vn && w->j < w->n) {
        unsigned char c = w->s[w->j];
        if (!block && skip_trailing(w, &inner)) {
            open = false;
            continue;
        }
        if (y->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE && c == '\\') {
            dq_escape(L, w, v, vn, &i);
            open = false;
        } else if (y->style == YAML_SINGLE_QUOTED_SCALAR_STYLE && c == '\'') { /* '' */
            emit(L, (uint32_t)i++, w);
            step(w);
            step(w);
            open = false;
        } else if (!block && at_break(w)) {
            fold(L, w, v, vn, &i, false);
            open = false;
        } else if (at_break(w)) { /* literal: a '\n'; folded: ' ' or '\n' */
            if (v[i] == '\n' || v[i] == ' ') emit(L, (uint32_t)i++, w);
            step_break(w);
            skip_spaces(w, indent);
            open = false;
        } else if (c == (unsigned char)v[i]) {
            if (!open) emit(L, (uint32_t)i, w);
            open = true;
            i++;
            step(w);
        } else if (c == ' ' || c == '\t') { /* leading blanks, and blanks the value lacks */
            step(w);
            open = false;
        } else { /* should not happen; keep both moving */
            emit(L, (uint32_t)i++, w);
            step(w);
            open = false;
        }
    }
}

/* Fills L->spans for scalar y: value byte offsets -> source positions. */
static void spans(loader *L, const ynode *y) {
    walk w = {(const unsigned char *)L->src->text, y->off, L->src->len, y->n.pos.line,
              y->n.pos.col};
    L->nspans = 0;
    skip_props(&w);
    bool quoted = y->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                  y->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    unsigned char q = w.j < w.n ? w.s[w.j] : 0;
    if (quoted) step(&w);
    size_t vn = y->n.len, end = w.j + vn;
    /* The common case: the value is written as is on one line. */
    if ((quoted || y->style == YAML_PLAIN_SCALAR_STYLE) && end <= w.n &&
        memcmp(w.s + w.j, y->n.text, vn) == 0 && !memchr(y->n.text, '\n', vn) &&
        (!quoted || (end < w.n && w.s[end] == q))) {
        emit(L, 0, &w);
        return;
    }
    emit(L, 0, &w); /* an empty or odd value still has a position */
    spans_walk(L, &w, y);
}

/* Position of byte off of the value whose spans are in L->spans. */
static sg_pos spans_pos(const loader *L, const sg_ynode *y, size_t off) {
    sg_op tmp = {.spans = L->spans, .nspans = L->nspans, .pos = y->pos};
    return sg_op_pos_at(&tmp, (uint32_t)off);
}

/* ---- messages ---------------------------------------------------------------------------- */

static void oom(loader *L) {
    if (!L->stop) sg_diag_plain(L->d, SG_ERROR, "out of memory reading '%s'", L->src->path);
    L->stop = true;
}

/* 'text', cut to QUOTE_MAX bytes, bytes that would break the message line shown as '?'. */
static const char *quoted(char *buf, const char *s, size_t n) {
    size_t k = 0, cut = n > QUOTE_MAX ? QUOTE_MAX : n;
    while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    buf[k++] = '\'';
    for (size_t i = 0; i < cut; i++)
        buf[k++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? '?' : s[i];
    if (cut < n) k += (size_t)sprintf(buf + k, "...");
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

enum { QBUF = QUOTE_MAX + 8 };

/* "a sequence", "a mapping", "an empty value" or the scalar quoted. */
static const char *describe(char *buf, const sg_ynode *n) {
    if (n->kind == SG_Y_SEQ) return "a sequence";
    if (n->kind == SG_Y_MAP) return "a mapping";
    if (n->plain && n->len == 0) return "an empty value";
    return quoted(buf, n->text, n->len);
}

/* An empty value has no characters of its own; its key stands in for it. */
static sg_pos value_pos(const sg_ynode *k, const sg_ynode *v) {
    return v->kind == SG_Y_SCALAR && v->plain && v->len == 0 ? k->pos : v->pos;
}

/* True when v is a non-empty scalar; otherwise says that key k wanted `what`. */
static bool want_scalar(loader *L, const sg_ynode *k, const sg_ynode *v, const char *what) {
    if (v->kind == SG_Y_SCALAR && !(v->plain && v->len == 0)) return true;
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, value_pos(k, v), "expected %s for '%s', not %s", what, k->text,
                   describe(b, v));
    return false;
}

/* The YAML error that stopped libyaml, in our words, with the place its context began. */
static void yaml_error(loader *L, const yaml_parser_t *p) {
    if (p->error == YAML_MEMORY_ERROR) {
        oom(L);
        return;
    }
    L->stop = true;
    const char *what = p->problem ? p->problem : "unknown problem";
    if (p->error == YAML_READER_ERROR) {
        sg_pos pos = byte_pos(L->src, L->base + p->problem_offset);
        if (p->problem_value < 0)
            sg_diag_report(L->d, SG_ERROR, pos, "invalid YAML: %s", what);
        else if (strstr(what, "octet"))
            sg_diag_report(L->d, SG_ERROR, pos, "invalid YAML: %s (byte 0x%02X)", what,
                           (unsigned)p->problem_value);
        else
            sg_diag_report(L->d, SG_ERROR, pos, "invalid YAML: %s (U+%04X)", what,
                           (unsigned)p->problem_value);
        return;
    }
    size_t off;
    sg_pos pos = mark_pos(L, p->problem_mark, &off);
    bool tab = off < L->src->len && L->src->text[off] == '\t' && !strstr(what, "tab");
    sg_diag_report(L->d, SG_ERROR, pos, "invalid YAML: %s%s", what,
                   tab ? " (a tab: YAML indents with spaces only)" : "");
    /* The context's place helps where it is a bracket, a quote or a key; a plain scalar's
     * start only says that libyaml was still reading the previous value. */
    const char *ctx = p->context;
    if (!ctx || p->context_mark.index == p->problem_mark.index || strstr(ctx, "plain scalar"))
        return;
    /* "while scanning a quoted scalar" -> "the quoted scalar starts here" */
    static const char *const skip[] = {"while scanning ", "while parsing ", "a ", "an ", "simple "};
    for (size_t k = 0; k < sizeof skip / sizeof *skip; k++)
        if (strncmp(ctx, skip[k], strlen(skip[k])) == 0) ctx += strlen(skip[k]);
    sg_diag_report(L->d, SG_NOTE, mark_pos(L, p->context_mark, NULL), "the %s starts here", ctx);
}

/* ---- duplicate keys ---------------------------------------------------------------------- */

static bool same_key(const sg_ynode *a, const sg_ynode *b) {
    return a->kind == SG_Y_SCALAR && b->kind == SG_Y_SCALAR && a->len == b->len &&
           memcmp(a->text, b->text, a->len) == 0;
}

static size_t hash_key(const sg_ynode *k) {
    size_t h = 2166136261u;
    for (size_t i = 0; i < k->len; i++) h = (h ^ (unsigned char)k->text[i]) * 16777619u;
    return h;
}

/* For each pair of map: the index of the first pair with the same key (itself when unique).
 * Small maps compare pairwise; large ones hash, so a map of many keys stays linear. */
typedef struct dups {
    uint32_t *first;
    uint32_t  small[SMALL_MAP];
} dups;

static bool dups_init(dups *u, const sg_ynode *map) {
    uint32_t n = map->nitems / 2;
    u->first = n <= SMALL_MAP ? u->small : malloc(n * sizeof *u->first);
    if (!u->first) return false;
    size_t cap = 16, *slot = NULL;
    while (n > SMALL_MAP && cap < 2 * (size_t)n) cap *= 2;
    if (n > SMALL_MAP && !(slot = calloc(cap, sizeof *slot))) {
        free(u->first);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const sg_ynode *k = map->items[2 * i];
        u->first[i] = i;
        if (!slot) {
            for (uint32_t j = 0; j < i && u->first[i] == i; j++)
                if (same_key(map->items[2 * j], k)) u->first[i] = j;
            continue;
        }
        if (k->kind != SG_Y_SCALAR) continue;
        size_t h = hash_key(k) & (cap - 1); /* slots hold index + 1; 0 is empty */
        while (slot[h] && !same_key(map->items[2 * (slot[h] - 1)], k)) h = (h + 1) & (cap - 1);
        if (slot[h]) u->first[i] = (uint32_t)slot[h] - 1;
        else slot[h] = i + 1;
    }
    free(slot);
    return true;
}

static void dups_free(dups *u) {
    if (u->first != u->small) free(u->first);
}

/* Reports pair i of map if its key was given before; true when it was. */
static bool is_dup(loader *L, const sg_ynode *map, const dups *u, uint32_t i) {
    uint32_t j = u->first[i];
    if (j == i) return false;
    const sg_ynode *k = map->items[2 * i];
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, k->pos, "duplicate key %s", quoted(b, k->text, k->len));
    sg_diag_report(L->d, SG_NOTE, map->items[2 * j]->pos, "%s was first given here", b);
    return true;
}

/* Duplicate keys anywhere in a tree kept as written (ufunc_inner_loop). */
static void check_tree(loader *L, const sg_ynode *n) {
    dups u;
    if (n->kind == SG_Y_MAP && !dups_init(&u, n)) {
        oom(L);
        return;
    }
    for (uint32_t i = 0; i < n->nitems; i++) {
        if (n->kind == SG_Y_MAP && i % 2 == 0 && is_dup(L, n, &u, i / 2)) i++;
        else if (n->kind != SG_Y_SCALAR) check_tree(L, n->items[i]);
    }
    if (n->kind == SG_Y_MAP) dups_free(&u);
}

/* ---- typed keys -------------------------------------------------------------------------- */

/* The items of a comma-separated scalar ("CPU, CUDA"), trimmed, with their positions. */
static bool split_csv(loader *L, const char *key, const sg_ynode *v, sg_strlist *out) {
    uint32_t n = 1;
    for (size_t i = 0; i < v->len; i++) n += v->text[i] == ',';
    out->items = sg_arena_alloc(L->a, n * sizeof *out->items);
    out->pos = sg_arena_alloc(L->a, n * sizeof *out->pos);
    out->n = 0;
    if (!out->items || !out->pos) {
        oom(L);
        return false;
    }
    spans(L, (const ynode *)v);
    bool ok = true;
    for (size_t i = 0, e; i <= v->len; i = e + 1) {
        const char *c = memchr(v->text + i, ',', v->len - i);
        e = c ? (size_t)(c - v->text) : v->len;
        size_t b = i, z = e;
        while (b < z && isspace((unsigned char)v->text[b])) b++;
        while (z > b && isspace((unsigned char)v->text[z - 1])) z--;
        sg_pos p = spans_pos(L, v, b);
        if (b == z) {
            sg_diag_report(L->d, SG_ERROR, p, "empty name in '%s'", key);
            ok = false;
            continue;
        }
        if (!(out->items[out->n] = sg_arena_strndup(L->a, v->text + b, z - b))) {
            oom(L);
            return false;
        }
        out->pos[out->n++] = p;
    }
    return ok;
}

/* A sequence of strings (precomputed, cpp_no_default_args, tags as a list). */
static void seq_list(loader *L, const sg_ynode *k, const sg_ynode *v, sg_strlist *out) {
    char b[QBUF];
    if (v->kind != SG_Y_SEQ) {
        sg_diag_report(L->d, SG_ERROR, value_pos(k, v),
                       "expected a list of strings for '%s', not %s", k->text, describe(b, v));
        return;
    }
    out->items = sg_arena_alloc(L->a, (v->nitems + 1) * sizeof *out->items);
    out->pos = sg_arena_alloc(L->a, (v->nitems + 1) * sizeof *out->pos);
    if (!out->items || !out->pos) {
        oom(L);
        return;
    }
    for (uint32_t i = 0; i < v->nitems; i++) {
        const sg_ynode *it = v->items[i];
        if (it->kind != SG_Y_SCALAR || (it->plain && it->len == 0)) {
            sg_diag_report(L->d, SG_ERROR, it->kind == SG_Y_SCALAR ? v->pos : it->pos,
                           "expected a string in '%s', not %s", k->text, describe(b, it));
            continue;
        }
        spans(L, (const ynode *)it);
        out->items[out->n] = it->text;
        out->pos[out->n++] = spans_pos(L, it, 0);
    }
}

static sg_tribool boolean(loader *L, const sg_ynode *k, const sg_ynode *v) {
    static const char *const names[] = {"False", "True", "false", "true"};
    if (!want_scalar(L, k, v, "True or False")) return SG_UNSET;
    for (int i = 0; i < 4 && v->plain; i++)
        if (strcmp(v->text, names[i]) == 0) return i % 2 ? SG_TRUE : SG_FALSE;
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, v->pos, "expected True or False for '%s', not %s", k->text,
                   describe(b, v));
    return SG_UNSET;
}

static void variants(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    sg_strlist l = {0};
    if (!want_scalar(L, k, v, "'function', 'method' or 'function, method'") ||
        !split_csv(L, "variants", v, &l))
        return;
    unsigned mask = 0;
    for (uint32_t i = 0; i < l.n; i++) {
        if (strcmp(l.items[i], "function") == 0) {
            mask |= SG_VARIANT_FUNCTION;
        } else if (strcmp(l.items[i], "method") == 0) {
            mask |= SG_VARIANT_METHOD;
        } else {
            char b[QBUF];
            sg_diag_report(L->d, SG_ERROR, l.pos[i],
                           "unknown variant %s (expected function or method)",
                           quoted(b, l.items[i], strlen(l.items[i])));
            return;
        }
    }
    op->variants = mask;
    op->has_variants = true;
}

/* One "CPU, CUDA: kernel" line of a dispatch table. */
static void dispatch_line(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    char b[QBUF], c[QBUF];
    if (k->kind != SG_Y_SCALAR || (k->plain && k->len == 0)) {
        sg_diag_report(L->d, SG_ERROR, k->pos, "expected dispatch key names, not %s",
                       describe(b, k));
        return;
    }
    if (v->kind != SG_Y_SCALAR || (v->plain && v->len == 0)) {
        sg_diag_report(L->d, SG_ERROR, value_pos(k, v), "expected a kernel name for %s, not %s",
                       quoted(b, k->text, k->len), describe(c, v));
        return;
    }
    sg_strlist keys = {0};
    if (!split_csv(L, "dispatch", k, &keys)) return;
    op->dispatch[op->ndispatch++] = (sg_dispatch){
        .keys = keys.items, .key_pos = keys.pos, .nkeys = keys.n, .kernel = v->text, .pos = k->pos};
}

static void dispatch(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    char b[QBUF];
    dups u;
    if (v->kind != SG_Y_MAP) {
        sg_diag_report(L->d, SG_ERROR, value_pos(k, v),
                       "expected a mapping of dispatch keys to kernels for 'dispatch', not %s",
                       describe(b, v));
        return;
    }
    op->has_dispatch = true;
    op->dispatch = sg_arena_alloc(L->a, (v->nitems / 2 + 1) * sizeof *op->dispatch);
    if (!op->dispatch || !dups_init(&u, v)) {
        oom(L);
        return;
    }
    for (uint32_t i = 0; i < v->nitems / 2 && !L->stop; i++)
        if (!is_dup(L, v, &u, i)) dispatch_line(L, op, v->items[2 * i], v->items[2 * i + 1]);
    dups_free(&u);
}

static void func(loader *L, sg_op *op, const sg_ynode *k, const sg_ynode *v) {
    if (!want_scalar(L, k, v, "a schema string")) return;
    op->func = v->text;
    spans(L, (const ynode *)v);
    op->spans = sg_arena_alloc(L->a, L->nspans * sizeof *op->spans);
    if (!op->spans) {
        oom(L);
        return;
    }
    memcpy(op->spans, L->spans, L->nspans * sizeof *op->spans);
    op->nspans = L->nspans;
    sg_schema_error err;
    int rc = sg_schema_parse(v->text, v->len, L->a, &op->schema, &err);
    if (rc == SG_SCHEMA_ENOMEM) {
        oom(L);
    } else if (rc != SG_SCHEMA_OK) {
        sg_diag_report(L->d, SG_ERROR, sg_op_pos_at(op, err.offset), "%s", err.msg);
    } else {
        op->parsed = true;
        if (op->schema.ns) op->ns = op->schema.ns;
    }
}

/* The keys of an entry, as torchgen knows them; one table instead of a switch per use. */
typedef enum shape {
    K_FUNC, K_VARIANTS, K_DISPATCH, K_BOOL, K_STR, K_SEQ, K_CSV, K_TAGS, K_MAP
} shape;

static const struct keydef {
    const char *name;
    shape       shape;
    size_t      off; /* of the field in sg_op */
} op_keys[] = {
    {"func", K_FUNC, 0},
    {"variants", K_VARIANTS, 0},
    {"dispatch", K_DISPATCH, 0},
    {"structured", K_BOOL, offsetof(sg_op, structured)},
    {"structured_delegate", K_STR, offsetof(sg_op, structured_delegate)},
    {"structured_inherits", K_STR, offsetof(sg_op, structured_inherits)},
    {"precomputed", K_SEQ, offsetof(sg_op, precomputed)},
    {"autogen", K_CSV, offsetof(sg_op, autogen)},
    {"tags", K_TAGS, offsetof(sg_op, tags)},
    {"device_check", K_STR, offsetof(sg_op, device_check)},
    {"device_guard", K_BOOL, offsetof(sg_op, device_guard)},
    {"python_module", K_STR, offsetof(sg_op, python_module)},
    {"cpp_no_default_args", K_SEQ, offsetof(sg_op, cpp_no_default_args)},
    {"manual_cpp_binding", K_BOOL, offsetof(sg_op, manual_cpp_binding)},
    {"manual_kernel_registration", K_BOOL, offsetof(sg_op, manual_kernel_registration)},
    {"category_override", K_STR, offsetof(sg_op, category_override)},
    {"use_const_ref_for_mutable_tensors", K_BOOL,
     offsetof(sg_op, use_const_ref_for_mutable_tensors)},
    {"ufunc_inner_loop", K_MAP, offsetof(sg_op, ufunc_inner_loop)},
};

/* Rationale: asked for every key of every entry (and again by the JSON writer), so the few
 * keys of one first letter are compared, not all of them. */
static const struct keydef *find_key(const char *name) {
    for (size_t i = 0; i < sizeof op_keys / sizeof *op_keys; i++)
        if (op_keys[i].name[0] == name[0] && strcmp(op_keys[i].name, name) == 0)
            return &op_keys[i];
    return NULL;
}

bool sg_op_key_is_bool(const char *key) {
    const struct keydef *kd = find_key(key);
    return kd && kd->shape == K_BOOL;
}

static void apply(loader *L, sg_op *op, const struct keydef *kd, const sg_ynode *k,
                  const sg_ynode *v) {
    void *field = (char *)op + kd->off;
    switch (kd->shape) {
    case K_FUNC: func(L, op, k, v); break;
    case K_VARIANTS: variants(L, op, k, v); break;
    case K_DISPATCH: dispatch(L, op, k, v); break;
    case K_BOOL: *(sg_tribool *)field = boolean(L, k, v); break;
    case K_STR:
        if (want_scalar(L, k, v, "a string")) *(const char **)field = v->text;
        break;
    case K_SEQ: seq_list(L, k, v, field); break;
    case K_TAGS:
        if (v->kind == SG_Y_SEQ) {
            seq_list(L, k, v, field);
            break;
        }
        /* fall through - "a, b" */
    case K_CSV:
        if (want_scalar(L, k, v, "a comma-separated list")) split_csv(L, k->text, v, field);
        break;
    case K_MAP:
        if (v->kind != SG_Y_MAP) {
            char b[QBUF];
            sg_diag_report(L->d, SG_ERROR, value_pos(k, v), "expected a mapping for '%s', not %s",
                           k->text, describe(b, v));
            break;
        }
        check_tree(L, v);
        *(sg_ynode **)field = (sg_ynode *)v;
        break;
    }
}

/* ---- entries ----------------------------------------------------------------------------- */

static bool has_key(const sg_ynode *map, const char *key) {
    for (uint32_t i = 0; i + 1 < map->nitems; i += 2)
        if (map->items[i]->kind == SG_Y_SCALAR && strcmp(map->items[i]->text, key) == 0)
            return true;
    return false;
}

/* A key must be a name: reports one that is not. */
static bool key_ok(loader *L, const sg_ynode *k) {
    if (k->kind == SG_Y_SCALAR && k->len) return true;
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, k->pos, "expected a key name, not %s", describe(b, k));
    return false;
}

static void unknown_key(loader *L, const sg_ynode *k) {
    char b[QBUF];
    sg_diag_report(L->d, SG_ERROR, k->pos, "unknown key %s", quoted(b, k->text, k->len));
}

/* An operator entry. Every key is kept as written; the known ones also fill typed fields.
 * An entry without a usable func is dropped (after its other keys are checked): nothing
 * downstream can name it. */
static void op_entry(loader *L, const sg_ynode *e) {
    sg_op *op = sg_model_add_op(L->m);
    uint32_t np = e->nitems / 2;
    dups u;
    if (!op || !dups_init(&u, e)) {
        oom(L);
        return;
    }
    op->pos = e->pos;
    op->ns = "aten";
    op->keys = sg_arena_alloc(L->a, (np + 1) * sizeof *op->keys);
    op->values = sg_arena_alloc(L->a, (np + 1) * sizeof *op->values);
    bool has_func = false;
    for (uint32_t i = 0; i < np && op->keys && op->values && !L->stop; i++) {
        const sg_ynode *k = e->items[2 * i], *v = e->items[2 * i + 1];
        if (!key_ok(L, k)) continue;
        op->keys[op->nkeys] = k->text;
        op->values[op->nkeys++] = (sg_ynode *)v;
        const struct keydef *kd = find_key(k->text);
        if (is_dup(L, e, &u, i)) continue;
        if (!kd) unknown_key(L, k);
        else apply(L, op, kd, k, v);
        has_func |= kd && kd->shape == K_FUNC;
    }
    dups_free(&u);
    if (!op->keys || !op->values) oom(L);
    if (!has_func) sg_diag_report(L->d, SG_ERROR, e->pos, "entry has no 'func' key");
    if (!op->func) L->m->nops--; /* it is the last op */
}

/* A tags.yaml entry: tag and desc. */
static void tag_entry(loader *L, const sg_ynode *e) {
    sg_tag *t = sg_model_add_tag(L->m);
    dups u;
    if (!t || !dups_init(&u, e)) {
        oom(L);
        return;
    }
    t->pos = e->pos;
    bool has_tag = false;
    for (uint32_t i = 0; i < e->nitems / 2; i++) {
        const sg_ynode *k = e->items[2 * i], *v = e->items[2 * i + 1];
        if (!key_ok(L, k) || is_dup(L, e, &u, i)) continue;
        bool tag = strcmp(k->text, "tag") == 0;
        has_tag |= tag;
        if (!tag && strcmp(k->text, "desc") != 0)
            unknown_key(L, k);
        else if (want_scalar(L, k, v, "a string"))
            *(tag ? &t->name : &t->desc) = v->text;
    }
    dups_free(&u);
    if (!has_tag) sg_diag_report(L->d, SG_ERROR, e->pos, "entry has no 'tag' key");
    if (!t->name) L->m->ntags--;
}

/* A complete top-level entry. The first one tells a tags file from a schema file. */
static void entry(loader *L, const sg_ynode *e) {
    L->nentries++;
    if (L->kind == FILE_UNKNOWN && e->kind == SG_Y_MAP) {
        L->kind = has_key(e, "tag") && !has_key(e, "func") ? FILE_TAGS : FILE_SCHEMA;
        if (L->kind == FILE_TAGS) L->m->have_tags = true;
    }
    if (e->kind != SG_Y_MAP) {
        char b[QBUF];
        sg_diag_report(L->d, SG_ERROR, e->pos, "expected an entry (a mapping with '%s:'), not %s",
                       L->kind == FILE_TAGS ? "tag" : "func", describe(b, e));
    } else if (L->kind == FILE_TAGS) {
        tag_entry(L, e);
    } else {
        op_entry(L, e);
    }
}

/* ---- the tree builder -------------------------------------------------------------------- */

static ynode *new_node(loader *L, sg_ynode_kind kind, yaml_mark_t mk) {
    ynode *y = sg_arena_alloc(L->a, sizeof *y);
    if (!y) {
        oom(L);
        return NULL;
    }
    size_t off;
    y->n.kind = kind;
    y->n.pos = mark_pos(L, mk, &off);
    y->off = (uint32_t)off; /* files are at most 4 GiB: see load() */
    return y;
}

/* A finished node: the root, a top-level entry (handled now), or a child kept for its parent. */
static void add_child(loader *L, ynode *y) {
    if (L->depth == 0) {
        if (y->n.kind == SG_Y_SCALAR && !(y->n.plain && y->n.len == 0)) {
            sg_diag_report(L->d, SG_ERROR, y->n.pos,
                           "expected a sequence of entries ('- func: ...'), not a scalar");
            L->stop = true;
        }
        return;
    }
    if (L->depth == 1) {
        entry(L, &y->n);
        return;
    }
    if (L->nstack == L->capstack) {
        size_t cap = L->capstack ? L->capstack * 2 : 256;
        sg_ynode **s = realloc(L->stack, cap * sizeof *s);
        if (!s) {
            oom(L);
            return;
        }
        L->stack = s;
        L->capstack = cap;
    }
    L->stack[L->nstack++] = &y->n;
}

static void open_node(loader *L, sg_ynode_kind kind, yaml_mark_t mk) {
    if (L->depth == 0 && kind == SG_Y_MAP) {
        sg_diag_report(L->d, SG_ERROR, mark_pos(L, mk, NULL),
                       "expected a sequence of entries ('- func: ...'), not a mapping");
        L->stop = true;
        return;
    }
    if (L->depth == MAX_DEPTH) {
        sg_diag_report(L->d, SG_ERROR, mark_pos(L, mk, NULL),
                       "nesting too deep (more than %d levels)", MAX_DEPTH);
        L->stop = true;
        return;
    }
    ynode *y = new_node(L, kind, mk);
    if (!y) return;
    if (L->depth == 0) L->root = y->n.pos;
    L->open[L->depth++] = (frame){y, L->nstack};
}

static void close_node(loader *L) {
    frame *f = &L->open[--L->depth];
    size_t n = L->nstack - f->first;
    sg_ynode *node = &f->node->n;
    if (n) {
        node->items = sg_arena_alloc(L->a, n * sizeof *node->items);
        if (!node->items) {
            oom(L);
            return;
        }
        memcpy(node->items, L->stack + f->first, n * sizeof *node->items);
    }
    node->nitems = (uint32_t)n;
    L->nstack = f->first;
    add_child(L, f->node);
}

static void scalar(loader *L, const yaml_event_t *ev) {
    ynode *y = new_node(L, SG_Y_SCALAR, ev->start_mark);
    if (!y) return;
    y->n.len = ev->data.scalar.length;
    y->n.text = sg_arena_strndup(L->a, (const char *)ev->data.scalar.value, y->n.len);
    y->n.plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    y->style = ev->data.scalar.style;
    if (!y->n.text) oom(L);
    else add_child(L, y);
}

static void on_event(loader *L, const yaml_event_t *ev, int *ndocs) {
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++*ndocs > 1) {
            sg_diag_report(L->d, SG_ERROR, mark_pos(L, ev->start_mark, NULL),
                           "a second YAML document: a file holds one sequence of entries");
            L->stop = true;
        }
        break;
    case YAML_SEQUENCE_START_EVENT: open_node(L, SG_Y_SEQ, ev->start_mark); break;
    case YAML_MAPPING_START_EVENT: open_node(L, SG_Y_MAP, ev->start_mark); break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: close_node(L); break;
    case YAML_SCALAR_EVENT: scalar(L, ev); break;
    case YAML_ALIAS_EVENT:
        /* Rationale: aliases share nodes, and a tree walker would expand them (a few lines of
         * aliases can stand for billions of nodes). Schema files have no use for them. */
        sg_diag_report(L->d, SG_ERROR, mark_pos(L, ev->start_mark, NULL),
                       "YAML aliases are not supported");
        L->stop = true;
        break;
    default: break;
    }
}

/* Runs libyaml over the source; stops at the end, at a YAML error or at a fatal problem. */
static void run(loader *L, yaml_parser_t *p) {
    int ndocs = 0;
    while (!L->stop) {
        yaml_event_t ev;
        if (!yaml_parser_parse(p, &ev)) {
            yaml_error(L, p);
            return;
        }
        bool end = ev.type == YAML_STREAM_END_EVENT;
        on_event(L, &ev, &ndocs);
        yaml_event_delete(&ev);
        if (end) return;
    }
}

/* Loads src->text[begin, end), which starts on line `line`, into m. */
static int load_range(sg_model *m, const sg_source *src, size_t begin, size_t end, uint32_t line,
                      sg_diag *d) {
    uint32_t before = d->nerrors;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", src->path);
        return 1;
    }
    cursor home = {.byte = begin, .line_start = begin, .line = line};
    loader L = {.m = m, .d = d, .src = src, .a = m->arena, .base = begin, .home = home,
                .cur = home, .root = {src, 1, 1}};
    const unsigned char *t = (const unsigned char *)src->text + begin;
    L.simple = ascii_run(t, end - begin) == end - begin && !memchr(t, '\r', end - begin);
    yaml_parser_set_input_string(&p, t, end - begin);
    yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING); /* no guessing: marks count UTF-8 */
    run(&L, &p);
    if (!L.stop && L.nentries == 0) sg_diag_report(d, SG_ERROR, L.root, "file has no entries");
    yaml_parser_delete(&p);
    free(L.stack);
    free(L.spans);
    return (int)(d->nerrors - before);
}

/* Loads a source already in the model. */
static int load(sg_model *m, const sg_source *src, sg_diag *d) {
    if (src->len > UINT32_MAX - 1) {
        sg_diag_plain(d, SG_ERROR, "'%s' is larger than 4 GiB", src->path);
        return 1;
    }
    return load_range(m, src, 0, src->len, 1, d);
}

int sg_load_buffer(sg_model *m, const char *path, const char *text, size_t len, sg_diag *d) {
    const sg_source *src = sg_model_add_source(m, path, text, len);
    if (src) return load(m, src, d);
    sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", path);
    return 1;
}

/* A file whose size is not known (a pipe): read in growing blocks, then copied. */
static const sg_source *read_stream(sg_model *m, const char *path, FILE *f, int *err) {
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            char *nb = cap < SIZE_MAX / 4 ? realloc(buf, cap = cap ? cap * 2 : 1 << 16) : NULL;
            if (!nb) {
                *err = ENOMEM;
                break;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) *err = errno ? errno : EIO;
            break;
        }
    }
    const sg_source *src = *err ? NULL : sg_model_add_source(m, path, buf ? buf : "", len);
    if (!*err && !src) *err = ENOMEM;
    free(buf);
    return src;
}

/* Rationale: a regular file is read straight into the model's arena, its one copy. Reading
 * in doubling blocks and copying touched three times the memory, and on a fresh heap touching
 * memory is a large part of loading a big file. */
static const sg_source *read_file(sg_model *m, const char *path, FILE *f, size_t size,
                                  int *err) {
    errno = 0;
    sg_source *src = sg_model_add_source(m, path, NULL, size);
    if (!src) {
        *err = ENOMEM;
        return NULL;
    }
    src->len = fread((char *)src->text, 1, size, f); /* a file that shrank: what is there */
    if (ferror(f)) *err = errno ? errno : EIO;
    return src;
}

int sg_load_file(sg_model *m, const char *path, sg_diag *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        sg_diag_plain(d, SG_ERROR, "cannot read '%s': %s", path, strerror(errno));
        return 1;
    }
    /* a regular file's size is known: read it in one piece */
    struct stat st;
    bool sized = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    int err = 0;
    const sg_source *src = sized ? read_file(m, path, f, (size_t)st.st_size, &err)
                                 : read_stream(m, path, f, &err);
    fclose(f);
    if (!err) return load(m, src, d);
    sg_diag_plain(d, SG_ERROR, "cannot read '%s': %s", path, strerror(err));
    return 1;
}
