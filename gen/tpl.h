/* tpl.h: the template engine's parts, shared by its files and by nothing else (the engine's
 * interface is codegen.h).
 *
 *     tpl_sources.c    finding templates: the built-ins and the user's folders
 *     tpl_translate.c  a template's text to a Lua chunk, line for line
 *     lua_state.c      a Lua state for templates: its memory, its libraries, import()
 *     lua_patterns.c   the string library's pattern functions under the time budget
 *     render.c         planning the renders, running them, collecting the outputs
 */
#ifndef SG_TPL_H
#define SG_TPL_H

#include "codegen.h"

#include <lua.h>

/* A Lua state's memory cap: a runaway template fails instead of taking the machine. */
enum { SG_TPL_MEMORY_LIMIT = 1u << 30 };

/* ---- sources (tpl_sources.c) ------------------------------------------------------------- */

/* The templates and helper modules a run knows, by name; the texts read from user folders are
 * owned here. */
typedef struct sg_tpl_sources {
    sg_tpl_file *items;
    uint32_t     n, cap;
    char       **owned;
    uint32_t     nowned, capowned;
} sg_tpl_sources;

/* The file named name ("ops.h.tpl", "lib/c.lua"), or NULL. */
sg_tpl_file *sg_tpl_find(const sg_tpl_sources *s, const char *name);
/* Adds f unless one of its name is there already (the first added wins); false when out of
 * memory. */
bool         sg_tpl_add(sg_tpl_sources *s, sg_tpl_file f);
/* Adds dir's *.tpl and dir/lib's *.lua, in name order; returns the number of errors (to d). */
int          sg_tpl_read_dir(sg_tpl_sources *s, const char *dir, sg_diag *d);
void         sg_tpl_sources_free(sg_tpl_sources *s);
bool         sg_tpl_ends_with(const char *s, const char *suffix);

/* ---- translation (tpl_translate.c) ------------------------------------------------------- */

/* Translates t into Lua (appended to lua); header gets the `%!` line's text (or stays empty).
 * Each template line is one line of Lua, so Lua's messages name template lines. Errors go to d
 * as label:line; false then, or when out of memory. */
bool sg_tpl_translate(const sg_tpl_file *t, sg_buf *lua, sg_buf *header, sg_diag *d);

/* ---- the Lua state (lua_state.c) --------------------------------------------------------- */

/* The default of sg_codegen_opts.budget: Lua instructions one protected call may run. */
#define SG_TPL_BUDGET 1000000000ull

/* A state's limits. Memory: what it holds, against its cap; blocks from hook where one is
 * given (tests fail allocations on purpose), from realloc and free otherwise. Time: what is
 * left of the budget of the protected call running now (sg_lua_call), in Lua instructions; an
 * allocation costs one per 64 bytes, so a loop of big string operations is bounded too. */
typedef struct sg_lua_mem {
    size_t      used, cap;
    sg_alloc_fn hook;
    void       *hook_ud;
    uint64_t    budget;    /* of each call */
    int64_t     left;
    lua_State  *L;         /* the state this counts for, once made (its hook stops a call) */
    void       *render;    /* what the render running now writes into (render.c), or NULL */
    uint64_t    renders;   /* how many renders began: each one's _w knows its number */
} sg_lua_mem;

/* A state for templates, its memory counted in mem; import() looks for lib/NAME.lua in libs.
 * mem and libs must outlive it. NULL when out of memory. */
lua_State *sg_lua_state_new(sg_lua_mem *mem, const sg_tpl_sources *libs);
/* Puts string.find, match, gmatch and gsub under the budget (lua_patterns.c). */
void       sg_lua_guard_patterns(lua_State *L);
/* lua_pcall of the function below nargs arguments, under the state's budget, with a message
 * handler that puts where the error was first ("FILE:LINE: message") and adds the Lua
 * functions it was called from ("  called from FILE:LINE", innermost first). */
int        sg_lua_call(lua_State *L, int nargs, int nresults);

#endif
