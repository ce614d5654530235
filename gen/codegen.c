/* codegen.c: runs the Lua templates over the model (the template language is in codegen.h and
 * docs/templates.md).
 *
 * A template is translated to Lua line for line, so Lua's own messages ("ops.h.tpl:12:
 * attempt to concatenate a nil value") point at the template's line. Each runs in a protected
 * call, in a state that has no io, os or package library: templates read the model and return
 * text, nothing else. */
#define _DEFAULT_SOURCE
#include "codegen.h"
#include "lua_model.h"
#include "sg_pages.h"

#include <dirent.h>
#include <lauxlib.h>
#include <lualib.h>
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
    for (uint32_t i = 0; i < o->nstale; i++) free(o->stale[i].pattern);
    free(o->stale);
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

/* One output line: _n = _n + 1; _o[_n] = "text" .. (expr) .. "text\n", or, where it continues
 * the previous text line (*pieces > 0), just .. "text" .. (expr) .. "text\n": consecutive text
 * lines make one string (Rationale: one concatenation per block instead of per line made
 * rendering several times faster; the Lua expression still spans the template's lines, so
 * messages keep their line numbers). *pieces counts the operands of the statement so far.
 * Returns false for an unbalanced $(. */
static bool text_line(sg_buf *out, const char *s, size_t n, size_t *col, int *pieces) {
    if (*pieces == 0) sg_buf_puts(out, "_n=_n+1 _o[_n]=");
    size_t lit = 0, i = 0;
    bool   first = *pieces == 0;
    sg_buf piece;
    sg_buf_init(&piece);
    while (i <= n) {
        if (i < n && s[i] == '$' && i + 1 < n && s[i + 1] == '$') { /* $$ is a literal $ */
            sg_buf_putn(&piece, s + lit, i - lit + 1);
            i += 2;
            lit = i;
            continue;
        }
        if (i < n && s[i] == '$' && i + 1 < n && s[i + 1] == '(') {
            size_t end = close_paren(s, i + 1, n);
            if (!end) {
                *col = i + 1;
                sg_buf_free(&piece);
                return false;
            }
            sg_buf_putn(&piece, s + lit, i - lit);
            if (piece.len) {
                if (!first) sg_buf_puts(out, "..");
                put_quoted(out, piece.data, piece.len);
                first = false;
                piece.len = 0;
                ++*pieces;
            }
            if (!first) sg_buf_puts(out, "..");
            sg_buf_putc(out, '(');
            sg_buf_putn(out, s + i + 2, end - i - 2);
            sg_buf_putc(out, ')');
            first = false;
            ++*pieces;
            i = end + 1;
            lit = i;
            continue;
        }
        if (i == n) break;
        i++;
    }
    sg_buf_putn(&piece, s + lit, n - lit);
    sg_buf_putc(&piece, '\n');
    if (!first) sg_buf_puts(out, "..");
    put_quoted(out, piece.data, piece.len);
    ++*pieces;
    sg_buf_free(&piece);
    return true;
}

/* Lua evaluates a concatenation in registers: a statement stops well before its limit. */
enum { MAX_PIECES = 120 };

/* Translates a template; header gets the `%!` line's text (or stays empty). Errors: a
 * diagnostic naming label:line:col. */
static bool translate(const sg_tpl_file *t, sg_buf *lua, sg_buf *header, sg_diag *d) {
    const char *s = t->text, *end = t->text + t->len;
    uint32_t    line = 1;
    int         pieces = 0; /* operands of the text statement being built; 0: none open */
    sg_buf_puts(lua, "local _o,_n={},0 ");
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t      n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        if (n && s[n - 1] == '\r') n--;
        if (n >= 2 && s[0] == '%' && s[1] == '!') {
            if (line != 1) {
                sg_diag_plain(d, SG_ERROR, "%s:%u: '%%!' (the output line) must be the first line",
                              t->label, line);
                return false;
            }
            sg_buf_putn(header, s + 2, n - 2);
        } else if (n >= 2 && s[0] == '%' && s[1] == '%') {
            size_t col;
            if (pieces > MAX_PIECES) pieces = 0;
            if (!text_line(lua, s + 1, n - 1, &col, &pieces)) goto unbalanced;
        } else if (n >= 1 && s[0] == '%') {
            pieces = 0;
            sg_buf_putn(lua, s + 1, n - 1);
        } else {
            size_t col;
            if (pieces > MAX_PIECES) pieces = 0;
            if (!text_line(lua, s, n, &col, &pieces)) {
            unbalanced:
                sg_diag_plain(d, SG_ERROR, "%s:%u: '$(' without its ')'", t->label, line);
                return false;
            }
        }
        sg_buf_putc(lua, '\n');
        line++;
        s = nl ? nl + 1 : end;
    }
    sg_buf_puts(lua, " return _o, _n\n");
    return !lua->oom && !header->oom;
}

/* ---- the Lua state ----------------------------------------------------------------------- */

/* Lua's memory. Rationale: building the model and rendering make millions of small objects
 * (tables, strings) that die together; malloc spent more time on them than Lua did. Small
 * blocks come from free lists per 16-byte size class, carved from big chunks; larger ones go
 * to malloc. Everything is freed with the state. A cap keeps a runaway template from taking
 * the machine. */
enum { SMALL_MAX = 2048, CLASSES = SMALL_MAX / 16, CHUNK = 256 * 1024 };

typedef struct limits {
    size_t    used;               /* bytes handed out, for the cap */
    void     *free_list[CLASSES]; /* per class: freed blocks, linked through their first word */
    char     *cur, *end;          /* the chunk being carved */
    sg_arena *chunks;             /* where chunks come from (pre-faulted pages on Linux) */
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

/* Big blocks (table arrays, long strings): pages from the system (sg_pages.h), faulted in at
 * once, which costs a fraction of faulting them one by one as they are first written. The size
 * Lua frees a block with is the size it asked for, which is what sg_pages_free wants. */
enum { BIG_MIN = 64 * 1024 };

static void *big_get(size_t n) { return sg_pages_alloc(n); }
static void  big_put(void *p, size_t n) { sg_pages_free(p, n); }

/* A block of n bytes, small, big or in between (malloc). */
static void *get(limits *lim, size_t n) {
    return n <= SMALL_MAX ? small_get(lim, n) : n >= BIG_MIN ? big_get(n) : malloc(n);
}

static void put(limits *lim, void *p, size_t n) {
    if (n <= SMALL_MAX) small_put(lim, p, n);
    else if (n >= BIG_MIN) big_put(p, n);
    else free(p);
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
        p = osize <= SMALL_MAX ? ptr : realloc(ptr, nsize);
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

static void limits_free(limits *lim) {
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
 * rest of the op table; these are the templates' two quoting needs, done once in C. */
static int quote(lua_State *L, bool json) {
    if (lua_isnoneornil(L, 1)) {
        lua_pushstring(L, json ? "null" : "NULL");
        return 1;
    }
    size_t      n;
    const char *s = luaL_checklstring(L, 1, &n);
    luaL_Buffer b;
    luaL_buffinitsize(L, &b, n + 2);
    luaL_addchar(&b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            luaL_addchar(&b, '\\');
            luaL_addchar(&b, (char)c);
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
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.keep");
    lua_pushcfunction(L, l_import);
    lua_setglobal(L, "import");
    lua_pushcfunction(L, l_cstr);
    lua_setglobal(L, "cstr");
    lua_pushcfunction(L, l_jstr);
    lua_setglobal(L, "jstr");
    return L;
}

/* ---- rendering ---------------------------------------------------------------------------- */

/* The Lua state and its memory: they hold the outputs' bytes, so they live as long as the
 * outputs (sg_outputs.owner). */
typedef struct renderer {
    lua_State *L;
    limits     lim;
} renderer;

static void renderer_free(void *owner) {
    renderer *rd = owner;
    if (rd->L) lua_close(rd->L);
    limits_free(&rd->lim);
    free(rd);
}

typedef struct run {
    const sg_model        *m;
    const sg_codegen_opts *o;
    sources                src;
    sg_outputs            *out;
    sg_diag               *d;
    lua_State             *L;
    renderer              *rd;
} run;

static sg_output *new_output(sg_outputs *o, const char *name) {
    if (o->n == o->cap) {
        uint32_t   cap = o->cap ? o->cap * 2 : 16;
        sg_output *g = realloc(o->items, cap * sizeof *g);
        if (!g) return NULL;
        o->items = g;
        o->cap = cap;
    }
    sg_output *out = &o->items[o->n];
    out->name = strdup(name);
    if (!out->name) return NULL;
    out->pieces = NULL;
    out->npieces = out->len = 0;
    o->n++;
    return out;
}

/* The output name: pattern with {lib} and {shard} replaced. */
static void out_name(sg_buf *b, const char *pattern, const char *lib, uint32_t shard) {
    for (const char *p = pattern; *p;) {
        if (strncmp(p, "{lib}", 5) == 0) {
            sg_buf_puts(b, lib);
            p += 5;
        } else if (strncmp(p, "{shard}", 7) == 0) {
            sg_buf_printf(b, "%u", shard);
            p += 7;
        } else {
            sg_buf_putc(b, *p++);
        }
    }
}

/* Reports the Lua error on top of the stack (popped). */
static void lua_fail(run *r, const sg_tpl_file *t) {
    const char *msg = lua_tostring(r->L, -1);
    if (!msg) msg = "(an error object that is not a string)";
    if (strncmp(msg, t->label, strlen(t->label)) == 0)
        sg_diag_plain(r->d, SG_ERROR, "%s", msg);
    else
        sg_diag_plain(r->d, SG_ERROR, "%s: %s", t->label, msg);
    lua_pop(r->L, 1);
}

/* Output names are plain file names: no folders, no dot files. */
static bool safe_name(const char *name) {
    return *name && name[0] != '.' && !strchr(name, '/');
}

/* Renders one template: once, or once per shard. */
static int render(run *r, const sg_tpl_file *t, int env) {
    lua_State *L = r->L;
    sg_buf     lua, header, name;
    sg_buf_init(&lua);
    sg_buf_init(&header);
    sg_buf_init(&name);
    int errors = 0;
    if (!translate(t, &lua, &header, r->d)) {
        errors = 1;
        goto done;
    }
    /* the header: output = "...", per_shard = bool */
    const char *pattern = NULL;
    bool        per_shard = false;
    char        chunk[600];
    snprintf(chunk, sizeof chunk, "@%s", t->label);
    sg_buf cfg;
    sg_buf_init(&cfg);
    sg_buf_puts(&cfg, "return {");
    sg_buf_putn(&cfg, header.data ? header.data : "", header.len);
    sg_buf_puts(&cfg, "}");
    if (luaL_loadbufferx(L, cfg.data, cfg.len, chunk, "t") != LUA_OK ||
        lua_pcall(L, 0, 1, 0) != LUA_OK) {
        sg_buf_free(&cfg);
        lua_fail(r, t);
        errors = 1;
        goto done;
    }
    sg_buf_free(&cfg);
    lua_getfield(L, -1, "output");
    pattern = lua_tostring(L, -1);
    lua_getfield(L, -2, "per_shard");
    per_shard = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (!pattern) {
        sg_diag_plain(r->d, SG_ERROR, "%s:1: the first line must name the output: "
                                      "%%! output = \"{lib}.h\"",
                      t->label);
        lua_pop(L, 2);
        errors = 1;
        goto done;
    }
    char *pat = strdup(pattern);
    lua_pop(L, 2);
    if (luaL_loadbufferx(L, lua.data, lua.len, chunk, "t") != LUA_OK) {
        free(pat);
        lua_fail(r, t);
        errors = 1;
        goto done;
    }
    int      fn = lua_gettop(L);
    uint32_t size = r->o->shard_size ? r->o->shard_size : r->m->nops + 1;
    if (r->o->shards) size = (r->m->nops + r->o->shards - 1) / r->o->shards;
    if (size == 0) size = 1;
    uint32_t nshards = !per_shard     ? 1
                       : r->o->shards ? r->o->shards
                                      : (r->m->nops + size - 1) / size;
    if (nshards == 0) nshards = 1;
    /* banner: the inputs and this template, no time and no absolute path of ours */
    sg_buf banner;
    sg_buf_init(&banner);
    sg_buf_printf(&banner, "Generated by schemagen %s from ", SG_VERSION);
    for (uint32_t i = 0; i < r->o->ninputs; i++)
        sg_buf_printf(&banner, "%s%s", i ? ", " : "", r->o->inputs[i]);
    sg_buf_printf(&banner, " with %s. Do not edit.", t->label);
    for (uint32_t k = 0; k < nshards && !errors; k++) {
        /* per render: ops (this shard's or all), shard, nshards, banner */
        lua_getfield(L, env, "model");
        lua_getfield(L, -1, "ops");
        uint32_t lo = per_shard ? k * size : 0;
        uint32_t hi = per_shard ? lo + size : r->m->nops;
        if (lo > r->m->nops) lo = r->m->nops;
        if (hi > r->m->nops) hi = r->m->nops;
        lua_createtable(L, (int)(hi - lo), 0);
        for (uint32_t i = lo; i < hi; i++) {
            lua_rawgeti(L, -2, (lua_Integer)i + 1);
            lua_rawseti(L, -2, (lua_Integer)(i - lo) + 1);
        }
        lua_setfield(L, env, "ops");
        lua_pop(L, 2);
        lua_pushinteger(L, k);
        lua_setfield(L, env, "shard");
        lua_pushinteger(L, nshards);
        lua_setfield(L, env, "nshards");
        lua_pushlstring(L, banner.data, banner.len);
        lua_setfield(L, env, "banner");
        name.len = 0;
        out_name(&name, pat, r->o->lib, k);
        lua_pushlstring(L, name.data, name.len);
        lua_setfield(L, env, "output");

        lua_pushvalue(L, fn);
        lua_pushvalue(L, env);
        lua_setupvalue(L, -2, 1); /* _ENV */
        if (lua_pcall(L, 0, 2, 0) != LUA_OK) {
            lua_fail(r, t);
            errors = 1;
            break;
        }
        /* the pieces: _o[1.._n]; _o stays referenced (sg.keep) so its strings stay put */
        lua_Integer np = lua_tointeger(L, -1);
        lua_pop(L, 1);
        sg_output *o = NULL;
        if (!safe_name(name.data)) {
            sg_diag_plain(r->d, SG_ERROR, "%s: the output name '%s' leaves the output folder",
                          t->label, name.data);
            errors = 1;
        } else if (!(o = new_output(r->out, name.data)) ||
                   !(o->pieces = malloc((np > 0 ? (size_t)np : 1) * sizeof *o->pieces))) {
            sg_diag_plain(r->d, SG_ERROR, "out of memory");
            errors = 1;
        } else {
            for (lua_Integer k2 = 1; k2 <= np; k2++) {
                lua_rawgeti(L, -1, k2);
                size_t      n;
                const char *text = lua_tolstring(L, -1, &n);
                lua_pop(L, 1);
                if (!text) continue; /* only strings reach _o: see translate() */
                o->pieces[o->npieces++] = (sg_piece){text, n};
                o->len += n;
            }
            lua_getfield(L, LUA_REGISTRYINDEX, "sg.keep");
            lua_pushvalue(L, -2);
            lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    if (per_shard && !errors) { /* shards from nshards up, if an earlier run made them */
        sg_buf p2;
        sg_buf_init(&p2);
        for (const char *q = pat; *q;) {
            if (strncmp(q, "{lib}", 5) == 0) {
                sg_buf_puts(&p2, r->o->lib);
                q += 5;
            } else {
                sg_buf_putc(&p2, *q++);
            }
        }
        sg_stale *g = realloc(r->out->stale, (r->out->nstale + 1) * sizeof *g);
        if (g && !p2.oom) {
            r->out->stale = g;
            g[r->out->nstale++] = (sg_stale){p2.data, nshards};
        } else {
            if (g) r->out->stale = g;
            sg_buf_free(&p2);
        }
    }
    sg_buf_free(&banner);
    free(pat);
    lua_pop(L, 1); /* fn */
done:
    sg_buf_free(&lua);
    sg_buf_free(&header);
    sg_buf_free(&name);
    return errors;
}

/* Sets up the environment table templates share (in the registry and on the stack). */
static bool make_env(run *r) {
    lua_State *L = r->L;
    lua_newtable(L);
    int env = lua_gettop(L);
    /* globals stay readable: ipairs, string, import, ... */
    lua_newtable(L);
    lua_pushglobaltable(L);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, env);
    if (!sg_lua_push_model(L, r->m)) return false;
    lua_setfield(L, env, "model");
    lua_pushstring(L, r->o->lib);
    lua_setfield(L, env, "lib");
    lua_pushvalue(L, env);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.env");
    return true;
}

static int protected_model(lua_State *L) {
    run *r = lua_touserdata(L, 1);
    if (!make_env(r)) return luaL_error(L, "out of memory");
    return 1;
}

int sg_codegen(const sg_model *m, const sg_codegen_opts *o, sg_outputs *out, sg_diag *d) {
    run r = {.m = m, .o = o, .out = out, .d = d};
    int errors = 0;
    for (uint32_t i = 0; i < o->ntemplate_dirs; i++) {
        errors += read_dir(&r.src, o->template_dirs[i], "", d);
        errors += read_dir(&r.src, o->template_dirs[i], "lib", d);
    }
    for (size_t i = 0; i < sg_builtin_ntemplates; i++)
        if (!add_source(&r.src, sg_builtin_templates[i])) errors++;
    if (errors) goto done;
    r.rd = calloc(1, sizeof *r.rd);
    r.L = r.rd ? new_state(&r.rd->lim, &r.src) : NULL;
    if (r.rd) r.rd->L = r.L;
    if (!r.L) {
        sg_diag_plain(d, SG_ERROR, "out of memory starting Lua");
        errors = 1;
        goto done;
    }
    /* Rationale: the model is big, lives the whole run, and rendering makes short-lived
     * strings: a generational collector leaves the model alone on most cycles. */
    lua_gc(r.L, LUA_GCGEN, 0, 0);
    lua_pushcfunction(r.L, protected_model);
    lua_pushlightuserdata(r.L, &r);
    if (lua_pcall(r.L, 1, 1, 0) != LUA_OK) {
        sg_diag_plain(d, SG_ERROR, "building the model for templates: %s", lua_tostring(r.L, -1));
        errors = 1;
        goto done;
    }
    int env = lua_gettop(r.L);
    for (uint32_t i = 0; i < r.src.n; i++)
        if (ends_with(r.src.items[i].name, ".tpl") && !strchr(r.src.items[i].name, '/'))
            errors += render(&r, &r.src.items[i], env);
done:
    sources_free(&r.src);
    if (errors) {
        sg_outputs_free(out);
        if (r.rd) renderer_free(r.rd);
    } else {
        out->owner = r.rd;
    }
    return errors;
}
