/* lua_model.h: the model as Lua values (docs/templates.md). */
#ifndef SG_LUA_MODEL_H
#define SG_LUA_MODEL_H

#include "lua_view.h"
#include "model.h"

#include <lua.h>

/* Pushes `model` (ops, groups, tags, files) onto L, every table of it a read-only view:
 * writing into one is an error at the line that wrote; reads, pairs, ipairs, next, # and
 * comparisons work as on plain tables. false (nothing pushed) when out of memory outside Lua;
 * Lua's own errors are raised as by any API call. shards (NULL: none) gives each op's
 * op.shard, in model order. m must outlive L's use of the model: op.dispatch is made from it
 * when a template first reads it. */
bool        sg_lua_push_model(lua_State *L, const sg_model *m, const uint32_t *shards);
struct sg_kernel_set;
/* Pushes kernel_keys, the keys --kernel-keys selects (a list of names), and kernels, the
 * kernels they register: a list of {name, op, registrations = {{op, key, constant}, ...}},
 * each op the view of model.ops (model: the model's stack index). lua_kernels.c; Lua errors
 * are raised (call them in a protected call). */
void        sg_lua_push_kernel_keys(lua_State *L, const struct sg_kernel_set *ks);
void        sg_lua_push_kernels(lua_State *L, const struct sg_kernel_set *ks, int model);
/* The C type family of a schema type ("tensor", "opt_int", "int_list", ...: docs/types.md). */
const char *sg_type_family(const sg_type *t);

#endif
