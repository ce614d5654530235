/* lua_model.c: the model as Lua values, for templates. The shape is documented in
 * docs/templates.md; every field named there is set here and nowhere else.
 *
 * Each table, once filled, is replaced by its read-only view (seal): an empty table whose
 * metatable reads from it and refuses writes, so templates can still index, walk (pairs,
 * ipairs, next, #) and compare them like any Lua data, but not change them. A table shared
 * by several ops (see push_arg) is one view. */
#include "codegen.h"
#include "derive.h"
#include "strmap.h"
#include "lua_model.h"
#include "opmap.h"
#include "sg_type_table.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* The field names, made Lua strings once per model and kept on the stack at keys + K_*.
 * Rationale: lua_setfield looks its C string up again on every call (a cache probe and a
 * strcmp), and a big model sets hundreds of thousands of fields. */
#define SG_MODEL_KEYS(X)                                                                      \
    X(after) X(alias) X(arg) X(args) X(autogen) X(autogen_from) X(autogen_kind) X(base)       \
    X(before) X(boxed_name) X(callee_args) X(device_of) X(dtype_of)                           \
    X(backend_kernel) X(backend_must_implement) X(composite) X(composite_kernel) X(implicit)  \
    X(is_out) X(kernel_keys)                                                                  \
    X(outs) X(shard)                                                                          \
    X(category_override) X(cname) X(cpp_no_default_args) X(default) X(delegates) X(desc)     \
    X(device_check) X(device_guard) X(dispatch) X(dunder) X(family) X(file) X(files)         \
    X(function) X(func) X(group) X(groups) X(index) X(inplace) X(kernel) X(keys) X(kind)      \
    X(kwarg_only) X(line) X(manual_cpp_binding) X(manual_kernel_registration) X(method)       \
    X(mutable) X(name) X(namespace) X(optional) X(ops) X(overload) X(precomputed)             \
    X(python_module) X(qualified) X(returns) X(schema) X(signature) X(size) X(sorted)         \
    X(structured) X(structured_delegate) X(structured_inherits) X(structured_is_out)         \
    X(structured_out) X(tags) X(tensor_like) X(text) X(type) X(use_const_ref_for_mutable_tensors) \
    X(variants) X(varargs) X(varret) X(write) X(written)
#define SG_KEY_ENUM(k) K_##k,
#define SG_KEY_NAME(k) #k,
enum key { SG_MODEL_KEYS(SG_KEY_ENUM) K__COUNT };
static const char *const key_names[K__COUNT] = {SG_MODEL_KEYS(SG_KEY_NAME)};

/* What the functions below share: the state, where the keys are, a scratch buffer. */
typedef struct pusher {
    lua_State *L;
    int        keys; /* stack slot of key_names[0] */
    int        seen; /* stack slot of the shared tables, by entry (shared) */
    sg_strmap *memo; /* the shared tables' keys -> their entries (shared) */
    int        path; /* stack slot of the last op's file path (ops of a file share the string) */
    const sg_source *path_of; /* whose path that is */
    sg_buf    *tmp, *key, *lkey; /* lkey: the keys of small lists (push_strs, ...) */
    int        mt;   /* stack slot of the views' metatable parts (sg_lua_push_view_parts) */
} pusher;

/* Replaces the table on top, filled, with its read-only view (lua_view.h). */
static void seal(const pusher *p) { sg_lua_seal_with(p->L, p->mt); }

/* t[k] = v for v on top of the stack (popped) and t just below it. */
static void setk(const pusher *p, enum key k) {
    lua_pushvalue(p->L, p->keys + (int)k);
    lua_insert(p->L, -2);
    lua_rawset(p->L, -3);
}

/* t[k] = v for v on top of the stack (popped) and t two below it. */
static void setk2(const pusher *p, enum key k) {
    lua_pushvalue(p->L, p->keys + (int)k);
    lua_insert(p->L, -2);
    lua_rawset(p->L, -4);
}

/* Rationale: lua_pushstring first looks the C pointer up in a cache of Lua's (a strcmp even
 * where it misses, as it does for nearly every string of the model); a length is cheaper. */
static void push_cstr(lua_State *L, const char *v) { lua_pushlstring(L, v, strlen(v)); }

static void set_str(const pusher *p, enum key k, const char *v) {
    if (!v) return;
    lua_pushvalue(p->L, p->keys + (int)k);
    push_cstr(p->L, v);
    lua_rawset(p->L, -3);
}

/* t[k] = the scratch buffer's text */
static void set_tmp(const pusher *p, enum key k) {
    lua_pushvalue(p->L, p->keys + (int)k);
    lua_pushlstring(p->L, p->tmp->data ? p->tmp->data : "", p->tmp->len);
    lua_rawset(p->L, -3);
}

static void set_bool(const pusher *p, enum key k, bool v) {
    lua_pushvalue(p->L, p->keys + (int)k);
    lua_pushboolean(p->L, v);
    lua_rawset(p->L, -3);
}

static void set_int(const pusher *p, enum key k, lua_Integer v) {
    lua_pushvalue(p->L, p->keys + (int)k);
    lua_pushinteger(p->L, v);
    lua_rawset(p->L, -3);
}

/* Sets k to true / false, or leaves it nil where the yaml key was absent. */
static void set_tribool(const pusher *p, enum key k, sg_tribool v) {
    if (v != SG_UNSET) set_bool(p, k, v == SG_TRUE);
}

/* Tables made once and shared by content: a key saying all a table holds finds the table.
 * Rationale: every table of the model costs three (its view and the view's metatable), and
 * most small ones are the same in many ops (tags, variants, dispatch entries, arguments);
 * fewer tables are quicker to build, to render from (the cache keeps them) and to free.
 * The keys stay in C (strmap.h): as Lua strings they were hashed, interned and kept as
 * garbage until the state closed. Entry e's table is at index e of the Lua list at p->seen.
 *
 * shared(p, k, n): pushes the table of key k[0..n) and returns 0 where it was made before;
 * otherwise returns the key's new entry, for remember() once the table is made. */
static uint32_t shared(const pusher *p, const char *k, size_t n) {
    uintptr_t       next = (uintptr_t)p->memo->n + 1; /* the entry a new key gets */
    sg_strmap_slot *sl = sg_strmap_put(p->memo, k, n, (void *)next);
    if (!sl) luaL_error(p->L, "out of memory");
    if ((uintptr_t)sl->value == next) return (uint32_t)next;
    lua_rawgeti(p->L, p->seen, (lua_Integer)(uintptr_t)sl->value);
    return 0;
}

/* The table of entry e (from shared) on top: it is the entry's table from now on, and is left
 * on top. */
static void remember(const pusher *p, uint32_t e) {
    lua_pushvalue(p->L, -1);
    lua_rawseti(p->L, p->seen, e);
}

/* The key of a list of strings: 'S', their number, then each string ended by a NUL (no other
 * key starts with 'S'; the number keeps a list's key apart from what follows it). */
static void strs_key(sg_buf *key, const char *const *items, uint32_t n) {
    sg_buf_putc(key, 'S');
    sg_buf_putn(key, (const char *)&n, sizeof n);
    for (uint32_t i = 0; i < n; i++) sg_buf_putn(key, items[i], strlen(items[i]) + 1);
}

/* Pushes a sealed list of strings; lists alike are one table. */
static void push_strs(const pusher *p, const char *const *items, uint32_t n) {
    lua_State *L = p->L;
    sg_buf    *key = p->lkey;
    key->len = 0;
    strs_key(key, items, n);
    uint32_t e = shared(p, key->data ? key->data : "", key->len);
    if (!e) return;
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        push_cstr(L, items[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    seal(p);
    remember(p, e);
}

/* ---- types ------------------------------------------------------------------------------- */

/* The type family of a schema type: what the C type mapping keys on (sg_type_table.h). */
const char *sg_type_family(const sg_type *t) {
    return sg_type_family_rows[sg_type_family_of(t)].name;
}

/* model.type_families: family name -> {param, result, letter, ret_letter, tags = {...}}, the
 * table of sg_type_table.h for templates (lib/c.lua takes its C types and letters from it). */
static void push_type_families(const pusher *p) {
    lua_State *L = p->L;
    lua_createtable(L, 0, SG_FAM__COUNT);
    for (int i = 0; i < SG_FAM__COUNT; i++) {
        const sg_type_family_row *r = &sg_type_family_rows[i];
        lua_createtable(L, 0, 6);
        lua_pushstring(L, r->param);
        lua_setfield(L, -2, "param");
        lua_pushstring(L, r->result);
        lua_setfield(L, -2, "result");
        lua_pushlstring(L, &r->letter, 1);
        lua_setfield(L, -2, "letter");
        lua_pushlstring(L, &r->ret_letter, 1);
        lua_setfield(L, -2, "ret_letter");
        lua_newtable(L);
        for (int k = 0; r->tags[k]; k++) {
            lua_pushstring(L, r->tags[k]);
            lua_rawseti(L, -2, k + 1);
        }
        seal(p);
        lua_setfield(L, -2, "tags");
        seal(p);
        lua_setfield(L, -2, r->name);
    }
    seal(p);
}

static void push_alias(const pusher *p, const sg_alias *a) {
    lua_State *L = p->L;
    lua_createtable(L, 0, 4);
    push_strs(p, a->before, a->nbefore);
    setk(p, K_before);
    push_strs(p, a->after, a->nafter);
    setk(p, K_after);
    set_bool(p, K_write, a->write);
    sg_buf *b = p->tmp;
    b->len = 0;
    sg_alias_print(b, a);
    /* "(a!)" printed: the annotation without its parentheses reads better in tables */
    if (b->len >= 2 && b->data[0] == '(') {
        memmove(b->data, b->data + 1, b->len - 2);
        b->len -= 2;
    }
    set_tmp(p, K_text);
    seal(p);
}

/* Appends to key what an argument's (or return's) table holds: flags, its index, name, type,
 * default, alias annotation and C name, and for a return the argument it is (ret_arg, or -1),
 * each ended by a NUL. Two arguments with the same key get the same table (push_arg). */
static void arg_key(sg_buf *key, const sg_arg *a, bool is_ret, uint32_t index,
                    const char *cname, int32_t ret_arg) {
    const sg_alias *al = sg_type_alias(a->type);
    char head[3 + 10 + 1], *h = head + sizeof head; /* flags, then the index in decimal */
    *--h = '\0';
    uint32_t i = index;
    do *--h = (char)('0' + i % 10); while (i /= 10);
    *--h = a->default_text ? 'd' : '-';
    *--h = a->kwarg_only ? 'k' : '-';
    *--h = is_ret ? 'r' : 'a';
    sg_buf_putn(key, h, (size_t)(head + sizeof head - h));
    if (a->name) sg_buf_puts(key, a->name);
    sg_buf_putc(key, '\0');
    sg_type_print(key, a->type, false);
    sg_buf_putc(key, '\0');
    if (a->default_text) sg_buf_puts(key, a->default_text);
    sg_buf_putc(key, '\0');
    if (al) sg_alias_print(key, al);
    sg_buf_putc(key, '\0');
    if (cname) sg_buf_puts(key, cname); /* derive.c's, which depends on the op */
    sg_buf_putc(key, '\0');
    if (ret_arg >= 0) sg_buf_putn(key, (const char *)&ret_arg, sizeof ret_arg);
}

/* Pushes the table of one argument or return, whose key (arg_key) is k[0..n).
 * Rationale: most arguments of the corpus are the same as another op's (`Tensor self` first,
 * an unnamed `Tensor` returned, `Tensor(a!) out` last): those share one table, made once. The
 * model is smaller and quicker to build, and the templates read the same tables again, from
 * cache (templates treat the model as read-only: docs/templates.md). The key is everything
 * the table holds; the rest of it follows from the type. */
static void push_arg(const pusher *p, const sg_arg *a, bool is_ret, uint32_t index,
                     const char *cname, int32_t ret_arg, const char *k, size_t n) {
    lua_State *L = p->L;
    uint32_t   e = shared(p, k, n);
    if (!e) return;
    const sg_alias *al = sg_type_alias(a->type);
    const sg_type  *u = a->type->kind == SG_TY_OPTIONAL ? a->type->elems[0] : a->type;
    bool            sized = u->kind == SG_TY_LIST && u->size >= 0;
    /* Rationale: a table of just the fields it gets (Lua rounds up to a power of two) is half
     * the memory of a generous one: 8 fields for most arguments, 6 for most returns. */
    lua_createtable(L, 0,
                    6 + !!a->name + !is_ret + !!a->default_text + !!al + sized + !!cname +
                        (ret_arg >= 0));
    set_str(p, K_name, a->name);
    set_str(p, K_cname, cname);
    if (!is_ret) set_bool(p, K_is_out, a->kwarg_only && sg_arg_is_write(a));
    p->tmp->len = 0;
    sg_type_print(p->tmp, a->type, false);
    set_tmp(p, K_type);
    set_str(p, K_default, a->default_text);
    if (!is_ret) set_bool(p, K_kwarg_only, a->kwarg_only);
    set_int(p, K_index, index);
    if (al) {
        push_alias(p, al);
        setk(p, K_alias);
    }
    set_bool(p, K_write, sg_arg_is_write(a));
    set_str(p, K_family, sg_type_family(a->type));
    set_bool(p, K_optional, a->type->kind == SG_TY_OPTIONAL);
    set_bool(p, K_tensor_like, sg_type_is_tensor_like(a->type));
    if (sized) set_int(p, K_size, u->size);
    if (ret_arg >= 0) set_int(p, K_arg, ret_arg);
    seal(p);
    remember(p, e);
}

/* Pushes the list of an op's arguments or returns. Lists the same in every argument are one
 * table too (most ops of the corpus share theirs with another op): their key is the list's
 * argument keys, after 'L' (no argument's key starts so). */
static void push_args(const pusher *p, const sg_schema *s, bool is_ret,
                      const char *const *cnames) {
    lua_State    *L = p->L;
    sg_buf       *key = p->key;
    const sg_arg *args = is_ret ? s->rets : s->args;
    uint32_t      n = is_ret ? s->nrets : s->nargs;
    key->len = 0;
    sg_buf_putc(key, 'L');
    for (uint32_t i = 0; i < n; i++)
        arg_key(key, &args[i], is_ret, i, cnames ? cnames[i] : NULL,
                is_ret ? sg_ret_arg(s, &args[i]) : -1);
    uint32_t e = shared(p, key->data ? key->data : "", key->len);
    if (!e) return;
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) { /* the list's key is kept: key serves each arg's */
        int32_t ret_arg = is_ret ? sg_ret_arg(s, &args[i]) : -1;
        key->len = 0;
        arg_key(key, &args[i], is_ret, i, cnames ? cnames[i] : NULL, ret_arg);
        push_arg(p, &args[i], is_ret, i, cnames ? cnames[i] : NULL, ret_arg,
                 key->data ? key->data : "", key->len);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    seal(p);
    remember(p, e);
}

/* ---- ops --------------------------------------------------------------------------------- */

static void push_strlist(const pusher *p, enum key k, const sg_strlist *l) {
    if (!l->n) return;
    push_strs(p, l->items, l->n);
    setk(p, k);
}

/* op.dispatch, shared by content: its key is 'D', then per entry its keys' list key, '\1'
 * and the kernel's name and a NUL, or '\2' where it has none. */
static void push_dispatch(const pusher *p, const sg_op *op) {
    lua_State *L = p->L;
    sg_buf    *key = p->key; /* free here: push_args is done with it */
    key->len = 0;
    sg_buf_putc(key, 'D');
    for (uint32_t i = 0; i < op->ndispatch; i++) {
        const sg_dispatch *d = &op->dispatch[i];
        strs_key(key, d->keys, d->nkeys);
        if (d->kernel) {
            sg_buf_putc(key, '\1');
            sg_buf_putn(key, d->kernel, strlen(d->kernel) + 1);
        } else {
            sg_buf_putc(key, '\2');
        }
    }
    uint32_t e = shared(p, key->data ? key->data : "", key->len);
    if (e) {
        lua_createtable(L, (int)op->ndispatch, 0);
        for (uint32_t i = 0; i < op->ndispatch; i++) {
            const sg_dispatch *d = &op->dispatch[i];
            lua_createtable(L, 0, 2);
            push_strs(p, d->keys, d->nkeys);
            setk(p, K_keys);
            set_str(p, K_kernel, d->kernel);
            seal(p);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        seal(p);
        remember(p, e);
    }
    setk(p, K_dispatch);
}

/* op.outs (outs_only) or op.written, with op.args's view on top: the tables from it of the
 * written arguments (only the out ones for outs), shared by that list and which of its
 * arguments they are (key 'O' or 'W', the list's address, the positions). */
static void push_written(const pusher *p, const sg_schema *s, bool outs_only) {
    lua_State *L = p->L;
    sg_buf    *key = p->key;
    key->len = 0;
    const void *list = lua_topointer(L, -1); /* for hashing only: the list lives in seen */
    sg_buf_putc(key, outs_only ? 'O' : 'W');
    sg_buf_putn(key, (const char *)&list, sizeof list);
    for (uint32_t i = 0; i < s->nargs; i++)
        if (s->args[i].write && (!outs_only || sg_arg_is_out(s, &s->args[i])))
            sg_buf_putn(key, (const char *)&i, sizeof i);
    uint32_t e = shared(p, key->data ? key->data : "", key->len);
    if (!e) return;
    lua_createtable(L, 0, 0);
    for (uint32_t i = 0, n = 0; i < s->nargs; i++) {
        if (!s->args[i].write || (outs_only && !sg_arg_is_out(s, &s->args[i]))) continue;
        lua_geti(L, -2, (lua_Integer)i + 1); /* through op.args's view */
        lua_rawseti(L, -2, (lua_Integer)++n);
    }
    seal(p);
    remember(p, e);
}

/* op.callee_args, with op.args's view on top: per argument of the op its composite kernel
 * calls, that argument's table, {dtype_of = arg} or {device_of = arg}, or "null", "strided",
 * "false", "own". */
static void push_callee_args(const pusher *p, const sg_op *op) {
    static const char *const values[] = {[SG_CALL_NULL] = "null", [SG_CALL_STRIDED] = "strided",
                                         [SG_CALL_FALSE] = "false", [SG_CALL_OWN] = "own"};
    lua_State *L = p->L;
    uint32_t   n = op->c->callee->schema.nargs;
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        const sg_call_arg *a = &op->c->callee_args[i];
        switch ((sg_call_from)a->from) {
        case SG_CALL_ARG: lua_geti(L, -2, (lua_Integer)a->arg + 1); break;
        case SG_CALL_DTYPE_OF:
        case SG_CALL_DEVICE_OF:
            lua_createtable(L, 0, 1);
            lua_geti(L, -3, (lua_Integer)a->arg + 1);
            setk(p, a->from == SG_CALL_DTYPE_OF ? K_dtype_of : K_device_of);
            seal(p);
            break;
        default: push_cstr(L, values[a->from]); break;
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    seal(p);
}

/* How many fields op's table gets: push_op's and the links' (protected_build, link_derived);
 * a field added there is counted here too (a miscount costs only a regrowth of the table;
 * op.shard, set after push_op, is counted where it is set).
 * Rationale: sized so at the start, a table is made once; otherwise a table of more than 32
 * fields grows from 32 slots to 64 midway, every field placed again. */
static int op_nfields(const sg_op *op, const opmap *mp) {
    int n = 19 + !!op->ns + !!op->func + !!op->pos.src + !!op->has_dispatch;
    if (op->c) n += 7 + !!op->c->composite;
    n += op->structured != SG_UNSET;
    n += !!op->structured_delegate + !!op->structured_inherits + !!op->device_check;
    n += !!op->precomputed.n + !!op->autogen.n + !!op->cpp_no_default_args.n;
    n += op->device_guard != SG_UNSET;
    n += !!op->python_module + (op->manual_cpp_binding != SG_UNSET);
    n += op->manual_kernel_registration != SG_UNSET;
    n += !!op->category_override + (op->use_const_ref_for_mutable_tensors != SG_UNSET);
    for (int k = 0; op->group && k < SG_KIND__COUNT; k++) n += op->group->ops[k] == op; /* links */
    n += op->structured_out && opmap_get(mp, op->structured_out);
    n += op->autogen_from && opmap_get(mp, op->autogen_from);
    n += !!op->autogen_kind + 2 * op->structured_is_out;
    return n;
}

/* Pushes one op's table (its fields; links to other ops are set afterwards). */
static void push_op(pusher *p, const sg_op *op, uint32_t index, int nfields) {
    lua_State       *L = p->L;
    const sg_schema *s = &op->schema;
    sg_buf          *tmp = p->tmp;
    lua_createtable(L, 0, nfields);
    set_int(p, K_index, index);
    set_str(p, K_namespace, op->ns);
    set_str(p, K_name, s->name);
    set_str(p, K_overload, s->overload);
    set_str(p, K_base, s->base);
    tmp->len = 0;
    sg_buf_puts(tmp, op->ns);
    sg_buf_puts(tmp, "::");
    sg_buf_puts(tmp, s->name);
    set_tmp(p, K_qualified);
    tmp->len = 0;
    sg_op_cname(tmp, op);
    set_tmp(p, K_cname);
    const sg_op_c *c = op->c; /* derive.c's facts; NULL where it did not run */
    tmp->len = 0;
    if (!s->ns) {
        sg_buf_puts(tmp, op->ns);
        sg_buf_puts(tmp, "::");
    }
    sg_schema_print(tmp, s, true);
    set_tmp(p, K_schema);
    set_str(p, K_func, op->func);
    set_str(p, K_kind, sg_schema_kind_names[sg_schema_kind_of(s)]);
    set_bool(p, K_inplace, s->inplace);
    set_bool(p, K_dunder, s->dunder);
    set_bool(p, K_mutable, sg_schema_is_mutable(s));
    push_args(p, s, false, c ? c->arg_cnames : NULL);
    setk(p, K_args);
    lua_pushvalue(L, p->keys + K_args);
    lua_rawget(L, -2);
    push_written(p, s, true);
    lua_remove(L, -2);
    setk(p, K_outs);
    lua_pushvalue(L, p->keys + K_args);
    lua_rawget(L, -2);
    push_written(p, s, false);
    setk2(p, K_written);
    if (c && c->composite) {
        push_callee_args(p, op);
        setk2(p, K_callee_args);
    }
    lua_pop(L, 1);
    push_args(p, s, true, c ? c->ret_cnames : NULL);
    setk(p, K_returns);
    if (c) {
        set_str(p, K_composite, c->composite);
        push_strs(p, c->kernel_keys, c->nkernel_keys);
        setk(p, K_kernel_keys);
        set_bool(p, K_implicit, c->implicit);
        set_bool(p, K_backend_kernel, c->backend_kernel);
        set_bool(p, K_composite_kernel, c->composite_kernel);
        set_bool(p, K_backend_must_implement, c->backend_must_implement);
        set_str(p, K_signature, c->signature);
        set_str(p, K_boxed_name, c->boxed_name);
    }
    set_bool(p, K_varargs, s->varargs);
    set_bool(p, K_varret, s->varret);
    if (op->pos.src) {
        if (op->pos.src != p->path_of) {
            push_cstr(L, op->pos.src->path);
            lua_replace(L, p->path);
            p->path_of = op->pos.src;
        }
        lua_pushvalue(L, p->keys + K_file);
        lua_pushvalue(L, p->path);
        lua_rawset(L, -3);
    }
    set_int(p, K_line, op->pos.line);

    /* yaml keys */
    bool fn = !op->has_variants || (op->variants & SG_VARIANT_FUNCTION);
    bool method = op->variants & SG_VARIANT_METHOD;
    char vkey[3] = {'V', (char)('0' + fn), (char)('0' + method)};
    uint32_t e = shared(p, vkey, sizeof vkey);
    if (e) {
        lua_createtable(L, 0, 2);
        set_bool(p, K_function, fn);
        set_bool(p, K_method, method);
        seal(p);
        remember(p, e);
    }
    setk(p, K_variants);
    /* op.dispatch: made when first read (see lazy below) */
    set_tribool(p, K_structured, op->structured);
    set_str(p, K_structured_delegate, op->structured_delegate);
    set_str(p, K_structured_inherits, op->structured_inherits);
    push_strlist(p, K_precomputed, &op->precomputed);
    push_strlist(p, K_autogen, &op->autogen);
    push_strs(p, op->tags.items, op->tags.n);
    setk(p, K_tags);
    set_str(p, K_device_check, op->device_check);
    set_tribool(p, K_device_guard, op->device_guard);
    set_str(p, K_python_module, op->python_module);
    push_strlist(p, K_cpp_no_default_args, &op->cpp_no_default_args);
    set_tribool(p, K_manual_cpp_binding, op->manual_cpp_binding);
    set_tribool(p, K_manual_kernel_registration, op->manual_kernel_registration);
    set_str(p, K_category_override, op->category_override);
    set_tribool(p, K_use_const_ref_for_mutable_tensors, op->use_const_ref_for_mutable_tensors);
}

void sg_op_cname(sg_buf *b, const sg_op *op) {
    if (op->c && op->c->cname) {
        sg_buf_puts(b, op->c->cname);
        return;
    }
    sg_buf_puts(b, op->ns);
    sg_buf_putc(b, '_');
    sg_buf_puts(b, op->schema.name);
    if (*op->schema.overload) {
        sg_buf_putc(b, '_');
        sg_buf_puts(b, op->schema.overload);
    }
}

/* reals[i].field = ops[op's index] (nothing where op is NULL or not in the model): ops holds
 * the ops' views, reals the tables behind them (written while the model is built). */
static void link(const pusher *p, int ops, int reals, const opmap *mp, uint32_t i,
                 enum key field, const sg_op *to) {
    uint32_t at = to ? opmap_get(mp, to) : 0;
    if (!at) return;
    lua_rawgeti(p->L, reals, (lua_Integer)i + 1);
    lua_rawgeti(p->L, ops, at);
    setk(p, field);
    lua_pop(p->L, 1);
}

/* Links that derive.c computes: structured out op and delegates, autogen source. */
static void link_derived(const pusher *p, int ops, int reals, const sg_op *op, uint32_t i,
                         const opmap *mp) {
    lua_State *L = p->L;
    link(p, ops, reals, mp, i, K_structured_out, op->structured_out);
    link(p, ops, reals, mp, i, K_autogen_from, op->autogen_from);
    if (!op->structured_is_out && !op->autogen_kind) return;
    lua_rawgeti(L, reals, (lua_Integer)i + 1);
    if (op->autogen_kind) set_str(p, K_autogen_kind, op->autogen_kind);
    if (op->structured_is_out) {
        set_bool(p, K_structured_is_out, true);
        lua_createtable(L, (int)op->ndelegates, 0);
        for (uint32_t k = 0; k < op->ndelegates; k++) {
            lua_rawgeti(L, ops, opmap_get(mp, op->delegates[k]));
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        seal(p);
        setk(p, K_delegates);
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

static void push_sorted(const pusher *p, int ops, const sg_model *m, uint32_t *order) {
    lua_State *L = p->L;
    for (uint32_t i = 0; i < m->nops; i++) order[i] = i;
    sort_model = m;
    qsort(order, m->nops, sizeof *order, by_qualified);
    lua_createtable(L, (int)m->nops, 0);
    for (uint32_t i = 0; i < m->nops; i++) {
        lua_rawgeti(L, ops, (lua_Integer)order[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    seal(p);
}

/* What building the model needs outside Lua: made before, freed after its protected call, so
 * that a Lua error (out of memory) in between leaks none of it (what shared() needs passes to
 * the state once the build begins: push_lazy). */
typedef struct build {
    const sg_model *m;
    const uint32_t *shards; /* op.shard of each op (NULL: none) */
    opmap           mp;
    uint32_t       *order; /* for model.sorted */
    sg_arena       *memo_arena;
    sg_strmap       memo; /* for shared() */
} build;

/* ---- op.dispatch, made when first read ---------------------------------------------------
 * Rationale: the built-in templates never read op.dispatch, and its tables (one per entry,
 * nearly every one an op's own) are a large part of building the model. So an
 * op's table with a dispatch gets a metatable of its own (lazy) whose __index makes the field
 * on its first read, or makes it at once for next (lua_view.h), and then goes: the model is
 * the same as if it had been made with the rest, shared tables included, since what
 * shared() needs outlives the build. */

/* What making op.dispatch later needs, owned by the Lua state (freed by its __gc). */
typedef struct lazy {
    const sg_model *m;
    sg_arena       *memo_arena;
    sg_strmap       memo;
    sg_buf          tmp, key, lkey;
} lazy;

static int lazy_gc(lua_State *L) {
    lazy *z = lua_touserdata(L, 1);
    sg_buf_free(&z->tmp);
    sg_buf_free(&z->key);
    sg_buf_free(&z->lkey);
    sg_strmap_free(&z->memo);
    sg_arena_free(z->memo_arena);
    z->memo_arena = NULL;
    return 0;
}

/* __index of an op's table still without its dispatch (t, k): upvalues the key "dispatch",
 * the lazy userdata, the key names (a list), the shared tables (seen), the view parts (a
 * list). k nil: make the field and give nothing (next wants the table whole). */
static int l_lazy(lua_State *L) {
    bool whole = lua_isnil(L, 2);
    if (!whole && !lua_rawequal(L, 2, lua_upvalueindex(1))) return 0; /* a field it lacks */
    lazy *z = lua_touserdata(L, lua_upvalueindex(2));
    luaL_checkstack(L, K__COUNT + SG_VIEW_PARTS + 16, "making op.dispatch");
    int    top = lua_gettop(L);
    pusher p = {.L = L, .keys = top + 1, .seen = top + 1 + K__COUNT, .memo = &z->memo,
                .path = top + 2 + K__COUNT, .tmp = &z->tmp, .key = &z->key, .lkey = &z->lkey,
                .mt = top + 3 + K__COUNT};
    for (int k = 0; k < K__COUNT; k++) lua_rawgeti(L, lua_upvalueindex(3), k + 1);
    lua_pushvalue(L, lua_upvalueindex(4));
    lua_pushnil(L);
    for (int k = 0; k < SG_VIEW_PARTS; k++) lua_rawgeti(L, lua_upvalueindex(5), k + 1);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, p.keys + K_index);
    lua_Integer i = lua_rawget(L, -2) == LUA_TNUMBER ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    if (i < 1 || (uint64_t)i > z->m->nops) return luaL_error(L, "op.dispatch of no op");
    push_dispatch(&p, z->m->ops[i - 1]);
    if (z->tmp.oom || z->key.oom || z->lkey.oom) return luaL_error(L, "not enough memory");
    lua_pushnil(L);
    lua_setmetatable(L, 1);
    lua_settop(L, 2);
    if (whole) return 0;
    lua_rawget(L, 1);
    return 1;
}

/* Pushes the lazy userdata, owning what b held for shared() from now on, whatever happens. */
static lazy *push_lazy(lua_State *L, build *b) {
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, lazy_gc);
    lua_setfield(L, -2, "__gc");
    lazy *z = lua_newuserdatauv(L, sizeof *z, 0);
    memset(z, 0, sizeof *z);
    lua_insert(L, -2);
    lua_setmetatable(L, -2);
    *z = (lazy){.m = b->m, .memo_arena = b->memo_arena, .memo = b->memo};
    sg_buf_init(&z->tmp);
    sg_buf_init(&z->key);
    sg_buf_init(&z->lkey);
    b->memo_arena = NULL;
    memset(&b->memo, 0, sizeof b->memo);
    return z;
}

/* Pushes the metatable of ops' tables without their dispatch yet; p's slots are filled. */
static void push_lazy_mt(const pusher *p, int z) {
    lua_State *L = p->L;
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, p->keys + K_dispatch);
    lua_pushvalue(L, z);
    lua_createtable(L, K__COUNT, 0);
    for (int k = 0; k < K__COUNT; k++) {
        lua_pushvalue(L, p->keys + k);
        lua_rawseti(L, -2, k + 1);
    }
    lua_pushvalue(L, p->seen);
    lua_createtable(L, SG_VIEW_PARTS, 0);
    for (int k = 0; k < SG_VIEW_PARTS; k++) {
        lua_pushvalue(L, p->mt + k);
        lua_rawseti(L, -2, k + 1);
    }
    lua_pushcclosure(L, l_lazy, 5);
    lua_setfield(L, -2, "__index");
}

static int protected_build(lua_State *L) {
    build          *b = lua_touserdata(L, 1);
    const sg_model *m = b->m;
    opmap           mp = b->mp;
    lua_settop(L, 0);
    luaL_checkstack(L, K__COUNT + SG_VIEW_PARTS + 16, "building the model");
    lazy  *z = push_lazy(L, b);
    int    top = lua_gettop(L);
    pusher p = {.L = L, .keys = top + 1, .seen = top + 1 + K__COUNT, .memo = &z->memo,
                .path = top + 2 + K__COUNT, .tmp = &z->tmp, .key = &z->key, .lkey = &z->lkey,
                .mt = top + 3 + K__COUNT};
    for (int k = 0; k < K__COUNT; k++) lua_pushstring(L, key_names[k]);
    lua_createtable(L, m->nops < 2048 ? (int)m->nops * 2 : 4096, 0); /* shared tables (p.seen) */
    lua_pushnil(L);                                                   /* a path (p.path) */
    sg_lua_push_view_parts(L);                                        /* p.mt */
    push_lazy_mt(&p, top);
    int lazy_mt = lua_gettop(L);
    lua_createtable(L, (int)m->nops, 0);        /* the ops' tables, while they are written */
    int reals = lua_gettop(L);
    lua_createtable(L, 0, 4);                   /* model */
    lua_createtable(L, (int)m->nops, 0);        /* model.ops: the views */
    int ops = lua_gettop(L);
    for (uint32_t i = 0; i < m->nops; i++) {
        push_op(&p, m->ops[i], i + 1, op_nfields(m->ops[i], &mp) + (b->shards != NULL));
        if (b->shards) set_int(&p, K_shard, b->shards[i]);
        if (m->ops[i]->has_dispatch) {
            lua_pushvalue(L, lazy_mt);
            lua_setmetatable(L, -2);
        }
        lua_pushvalue(L, -1);
        lua_rawseti(L, reals, (lua_Integer)i + 1);
        seal(&p);
        lua_rawseti(L, ops, (lua_Integer)i + 1);
    }
    /* groups: op.group = {signature, functional = op, inplace = op, out = op, ...} */
    lua_createtable(L, (int)m->ngroups, 0);
    int groups = lua_gettop(L);
    for (uint32_t g = 0; g < m->ngroups; g++) {
        const sg_group *gr = m->groups[g];
        lua_createtable(L, 0, SG_KIND__COUNT + 1);
        set_str(&p, K_signature, gr->signature);
        for (int k = 0; k < SG_KIND__COUNT; k++) {
            if (!gr->ops[k]) continue;
            lua_rawgeti(L, ops, opmap_get(&mp, gr->ops[k]));
            lua_setfield(L, -2, sg_schema_kind_names[k]);
        }
        seal(&p);
        for (int k = 0; k < SG_KIND__COUNT; k++) {
            if (!gr->ops[k]) continue;
            lua_rawgeti(L, reals, opmap_get(&mp, gr->ops[k])); /* op.group = this group */
            lua_pushvalue(L, -2);
            setk(&p, K_group);
            lua_pop(L, 1);
        }
        lua_rawseti(L, groups, (lua_Integer)g + 1);
    }
    seal(&p);
    lua_pushvalue(L, p.keys + K_groups);
    lua_insert(L, -2);
    lua_rawset(L, -4);                         /* model.groups */
    for (uint32_t i = 0; i < m->nops; i++) link_derived(&p, ops, reals, m->ops[i], i, &mp);
    push_sorted(&p, ops, m, b->order);
    lua_pushvalue(L, p.keys + K_sorted);
    lua_insert(L, -2);
    lua_rawset(L, -4);                         /* model.sorted */
    seal(&p);
    setk(&p, K_ops);

    lua_createtable(L, (int)m->ntags, 0);
    for (uint32_t i = 0; i < m->ntags; i++) {
        lua_createtable(L, 0, 2);
        set_str(&p, K_name, m->tags[i].name);
        set_str(&p, K_desc, m->tags[i].desc);
        seal(&p);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    seal(&p);
    setk(&p, K_tags);
    lua_createtable(L, (int)m->nsources, 0);
    for (uint32_t i = 0; i < m->nsources; i++) {
        lua_pushstring(L, m->sources[i]->path);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    seal(&p);
    setk(&p, K_files);
    push_type_families(&p);
    lua_setfield(L, -2, "type_families");
    seal(&p);
    if (z->tmp.oom || z->key.oom || z->lkey.oom) return luaL_error(L, "out of memory");
    return 1;
}

bool sg_lua_push_model(lua_State *L, const sg_model *m, const uint32_t *shards) {
    build b = {.m = m, .shards = shards, .order = malloc((m->nops ? m->nops : 1) * sizeof *b.order)};
    b.memo_arena = sg_arena_new(NULL, NULL);
    bool ok = opmap_init(&b.mp, m) && b.order && b.memo_arena &&
              sg_strmap_init(&b.memo, b.memo_arena, m->nops * 4 + 64) == 0;
    int  rc = LUA_OK;
    if (ok) {
        lua_pushcfunction(L, protected_build);
        lua_pushlightuserdata(L, &b);
        rc = lua_pcall(L, 1, 1, 0);
    }
    sg_strmap_free(&b.memo); /* none left where the build began: the state owns them then */
    sg_arena_free(b.memo_arena);
    opmap_free(&b.mp);
    free(b.order);
    if (rc != LUA_OK) lua_error(L); /* on, with its message, now that nothing of ours leaks */
    return ok;
}
