/* lua_view.c: read-only views (lua_view.h). A view is an empty table whose metatable reads
 * from the table behind it (__index), refuses writes (__newindex: the view stays empty, so
 * every write reaches it), and answers # and pairs for it; templates index, walk (pairs,
 * ipairs, next, #) and compare views like any Lua data, but cannot change what is behind
 * them. The table behind a view is never handed out. */
#include "lua_view.h"

#include <lauxlib.h>

/* The field names of a view's metatable. */
static const char *const mt_names[] = {"__index", "__newindex", "__len", "__pairs", "__metatable"};
enum { MT_INDEX, MT_NEWINDEX, MT_LEN, MT_PAIRS, MT_METATABLE, MT__COUNT };
_Static_assert(SG_VIEW_PARTS == 2 * MT__COUNT, "a view's parts: names, then values");

static int ro_newindex(lua_State *L) {
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    if (k) return luaL_error(L, "the model is read-only: cannot set field '%s'", k);
    return luaL_error(L, "the model is read-only: cannot set a %s key", luaL_typename(L, 2));
}

bool sg_lua_is_frozen(lua_State *L, int idx) {
    if (!lua_getmetatable(L, idx)) return false;
    lua_getfield(L, -1, "__newindex");
    bool ro = lua_tocfunction(L, -1) == ro_newindex;
    lua_pop(L, 2);
    return ro;
}

/* Pushes the table a proxy at idx reads from. */
static void push_real(lua_State *L, int idx) {
    lua_getmetatable(L, idx);
    lua_getfield(L, -1, "__index");
    lua_remove(L, -2);
}

/* Makes the table at idx whole where it is filled lazily (its own metatable's __index, called
 * with a nil key, does it). */
static void make_whole(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    if (!lua_getmetatable(L, idx)) return;
    lua_getfield(L, -1, "__index");
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    lua_call(L, 2, 0);
    lua_pop(L, 1);
}

static int ro_len(lua_State *L) {
    push_real(L, 1);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, -1));
    return 1;
}

/* pairs(view): next over the view itself (l_next reads through it), so neither the
 * iteration's state nor a global `next` a template replaced ever holds the table behind it. */
static int l_next(lua_State *L);
static int ro_pairs(lua_State *L) {
    lua_pushcfunction(L, l_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* next(t, k) and rawset(t, k, v) for templates: next walks what a proxy reads from; rawset
 * refuses a proxy (it would write into the proxy, which reads would then see). */
static int l_next(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    if (sg_lua_is_frozen(L, 1)) {
        push_real(L, 1);
        make_whole(L, -1);
        lua_replace(L, 1);
    }
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int l_rawset(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (sg_lua_is_frozen(L, 1)) return ro_newindex(L);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

void sg_lua_open_readonly(lua_State *L) {
    lua_pushcfunction(L, l_next);
    lua_setglobal(L, "next");
    lua_pushcfunction(L, l_rawset);
    lua_setglobal(L, "rawset");
}

/* The field names, then their values (nil for __index, which is each view's own table).
 * Rationale: pushed once per model and copied for each of its many views, they are not
 * looked up or interned again. */
void sg_lua_push_view_parts(lua_State *L) {
    for (int k = 0; k < MT__COUNT; k++) lua_pushstring(L, mt_names[k]);
    lua_pushnil(L);
    lua_pushcfunction(L, ro_newindex);
    lua_pushcfunction(L, ro_len);
    lua_pushcfunction(L, ro_pairs);
    lua_pushliteral(L, "read-only");
}

/* Rationale: most tables of the model are records (string keys only), whose # is 0 as the
 * empty view's is: their metatables go without __len, a smaller table made quicker. */
void sg_lua_seal_with(lua_State *L, int names) {
    int  t = lua_gettop(L);
    bool list = lua_rawlen(L, t) > 0;
    lua_createtable(L, 0, 0);                            /* the view */
    lua_createtable(L, 0, list ? MT__COUNT : MT__COUNT - 1); /* its metatable */
    for (int i = 0; i < MT__COUNT; i++) {
        if (i == MT_LEN && !list) continue;
        lua_pushvalue(L, names + i);
        lua_pushvalue(L, i == MT_INDEX ? t : names + MT__COUNT + i);
        lua_rawset(L, -3);
    }
    lua_setmetatable(L, -2);
    lua_replace(L, t);
}

bool sg_lua_seal(lua_State *L) {
    if (!lua_checkstack(L, 2 * MT__COUNT + 4)) return false;
    int t = lua_gettop(L);
    sg_lua_push_view_parts(L);
    lua_pushvalue(L, t);
    sg_lua_seal_with(L, t + 1);
    lua_replace(L, t);
    lua_settop(L, t);
    return true;
}

