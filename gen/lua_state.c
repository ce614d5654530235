/* lua_state.c: a Lua state for templates: its memory, its libraries, import(), and the
 * limits a template runs under (docs/templates.md, "The sandbox").
 *
 * Templates read the model and write text, nothing else: a state has no io, os, package or
 * debug library, loads text chunks only, and each protected call it makes is bounded in
 * memory (a cap on what the state holds) and in time (a budget of Lua instructions). */
#include "tpl.h"
#include "c_text.h"
#include "json_str.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void count_hook(lua_State *L, lua_Debug *ar);

/* Lua's memory: the caller's hook (sg_alloc_fn: blocks of a size, freed with size 0), or
 * realloc and free; every byte counted against the state's cap. */
static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    sg_lua_mem *mem = ud;
    if (!ptr) osize = 0; /* Lua passes a type tag there for new blocks */
    if (nsize == 0) {
        if (ptr) {
            if (mem->hook) mem->hook(mem->hook_ud, ptr, 0);
            else free(ptr);
            mem->used -= osize;
        }
        return NULL;
    }
    if (nsize > osize && nsize - osize > mem->cap - mem->used) return NULL;
    int64_t was = mem->left;
    mem->left -= (int64_t)(nsize >> 6);
    /* a budget spent on memory stops the template at its next instruction, not at the next
     * count: a loop of few instructions that allocates much would otherwise run on */
    if (was >= 0 && mem->left < 0 && mem->L) lua_sethook(mem->L, count_hook, LUA_MASKCOUNT, 1);
    void *p;
    if (!mem->hook) {
        p = realloc(ptr, nsize);
    } else if ((p = mem->hook(mem->hook_ud, NULL, nsize)) && ptr) {
        memcpy(p, ptr, osize < nsize ? osize : nsize);
        mem->hook(mem->hook_ud, ptr, 0);
    }
    if (p) mem->used = mem->used - osize + nsize;
    return p;
}

/* ---- time: the budget -------------------------------------------------------------------- */

/* The count hook runs every HOOK_STEP instructions. */
enum { HOOK_STEP = 10000 };

static void count_hook(lua_State *L, lua_Debug *ar) {
    sg_lua_mem *mem;
    lua_getallocf(L, (void **)&mem);
    if ((mem->left -= HOOK_STEP) >= 0) return;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1); /* from now on every instruction fails */
    lua_getinfo(L, "Sl", ar);
    lua_pushfstring(L, "%s:%d: the template used up its budget of %I Lua instructions "
                       "(--template-budget)",
                    ar->short_src, ar->currentline, (lua_Integer)mem->budget);
    lua_error(L);
}

/* pcall and xpcall (the base library's, upvalue 1), except that an error caught after the
 * budget is spent goes on. Rationale: a template that caught the budget's error in a loop
 * would run for ever. */
static int l_pcall(lua_State *L) {
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    sg_lua_mem *mem;
    lua_getallocf(L, (void **)&mem);
    if (mem->left < 0 && lua_gettop(L) >= 2 && !lua_toboolean(L, 1)) {
        lua_settop(L, 2);
        return lua_error(L);
    }
    return lua_gettop(L);
}

/* The message handler: the message located, then the Lua functions it passed through. */
static int traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = "(an error object that is not a string)";
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_Debug ar;
    bool      first = true;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue; /* a C function */
        char where[LUA_IDSIZE + 32];
        int  n = snprintf(where, sizeof where, "%s:%d:", ar.short_src, ar.currentline);
        if (first) {
            /* Lua's own messages are located already; error("x", 0) and error objects not */
            if (strncmp(msg, where, (size_t)n) != 0) {
                luaL_addstring(&b, where);
                luaL_addchar(&b, ' ');
            }
            luaL_addstring(&b, msg);
            first = false;
        } else {
            luaL_addstring(&b, "\n  called from ");
            luaL_addlstring(&b, where, (size_t)n - 1);
        }
    }
    if (first) luaL_addstring(&b, msg);
    luaL_pushresult(&b);
    return 1;
}

int sg_lua_call(lua_State *L, int nargs, int nresults) {
    sg_lua_mem *mem;
    lua_getallocf(L, (void **)&mem);
    mem->left = mem->budget > INT64_MAX ? INT64_MAX : (int64_t)mem->budget;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_STEP);
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    int rc = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    return rc;
}

/* digest(s): 16 hex digits of s's FNV-1a hash (64 bits), for names made from content. */
static int l_digest(lua_State *L) {
    size_t      n;
    const char *s = luaL_checklstring(L, 1, &n);
    uint64_t    h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    lua_pushlstring(L, hex, 16);
    return 1;
}

/* ---- the libraries ----------------------------------------------------------------------- */

/* load(chunk [, name [, mode [, env]]]): the base library's, for text chunks only. Rationale:
 * a binary chunk is not checked by Lua and can break the interpreter's memory safety. */
static int l_load(lua_State *L) {
    int given = lua_gettop(L);
    lua_settop(L, 4);
    int n = 4;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushliteral(L, "t");
    if (given >= 4) lua_pushvalue(L, 4); /* an env given as nil is not the same as none */
    lua_call(L, given >= 4 ? 4 : 3, LUA_MULTRET);
    return lua_gettop(L) - n;
}

/* The registry keeps where import() looks (light userdata: a sg_tpl_sources). */
static const char LIBS_KEY = 'l';

/* import "name": loads lib/name.lua once, runs it with the templates' environment, returns
 * what it returns. */
static int l_import(lua_State *L) {
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "sg.imported");
    if (lua_getfield(L, -1, name) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &LIBS_KEY);
    const sg_tpl_sources *libs = lua_touserdata(L, -1);
    lua_pop(L, 1);
    char path[512];
    snprintf(path, sizeof path, "lib/%s.lua", name);
    const sg_tpl_file *f = sg_tpl_find(libs, path);
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

/* cstr(s): s as a C string literal, sg_c_string's ("NULL" for nil); jstr(s): s as a JSON
 * string ("null"). Rationale: quoting every name, type and default of the corpus in Lua took
 * longer than the rest of the op table; these are the templates' two quoting needs, done once
 * in C. Short strings are quoted in a local buffer, with no allocation but Lua's string. */
static int l_cstr(lua_State *L) {
    if (lua_isnoneornil(L, 1)) {
        lua_pushliteral(L, "NULL");
        return 1;
    }
    size_t      n;
    const char *s = luaL_checklstring(L, 1, &n);
    char        quick[1024];
    if (SG_C_TEXT_MAX(n) <= sizeof quick) {
        lua_pushlstring(L, quick, sg_c_string(quick, s, n));
        return 1;
    }
    luaL_Buffer b;
    char       *d = luaL_buffinitsize(L, &b, SG_C_TEXT_MAX(n));
    luaL_pushresultsize(&b, sg_c_string(d, s, n));
    return 1;
}

/* The escapes are json_str.h's, as --emit=json writes them. */
static int l_jstr(lua_State *L) {
    if (lua_isnoneornil(L, 1)) {
        lua_pushliteral(L, "null");
        return 1;
    }
    size_t      n;
    const char *s = luaL_checklstring(L, 1, &n);
    size_t      run = sg_json_plain(s, n);
    char        quick[1024];
    if (run == n && n + 2 <= sizeof quick) {
        quick[0] = '"';
        memcpy(quick + 1, s, n);
        quick[n + 1] = '"';
        lua_pushlstring(L, quick, n + 2);
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinitsize(L, &b, n + 2);
    luaL_addchar(&b, '"');
    for (size_t i = 0;;) {
        luaL_addlstring(&b, s + i, run);
        i += run;
        if (i == n) break;
        char e[SG_JSON_ESC_MAX];
        luaL_addlstring(&b, e, sg_json_escape((unsigned char)s[i++], e));
        run = sg_json_plain(s + i, n - i);
    }
    luaL_addchar(&b, '"');
    luaL_pushresult(&b);
    return 1;
}

/* ccomment(s): sg_c_comment's text (C.comment in lib/c.lua, docs/templates.md); s itself
 * where nothing needs breaking. Rationale: the templates write every op's schema in comments;
 * scanning each in Lua took a tenth of the generator's instructions. */
static int l_ccomment(lua_State *L) {
    size_t      n;
    const char *s = luaL_checklstring(L, 1, &n);
    if (sg_c_comment_plain(s, n)) {
        lua_settop(L, 1);
        return 1;
    }
    luaL_Buffer b;
    char       *d = luaL_buffinitsize(L, &b, SG_C_TEXT_MAX(n));
    luaL_pushresultsize(&b, sg_c_comment(d, s, n));
    return 1;
}

/* The libraries and globals of a new state (see sg_lua_state_new), in a protected call:
 * every Lua API call that allocates may fail. */
static int setup(lua_State *L) {
    const sg_tpl_sources *libs = lua_touserdata(L, 1);
    static const luaL_Reg opened[] = {
        {LUA_GNAME, luaopen_base},       {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8}};
    for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++) {
        luaL_requiref(L, opened[i].name, opened[i].func, 1);
        lua_pop(L, 1);
    }
    static const char *const caught[] = {"pcall", "xpcall"};
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
        lua_getglobal(L, caught[i]);
        lua_pushcclosure(L, l_pcall, 1);
        lua_setglobal(L, caught[i]);
    }
    /* what reads files or prints, and what makes or runs binary chunks */
    static const char *const gone[] = {"dofile", "loadfile", "print"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, gone[i]);
    }
    lua_getglobal(L, LUA_STRLIBNAME);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    sg_lua_guard_patterns(L);
    lua_getglobal(L, "load");
    lua_pushcclosure(L, l_load, 1);
    lua_setglobal(L, "load");
    lua_pushlightuserdata(L, (void *)libs);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &LIBS_KEY);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.imported");
    lua_pushcfunction(L, l_import);
    lua_setglobal(L, "import");
    lua_pushcfunction(L, l_cstr);
    lua_setglobal(L, "cstr");
    lua_pushcfunction(L, l_jstr);
    lua_setglobal(L, "jstr");
    lua_pushcfunction(L, l_ccomment);
    lua_setglobal(L, "ccomment");
    lua_pushcfunction(L, l_digest);
    lua_setglobal(L, "digest");
    return 0;
}

/* A new state: base, string, table, math and utf8 libraries; no io, os, package, debug;
 * no dofile, loadfile, print or string.dump, and load takes text only. */
lua_State *sg_lua_state_new(sg_lua_mem *mem, const sg_tpl_sources *libs) {
    mem->L = NULL;
    lua_State *L = lua_newstate(alloc, mem);
    if (!L) return NULL;
    lua_gc(L, LUA_GCSTOP); /* render.c turns it on once the model is built */
    lua_pushcfunction(L, setup);
    lua_pushlightuserdata(L, (void *)libs);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        lua_close(L);
        return NULL;
    }
    lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_STEP);
    mem->L = L;
    return L;
}
