/* lua_kernels.c: the kernels --kernel-keys selects (kernels.h) as templates see them:
 * kernel_keys and kernels (docs/templates.md), read-only views like the model. */
#include "kernels.h"
#include "lua_model.h"

#include <lauxlib.h>

void sg_lua_push_kernel_keys(lua_State *L, const sg_kernel_set *ks) {
    lua_createtable(L, (int)ks->nkeys, 0);
    for (uint32_t i = 0; i < ks->nkeys; i++) {
        lua_pushstring(L, ks->keys[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    if (!sg_lua_seal(L)) luaL_error(L, "out of memory");
}

/* model.ops[i + 1] of the model view at index model. */
static void push_op(lua_State *L, int model, uint32_t i) {
    lua_getfield(L, model, "ops");
    lua_geti(L, -1, (lua_Integer)i + 1);
    lua_remove(L, -2);
}

void sg_lua_push_kernels(lua_State *L, const sg_kernel_set *ks, int model) {
    model = lua_absindex(L, model);
    luaL_checkstack(L, 8, "kernels");
    lua_createtable(L, (int)ks->n, 0);
    for (uint32_t k = 0; k < ks->n; k++) {
        const sg_kernel *kn = &ks->items[k];
        lua_createtable(L, 0, 3);
        lua_pushstring(L, kn->name);
        lua_setfield(L, -2, "name");
        push_op(L, model, kn->type_op);
        lua_setfield(L, -2, "op");
        lua_createtable(L, (int)kn->nregs, 0);
        for (uint32_t r = 0; r < kn->nregs; r++) {
            lua_createtable(L, 0, 3);
            push_op(L, model, kn->regs[r].op);
            lua_setfield(L, -2, "op");
            lua_pushstring(L, kn->regs[r].key);
            lua_setfield(L, -2, "key");
            lua_pushstring(L, kn->regs[r].constant);
            lua_setfield(L, -2, "constant");
            if (!sg_lua_seal(L)) luaL_error(L, "out of memory");
            lua_rawseti(L, -2, (lua_Integer)r + 1);
        }
        if (!sg_lua_seal(L)) luaL_error(L, "out of memory");
        lua_setfield(L, -2, "registrations");
        if (!sg_lua_seal(L)) luaL_error(L, "out of memory");
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    if (!sg_lua_seal(L)) luaL_error(L, "out of memory");
}
