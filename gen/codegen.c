/* codegen.c: runs the Lua templates over the model (the template language is in codegen.h and
 * docs/templates.md).
 *
 * A template is translated to Lua line for line, so Lua's own messages ("ops.h.tpl:12:
 * attempt to index a nil value") point at the template's line; its text lines become calls
 * of _w, which writes into the output. Each runs in a protected call, in a state that has no
 * io, os or package library: templates read the model and write text, nothing else. */
#define _DEFAULT_SOURCE
#include "codegen.h"
#include "derive.h"
#include "lua_model.h"
#include "par.h"
#include "sg_pages.h"

#include <dirent.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SG_VERSION
#define SG_VERSION "0"
#endif

enum { MEMORY_LIMIT = 1u << 30 }; /* a runaway template fails instead of taking the machine */

static void renderer_free(void *owner);

void sg_outputs_free(sg_outputs *o) {
    for (uint32_t i = 0; i < o->n; i++) {
        free(o->items[i].name);
        free(o->items[i].pieces);
    }
    free(o->items);
    for (uint32_t i = 0; i < o->stale.nmarks; i++) free(o->stale.marks[i]);
    free(o->stale.marks);
    free(o->stale.lib);
    if (o->owner) renderer_free(o->owner);
    memset(o, 0, sizeof *o);
}

void sg_output_text(const sg_output *o, sg_buf *b) {
    for (size_t i = 0; i < o->npieces; i++) sg_buf_putn(b, o->pieces[i].p, o->pieces[i].n);
}

/* ---- the template sources ---------------------------------------------------------------- */

typedef struct sources {
    sg_tpl_file *items;
    uint32_t     n, cap;
    char       **owned; /* texts and names read from user folders */
    uint32_t     nowned, capowned;
} sources;

static bool own(sources *s, char *p) {
    if (s->nowned == s->capowned) {
        uint32_t cap = s->capowned ? s->capowned * 2 : 16;
        char   **g = realloc(s->owned, cap * sizeof *g);
        if (!g) return false;
        s->owned = g;
        s->capowned = cap;
    }
    s->owned[s->nowned++] = p;
    return true;
}

static sg_tpl_file *find_source(const sources *s, const char *name) {
    for (uint32_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0) return &s->items[i];
    return NULL;
}

/* Adds f, replacing a built-in of the same name (user folders come first: the first wins). */
static bool add_source(sources *s, sg_tpl_file f) {
    if (find_source(s, f.name)) return true;
    if (s->n == s->cap) {
        uint32_t     cap = s->cap ? s->cap * 2 : 16;
        sg_tpl_file *g = realloc(s->items, cap * sizeof *g);
        if (!g) return false;
        s->items = g;
        s->cap = cap;
    }
    s->items[s->n++] = f;
    return true;
}

static void sources_free(sources *s) {
    for (uint32_t i = 0; i < s->nowned; i++) free(s->owned[i]);
    free(s->owned);
    free(s->items);
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    sg_buf b;
    sg_buf_init(&b);
    char   chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sg_buf_putn(&b, chunk, n);
    bool bad = ferror(f) || b.oom;
    fclose(f);
    if (bad) {
        sg_buf_free(&b);
        return NULL;
    }
    if (!b.data) sg_buf_putn(&b, "", 0);
    *len = b.len;
    return b.data;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Reads dir/sub's *.tpl (sub "") or *.lua (sub "lib") files, in name order. */
static int read_dir(sources *s, const char *dir, const char *sub, sg_diag *d) {
    sg_buf path;
    sg_buf_init(&path);
    sg_buf_printf(&path, "%s%s%s", dir, *sub ? "/" : "", sub);
    DIR *dp = path.oom ? NULL : opendir(path.data);
    if (!dp) {
        int bad = !*sub; /* lib/ is optional */
        if (bad) sg_diag_plain(d, SG_ERROR, "cannot read the template folder '%s'", dir);
        sg_buf_free(&path);
        return bad;
    }
    char  **names = NULL;
    size_t  nn = 0, cap = 0;
    bool    oom = false;
    for (struct dirent *e; (e = readdir(dp));) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, *sub ? ".lua" : ".tpl")) continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 32;
            char **g = realloc(names, cap * sizeof *g);
            if (!g) {
                oom = true;
                break;
            }
            names = g;
        }
        if (!(names[nn++] = strdup(e->d_name))) oom = true;
    }
    closedir(dp);
    int errors = oom;
    if (oom) sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", path.data);
    if (nn) qsort(names, nn, sizeof *names, by_name);
    for (size_t i = 0; i < nn; i++) {
        sg_buf label, name;
        sg_buf_init(&label);
        sg_buf_init(&name);
        size_t len = 0;
        char  *text = NULL;
        if (names[i]) {
            sg_buf_printf(&label, "%s/%s", path.data, names[i]);
            sg_buf_printf(&name, "%s%s%s", sub, *sub ? "/" : "", names[i]);
            text = label.oom || name.oom ? NULL : read_all(label.data, &len);
        }
        /* the texts join the owned list one by one; what did not join is freed here */
        bool t_own = text && own(s, text);
        bool l_own = t_own && own(s, label.data);
        bool n_own = l_own && own(s, name.data);
        if (!n_own || !add_source(s, (sg_tpl_file){label.data, name.data, text, len})) {
            sg_diag_plain(d, SG_ERROR, "cannot read the template '%s/%s'", path.data,
                          names[i] ? names[i] : "?");
            errors++;
        }
        if (!t_own) free(text);
        if (!l_own) sg_buf_free(&label);
        if (!n_own) sg_buf_free(&name);
        free(names[i]);
    }
    free(names);
    sg_buf_free(&path);
    return errors;
}

/* ---- translation: template text -> Lua ----------------------------------------------------- */

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
static bool translate(const sg_tpl_file *t, sg_buf *lua, sg_buf *header, sg_diag *d) {
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

/* ---- the Lua state ----------------------------------------------------------------------- */

/* Lua's memory. Rationale: building the model and rendering make millions of small objects
 * (tables, strings) that die together; malloc spent more time on them than Lua did. Small
 * blocks come from free lists per 16-byte size class, carved from big chunks; larger ones are
 * listed (below). Everything is freed with the state, at once. A cap keeps a runaway template from taking
 * the machine. */
enum { SMALL_MAX = 2048, CLASSES = SMALL_MAX / 16, CHUNK = 256 * 1024 };

typedef struct limits {
    size_t    used;               /* bytes handed out, for the cap */
    void     *free_list[CLASSES]; /* per class: freed blocks, linked through their first word */
    char     *cur, *end;          /* the chunk being carved */
    sg_arena *chunks;             /* where chunks come from (pre-faulted pages on Linux) */
    struct block *blocks;         /* the larger blocks in use (see get) */
} limits;

static size_t class_of(size_t n) { return (n + 15) / 16 - 1; }

static void *small_get(limits *lim, size_t n) {
    size_t c = class_of(n);
    void  *p = lim->free_list[c];
    if (p) {
        lim->free_list[c] = *(void **)p;
        return p;
    }
    size_t size = (c + 1) * 16;
    if ((size_t)(lim->end - lim->cur) < size) {
        if (!lim->chunks && !(lim->chunks = sg_arena_new(NULL, NULL))) return NULL;
        char *chunk = sg_arena_alloc(lim->chunks, CHUNK);
        if (!chunk) return NULL;
        lim->cur = chunk;
        lim->end = chunk + CHUNK;
    }
    p = lim->cur;
    lim->cur += size;
    return p;
}

static void small_put(limits *lim, void *p, size_t n) {
    size_t c = class_of(n);
    *(void **)p = lim->free_list[c];
    lim->free_list[c] = p;
}

/* Larger blocks carry a header that links them into the state's list of them, so the state's
 * memory can be given back without walking its objects (renderer_free). Big ones (table
 * arrays, long strings) are pages from the system (sg_pages.h), faulted in at once, which costs
 * a fraction of faulting them one by one as they are first written; those in between come from
 * malloc. The size Lua frees a block with is the size it asked for, which is what
 * sg_pages_free wants. */
enum { BIG_MIN = 64 * 1024 };

typedef struct block {
    struct block *prev, *next;
    size_t        size, pad; /* size: what Lua asked for */
} block;
_Static_assert(sizeof(block) % 16 == 0, "the header keeps Lua's blocks 16-byte aligned");

static void *link_block(limits *lim, block *b, size_t n) {
    if (!b) return NULL;
    b->size = n;
    b->prev = NULL;
    b->next = lim->blocks;
    if (b->next) b->next->prev = b;
    lim->blocks = b;
    return b + 1;
}

static void unlink_block(limits *lim, block *b) {
    if (b->prev) b->prev->next = b->next;
    else lim->blocks = b->next;
    if (b->next) b->next->prev = b->prev;
}

static void free_block(block *b) {
    if (b->size >= BIG_MIN) sg_pages_free(b, b->size + sizeof *b);
    else free(b);
}

/* A block of n bytes, small, big or in between. */
static void *get(limits *lim, size_t n) {
    if (n <= SMALL_MAX) return small_get(lim, n);
    block *b = n >= BIG_MIN ? sg_pages_alloc(n + sizeof *b) : malloc(n + sizeof *b);
    return link_block(lim, b, n);
}

static void put(limits *lim, void *p, size_t n) {
    if (n <= SMALL_MAX) {
        small_put(lim, p, n);
        return;
    }
    (void)n;
    block *b = (block *)p - 1;
    unlink_block(lim, b);
    free_block(b);
}

/* A malloc'ed block grown or shrunk in place (realloc), its links mended. */
static void *resize(limits *lim, void *p, size_t n) {
    block *b = (block *)p - 1, *prev = b->prev, *next = b->next;
    block *g = realloc(b, n + sizeof *g);
    if (!g) return NULL;
    g->size = n;
    if (prev) prev->next = g;
    else lim->blocks = g;
    if (next) next->prev = g;
    return g + 1;
}

/* Whether a block of osize bytes can serve nsize in place. */
static bool same_kind(size_t osize, size_t nsize) {
    if (osize <= SMALL_MAX || nsize <= SMALL_MAX)
        return osize <= SMALL_MAX && nsize <= SMALL_MAX && class_of(osize) == class_of(nsize);
    return osize < BIG_MIN && nsize < BIG_MIN; /* both malloc'ed: realloc */
}

static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    limits *lim = ud;
    if (!ptr) osize = 0; /* Lua passes a type tag there for new blocks */
    if (nsize == 0) {
        if (ptr) {
            put(lim, ptr, osize);
            lim->used -= osize;
        }
        return NULL;
    }
    if (nsize > osize && lim->used + (nsize - osize) > MEMORY_LIMIT) return NULL;
    void *p;
    if (ptr && same_kind(osize, nsize)) {
        p = osize <= SMALL_MAX ? ptr : resize(lim, ptr, nsize);
    } else {
        p = get(lim, nsize);
        if (p && ptr) {
            memcpy(p, ptr, osize < nsize ? osize : nsize);
            put(lim, ptr, osize);
        }
    }
    if (p) lim->used = lim->used - osize + nsize;
    return p;
}

/* Gives back everything a state had: its small blocks' chunks at once, the others one by one
 * (a few thousand for the corpus, against millions of objects lua_close would walk). */
static void limits_free(limits *lim) {
    for (block *b = lim->blocks, *next; b; b = next) {
        next = b->next;
        free_block(b);
    }
    lim->blocks = NULL;
    if (lim->chunks) sg_arena_free(lim->chunks);
}

/* The registry keeps the sources (light userdata) for import(). */
static const char SOURCES_KEY = 's';

/* import "name": loads lib/name.lua once, runs it with the templates' environment, returns
 * what it returns. */
static int l_import(lua_State *L) {
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "sg.imported");
    if (lua_getfield(L, -1, name) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &SOURCES_KEY);
    const sources *s = lua_touserdata(L, -1);
    lua_pop(L, 1);
    char path[512];
    snprintf(path, sizeof path, "lib/%s.lua", name);
    const sg_tpl_file *f = find_source(s, path);
    if (!f) return luaL_error(L, "import: no module '%s' (looked for %s)", name, path);
    char chunk[600];
    snprintf(chunk, sizeof chunk, "@%s", f->label);
    lua_getfield(L, LUA_REGISTRYINDEX, "sg.env");
    if (luaL_loadbufferx(L, f->text, f->len, chunk, "t") != LUA_OK) return lua_error(L);
    lua_pushvalue(L, -2);
    lua_setupvalue(L, -2, 1); /* _ENV */
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, name); /* sg.imported[name] */
    return 1;
}

/* cstr(s): s as a C string literal ("NULL" for nil); jstr(s): s as a JSON string ("null").
 * Rationale: quoting every name, type and default of the corpus in Lua took longer than the
 * rest of the op table; these are the templates' two quoting needs, done once in C.
 * A C literal escapes a '?' after a '?' too, so that no trigraph (??/ ...) can form. */
static int quote(lua_State *L, bool json) {
    if (lua_isnoneornil(L, 1)) {
        lua_pushstring(L, json ? "null" : "NULL");
        return 1;
    }
    size_t      n;
    const char *s = luaL_checklstring(L, 1, &n);
    /* most strings need no escape: quoted in a local buffer, pushed at once */
    char quick[1024];
    if (n + 2 <= sizeof quick) {
        size_t i = 0;
        for (; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) break;
            if (!json && c == '?' && i && s[i - 1] == '?') break;
            quick[i + 1] = (char)c;
        }
        if (i == n) {
            quick[0] = quick[n + 1] = '"';
            lua_pushlstring(L, quick, n + 2);
            return 1;
        }
    }
    luaL_Buffer b;
    luaL_buffinitsize(L, &b, n + 2);
    luaL_addchar(&b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            luaL_addchar(&b, '\\');
            luaL_addchar(&b, (char)c);
        } else if (!json && c == '?' && i && s[i - 1] == '?') {
            luaL_addstring(&b, "\\?");
        } else if (c < 0x20 || c == 0x7f) {
            char e[8];
            snprintf(e, sizeof e, json ? "\\u%04x" : "\\%03o", c);
            luaL_addstring(&b, e);
        } else {
            luaL_addchar(&b, (char)c);
        }
    }
    luaL_addchar(&b, '"');
    luaL_pushresult(&b);
    return 1;
}

static int l_cstr(lua_State *L) { return quote(L, false); }
static int l_jstr(lua_State *L) { return quote(L, true); }

/* A new state: base, string, table, math and utf8 libraries; no io, os, package, debug;
 * no dofile or loadfile. The templates' environment table is left in the registry. */
static lua_State *new_state(limits *lim, const sources *s) {
    lua_State *L = lua_newstate(alloc, lim);
    if (!L) return NULL;
    lua_gc(L, LUA_GCSTOP); /* see PAUSE */
    static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},       {LUA_STRLIBNAME, luaopen_string},
                                    {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    lua_pushlightuserdata(L, (void *)s);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &SOURCES_KEY);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.imported");
    lua_pushcfunction(L, l_import);
    lua_setglobal(L, "import");
    lua_pushcfunction(L, l_cstr);
    lua_setglobal(L, "cstr");
    lua_pushcfunction(L, l_jstr);
    lua_setglobal(L, "jstr");
    return L;
}

/* ---- rendering ----------------------------------------------------------------------------
 *
 * A template renders once, or once per shard: each such render is a job. Jobs are independent
 * (each gets an environment of its own over the shared one), so on a machine with two CPUs
 * and a big model two Lua states, each with the model, take them in turn; the outputs and the
 * messages are then put in template order, so the result is the same bytes either way.
 * Rationale: rendering the corpus is ~100 ms of Lua, the model ~20 ms of it per state. */

/* Below this many ops the second state's model costs more than it saves. */
enum { TWO_STATES_MIN = 256 };
/* Rationale: the model is all live and renders make little garbage (the corpus: ~10 MB per
 * state; the output is written outside Lua's objects), yet a collector's cycle marks the whole model: with the collector on
 * from the start, the first cycle alone was ~10% of rendering. So it is off while the model
 * is built; its first cycle then waits until ALLOWANCE more bytes were allocated, and later
 * ones until memory reaches PAUSE% of what the last cycle left (Lua's largest setting). The
 * built-in templates never get there; a template that makes much garbage still has it
 * collected, well before the state's MEMORY_LIMIT. */
enum { PAUSE = 1000 };
#define ALLOWANCE (MEMORY_LIMIT / 4)

/* A Lua state with the model, and its memory. States hold the outputs' bytes, so they live
 * as long as the outputs (sg_outputs.owner, a chain). */
typedef struct renderer {
    lua_State       *L;
    limits           lim;
    int              env;  /* stack slot of the environment every render's is over */
    struct renderer *next;
} renderer;

static void renderer_free(void *owner) {
    for (renderer *rd = owner, *next; rd; rd = next) {
        next = rd->next;
        /* Rationale: a state holds memory and nothing else (templates have no io), so it is
         * dropped with its memory; lua_close would free its ~10^6 objects one at a time
         * (15-20 ms for the corpus). __gc metamethods of templates' tables do not run. */
        limits_free(&rd->lim);
        free(rd);
    }
}

/* A template ready to render. */
typedef struct plan_tpl {
    const sg_tpl_file *t;
    char               chunk[600]; /* "@label", Lua's name for it */
    sg_buf             lua;        /* its translation */
    sg_buf             banner;
    char              *pattern;    /* output = "..." */
    bool               per_shard;
    uint32_t           nshards, size;
    sg_diag            d;          /* what planning found wrong (then it has no jobs) */
} plan_tpl;

/* One render: template tpl, shard `shard` (0 for a template rendered once). */
typedef struct job {
    uint32_t  tpl, shard;
    sg_output out;
    char     *error; /* the message where it failed */
} job;

typedef struct run {
    const sg_model        *m;
    const sg_codegen_opts *o;
    sources                src;
    plan_tpl              *tpls;
    uint32_t               ntpls;
    job                   *jobs;  /* in template, then shard order: the outputs' order */
    uint32_t              *order; /* the order jobs are taken in */
    uint32_t               njobs;
    _Atomic uint32_t       next;  /* how many of order[] were taken */
} run;

/* "label: msg" (or msg where Lua's message names the label already), malloc'ed. */
static char *error_text(const char *label, const char *msg) {
    if (!msg) msg = "(an error object that is not a string)";
    sg_buf b;
    sg_buf_init(&b);
    if (strncmp(msg, label, strlen(label)) == 0) sg_buf_puts(&b, msg);
    else sg_buf_printf(&b, "%s: %s", label, msg);
    if (!b.oom) return b.data;
    sg_buf_free(&b);
    return NULL;
}

/* The Lua error on top of the stack (popped), as the template's planning problem. */
static void plan_fail(lua_State *L, plan_tpl *pt) {
    char *msg = error_text(pt->t->label, lua_tostring(L, -1));
    sg_diag_plain(&pt->d, SG_ERROR, "%s", msg ? msg : "out of memory");
    free(msg);
    lua_pop(L, 1);
}

/* The output name: pattern with {lib} and {shard} replaced (shard < 0: {shard} kept). */
static void out_name(sg_buf *b, const char *pattern, const char *lib, int64_t shard) {
    for (const char *p = pattern; *p;) {
        if (strncmp(p, "{lib}", 5) == 0) {
            sg_buf_puts(b, lib);
            p += 5;
        } else if (shard >= 0 && strncmp(p, "{shard}", 7) == 0) {
            sg_buf_printf(b, "%u", (unsigned)shard);
            p += 7;
        } else {
            sg_buf_putc(b, *p++);
        }
    }
}

/* Output names are plain file names: no folders, no dot files. */
static bool safe_name(const char *name) {
    return *name && name[0] != '.' && !strchr(name, '/');
}

/* The end of a template's banner, which names it: how sg_outputs_write knows its files. */
static void banner_mark(sg_buf *b, const char *label) {
    sg_buf_printf(b, " with %s. Do not edit.", label);
}

/* Translates t and reads its `%!` line (in L, a state with no model yet): how many renders it
 * makes. Problems go to pt->d. */
static void plan_one(run *r, lua_State *L, plan_tpl *pt, const sg_tpl_file *t) {
    pt->t = t;
    sg_diag_init(&pt->d);
    sg_buf_init(&pt->lua);
    sg_buf_init(&pt->banner);
    snprintf(pt->chunk, sizeof pt->chunk, "@%s", t->label);
    sg_buf header, cfg;
    sg_buf_init(&header);
    sg_buf_init(&cfg);
    if (!translate(t, &pt->lua, &header, &pt->d)) goto done;
    sg_buf_puts(&cfg, "return {");
    sg_buf_putn(&cfg, header.data ? header.data : "", header.len);
    sg_buf_puts(&cfg, "}");
    if (luaL_loadbufferx(L, cfg.data, cfg.len, pt->chunk, "t") != LUA_OK ||
        lua_pcall(L, 0, 1, 0) != LUA_OK) {
        plan_fail(L, pt);
        goto done;
    }
    lua_getfield(L, -1, "output");
    const char *pattern = lua_tostring(L, -1);
    pt->pattern = pattern ? strdup(pattern) : NULL;
    lua_getfield(L, -2, "per_shard");
    pt->per_shard = lua_toboolean(L, -1);
    lua_pop(L, 3);
    if (!pattern) {
        sg_diag_plain(&pt->d, SG_ERROR, "%s:1: the first line must name the output: "
                                        "%%! output = \"{lib}.h\"",
                      t->label);
        goto done;
    }
    if (!pt->pattern) {
        sg_diag_plain(&pt->d, SG_ERROR, "out of memory");
        goto done;
    }
    uint32_t nops = r->m->nops, size = r->o->shard_size ? r->o->shard_size : nops + 1;
    if (r->o->shards) size = (nops + r->o->shards - 1) / r->o->shards;
    if (size == 0) size = 1;
    pt->size = size;
    pt->nshards = !pt->per_shard ? 1 : r->o->shards ? r->o->shards : (nops + size - 1) / size;
    if (pt->nshards == 0) pt->nshards = 1;
    /* banner: the inputs and this template, no time and no absolute path of ours */
    sg_buf_printf(&pt->banner, "Generated by schemagen %s from ", SG_VERSION);
    for (uint32_t i = 0; i < r->o->ninputs; i++)
        sg_buf_printf(&pt->banner, "%s%s", i ? ", " : "", r->o->inputs[i]);
    banner_mark(&pt->banner, t->label);
    if (pt->banner.oom || pt->lua.oom) sg_diag_plain(&pt->d, SG_ERROR, "out of memory");
done:
    sg_buf_free(&header);
    sg_buf_free(&cfg);
}

/* Plans every template (top-level *.tpl, name order) and lists their jobs. false when out of
 * memory. */
static bool plan(run *r, lua_State *L) {
    r->tpls = calloc(r->src.n ? r->src.n : 1, sizeof *r->tpls);
    if (!r->tpls) return false;
    uint32_t njobs = 0;
    for (uint32_t i = 0; i < r->src.n; i++) {
        const sg_tpl_file *t = &r->src.items[i];
        if (!ends_with(t->name, ".tpl") || strchr(t->name, '/')) continue;
        plan_tpl *pt = &r->tpls[r->ntpls++];
        plan_one(r, L, pt, t);
        if (!pt->d.nerrors) njobs += pt->nshards;
    }
    r->jobs = calloc(njobs ? njobs : 1, sizeof *r->jobs);
    r->order = calloc(njobs ? njobs : 1, sizeof *r->order);
    if (!r->jobs || !r->order) return false;
    for (uint32_t i = 0; i < r->ntpls; i++)
        for (uint32_t k = 0; !r->tpls[i].d.nerrors && k < r->tpls[i].nshards; k++)
            r->jobs[r->njobs++] = (job){.tpl = i, .shard = k};
    /* Rationale: whole-model renders are the long ones: taken first, shards fill in after */
    uint32_t n = 0;
    for (int sharded = 0; sharded < 2; sharded++)
        for (uint32_t j = 0; j < r->njobs; j++)
            if (r->tpls[r->jobs[j].tpl].per_shard == sharded) r->order[n++] = j;
    return true;
}

static void plans_free(run *r) {
    for (uint32_t i = 0; i < r->ntpls; i++) {
        sg_buf_free(&r->tpls[i].lua);
        sg_buf_free(&r->tpls[i].banner);
        free(r->tpls[i].pattern);
        sg_diag_free(&r->tpls[i].d);
    }
    free(r->tpls);
    for (uint32_t j = 0; j < r->njobs; j++) {
        free(r->jobs[j].out.name);
        free(r->jobs[j].out.pieces);
        free(r->jobs[j].error);
    }
    free(r->jobs);
    free(r->order);
}

/* The Lua error on top of the stack (popped) as the job's message. */
static void job_fail(lua_State *L, const run *r, job *jb) {
    jb->error = error_text(r->tpls[jb->tpl].t->label, lua_tostring(L, -1));
    if (!jb->error) jb->error = strdup("out of memory");
    lua_pop(L, 1);
}

/* Where a render's text goes: blocks of the state's memory (under its cap), each a piece of
 * the output. */
typedef struct sink {
    sg_output out;
    size_t    cap;                /* of out.pieces */
    char     *start, *cur, *end;  /* the block being filled */
    limits   *lim;
    bool      oom;
} sink;

static bool sink_close_block(sink *k) {
    if (k->cur == k->start) return true;
    if (k->out.npieces == k->cap) {
        size_t    cap = k->cap ? k->cap * 2 : 16;
        sg_piece *g = realloc(k->out.pieces, cap * sizeof *g);
        if (!g) return false;
        k->out.pieces = g;
        k->cap = cap;
    }
    k->out.pieces[k->out.npieces++] = (sg_piece){k->start, (size_t)(k->cur - k->start)};
    k->start = k->cur;
    return true;
}

static bool sink_end(sink *k) { return !k->oom && sink_close_block(k); }

/* A new block for at least n more bytes: as big as the output so far, 16 KiB to 1 MiB. */
static bool sink_grow(sink *k, size_t n) {
    limits *lim = k->lim;
    size_t  size = k->out.len < 16384 ? 16384 : k->out.len > (1u << 20) ? (1u << 20) : k->out.len;
    if (size < n) size = n;
    if (!sink_close_block(k) || size > MEMORY_LIMIT - lim->used) return false;
    if (!lim->chunks && !(lim->chunks = sg_arena_new(NULL, NULL))) return false;
    char *b = sg_arena_alloc(lim->chunks, size);
    if (!b) return false;
    lim->used += size;
    k->start = k->cur = b;
    k->end = b + size;
    return true;
}

/* The error for piece i of a _w call that is neither a string nor a number, at its line. */
static int write_error(lua_State *L, int i, int n) {
    lua_Debug   ar;
    size_t      nlines;
    const char *lines = lua_tolstring(L, n, &nlines);
    if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "Sl", &ar))
        return luaL_error(L, "cannot write a %s value", luaL_typename(L, i));
    int line = ar.currentline + (lines && (size_t)i <= nlines ? (unsigned char)lines[i - 1] : 0);
    lua_pushfstring(L, "%s:%d: cannot write a %s value: $(...) must give a string or a number",
                    ar.short_src, line, luaL_typename(L, i));
    return lua_error(L);
}

/* _w(piece, ..., lines): appends the pieces (strings, or numbers as Lua writes them) to the
 * render's output; see struct stmt for lines. */
static int l_write(lua_State *L) {
    sink *k = lua_touserdata(L, lua_upvalueindex(1));
    int   n = lua_gettop(L);
    for (int i = 1; i < n; i++) {
        size_t      len;
        const char *s = lua_tolstring(L, i, &len);
        if (!s) return write_error(L, i, n);
        if ((size_t)(k->end - k->cur) < len && !sink_grow(k, len)) {
            k->oom = true;
            return luaL_error(L, "not enough memory for the output (a Lua state has at most "
                                 "%d MiB)", MEMORY_LIMIT >> 20);
        }
        memcpy(k->cur, s, len);
        k->cur += len;
        k->out.len += len;
    }
    return 0;
}

/* Renders one job in rd's state. */
static void run_job(const run *r, renderer *rd, job *jb) {
    lua_State      *L = rd->L;
    const plan_tpl *pt = &r->tpls[jb->tpl];
    int             top = lua_gettop(L);
    /* the template's function, loaded once per state (sg.fns[tpl]) */
    lua_getfield(L, LUA_REGISTRYINDEX, "sg.fns");
    if (lua_rawgeti(L, -1, (lua_Integer)jb->tpl + 1) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        if (luaL_loadbufferx(L, pt->lua.data, pt->lua.len, pt->chunk, "t") != LUA_OK) {
            job_fail(L, r, jb);
            goto done;
        }
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, (lua_Integer)jb->tpl + 1);
    }
    /* the render's environment: ops (this shard's or all), shard, nshards, banner, output,
     * over the shared one (model, lib, the globals) */
    sg_buf name;
    sg_buf_init(&name);
    out_name(&name, pt->pattern, r->o->lib, jb->shard);
    lua_createtable(L, 0, 6);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, rd->env);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    uint32_t nops = r->m->nops;
    uint32_t lo = pt->per_shard ? jb->shard * pt->size : 0;
    uint32_t hi = pt->per_shard ? lo + pt->size : nops;
    if (lo > nops) lo = nops;
    if (hi > nops) hi = nops;
    lua_getfield(L, rd->env, "model");
    lua_getfield(L, -1, "ops");
    lua_createtable(L, (int)(hi - lo), 0);
    for (uint32_t i = lo; i < hi; i++) {
        lua_rawgeti(L, -2, (lua_Integer)i + 1);
        lua_rawseti(L, -2, (lua_Integer)(i - lo) + 1);
    }
    lua_setfield(L, -4, "ops");
    lua_pop(L, 2);
    lua_pushinteger(L, jb->shard);
    lua_setfield(L, -2, "shard");
    lua_pushinteger(L, pt->nshards);
    lua_setfield(L, -2, "nshards");
    lua_pushlstring(L, pt->banner.data, pt->banner.len);
    lua_setfield(L, -2, "banner");
    lua_pushlstring(L, name.data ? name.data : "", name.len);
    lua_setfield(L, -2, "output");
    sink k = {.lim = &rd->lim};
    lua_pushlightuserdata(L, &k);
    lua_pushcclosure(L, l_write, 1);
    lua_setfield(L, -2, "_w");
    lua_setupvalue(L, -2, 1); /* _ENV */
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        job_fail(L, r, jb);
        sg_buf_free(&name);
        free(k.out.pieces);
        goto done;
    }
    sg_output *o = &jb->out;
    if (name.oom || !safe_name(name.data ? name.data : "")) {
        sg_buf b;
        sg_buf_init(&b);
        sg_buf_printf(&b, "%s: the output name '%s' leaves the output folder", pt->t->label,
                      name.data ? name.data : "");
        jb->error = b.oom ? strdup("out of memory") : b.data;
        if (b.oom) sg_buf_free(&b);
    } else if (!sink_end(&k)) {
        jb->error = strdup("out of memory");
    } else {
        *o = k.out;
        memset(&k.out, 0, sizeof k.out);
        o->name = name.data;
        name.data = NULL;
    }
    sg_buf_free(&name);
done:
    lua_settop(L, top);
}

/* Puts the shared environment table on rd's stack (rd->env): the model, lib, and the globals
 * through its metatable; left in the registry for import(). */
static int protected_env(lua_State *L) {
    const run *r = lua_touserdata(L, 1);
    lua_newtable(L);
    lua_newtable(L);
    lua_pushglobaltable(L);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    if (!sg_lua_push_model(L, r->m)) return luaL_error(L, "out of memory");
    lua_setfield(L, -2, "model");
    lua_pushstring(L, r->o->lib);
    lua_setfield(L, -2, "lib");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.env");
    return 1;
}

/* A state with the model in it (rd->L made already); false with *error set where it failed. */
static bool renderer_load(const run *r, renderer *rd, char **error) {
    lua_State *L = rd->L;
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.fns");
    lua_pushcfunction(L, protected_env);
    lua_pushlightuserdata(L, (void *)r);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        sg_buf b;
        sg_buf_init(&b);
        sg_buf_printf(&b, "building the model for templates: %s", lua_tostring(L, -1));
        *error = b.oom ? NULL : b.data;
        lua_pop(L, 1);
        return false;
    }
    rd->env = lua_gettop(L);
    lua_gc(L, LUA_GCINC, PAUSE, 0, 0);
    lua_gc(L, LUA_GCRESTART);
    /* a step of minus ALLOWANCE: the collector's debt (0 after a restart, so that its cycle
     * would begin at the next allocation) starts ALLOWANCE below zero */
    lua_gc(L, LUA_GCSTEP, -(int)(ALLOWANCE / 1024));
    return true;
}

static renderer *renderer_new(const run *r) {
    renderer *rd = calloc(1, sizeof *rd);
    if (rd && !(rd->L = new_state(&rd->lim, &r->src))) {
        renderer_free(rd);
        rd = NULL;
    }
    return rd;
}

/* One thread's part: a state (made here where rd is NULL), its model, then jobs until none
 * are left. */
typedef struct side {
    run      *r;
    renderer *rd;
    char     *error; /* where the state or its model could not be made */
} side;

static void *render_side(void *p) {
    side *s = p;
    run  *r = s->r;
    if (!s->rd && !(s->rd = renderer_new(r))) {
        s->error = strdup("out of memory starting Lua");
        return NULL;
    }
    if (!renderer_load(r, s->rd, &s->error)) {
        if (!s->error) s->error = strdup("out of memory");
        return NULL;
    }
    for (uint32_t i; (i = atomic_fetch_add(&r->next, 1)) < r->njobs;)
        run_job(r, s->rd, &r->jobs[r->order[i]]);
    return NULL;
}

static bool two_states(const run *r) {
    if (r->o->threads == 1 || r->njobs < 2) return false;
    return r->o->threads >= 2 || (r->m->nops >= TWO_STATES_MIN && sg_cpu_count() > 1);
}

/* Moves the outputs into out, in template and shard order, or reports what failed in that
 * order (the first failed render of a template, as a serial run would stop there). */
static int collect(run *r, sg_outputs *out, sg_diag *d) {
    int errors = 0;
    for (uint32_t i = 0, j = 0; i < r->ntpls; i++) {
        plan_tpl *pt = &r->tpls[i];
        if (pt->d.nerrors) {
            sg_buf_putn(&d->out, pt->d.out.data ? pt->d.out.data : "", pt->d.out.len);
            d->nerrors += pt->d.nerrors;
            errors += (int)pt->d.nerrors;
            continue;
        }
        bool failed = false;
        for (uint32_t k = 0; k < pt->nshards; k++, j++)
            if (r->jobs[j].error && !failed) {
                sg_diag_plain(d, SG_ERROR, "%s", r->jobs[j].error);
                errors++;
                failed = true;
            }
    }
    if (errors) return errors;
    for (uint32_t j = 0; j < r->njobs; j++) {
        if (out->n == out->cap) {
            uint32_t   cap = out->cap ? out->cap * 2 : 16;
            sg_output *g = realloc(out->items, cap * sizeof *g);
            if (!g) {
                sg_diag_plain(d, SG_ERROR, "out of memory");
                return 1;
            }
            out->items = g;
            out->cap = cap;
        }
        out->items[out->n++] = r->jobs[j].out;
        memset(&r->jobs[j].out, 0, sizeof r->jobs[j].out);
    }
    /* what an earlier run of these templates left, and this run did not write, is stale */
    sg_stale *st = &out->stale;
    if (!(st->lib = strdup(r->o->lib)) || !(st->marks = calloc(r->ntpls + 1, sizeof *st->marks)))
        goto oom;
    for (uint32_t i = 0; i < r->ntpls; i++) {
        sg_buf mark;
        sg_buf_init(&mark);
        banner_mark(&mark, r->tpls[i].t->label);
        if (mark.oom) goto oom;
        st->marks[st->nmarks++] = mark.data;
    }
    return 0;
oom:
    sg_diag_plain(d, SG_ERROR, "out of memory");
    return 1;
}

int sg_codegen(const sg_model *m, const sg_codegen_opts *o, sg_outputs *out, sg_diag *d) {
    run r = {.m = m, .o = o};
    atomic_init(&r.next, 0);
    int       errors = 0;
    side      here = {&r, NULL, NULL}, there = {&r, NULL, NULL};
    if ((errors = sg_derive_check_lib(m, o->lib, d))) goto done;
    for (uint32_t i = 0; i < o->ntemplate_dirs; i++) {
        errors += read_dir(&r.src, o->template_dirs[i], "", d);
        errors += read_dir(&r.src, o->template_dirs[i], "lib", d);
    }
    for (size_t i = 0; i < sg_builtin_ntemplates; i++)
        if (!add_source(&r.src, sg_builtin_templates[i])) errors++;
    if (errors) goto done;
    if (!(here.rd = renderer_new(&r))) {
        sg_diag_plain(d, SG_ERROR, "out of memory starting Lua");
        errors = 1;
        goto done;
    }
    if (!plan(&r, here.rd->L)) {
        sg_diag_plain(d, SG_ERROR, "out of memory");
        errors = 1;
        goto done;
    }
    /* the second state is made and filled on its own thread, while this one fills its own */
    bool two = two_states(&r) && sg_worker_run2(NULL, render_side, &there, &here);
    if (!two) render_side(&here);
    if (here.error) { /* where the worker failed, this side took its jobs */
        sg_diag_plain(d, SG_ERROR, "%s", here.error);
        errors = 1;
        goto done;
    }
    errors = collect(&r, out, d);
done:
    free(here.error);
    free(there.error);
    if (there.rd) here.rd->next = there.rd; /* here.rd exists wherever there.rd does */
    plans_free(&r);
    sources_free(&r.src);
    if (errors) {
        sg_outputs_free(out);
        renderer_free(here.rd);
    } else {
        out->owner = here.rd;
    }
    return errors;
}
