/* render.c: runs the Lua templates over the model: plans each template's renders (one, or
 * one per shard), runs them in Lua states holding the model, and collects the outputs in
 * template order.
 *
 * A template renders once, or once per shard: each such render is a job. Jobs are independent
 * (each gets an environment of its own over the shared one), so for a big model on a machine
 * with two CPUs two threads take them in turn, each with Lua states of its own holding the
 * model (one for built-in templates, one for the user's where there are some); the outputs
 * and the messages are then put in template order, so the result is the same bytes either
 * way. The threads are made and joined here, and take jobs with an atomic counter: no thread
 * ever waits on another but at the join. */
#define _DEFAULT_SOURCE
#include "derive.h"
#include "lua_model.h"
#include "tpl.h"

#include <lauxlib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sg_outputs_free(sg_outputs *o) {
    for (uint32_t i = 0; i < o->n; i++) {
        free(o->items[i].name);
        sg_buf_free(&o->items[i].text);
    }
    free(o->items);
    for (uint32_t i = 0; i < o->stale.nmarks; i++) free(o->stale.marks[i]);
    free(o->stale.marks);
    free(o->stale.lib);
    memset(o, 0, sizeof *o);
}

/* Below this many ops a second state's model costs more than it saves. */
enum { TWO_STATES_MIN = 256 };
/* Rationale: the model is all live and renders make little garbage (the output is written
 * outside Lua's objects), yet a collector's cycle marks the whole model. So the collector is
 * off while the model is built; its first cycle then waits until ALLOWANCE more bytes were
 * allocated, and later ones until memory reaches PAUSE% of what the last cycle left (Lua's
 * largest setting). The built-in templates never get there; a template that makes much
 * garbage still has it collected, well before the state's cap. */
enum { PAUSE = 1000 };
#define ALLOWANCE (SG_TPL_MEMORY_LIMIT / 4)

/* A Lua state with the model, and its memory. */
typedef struct renderer {
    lua_State *L;
    sg_lua_mem mem;
} renderer;

/* A template ready to render. */
typedef struct plan_tpl {
    const sg_tpl_file *t;
    char               chunk[600]; /* "@label", Lua's name for it */
    sg_buf             lua;        /* its translation */
    sg_buf             banner;
    char              *pattern;    /* output = "..."; NULL where output = false */
    bool               per_shard;
    uint32_t           nshards;
    int                group;      /* BUILTIN or USER: the states it runs in */
    sg_diag            d;          /* what planning found wrong (then it has no jobs) */
} plan_tpl;

/* Built-in templates and the user's (--templates) run in states of their own, so that what a
 * user's template does to its state (to string.format, or to a lib/ module's table) cannot
 * change what a built-in one writes. */
enum { BUILTIN, USER, GROUPS };

/* One render: template tpl, shard `shard` (0 for a template rendered once). */
typedef struct job {
    uint32_t  tpl, shard;
    sg_output out;
    char     *error; /* the message where it failed */
} job;

typedef struct run {
    const sg_model        *m;
    const sg_codegen_opts *o;
    uint32_t               nshards;  /* of every per-shard template */
    uint32_t              *shard_of; /* each op's shard (op_shard), in model order */
    sg_tpl_sources         src;      /* the user's files first, then the built-ins they leave */
    uint32_t               nuser;    /* how many of src are the user's */
    sg_tpl_sources         builtins; /* every built-in */
    const sg_tpl_sources  *libs[GROUPS]; /* where import() looks, by group */
    plan_tpl              *tpls;
    uint32_t               ntpls;
    job                   *jobs;  /* in template, then shard order: the outputs' order */
    uint32_t              *order; /* the order jobs are taken in */
    uint32_t               njobs;
    _Atomic uint32_t       next;  /* how many of order[] were taken */
} run;

static void mem_init(const run *r, sg_lua_mem *mem) {
    *mem = (sg_lua_mem){.cap = SG_TPL_MEMORY_LIMIT, .hook = r->o->alloc, .hook_ud = r->o->alloc_ud,
                        .budget = r->o->budget ? r->o->budget : SG_TPL_BUDGET};
}

/* The message of the error rc on top of L's stack (popped), malloc'ed (NULL: out of
 * memory): as it is where it is located (sg_lua_call's handler and Lua's syntax errors
 * locate theirs), after "label: " otherwise. */
static char *error_text(lua_State *L, int rc, const char *label) {
    const char *msg = lua_tostring(L, -1);
    sg_buf      b;
    sg_buf_init(&b);
    if (rc == LUA_ERRMEM)
        sg_buf_printf(&b, "%s: not enough memory (a Lua state has at most %d MiB)", label,
                      SG_TPL_MEMORY_LIMIT >> 20);
    else if (!msg)
        sg_buf_printf(&b, "%s: (an error object that is not a string)", label);
    else if (rc == LUA_ERRRUN || strncmp(msg, label, strlen(label)) == 0)
        sg_buf_puts(&b, msg);
    else
        sg_buf_printf(&b, "%s: %s", label, msg);
    lua_pop(L, 1);
    if (!b.oom) return b.data;
    sg_buf_free(&b);
    return NULL;
}

/* The Lua error on top of the stack (popped), as the template's planning problem. */
static void plan_fail(lua_State *L, int rc, plan_tpl *pt) {
    char *msg = error_text(L, rc, pt->t->label);
    sg_diag_plain(&pt->d, SG_ERROR, "%s", msg ? msg : "out of memory");
    free(msg);
}

/* The output name: pattern with {lib} and {shard} replaced (shard < 0: {shard} kept). */
static void out_name(sg_buf *b, const char *pattern, const char *lib, int64_t shard) {
    for (const char *p = pattern; *p;) {
        if (strncmp(p, "{lib}", 5) == 0) {
            sg_buf_puts(b, lib);
            p += 5;
        } else if (shard >= 0 && strncmp(p, "{shard}", 7) == 0) {
            sg_buf_printf(b, "%u", (unsigned)shard);
            p += 7;
        } else {
            sg_buf_putc(b, *p++);
        }
    }
}

/* Output names are plain file names: no folders, no dot files. */
static bool safe_name(const char *name) {
    return *name && name[0] != '.' && !strchr(name, '/');
}

/* The end of a template's banner, which names it: how sg_outputs_write knows its files. */
static void banner_mark(sg_buf *b, const char *label) {
    sg_buf_printf(b, " with %s. Do not edit.", label);
}

/* Runs a template's `%!` line (cfg: "return {...}"), in a protected call: every Lua API call
 * that allocates may fail. */
typedef struct header_call {
    const sg_buf *cfg;
    plan_tpl     *pt;
    bool          named; /* output = gave a string (pt->pattern, NULL where out of memory) */
    bool          off;   /* output = false: nothing to write this run */
} header_call;

static int protected_header(lua_State *L) {
    header_call *c = lua_touserdata(L, 1);
    plan_tpl    *pt = c->pt;
    if (luaL_loadbufferx(L, c->cfg->data, c->cfg->len, pt->chunk, "t") != LUA_OK)
        return lua_error(L);
    lua_call(L, 0, 1);
    lua_getfield(L, -1, "output");
    const char *pattern = lua_tostring(L, -1);
    c->named = pattern != NULL;
    c->off = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
    pt->pattern = pattern ? strdup(pattern) : NULL;
    lua_getfield(L, -2, "per_shard");
    pt->per_shard = lua_toboolean(L, -1);
    return 0;
}

/* Translates t and reads its `%!` line (in L, a state with no model yet): how many renders it
 * makes. Problems go to pt->d. */
static void plan_one(run *r, lua_State *L, plan_tpl *pt, const sg_tpl_file *t) {
    pt->t = t;
    sg_diag_init(&pt->d);
    sg_buf_init(&pt->lua);
    sg_buf_init(&pt->banner);
    snprintf(pt->chunk, sizeof pt->chunk, "@%s", t->label);
    sg_buf header, cfg;
    sg_buf_init(&header);
    sg_buf_init(&cfg);
    if (!sg_tpl_translate(t, &pt->lua, &header, &pt->d)) goto done;
    sg_buf_puts(&cfg, "return {");
    sg_buf_putn(&cfg, header.data ? header.data : "", header.len);
    sg_buf_puts(&cfg, "}");
    header_call c = {&cfg, pt, false, false};
    lua_pushcfunction(L, protected_header);
    lua_pushlightuserdata(L, &c);
    int rc = sg_lua_call(L, 1, 0);
    if (rc != LUA_OK) {
        plan_fail(L, rc, pt);
        goto done;
    }
    bool pattern = c.named;
    if (c.off) {
        pt->nshards = 0; /* no render; its banner still marks what an earlier run wrote */
    } else if (!pattern) {
        sg_diag_plain(&pt->d, SG_ERROR, "%s:1: the first line must name the output: "
                                        "%%! output = \"{lib}.h\"",
                      t->label);
        goto done;
    } else if (!pt->pattern) {
        sg_diag_plain(&pt->d, SG_ERROR, "out of memory");
        goto done;
    } else {
        pt->nshards = pt->per_shard ? r->nshards : 1;
    }
    /* banner: the inputs and this template, no time and no absolute path of ours */
    sg_buf_printf(&pt->banner, SG_BANNER_HEAD "%s from ", SG_VERSION);
    for (uint32_t i = 0; i < r->o->ninputs; i++)
        sg_buf_printf(&pt->banner, "%s%s", i ? ", " : "", r->o->inputs[i]);
    banner_mark(&pt->banner, t->label);
    if (pt->banner.oom || pt->lua.oom) sg_diag_plain(&pt->d, SG_ERROR, "out of memory");
done:
    sg_buf_free(&header);
    sg_buf_free(&cfg);
}

/* An op's shard: a hash of its group's key, so the ops of a group share one and adding an op
 * moves no other. The key is "ns::base" of the op a structured delegate or an autogen variant
 * comes from (whose generated kernel calls it: `foo_functional` from `foo`), else its own. */
static uint32_t op_shard(const sg_op *op, uint32_t nshards) {
    for (int i = 0; i < 4 && (op->structured_out || op->autogen_from); i++) /* bounded: no cycle */
        op = op->structured_out ? op->structured_out : op->autogen_from;
    /* FNV-1a: the same on every platform and in every run */
    uint32_t    h = 2166136261u;
    const char *parts[3] = {op->ns ? op->ns : "", "::", op->schema.base ? op->schema.base : ""};
    for (int i = 0; i < 3; i++)
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
            h = (h ^ *p) * 16777619u;
    return nshards > 1 ? h % nshards : 0;
}

/* The number of shards (--shards, else enough of --shard-size for the ops) and each op's
 * shard. false when out of memory. */
static bool plan_shards(run *r) {
    uint32_t nops = r->m->nops, size = r->o->shard_size;
    r->nshards = r->o->shards ? r->o->shards : size ? (nops + size - 1) / size : 1;
    if (r->nshards == 0) r->nshards = 1;
    if (!(r->shard_of = malloc((nops ? nops : 1) * sizeof *r->shard_of))) return false;
    for (uint32_t i = 0; i < nops; i++) r->shard_of[i] = op_shard(r->m->ops[i], r->nshards);
    return true;
}

/* What a `%!` line sees beside Lua's globals: kernel_keys (nil without --kernel-keys), so
 * that `output = kernel_keys ~= nil and "{lib}_kernels.h"` writes the file only with it. */
static int protected_header_globals(lua_State *L) {
    const run *r = lua_touserdata(L, 1);
    sg_lua_push_kernel_keys(L, r->o->kernels);
    lua_setglobal(L, "kernel_keys");
    return 0;
}

static bool header_globals(const run *r, lua_State *L) {
    if (!r->o->kernels) return true;
    lua_pushcfunction(L, protected_header_globals);
    lua_pushlightuserdata(L, (void *)r);
    if (sg_lua_call(L, 1, 0) == LUA_OK) return true;
    lua_pop(L, 1);
    return false;
}

/* Plans every template (top-level *.tpl, name order) and lists their jobs. false when out of
 * memory. */
static bool plan(run *r) {
    sg_lua_mem mem[GROUPS];
    lua_State *Ls[GROUPS] = {NULL, NULL};
    bool       ok = (r->tpls = calloc(r->src.n ? r->src.n : 1, sizeof *r->tpls)) != NULL;
    uint32_t   njobs = 0;
    for (uint32_t i = 0; ok && i < r->src.n; i++) {
        const sg_tpl_file *t = &r->src.items[i];
        if (!sg_tpl_ends_with(t->name, ".tpl") || strchr(t->name, '/')) continue;
        int g = i < r->nuser ? USER : BUILTIN; /* the %! lines of a group are read in its state */
        if (!Ls[g]) {
            mem_init(r, &mem[g]);
            if (!(Ls[g] = sg_lua_state_new(&mem[g], r->libs[g])) || !header_globals(r, Ls[g])) {
                ok = false;
                break;
            }
        }
        plan_tpl *pt = &r->tpls[r->ntpls++];
        plan_one(r, Ls[g], pt, t);
        pt->group = g;
        if (!pt->d.nerrors) njobs += pt->nshards;
    }
    for (int g = 0; g < GROUPS; g++)
        if (Ls[g]) lua_close(Ls[g]);
    if (!ok) return false;
    r->jobs = calloc(njobs ? njobs : 1, sizeof *r->jobs);
    r->order = calloc(njobs ? njobs : 1, sizeof *r->order);
    if (!r->jobs || !r->order) return false;
    for (uint32_t i = 0; i < r->ntpls; i++)
        for (uint32_t k = 0; !r->tpls[i].d.nerrors && k < r->tpls[i].nshards; k++)
            r->jobs[r->njobs++] = (job){.tpl = i, .shard = k};
    /* Rationale: whole-model renders are the long ones: taken first, shards fill in after */
    uint32_t n = 0;
    for (int sharded = 0; sharded < 2; sharded++)
        for (uint32_t j = 0; j < r->njobs; j++)
            if (r->tpls[r->jobs[j].tpl].per_shard == sharded) r->order[n++] = j;
    return true;
}

static void plans_free(run *r) {
    for (uint32_t i = 0; i < r->ntpls; i++) {
        sg_buf_free(&r->tpls[i].lua);
        sg_buf_free(&r->tpls[i].banner);
        free(r->tpls[i].pattern);
        sg_diag_free(&r->tpls[i].d);
    }
    free(r->tpls);
    for (uint32_t j = 0; j < r->njobs; j++) {
        free(r->jobs[j].out.name);
        sg_buf_free(&r->jobs[j].out.text);
        free(r->jobs[j].error);
    }
    free(r->jobs);
    free(r->order);
}

/* The Lua error on top of the stack (popped) as the job's message. */
static void job_fail(lua_State *L, int rc, const run *r, job *jb) {
    jb->error = error_text(L, rc, r->tpls[jb->tpl].t->label);
    if (!jb->error) jb->error = strdup("out of memory");
}

/* Where a render's text goes: its output's buffer, whose bytes count against the state's
 * cap. */
typedef struct sink {
    sg_buf      text;
    sg_lua_mem *mem;
    size_t      counted; /* of mem->used */
} sink;

/* The error for piece i of a _w call that is neither a string nor a number, at its line. */
static int write_error(lua_State *L, int i, int n) {
    lua_Debug   ar;
    size_t      nlines;
    const char *lines = lua_tolstring(L, n, &nlines);
    if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "Sl", &ar))
        return luaL_error(L, "cannot write a %s value", luaL_typename(L, i));
    int line = ar.currentline + (lines && (size_t)i <= nlines ? (unsigned char)lines[i - 1] : 0);
    lua_pushfstring(L, "%s:%d: cannot write a %s value: $(...) must give a string or a number",
                    ar.short_src, line, luaL_typename(L, i));
    return lua_error(L);
}

/* v in decimal, as LUA_INTEGER_FMT writes it, ending at end (the text's start returned).
 * Rationale: snprintf's format parsing cost more than the rest of _w's work on a number. */
static char *int_text(char *end, lua_Integer v) {
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--end = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) *--end = '-';
    return end;
}

/* _w(piece, ..., lines): appends the pieces (strings, or numbers as Lua writes them) to the
 * render's output; see tpl_translate.c for lines. */
static int l_write(lua_State *L) {
    sg_lua_mem *mem;
    lua_getallocf(L, (void **)&mem);
    /* a template may keep _w where a later render finds it (a module's table, a finalizer):
     * that _w must not write into a render that is over */
    if ((uint64_t)lua_tointeger(L, lua_upvalueindex(1)) != mem->renders || !mem->render)
        return luaL_error(L, "_w of a render that is over");
    sink *k = mem->render;
    int   n = lua_gettop(L);
    for (int i = 1; i < n; i++) {
        size_t      len;
        const char *s;
        char        num[32];
        /* Rationale: an integer written as Lua writes it (luaconf.h's LUA_INTEGER_FMT), with
         * no Lua string made of it as lua_tolstring makes; templates write many numbers */
        if (lua_isinteger(L, i)) {
            s = int_text(num + sizeof num, lua_tointeger(L, i));
            len = (size_t)(num + sizeof num - s);
        } else if (!(s = lua_tolstring(L, i, &len))) {
            return write_error(L, i, n);
        }
        size_t cap = k->text.cap;
        if (len > k->mem->cap - k->mem->used) k->text.oom = true;
        else sg_buf_putn(&k->text, s, len);
        if (k->text.oom)
            return luaL_error(L, "not enough memory for the output (a Lua state has at most "
                                 "%d MiB)", SG_TPL_MEMORY_LIMIT >> 20);
        k->mem->used += k->text.cap - cap;
        k->counted += k->text.cap - cap;
    }
    return 0;
}

/* What a render needs in its protected call. */
typedef struct job_call {
    const run *r;
    renderer  *rd;
    job       *jb;
    sg_buf    *name;
} job_call;

/* A render, in a protected call (every Lua API call that allocates may fail): the template's
 * function (loaded once per state, sg.fns[tpl]) in an environment of its own. */
static int protected_job(lua_State *L) {
    const job_call *c = lua_touserdata(L, 1);
    const run      *r = c->r;
    const plan_tpl *pt = &r->tpls[c->jb->tpl];
    lua_getfield(L, LUA_REGISTRYINDEX, "sg.fns");
    if (lua_rawgeti(L, -1, (lua_Integer)c->jb->tpl + 1) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        if (luaL_loadbufferx(L, pt->lua.data, pt->lua.len, pt->chunk, "t") != LUA_OK)
            return lua_error(L);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, (lua_Integer)c->jb->tpl + 1);
    }
    /* the render's environment: ops (this shard's or all), shard, nshards, banner, output,
     * over the shared one (model, lib, the globals) */
    lua_getfield(L, LUA_REGISTRYINDEX, "sg.env");
    int env = lua_gettop(L);
    lua_createtable(L, 0, 6);
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, env);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "locked"); /* the shared environment is not the render's to change */
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    /* a shard's ops: those whose shard it is, in model order */
    uint32_t nops = r->m->nops, n = 0;
    lua_getfield(L, env, "model");
    lua_getfield(L, -1, "ops");
    lua_createtable(L, pt->per_shard ? (int)(nops / r->nshards) : (int)nops, 0);
    for (uint32_t i = 0; i < nops; i++) {
        if (pt->per_shard && r->shard_of[i] != c->jb->shard) continue;
        lua_geti(L, -2, (lua_Integer)i + 1);
        lua_rawseti(L, -2, (lua_Integer)++n);
    }
    if (!sg_lua_seal(L)) return luaL_error(L, "out of memory");
    lua_setfield(L, -4, "ops");
    lua_pop(L, 2);
    lua_pushinteger(L, c->jb->shard);
    lua_setfield(L, -2, "shard");
    lua_pushinteger(L, r->nshards);
    lua_setfield(L, -2, "nshards");
    lua_pushlstring(L, pt->banner.data, pt->banner.len);
    lua_setfield(L, -2, "banner");
    lua_pushlstring(L, c->name->data ? c->name->data : "", c->name->len);
    lua_setfield(L, -2, "output");
    lua_pushinteger(L, (lua_Integer)c->rd->mem.renders);
    lua_pushcclosure(L, l_write, 1);
    lua_setfield(L, -2, "_w");
    lua_remove(L, env);
    lua_setupvalue(L, -2, 1); /* _ENV */
    lua_call(L, 0, 0);
    return 0;
}

/* Renders one job in rd's state. */
static void run_job(const run *r, renderer *rd, job *jb) {
    lua_State      *L = rd->L;
    const plan_tpl *pt = &r->tpls[jb->tpl];
    int             top = lua_gettop(L);
    sink            k = {.mem = &rd->mem};
    sg_buf          name;
    sg_buf_init(&k.text);
    sg_buf_init(&name);
    out_name(&name, pt->pattern, r->o->lib, jb->shard);
    job_call c = {r, rd, jb, &name};
    rd->mem.renders++;
    rd->mem.render = &k;
    lua_pushcfunction(L, protected_job);
    lua_pushlightuserdata(L, &c);
    int rc = sg_lua_call(L, 1, 0);
    rd->mem.render = NULL;
    if (rc != LUA_OK) {
        job_fail(L, rc, r, jb);
    } else if (name.oom || !safe_name(name.data ? name.data : "")) {
        sg_buf b;
        sg_buf_init(&b);
        sg_buf_printf(&b, "%s: the output name '%s' leaves the output folder", pt->t->label,
                      name.data ? name.data : "");
        jb->error = b.oom ? strdup("out of memory") : b.data;
        if (b.oom) sg_buf_free(&b);
    } else {
        jb->out = (sg_output){.name = name.data, .text = k.text};
        sg_buf_init(&k.text);
        sg_buf_init(&name);
    }
    sg_buf_free(&name);
    sg_buf_free(&k.text);
    rd->mem.used -= k.counted; /* what the output holds is the job's now, or gone */
    lua_settop(L, top);
}

/* Makes the shared environment table: the model, lib, and the globals through its metatable;
 * left in the registry ("sg.env") for renders and import(). */
static int protected_env(lua_State *L) {
    const run *r = lua_touserdata(L, 1);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.fns");
    lua_newtable(L);
    lua_newtable(L);
    lua_pushglobaltable(L);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    sg_lua_open_readonly(L);
    if (!sg_lua_push_model(L, r->m, r->shard_of)) return luaL_error(L, "out of memory");
    lua_setfield(L, -2, "model");
    lua_pushstring(L, r->o->lib);
    lua_setfield(L, -2, "lib");
    if (r->o->kernels) {
        sg_lua_push_kernel_keys(L, r->o->kernels);
        lua_setfield(L, -2, "kernel_keys");
        lua_getfield(L, -1, "model");
        sg_lua_push_kernels(L, r->o->kernels, -1);
        lua_setfield(L, -3, "kernels");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "sg.env");
    return 1;
}

/* Makes rd's state with the model in it; false with *error set (NULL: out of memory) where
 * it failed. */
static bool renderer_open(const run *r, int group, renderer *rd, char **error) {
    mem_init(r, &rd->mem);
    lua_State *L = rd->L = sg_lua_state_new(&rd->mem, r->libs[group]);
    if (!L) return false;
    lua_pushcfunction(L, protected_env);
    lua_pushlightuserdata(L, (void *)r);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        sg_buf b;
        sg_buf_init(&b);
        sg_buf_printf(&b, "building the model for templates: %s", lua_tostring(L, -1));
        *error = b.oom ? NULL : b.data;
        return false;
    }
    lua_pop(L, 1); /* the environment, kept in the registry */
    lua_gc(L, LUA_GCINC, PAUSE, 0, 0);
    lua_gc(L, LUA_GCRESTART);
    /* a step of minus ALLOWANCE: the collector's debt (0 after a restart, so that its cycle
     * would begin at the next allocation) starts ALLOWANCE below zero */
    lua_gc(L, LUA_GCSTEP, -(int)(ALLOWANCE / 1024));
    return true;
}

/* One thread's part: jobs until none are left, each in this thread's state of its group
 * (made, with the model, when its first job comes), then the states are closed. */
static void *render_side(void *p) {
    run     *r = p;
    renderer rd[GROUPS] = {0};
    bool     failed[GROUPS] = {false};
    for (uint32_t i; (i = atomic_fetch_add(&r->next, 1)) < r->njobs;) {
        job *jb = &r->jobs[r->order[i]];
        int  g = r->tpls[jb->tpl].group;
        if (!rd[g].L && !failed[g] && !renderer_open(r, g, &rd[g], &jb->error)) {
            failed[g] = true;
            if (!jb->error) jb->error = strdup("out of memory starting Lua");
            continue;
        }
        if (failed[g]) jb->error = strdup("out of memory starting Lua");
        else run_job(r, &rd[g], jb);
    }
    for (int g = 0; g < GROUPS; g++)
        if (rd[g].L) lua_close(rd[g].L);
    return NULL;
}

static bool two_states(const run *r) {
    if (r->o->threads == 1 || r->njobs < 2) return false;
    if (r->o->threads >= 2) return true;
    return r->m->nops >= TWO_STATES_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

static int by_output(const void *a, const void *b) {
    return strcmp(((const job *)a)->out.name, ((const job *)b)->out.name);
}

/* Two renders that write one file: an error naming both templates (a user's template that
 * replaces a built-in is named like it, and the built-in is not rendered). */
static int check_names(run *r, sg_diag *d) {
    job *sorted = malloc((r->njobs ? r->njobs : 1) * sizeof *sorted);
    if (!sorted) {
        sg_diag_plain(d, SG_ERROR, "out of memory");
        return 1;
    }
    memcpy(sorted, r->jobs, r->njobs * sizeof *sorted);
    qsort(sorted, r->njobs, sizeof *sorted, by_output);
    int errors = 0;
    for (uint32_t j = 1; j < r->njobs; j++) {
        const job *a = &sorted[j - 1], *b = &sorted[j];
        if (strcmp(a->out.name, b->out.name) != 0) continue;
        if (a->tpl > b->tpl) {
            const job *t = a;
            a = b;
            b = t;
        }
        if (a->tpl == b->tpl)
            sg_diag_plain(d, SG_ERROR, "%s: two of its shards write '%s'",
                          r->tpls[a->tpl].t->label, a->out.name);
        else
            sg_diag_plain(d, SG_ERROR, "%s and %s both write '%s'", r->tpls[a->tpl].t->label,
                          r->tpls[b->tpl].t->label, a->out.name);
        errors++;
    }
    free(sorted);
    return errors;
}

/* Moves the outputs into out, in template and shard order, or reports what failed in that
 * order (the first failed render of a template, as a serial run would stop there). */
static int collect(run *r, sg_outputs *out, sg_diag *d) {
    int errors = 0;
    for (uint32_t i = 0, j = 0; i < r->ntpls; i++) {
        plan_tpl *pt = &r->tpls[i];
        if (pt->d.nerrors) {
            sg_buf_putn(&d->out, pt->d.out.data ? pt->d.out.data : "", pt->d.out.len);
            d->nerrors += pt->d.nerrors;
            errors += (int)pt->d.nerrors;
            continue;
        }
        bool failed = false;
        for (uint32_t k = 0; k < pt->nshards; k++, j++) {
            const job *jb = &r->jobs[j];
            if (failed || (!jb->error && jb->out.name)) continue;
            /* no message and no output: its message could not be made */
            sg_diag_plain(d, SG_ERROR, "%s", jb->error ? jb->error : "out of memory");
            errors++;
            failed = true;
        }
    }
    if (errors) return errors;
    if ((errors = check_names(r, d))) return errors;
    out->items = calloc(r->njobs ? r->njobs : 1, sizeof *out->items);
    if (!out->items) goto oom;
    out->cap = r->njobs;
    for (uint32_t j = 0; j < r->njobs; j++) {
        out->items[out->n++] = r->jobs[j].out;
        memset(&r->jobs[j].out, 0, sizeof r->jobs[j].out);
    }
    /* what an earlier run of these templates left, and this run did not write, is stale */
    sg_stale *st = &out->stale;
    /* built-in templates that are gone: their files are stale too */
    static const char *const retired[] = {"templates/composite.c.tpl"};
    size_t nretired = sizeof retired / sizeof retired[0];
    if (!(st->lib = strdup(r->o->lib)) ||
        !(st->marks = calloc(r->ntpls + nretired + 1, sizeof *st->marks)))
        goto oom;
    for (size_t i = 0; i < nretired; i++) {
        sg_buf mark;
        sg_buf_init(&mark);
        banner_mark(&mark, retired[i]);
        if (mark.oom) goto oom;
        st->marks[st->nmarks++] = mark.data;
    }
    for (uint32_t i = 0; i < r->ntpls; i++) {
        sg_buf mark;
        sg_buf_init(&mark);
        banner_mark(&mark, r->tpls[i].t->label);
        if (mark.oom) goto oom;
        st->marks[st->nmarks++] = mark.data;
    }
    return 0;
oom:
    sg_diag_plain(d, SG_ERROR, "out of memory");
    return 1;
}

int sg_codegen(const sg_model *m, const sg_codegen_opts *o, sg_outputs *out, sg_diag *d) {
    run r = {.m = m, .o = o, .libs = {&r.builtins, &r.src}};
    atomic_init(&r.next, 0);
    int errors = sg_derive_check_lib(m, o->lib, d);
    if (errors) goto done;
    for (uint32_t i = 0; i < o->ntemplate_dirs; i++)
        errors += sg_tpl_read_dir(&r.src, o->template_dirs[i], d);
    r.nuser = r.src.n;
    for (size_t i = 0; i < sg_builtin_ntemplates; i++) {
        const sg_tpl_file *t = &sg_builtin_templates[i];
        /* user_only: the built-in modules stay, for import (plan renders src's *.tpl) */
        bool render = !o->user_only || !sg_tpl_ends_with(t->name, ".tpl");
        if ((render && !sg_tpl_add(&r.src, *t)) || !sg_tpl_add(&r.builtins, *t)) errors++;
    }
    if (errors) goto done;
    if (!plan_shards(&r) || !plan(&r)) {
        sg_diag_plain(d, SG_ERROR, "out of memory");
        errors = 1;
        goto done;
    }
    /* a second thread makes and fills states of its own while this one does */
    pthread_t thread;
    bool      two = two_states(&r) && pthread_create(&thread, NULL, render_side, &r) == 0;
    render_side(&r);
    if (two) pthread_join(thread, NULL);
    errors = collect(&r, out, d);
done:
    plans_free(&r);
    free(r.shard_of);
    sg_tpl_sources_free(&r.src);
    sg_tpl_sources_free(&r.builtins);
    if (errors) sg_outputs_free(out);
    return errors;
}
