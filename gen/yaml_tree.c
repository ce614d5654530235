/* yaml_tree.c: YAML events to a tree of sg_ynode, with the source position of every node and
 * of every byte of a scalar's value.
 *
 * libyaml's event API drives a small tree builder: each top-level entry becomes an sg_ynode
 * tree in the caller's arena and is handed to the caller as soon as it is complete, so
 * diagnostics come out in file order. The document API is not used: it builds a second tree
 * of its own.
 *
 * Positions: libyaml counts characters, the model counts bytes (sg_pos.col is a byte column,
 * as gcc's is). A cursor walks the text once, converting libyaml's character index of each
 * event into a byte offset, line and column; where the text is all ASCII and breaks lines with
 * '\n' alone (nearly always), libyaml's own line and column are used as they are. The
 * characters of a scalar's value are mapped back to the source by re-reading the scalar's
 * source (quotes, escapes, folded lines): see spans().
 */
#include "yaml_tree.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum { MAX_DEPTH = 64 }; /* nesting of sequences and mappings; deeper files are refused */

/* A node as the reader made it: what is needed to find its characters in the source again. */
typedef struct ynode {
    sg_ynode n; /* first, so an sg_ynode the reader made is a ynode */
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

typedef struct sg_yreader reader;

struct sg_yreader {
    sg_diag         *d;
    const sg_source *src;
    cursor           start;  /* where the text read begins (a piece of src, or all of it) */
    sg_arena        *a;
    sg_yaml_entry_fn entry;
    void            *ud;
    cursor           cur;
    sg_ynode       **stack; /* children of the open containers */
    size_t           nstack, capstack;
    frame            open[MAX_DEPTH];
    int              depth;
    sg_span         *spans; /* scratch: the last scalar's spans */
    uint32_t         nspans, capspans;
    uint32_t         nentries;
    sg_pos           root;
    bool             simple; /* all ASCII, no '\r': a character is a byte, a break a '\n' */
    bool             whole;  /* sg_yaml_read_doc: the root is the one entry, of any kind */
    bool             stop; /* a problem after which the rest of the file is not read */
};

static void oom(reader *L) { sg_yaml_oom(L); }

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
static void seek(reader *L, size_t chr) {
    cursor *c = &L->cur;
    if (chr < c->chr) *c = L->start;
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

/* libyaml's marks count from the start of the text it reads, which starts a line. */
static sg_pos mark_pos(reader *L, yaml_mark_t mk, size_t *off) {
    if (L->simple) { /* libyaml's own line and column are ours */
        if (off) *off = L->start.byte + mk.index;
        return (sg_pos){L->src, L->start.line + (uint32_t)mk.line, (uint32_t)mk.column + 1};
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
static void emit(reader *L, uint32_t off, const walk *w) {
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
static void fold(reader *L, walk *w, const char *v, size_t vn, size_t *i, bool escaped) {
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
static void dq_escape(reader *L, walk *w, const char *v, size_t vn, size_t *i) {
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
static void spans_walk(reader *L, walk *w, const ynode *y) {
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
static void spans(reader *L, const ynode *y) {
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

/* ---- errors ------------------------------------------------------------------------------ */

void sg_yaml_oom(sg_yreader *L) {
    if (!L->stop) sg_diag_plain(L->d, SG_ERROR, "out of memory reading '%s'", L->src->path);
    L->stop = true;
}

bool sg_yaml_stopped(const sg_yreader *L) { return L->stop; }

/* The YAML error that stopped libyaml, in our words, with the place its context began. */
static void yaml_error(reader *L, const yaml_parser_t *p) {
    if (p->error == YAML_MEMORY_ERROR) {
        oom(L);
        return;
    }
    L->stop = true;
    const char *what = p->problem ? p->problem : "unknown problem";
    if (p->error == YAML_READER_ERROR) {
        sg_pos pos = byte_pos(L->src, L->start.byte + p->problem_offset);
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

/* ---- the tree builder -------------------------------------------------------------------- */

static ynode *new_node(reader *L, sg_ynode_kind kind, yaml_mark_t mk) {
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
static void add_child(reader *L, ynode *y) {
    if (L->depth == 0 && L->whole) {
        L->nentries++;
        L->entry(L->ud, L, &y->n);
        return;
    }
    if (L->depth == 0) {
        if (y->n.kind == SG_Y_SCALAR && !(y->n.plain && y->n.len == 0)) {
            sg_diag_report(L->d, SG_ERROR, y->n.pos,
                           "expected a sequence of entries ('- func: ...'), not a scalar");
            L->stop = true;
        }
        return;
    }
    if (L->depth == 1 && !L->whole) {
        L->nentries++;
        L->entry(L->ud, L, &y->n);
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

static void open_node(reader *L, sg_ynode_kind kind, yaml_mark_t mk) {
    if (L->depth == 0 && kind == SG_Y_MAP && !L->whole) {
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

static void close_node(reader *L) {
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

static void scalar(reader *L, const yaml_event_t *ev) {
    ynode *y = new_node(L, SG_Y_SCALAR, ev->start_mark);
    if (!y) return;
    y->n.len = ev->data.scalar.length;
    y->n.text = sg_arena_strndup(L->a, (const char *)ev->data.scalar.value, y->n.len);
    y->n.plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    y->style = ev->data.scalar.style;
    if (!y->n.text) oom(L);
    else add_child(L, y);
}

static void on_event(reader *L, const yaml_event_t *ev, int *ndocs) {
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
static void run(reader *L, yaml_parser_t *p) {
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

/* ---- the reader ------------------------------------------------------------------------- */

const sg_span *sg_yaml_spans(sg_yreader *L, const sg_ynode *y, uint32_t *n) {
    spans(L, (const ynode *)y);
    *n = L->nspans;
    return L->spans;
}

static bool read_piece(const sg_source *src, sg_yaml_piece piece, sg_arena *a, sg_diag *d,
                       sg_yaml_entry_fn entry, void *ud, bool whole) {
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", src->path);
        return false;
    }
    cursor start = {.byte = piece.from, .line = piece.line, .line_start = piece.from};
    reader L = {.d = d, .src = src, .start = start, .a = a, .entry = entry, .ud = ud,
                .cur = start, .root = {src, piece.line, 1}, .whole = whole};
    const unsigned char *t = (const unsigned char *)src->text + piece.from;
    size_t n = piece.to - piece.from;
    L.simple = ascii_run(t, n) == n && !memchr(t, '\r', n);
    yaml_parser_set_input_string(&p, t, n);
    yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING); /* no guessing: marks count UTF-8 */
    run(&L, &p);
    if (!L.stop && L.nentries == 0)
        sg_diag_report(d, SG_ERROR, L.root, whole ? "file is empty" : "file has no entries");
    yaml_parser_delete(&p);
    free(L.stack);
    free(L.spans);
    return !L.stop;
}

bool sg_yaml_read_piece(const sg_source *src, sg_yaml_piece piece, sg_arena *a, sg_diag *d,
                        sg_yaml_entry_fn entry, void *ud) {
    return read_piece(src, piece, a, d, entry, ud, false);
}

bool sg_yaml_read_doc(const sg_source *src, sg_arena *a, sg_diag *d, sg_yaml_entry_fn entry,
                      void *ud) {
    return read_piece(src, (sg_yaml_piece){0, src->len, 1}, a, d, entry, ud, true);
}
