/* lua_model.h: the model as Lua values (docs/templates.md). */
#ifndef SG_LUA_MODEL_H
#define SG_LUA_MODEL_H

#include "model.h"

#include <lua.h>

/* Pushes `model` (ops, groups, tags, files) onto L, every table of it a read-only view:
 * writing into one is an error at the line that wrote; reads, pairs, ipairs, next, # and
 * comparisons work as on plain tables. false (nothing pushed) when out of memory outside Lua;
 * Lua's own errors are raised as by any API call. shards (NULL: none) gives each op's
 * op.shard, in model order. */
bool        sg_lua_push_model(lua_State *L, const sg_model *m, const uint32_t *shards);
/* Replaces the table on top of L (whose tables are views already) by its view. */
bool        sg_lua_seal(lua_State *L);
/* Whether the value at idx is such a view. */
bool        sg_lua_is_frozen(lua_State *L, int idx);
/* Replaces next and rawset in L's globals by ones that know the views (next walks what a
 * view shows; rawset refuses a view). */
void        sg_lua_open_readonly(lua_State *L);
/* The C type family of a schema type ("tensor", "opt_int", "int_list", ...: docs/types.md). */
const char *sg_type_family(const sg_type *t);

#endif
