/* lua_model.h: the model as Lua values (docs/templates.md). */
#ifndef SG_LUA_MODEL_H
#define SG_LUA_MODEL_H

#include "model.h"

#include <lua.h>

/* Pushes `model` (ops, groups, tags, files) onto L; false when out of memory. */
bool        sg_lua_push_model(lua_State *L, const sg_model *m);
/* The C type family of a schema type ("tensor", "opt_int", "int_list", ...: docs/types.md). */
const char *sg_type_family(const sg_type *t);

#endif
