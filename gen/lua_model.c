/* lua_model.c: the model as Lua values, for templates. The shape is documented in
 * docs/templates.md; every field named there is set here and nowhere else.
 *
 * Rationale: templates read plain tables (no userdata, no metatables), so a user's template
 * can print, copy or walk them like any Lua data; the whole corpus (2,674 ops) takes a few
 * milliseconds to build. */
#include "codegen.h"
#include "lua_model.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* t[k] = v for the value on top of the stack (popped). */
#define SETF(L, k) lua_setfield((L), -2, (k))

static void set_str(lua_State *L, const char *k, const char *v) {
    if (!v) return;
    lua_pushstring(L, v);
    SETF(L, k);
}

static void set_bool(lua_State *L, const char *k, bool v) {
    lua_pushboolean(L, v);
    SETF(L, k);
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
    lua_pushinteger(L, v);
    SETF(L, k);
}

/* Sets k to true / false, or leaves it nil where the yaml key was absent. */
static void set_tribool(lua_State *L, const char *k, sg_tribool v) {
    if (v != SG_UNSET) set_bool(L, k, v == SG_TRUE);
}

static void push_strs(lua_State *L, const char *const *items, uint32_t n) {
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        lua_pushstring(L, items[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* ---- types ------------------------------------------------------------------------------- */

/* The type family of a schema type: what the C type mapping keys on (docs/types.md). */
const char *sg_type_family(const sg_type *t) {
    bool opt = t->kind == SG_TY_OPTIONAL;
    const sg_type *u = opt ? t->elems[0] : t;
    if (u->kind == SG_TY_LIST) {
        const sg_type *e = u->elems[0];
        bool           eopt = e->kind == SG_TY_OPTIONAL;
        const sg_type *b = eopt ? e->elems[0] : e;
        const char    *f = NULL;
        switch (b->kind) {
        case SG_TY_TENSOR: f = eopt ? "opt_tensor_list" : "tensor_list"; break;
        case SG_TY_INT:
        case SG_TY_SYMINT: f = eopt ? NULL : "int_list"; break;
        case SG_TY_FLOAT: f = eopt ? NULL : "float_list"; break;
        case SG_TY_BOOL: f = eopt ? NULL : "bool_list"; break;
        case SG_TY_SCALAR: f = eopt ? NULL : "scalar_list"; break;
        case SG_TY_STR:
        case SG_TY_DIMNAME: f = eopt ? NULL : "str_list"; break;
        default: break;
        }
        if (!f) return "any";
        if (!opt) return f;
        if (strcmp(f, "int_list") == 0) return "opt_int_list";
        if (strcmp(f, "float_list") == 0) return "opt_float_list";
        if (strcmp(f, "bool_list") == 0) return "opt_bool_list";
        if (strcmp(f, "str_list") == 0) return "opt_str_list";
        if (strcmp(f, "scalar_list") == 0) return "opt_scalar_list";
        return "opt_tensor_list_opt"; /* Tensor[]? : no corpus op has it */
    }
    static const struct { sg_type_kind k; const char *plain, *opt; } map[] = {
        {SG_TY_TENSOR, "tensor", "opt_tensor"},
        {SG_TY_INT, "int", "opt_int"},
        {SG_TY_SYMINT, "int", "opt_int"},
        {SG_TY_DEVICE_INDEX, "int", "opt_int"},
        {SG_TY_QSCHEME, "int", "opt_int"},
        {SG_TY_FLOAT, "float", "opt_float"},
        {SG_TY_SYMFLOAT, "float", "opt_float"},
        {SG_TY_BOOL, "bool", "opt_bool"},
        {SG_TY_SYMBOOL, "bool", "opt_bool"},
        {SG_TY_COMPLEX, "complex", "opt_complex"},
        {SG_TY_STR, "str", "opt_str"},
        {SG_TY_DIMNAME, "str", "opt_str"},
        {SG_TY_SCALAR, "scalar", "opt_scalar"},
        {SG_TY_SCALAR_TYPE, "dtype", "opt_dtype"},
        {SG_TY_LAYOUT, "layout", "opt_layout"},
        {SG_TY_MEMORY_FORMAT, "memory_format", "opt_memory_format"},
        {SG_TY_DEVICE, "device", "opt_device"},
        {SG_TY_GENERATOR, "generator", "generator"},
        {SG_TY_STORAGE, "opaque", "opaque"},
        {SG_TY_STREAM, "opaque", "opaque"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].k == u->kind) return opt ? map[i].opt : map[i].plain;
    return "any";
}

static void push_alias(lua_State *L, const sg_alias *a) {
    lua_createtable(L, 0, 4);
    push_strs(L, a->before, a->nbefore);
    SETF(L, "before");
    push_strs(L, a->after, a->nafter);
    SETF(L, "after");
    set_bool(L, "write", a->write);
    sg_buf b;
    sg_buf_init(&b);
    sg_alias_print(&b, a);
    /* "(a!)" printed: the annotation without its parentheses reads better in tables */
    if (b.len >= 2 && b.data[0] == '(') lua_pushlstring(L, b.data + 1, b.len - 2);
    else lua_pushlstring(L, b.data ? b.data : "", b.len);
    SETF(L, "text");
    sg_buf_free(&b);
}

static void push_arg(lua_State *L, const sg_arg *a, sg_buf *tmp, bool is_ret, uint32_t index) {
    lua_createtable(L, 0, 12);
    set_str(L, "name", a->name);
    tmp->len = 0;
    sg_type_print(tmp, a->type, false);
    lua_pushlstring(L, tmp->data ? tmp->data : "", tmp->len);
    SETF(L, "type");
    set_str(L, "default", a->default_text);
    if (!is_ret) set_bool(L, "kwarg_only", a->kwarg_only);
    set_int(L, "index", index);
    const sg_alias *al = sg_type_alias(a->type);
    if (al) {
        push_alias(L, al);
        SETF(L, "alias");
    }
    set_bool(L, "write", sg_arg_is_write(a));
    set_str(L, "family", sg_type_family(a->type));
    set_bool(L, "optional", a->type->kind == SG_TY_OPTIONAL);
    set_bool(L, "tensor_like", sg_type_is_tensor_like(a->type));
    const sg_type *u = a->type->kind == SG_TY_OPTIONAL ? a->type->elems[0] : a->type;
    if (u->kind == SG_TY_LIST && u->size >= 0) set_int(L, "size", u->size);
}

static void push_args(lua_State *L, const sg_arg *args, uint32_t n, sg_buf *tmp, bool is_ret) {
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        push_arg(L, &args[i], tmp, is_ret, i);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* ---- ops --------------------------------------------------------------------------------- */

static void push_strlist(lua_State *L, const char *k, const sg_strlist *l) {
    if (!l->n) return;
    push_strs(L, l->items, l->n);
    SETF(L, k);
}

static void push_dispatch(lua_State *L, const sg_op *op) {
    lua_createtable(L, (int)op->ndispatch, 0);
    for (uint32_t i = 0; i < op->ndispatch; i++) {
        const sg_dispatch *d = &op->dispatch[i];
        lua_createtable(L, 0, 2);
        push_strs(L, d->keys, d->nkeys);
        SETF(L, "keys");
        set_str(L, "kernel", d->kernel);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    SETF(L, "dispatch");
}

/* Pushes one op's table (its fields; links to other ops are set afterwards). */
static void push_op(lua_State *L, const sg_op *op, uint32_t index, sg_buf *tmp) {
    const sg_schema *s = &op->schema;
    lua_createtable(L, 0, 40);
    set_int(L, "index", index);
    set_str(L, "namespace", op->ns);
    set_str(L, "name", s->name);
    set_str(L, "overload", s->overload);
    set_str(L, "base", s->base);
    tmp->len = 0;
    sg_buf_printf(tmp, "%s::%s", op->ns, s->name);
    lua_pushlstring(L, tmp->data, tmp->len);
    SETF(L, "qualified");
    tmp->len = 0;
    sg_op_cname(tmp, op);
    lua_pushlstring(L, tmp->data, tmp->len);
    SETF(L, "cname");
    tmp->len = 0;
    if (!s->ns) sg_buf_printf(tmp, "%s::", op->ns);
    sg_schema_print(tmp, s, true);
    lua_pushlstring(L, tmp->data, tmp->len);
    SETF(L, "schema");
    set_str(L, "func", op->func);
    set_str(L, "kind", sg_schema_kind_names[sg_schema_kind_of(s)]);
    set_bool(L, "inplace", s->inplace);
    set_bool(L, "dunder", s->dunder);
    set_bool(L, "mutable", sg_schema_is_mutable(s));
    push_args(L, s->args, s->nargs, tmp, false);
    SETF(L, "args");
    push_args(L, s->rets, s->nrets, tmp, true);
    SETF(L, "returns");
    set_bool(L, "varargs", s->varargs);
    set_bool(L, "varret", s->varret);
    set_str(L, "file", op->pos.src ? op->pos.src->path : NULL);
    set_int(L, "line", op->pos.line);

    /* yaml keys */
    lua_createtable(L, 0, 2);
    set_bool(L, "function", !op->has_variants || (op->variants & SG_VARIANT_FUNCTION));
    set_bool(L, "method", op->variants & SG_VARIANT_METHOD);
    SETF(L, "variants");
    if (op->has_dispatch) push_dispatch(L, op);
    set_tribool(L, "structured", op->structured);
    set_str(L, "structured_delegate", op->structured_delegate);
    set_str(L, "structured_inherits", op->structured_inherits);
    push_strlist(L, "precomputed", &op->precomputed);
    push_strlist(L, "autogen", &op->autogen);
    push_strs(L, op->tags.items, op->tags.n);
    SETF(L, "tags");
    set_str(L, "device_check", op->device_check);
    set_tribool(L, "device_guard", op->device_guard);
    set_str(L, "python_module", op->python_module);
    push_strlist(L, "cpp_no_default_args", &op->cpp_no_default_args);
    set_tribool(L, "manual_cpp_binding", op->manual_cpp_binding);
    set_tribool(L, "manual_kernel_registration", op->manual_kernel_registration);
    set_str(L, "category_override", op->category_override);
    set_tribool(L, "use_const_ref_for_mutable_tensors", op->use_const_ref_for_mutable_tensors);
}

void sg_op_cname(sg_buf *b, const sg_op *op) {
    sg_buf_printf(b, "%s_%s", op->ns, op->schema.name);
    if (*op->schema.overload) sg_buf_printf(b, "_%s", op->schema.overload);
}

/* op -> its 1-based position in model.ops: links between ops (groups, structured delegates,
 * autogen sources) become references to the same Lua tables. */
typedef struct opmap {
    const sg_op **keys;
    uint32_t     *vals;
    size_t        cap;
} opmap;

static size_t slot(const opmap *mp, const sg_op *op) {
    size_t h = ((uintptr_t)op >> 4) * 0x9E3779B97F4A7C15u;
    size_t i = h & (mp->cap - 1);
    while (mp->keys[i] && mp->keys[i] != op) i = (i + 1) & (mp->cap - 1);
    return i;
}

static bool opmap_init(opmap *mp, const sg_model *m) {
    mp->cap = 64;
    while (mp->cap < 2 * (size_t)m->nops) mp->cap *= 2;
    mp->keys = calloc(mp->cap, sizeof *mp->keys);
    mp->vals = calloc(mp->cap, sizeof *mp->vals);
    if (!mp->keys || !mp->vals) return false;
    for (uint32_t i = 0; i < m->nops; i++) {
        size_t at = slot(mp, m->ops[i]);
        mp->keys[at] = m->ops[i];
        mp->vals[at] = i + 1;
    }
    return true;
}

static uint32_t opmap_get(const opmap *mp, const sg_op *op) {
    size_t at = slot(mp, op);
    return mp->keys[at] ? mp->vals[at] : 0;
}

static void opmap_free(opmap *mp) {
    free(mp->keys);
    free(mp->vals);
}

/* ops[i].field = ops[op's index] (nothing where op is NULL or not in the model). */
static void link(lua_State *L, int ops, const opmap *mp, uint32_t i, const char *field,
                 const sg_op *to) {
    uint32_t at = to ? opmap_get(mp, to) : 0;
    if (!at) return;
    lua_rawgeti(L, ops, (lua_Integer)i + 1);
    lua_rawgeti(L, ops, at);
    lua_setfield(L, -2, field);
    lua_pop(L, 1);
}

/* Links that derive.c computes: structured out op and delegates, autogen source. */
static void link_derived(lua_State *L, int ops, const sg_op *op, uint32_t i, const opmap *mp) {
    link(L, ops, mp, i, "structured_out", op->structured_out);
    link(L, ops, mp, i, "autogen_from", op->autogen_from);
    if (!op->structured_is_out && !op->autogen_kind) return;
    lua_rawgeti(L, ops, (lua_Integer)i + 1);
    if (op->autogen_kind) set_str(L, "autogen_kind", op->autogen_kind);
    if (op->structured_is_out) {
        set_bool(L, "structured_is_out", true);
        lua_createtable(L, (int)op->ndelegates, 0);
        for (uint32_t k = 0; k < op->ndelegates; k++) {
            lua_rawgeti(L, ops, opmap_get(mp, op->delegates[k]));
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        SETF(L, "delegates");
    }
    lua_pop(L, 1);
}

/* model.sorted: the ops by qualified name, then overload, byte order (the op table's order). */
static _Thread_local const sg_model *sort_model; /* qsort has no context argument */
static int by_qualified(const void *a, const void *b) {
    const sg_op *x = sort_model->ops[*(const uint32_t *)a], *y = sort_model->ops[*(const uint32_t *)b];
    int c = strcmp(x->ns, y->ns);
    if (c) return c;
    c = strcmp(x->schema.name, y->schema.name);
    return c ? c : strcmp(x->schema.overload, y->schema.overload);
}

static bool push_sorted(lua_State *L, int ops, const sg_model *m) {
    uint32_t *order = malloc((m->nops ? m->nops : 1) * sizeof *order);
    if (!order) return false;
    for (uint32_t i = 0; i < m->nops; i++) order[i] = i;
    sort_model = m;
    qsort(order, m->nops, sizeof *order, by_qualified);
    lua_createtable(L, (int)m->nops, 0);
    for (uint32_t i = 0; i < m->nops; i++) {
        lua_rawgeti(L, ops, (lua_Integer)order[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    free(order);
    return true;
}

bool sg_lua_push_model(lua_State *L, const sg_model *m) {
    opmap mp;
    if (!opmap_init(&mp, m)) {
        opmap_free(&mp);
        return false;
    }
    sg_buf tmp;
    sg_buf_init(&tmp);
    lua_createtable(L, 0, 4);                   /* model */
    lua_createtable(L, (int)m->nops, 0);        /* model.ops */
    int ops = lua_gettop(L);
    for (uint32_t i = 0; i < m->nops; i++) {
        push_op(L, m->ops[i], i + 1, &tmp);
        lua_rawseti(L, ops, (lua_Integer)i + 1);
    }
    /* groups: op.group = {functional = op, inplace = op, out = op, mutable = op, scratch = op} */
    lua_createtable(L, (int)m->ngroups, 0);
    int groups = lua_gettop(L);
    for (uint32_t g = 0; g < m->ngroups; g++) {
        const sg_group *gr = m->groups[g];
        lua_createtable(L, 0, SG_KIND__COUNT + 1);
        set_str(L, "signature", gr->signature);
        for (int k = 0; k < SG_KIND__COUNT; k++) {
            if (!gr->ops[k]) continue;
            uint32_t at = opmap_get(&mp, gr->ops[k]);
            lua_rawgeti(L, ops, at);
            SETF(L, sg_schema_kind_names[k]);
            lua_rawgeti(L, ops, at); /* op.group = this group */
            lua_pushvalue(L, -2);
            SETF(L, "group");
            lua_pop(L, 1);
        }
        lua_rawseti(L, groups, (lua_Integer)g + 1);
    }
    lua_setfield(L, -3, "groups");
    for (uint32_t i = 0; i < m->nops; i++) link_derived(L, ops, m->ops[i], i, &mp);
    bool ok = push_sorted(L, ops, m);
    if (ok) lua_setfield(L, -3, "sorted");
    lua_setfield(L, -2, "ops");

    lua_createtable(L, (int)m->ntags, 0);
    for (uint32_t i = 0; i < m->ntags; i++) {
        lua_createtable(L, 0, 2);
        set_str(L, "name", m->tags[i].name);
        set_str(L, "desc", m->tags[i].desc);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    SETF(L, "tags");
    lua_createtable(L, (int)m->nsources, 0);
    for (uint32_t i = 0; i < m->nsources; i++) {
        lua_pushstring(L, m->sources[i]->path);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    SETF(L, "files");
    sg_buf_free(&tmp);
    opmap_free(&mp);
    return ok && !tmp.oom;
}
