/* lua_state.c: a Lua state for templates: its memory, its libraries, and import().
 *
 * Each template runs in a protected call, in a state that has no io, os or package library:
 * templates read the model and write text, nothing else. */
#include "sg_pages.h"
#include "tpl.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lua's memory. Rationale: building the model and rendering make millions of small objects
 * (tables, strings) that die together; malloc spent more time on them than Lua did. Small
 * blocks come from free lists per 16-byte size class, carved from big chunks; larger ones are
 * listed (below). Everything is freed with the state, at once. A cap keeps a runaway template from taking
 * the machine. */
enum { SMALL_MAX = 2048, CHUNK = 256 * 1024, MEMORY_LIMIT = SG_TPL_MEMORY_LIMIT };
typedef sg_lua_mem limits;

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
void sg_lua_mem_free(sg_lua_mem *lim) {
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
    const sg_tpl_sources *s = lua_touserdata(L, -1);
    lua_pop(L, 1);
    char path[512];
    snprintf(path, sizeof path, "lib/%s.lua", name);
    const sg_tpl_file *f = sg_tpl_find(s, path);
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
    /* most strings need no escape: quoted in a local buffer, pushed at once */
    char quick[1024];
    if (n + 2 <= sizeof quick) {
        size_t i = 0;
        for (; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) break;
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
lua_State *sg_lua_state_new(sg_lua_mem *lim, const sg_tpl_sources *s) {
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