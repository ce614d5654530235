/* lua_view.h: read-only views of Lua tables, how templates see the model (lua_view.c). */
#ifndef SG_LUA_VIEW_H
#define SG_LUA_VIEW_H

#include <lua.h>
#include <stdbool.h>

/* How many values sg_lua_push_view_parts pushes. */
enum { SG_VIEW_PARTS = 10 };

/* Pushes what every view's metatable holds (SG_VIEW_PARTS values), for
 * sg_lua_seal_with. */
void sg_lua_push_view_parts(lua_State *L);
/* Replaces the table on top, filled, with its view; parts: the stack slot of the first of
 * sg_lua_push_view_parts's values. The table may get a metatable of its own whose __index
 * fills it lazily: __index(t, key) gives the field it made, and __index(t, nil) makes the
 * rest; either removes that metatable once the table is whole. */
void sg_lua_seal_with(lua_State *L, int parts);
/* Replaces the table on top of L (whose tables are views already) by its view. */
bool sg_lua_seal(lua_State *L);
/* Whether the value at idx is such a view. */
bool sg_lua_is_frozen(lua_State *L, int idx);
/* Replaces next and rawset in L's globals by ones that know the views (next walks what a
 * view shows; rawset refuses a view). */
void sg_lua_open_readonly(lua_State *L);

#endif
