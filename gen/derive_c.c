/* derive_c.c: what code generation needs of each op, worked out once (derive.h, sg_op_c;
 * docs/derive.md, "C facts"): C names that compile, the kernel the generator writes, the
 * keys an op has kernels for. Templates read these through the model and never work them
 * out again, so every template agrees (docs/templates.md).
 *
 * C names. An op's is ns_name_overload; the generator adds the suffixes of FILE_SCOPE to it
 * for what it declares at file scope. Two ops whose names meet there (a_b and a.b both give
 * ns_a_b) are refused (SG-407), and so is an op whose names fall in the runtime's or the
 * implementation's space (SG-408). A parameter's name is its schema name, made safe:
 *   - a name in a reserved space (sg_, SG_, __, _ and a capital) gets the prefix arg_;
 *   - then `_` is appended while the name is taken: a C or C++ keyword, a name the runtime's
 *     headers define (bool, NULL, offsetof, *_t types, INT64_MAX and its kin), an include
 *     guard's (an upper-case name ending in _H, as the header's LIB_H), a name
 *     ending in _ops or _nops (the library's table, LIB_ops, whatever --lib is), a name the
 *     templates give a parameter beside the schema's (ks, outs), a name the generator gives
 *     any op at file scope, or the C name of an earlier argument or return of the op.
 * Returns are named ret (one unnamed), ret0, ret1, ... (several), ret_NAME (named), then the
 * same `_` rule. Every other name a template declares next to these starts with sg_.
 */
#include "derive.h"

#include "sg_type_table.h"
#include "validate_util.h"

#include <stdio.h>
#include <string.h>

/* What the generator appends to an op's C name for its file-scope declarations (templates/). */
static const char *const FILE_SCOPE[] = {"",          "_op",       "_fn",      "_kernel",
                                         "_redispatch", "_register", "_meta",    "_meta_fn",
                                         "_set_meta", "_composite", "_args",    "_rets",
                                         "_tags",     "_pred_fn",  "_override"};
enum { NSCOPE = sizeof FILE_SCOPE / sizeof FILE_SCOPE[0] };

/* C11 and C23 keywords, C++ keywords (the header is for C++ too), what the runtime's headers
 * (stdbool, stddef, stdint) define that the patterns in taken() do not catch, the macros GNU
 * C's dialects predefine outside the reserved space (gcc's default -std=gnu17 has linux and
 * unix, and i386 on 32-bit x86), and ks and outs, the templates' own parameters. */
static const char *const RESERVED[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "alignas",
    "alignof", "constexpr", "nullptr", "static_assert", "thread_local", "typeof",
    "typeof_unqual", "NULL", "offsetof", "complex", "imaginary", "I", "noreturn", "errno",
    "assert", "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t",
    "char32_t", "class", "compl", "concept", "consteval", "constinit", "const_cast", "co_await",
    "co_return", "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export",
    "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "operator", "or",
    "or_eq", "private", "protected", "public", "reinterpret_cast", "requires", "static_cast",
    "template", "this", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t",
    "xor", "xor_eq", "linux", "unix", "i386", "ks", "outs"};

bool sg_derive_c_reserved_word(const char *s) {
    for (size_t i = 0; i < sizeof RESERVED / sizeof RESERVED[0]; i++)
        if (strcmp(RESERVED[i], s) == 0) return true;
    return false;
}

bool sg_derive_c_identifier(const char *s, bool lower) {
    if (!*s || (*s >= '0' && *s <= '9')) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (!lower && *s >= 'A' && *s <= 'Z') || *s == '_' ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

const char *sg_derive_user_fn_reserved(const char *name) {
    size_t n = strlen(name);
    if ((name[0] == 's' || name[0] == 'S') && (name[1] == 'g' || name[1] == 'G') && name[2] == '_')
        return "its prefix is the runtime's and the generated code's (sg_, SG_)";
    if (name[0] == '_') return "names that start with '_' are the C implementation's";
    if (sg_derive_c_reserved_word(name))
        return "it is a C or C++ keyword or a name the runtime's headers define";
    if (n > 2 && strcmp(name + n - 2, "_t") == 0)
        return "names that end in '_t' are types (POSIX reserves them)";
    if (strcmp(name, "main") == 0) return "it is the program's entry point";
    return NULL;
}

typedef struct namer {
    sg_model *m;
    sg_diag  *d;
    sg_strmap   scope;    /* every op's file-scope names -> the op */
    sg_strmap   reserved; /* RESERVED's words, for a lookup per name */
    sg_buf    tmp;
    bool      oom;
} namer;

static bool ends_with(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static bool upper_only(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

/* Whether s starts in a space C names may not use: the runtime's sg_ and SG_, and the
 * implementation's __ and _X. */
static bool reserved_space(const char *s) {
    return strncmp(s, "sg_", 3) == 0 || strncmp(s, "SG_", 3) == 0 ||
           (s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z')));
}

/* Whether parameter name s[0..n) is taken (see the top of the file); names[0..k) are the
 * op's C names so far. */
static bool taken(const namer *x, const char *s, size_t n, const char *const *names, uint32_t k) {
    if (sg_strmap_get(&x->reserved, s, n)) return true;
    if (ends_with(s, n, "_t")) return true; /* stdint's types; POSIX reserves all of them */
    if (ends_with(s, n, "_ops") || ends_with(s, n, "_nops"))
        return true; /* the library's op table, LIB_ops and LIB_nops, whatever --lib is */
    if (upper_only(s, n) && (ends_with(s, n, "_MAX") || ends_with(s, n, "_MIN") ||
                             ends_with(s, n, "_WIDTH") || ends_with(s, n, "_C") ||
                             ends_with(s, n, "_H")))
        return true; /* stdint's limits and constant macros; include guards (LIB_H) */
    if (sg_strmap_get(&x->scope, s, n)) return true;
    for (uint32_t i = 0; i < k; i++)
        if (names[i] && strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return true;
    return false;
}

/* The C name of a parameter whose wanted name is in x->tmp, unique among names[0..k). */
static const char *param_name(namer *x, const char *const *names, uint32_t k) {
    sg_buf *b = &x->tmp;
    while (!b->oom && taken(x, b->data, b->len, names, k)) sg_buf_putc(b, '_');
    const char *s = b->oom ? NULL : sg_arena_strndup(x->m->arena, b->data, b->len);
    if (!s) x->oom = true;
    return s;
}

static void op_cname(sg_buf *b, const sg_op *op) {
    sg_buf_puts(b, op->ns ? op->ns : "aten");
    sg_buf_putc(b, '_');
    sg_buf_puts(b, op->schema.name);
    if (*op->schema.overload) {
        sg_buf_putc(b, '_');
        sg_buf_puts(b, op->schema.overload);
    }
}

static sg_pos name_pos(const sg_op *op) { return sg_op_pos_at(op, op->schema.name_offset); }

/* The op's C name, and its file-scope names into x->scope; SG-407 / SG-408 where they clash
 * or are reserved. */
static void name_op(namer *x, sg_op *op, sg_op_c *c) {
    sg_buf *b = &x->tmp;
    b->len = 0;
    op_cname(b, op);
    c->cname = b->oom ? NULL : sg_arena_strndup(x->m->arena, b->data, b->len);
    if (!c->cname) {
        x->oom = true;
        return;
    }
    char full[512];
    if (reserved_space(c->cname)) {
        sgv_full_name(op, full, sizeof full);
        sg_diag_report(x->d, SG_ERROR, name_pos(op),
                       "operator '%s::%s' would have the C name '%s', which is reserved (the "
                       "runtime's names start with sg_ and SG_, the C implementation's with "
                       "__ or _ and a capital); rename its namespace [SG-408]",
                       op->ns ? op->ns : "aten", full, c->cname);
        return;
    }
    size_t base = strlen(c->cname);
    for (int i = 0; i < NSCOPE; i++) {
        b->len = base;
        b->data[base] = '\0';
        sg_buf_puts(b, FILE_SCOPE[i]);
        if (b->oom) {
            x->oom = true;
            return;
        }
        sg_strmap_slot *s = sg_strmap_put(&x->scope, b->data, b->len, op);
        if (!s) {
            x->oom = true;
            return;
        }
        const sg_op *other = s->value;
        if (other == op) continue;
        char ofull[512];
        sgv_full_name(op, full, sizeof full);
        sgv_full_name(other, ofull, sizeof ofull);
        sg_diag_report(x->d, SG_ERROR, name_pos(op),
                       "operator '%s::%s' and operator '%s::%s' would both declare '%s' in "
                       "the generated C (an op ns::name.overload is named ns_name_overload); "
                       "rename one of them [SG-407]",
                       op->ns ? op->ns : "aten", full, other->ns ? other->ns : "aten", ofull,
                       b->data);
        sg_diag_report(x->d, SG_NOTE, name_pos(other), "'%s::%s' is defined here",
                       other->ns ? other->ns : "aten", ofull);
        return;
    }
}

/* Each argument's and return's C name (see the top of the file). */
static void name_params(namer *x, const sg_op *op, sg_op_c *c) {
    const sg_schema *s = &op->schema;
    sg_arena *a = x->m->arena;
    const char **names = sg_arena_alloc(a, (s->nargs + s->nrets + 1) * sizeof *names);
    if (!names) {
        x->oom = true;
        return;
    }
    sg_buf *b = &x->tmp;
    for (uint32_t i = 0; i < s->nargs; i++) {
        b->len = 0;
        if (reserved_space(s->args[i].name)) sg_buf_puts(b, "arg_");
        sg_buf_puts(b, s->args[i].name);
        names[i] = param_name(x, names, i);
    }
    for (uint32_t r = 0; r < s->nrets; r++) {
        b->len = 0;
        if (s->rets[r].name) sg_buf_printf(b, "ret_%s", s->rets[r].name);
        else if (s->nrets == 1) sg_buf_puts(b, "ret");
        else sg_buf_printf(b, "ret%u", r);
        names[s->nargs + r] = param_name(x, names, s->nargs + r);
    }
    c->arg_cnames = names;
    c->ret_cnames = names + s->nargs;
}

/* ---- the kernel the generator writes ----------------------------------------------------- */

static bool typed(const sg_op *op) { return !op->schema.varargs && !op->schema.varret; }

static bool plain_tensor(const sg_type *t) { return t->kind == SG_TY_TENSOR; }

static bool tensor_list(const sg_type *t) {
    return t->kind == SG_TY_LIST && t->elems[0]->kind == SG_TY_TENSOR;
}

/* Which composite kernel the generator writes for op (templates/ops_shard.c.tpl), or NULL:
 *   "structured"  a structured_delegate: meta function, then the structured out op;
 *   "out"         an autogen out variant of a functional or mutable op;
 *   "out_inplace" an autogen out variant of an in-place op (self copied into out, then run);
 *   "functional"  an autogen functional variant (what the op writes cloned first). */
static const char *composite_of(const sg_op *op) {
    const sg_schema *s = &op->schema;
    if (!typed(op)) return NULL;
    const sg_op *x = op->structured_out;
    if (x && typed(x)) {
        uint32_t nouts = 0;
        for (uint32_t i = 0; i < x->schema.nargs; i++) {
            const sg_arg *a = &x->schema.args[i];
            if (!sg_arg_is_out(&x->schema, a)) continue;
            if (!plain_tensor(a->type)) return NULL;
            nouts++;
        }
        for (uint32_t r = 0; r < s->nrets; r++)
            if (!plain_tensor(s->rets[r].type)) return NULL;
        if (nouts == 0) return NULL;
        sg_schema_kind k = sg_schema_kind_of(s);
        if (k == SG_KIND_FUNCTIONAL && s->nrets == nouts) return "structured";
        if (k == SG_KIND_INPLACE && nouts == 1 && s->nrets == 1) return "structured";
        return NULL;
    }
    const sg_op *b = op->autogen_from;
    if (!b || !typed(b) || !op->autogen_kind) return NULL;
    if (strcmp(op->autogen_kind, "out") == 0) {
        if (sg_schema_kind_of(&b->schema) != SG_KIND_INPLACE) return "out";
        const sg_type *self = s->nargs ? s->args[0].type : NULL;
        return self && (plain_tensor(self) || tensor_list(self)) ? "out_inplace" : NULL;
    }
    return strcmp(op->autogen_kind, "functional") == 0 ? "functional" : NULL;
}

/* The caller's argument named `name`, its nth of that name (from 1), or -1. */
static int32_t arg_named(const sg_schema *s, const char *name, uint32_t nth) {
    for (uint32_t i = 0; i < s->nargs; i++)
        if (strcmp(s->args[i].name, name) == 0 && --nth == 0) return (int32_t)i;
    return -1;
}

/* Where op's composite kernel takes each argument of the op it calls (sg_call_from), by name
 * (the nth of a name that occurs more than once); an argument op lacks is an option torchgen's
 * out variants drop. Returns false (an error in d) where op lacks one that cannot be made. */
static bool plan_callee_args(namer *x, const sg_op *op, sg_op_c *c) {
    const sg_op     *callee = op->structured_out ? op->structured_out : op->autogen_from;
    const sg_schema *s = &op->schema, *t = &callee->schema;
    c->callee = callee;
    sg_call_arg     *v = sg_arena_alloc(x->m->arena, (t->nargs ? t->nargs : 1) * sizeof *v);
    if (!v) return !(x->oom = true);
    int32_t out = -1; /* the caller's first out argument that is a tensor */
    for (uint32_t i = 0; i < s->nargs && out < 0; i++)
        if (sg_arg_is_out(s, &s->args[i]) && plain_tensor(s->args[i].type)) out = (int32_t)i;
    for (uint32_t i = 0; i < t->nargs; i++) {
        const sg_arg *a = &t->args[i];
        uint32_t      nth = 1;
        for (uint32_t j = 0; j < i; j++) nth += strcmp(t->args[j].name, a->name) == 0;
        int32_t k = arg_named(s, a->name, nth);
        bool    opt = a->type->kind == SG_TY_OPTIONAL || a->type->kind == SG_TY_GENERATOR;
        v[i].arg = k >= 0 ? (uint32_t)k : (uint32_t)(out >= 0 ? out : 0);
        if (op->structured_out && sg_arg_is_out(t, a)) v[i].from = SG_CALL_OWN;
        else if (k >= 0) v[i].from = SG_CALL_ARG;
        else if (strcmp(a->name, "dtype") == 0 && out >= 0) v[i].from = SG_CALL_DTYPE_OF;
        else if (strcmp(a->name, "device") == 0 && out >= 0) v[i].from = SG_CALL_DEVICE_OF;
        else if (opt) v[i].from = SG_CALL_NULL;
        else if (strcmp(a->name, "layout") == 0) v[i].from = SG_CALL_STRIDED;
        else if (strcmp(a->name, "pin_memory") == 0) v[i].from = SG_CALL_FALSE;
        else {
            char who[512], whom[512];
            sgv_full_name(op, who, sizeof who);
            sgv_full_name(callee, whom, sizeof whom);
            sg_diag_report(x->d, SG_ERROR, name_pos(op),
                           "the kernel generated for '%s::%s' calls '%s::%s', whose argument "
                           "'%s' it has no value for [SG-414]",
                           op->ns, who, callee->ns, whom, a->name);
            return false;
        }
    }
    c->callee_args = v;
    return true;
}

/* ---- the keys an op has kernels for ------------------------------------------------------- */

static bool composite_key(const char *k) {
    return strcmp(k, "CompositeImplicitAutograd") == 0 ||
           strcmp(k, "CompositeExplicitAutograd") == 0 ||
           strcmp(k, "CompositeExplicitAutogradNonFunctional") == 0 ||
           strcmp(k, "CompositeImplicitAutogradNestedTensor") == 0;
}

/* PyTorch's RegistrationDeclarations reading: the dispatch keys written (each once, in order),
 * or CompositeImplicitAutograd for an op with neither dispatch nor structured_delegate; a
 * backend kernel where a key is not a Composite* one or the op is a structured delegate. */
static void kernel_keys(namer *x, const sg_op *op, sg_op_c *c) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < op->ndispatch; i++) n += op->dispatch[i].nkeys;
    c->kernel_keys = sg_arena_alloc(x->m->arena, (n + 1) * sizeof *c->kernel_keys);
    if (!c->kernel_keys) {
        x->oom = true;
        return;
    }
    c->nkernel_keys = 0;
    c->implicit = !op->has_dispatch && !op->structured_delegate;
    if (c->implicit) c->kernel_keys[c->nkernel_keys++] = "CompositeImplicitAutograd";
    for (uint32_t i = 0; op->has_dispatch && i < op->ndispatch; i++)
        for (uint32_t k = 0; k < op->dispatch[i].nkeys; k++) {
            const char *key = op->dispatch[i].keys[k];
            bool seen = false;
            for (uint32_t j = 0; j < c->nkernel_keys && !seen; j++)
                seen = strcmp(c->kernel_keys[j], key) == 0;
            if (!seen) c->kernel_keys[c->nkernel_keys++] = key;
        }
    c->backend_kernel = op->structured_delegate != NULL;
    c->composite_kernel = false;
    for (uint32_t j = 0; j < c->nkernel_keys; j++) {
        if (composite_key(c->kernel_keys[j])) c->composite_kernel = true;
        else c->backend_kernel = true;
    }
    c->backend_must_implement = c->backend_kernel && !c->composite_kernel;
}

/* ---- signature strings -------------------------------------------------------------------- */

/* The op's signature string, "ttS>t": each argument's family letter, '>', each return's result
 * letter (what sg_call_boxed_sig boxes and unboxes by); and the name of its boxing adapter,
 * "boxed_" and the same letters but '_' for '>' and a fixed int list's size after its letter
 * (what the adapter's code depends on: ops with one name share one adapter). */
static void signatures(namer *x, const sg_op *op, sg_op_c *c) {
    const sg_schema *s = &op->schema;
    sg_buf *b = &x->tmp;
    for (int boxed = 0; boxed < 2; boxed++) {
        b->len = 0;
        if (boxed) sg_buf_puts(b, "boxed_");
        for (uint32_t i = 0; i < s->nargs; i++) {
            const sg_type *t = s->args[i].type;
            sg_type_family_id f = sg_type_family_of(t);
            sg_buf_putc(b, sg_type_family_rows[f].letter);
            const sg_type *u = t->kind == SG_TY_OPTIONAL ? t->elems[0] : t;
            if (boxed && (f == SG_FAM_INT_LIST || f == SG_FAM_OPT_INT_LIST) &&
                u->kind == SG_TY_LIST && u->size >= 0)
                sg_buf_printf(b, "%d", (int)u->size);
        }
        sg_buf_putc(b, boxed ? '_' : '>');
        for (uint32_t r = 0; r < s->nrets; r++)
            sg_buf_putc(b, sg_type_family_rows[sg_type_family_of(s->rets[r].type)].ret_letter);
        const char *t = b->oom ? NULL : sg_arena_strndup(x->m->arena, b->data, b->len);
        if (!t) x->oom = true;
        if (boxed) c->boxed_name = t;
        else c->signature = t;
    }
}

/* ---- the pass ---------------------------------------------------------------------------- */

int sg_model_derive_c(sg_model *m, sg_diag *d) {
    uint32_t before = d->nerrors;
    namer x = {.m = m, .d = d};
    sg_buf_init(&x.tmp);
    enum { NRESERVED = sizeof RESERVED / sizeof RESERVED[0] };
    x.oom = sg_strmap_init(&x.scope, m->arena, m->nops * NSCOPE + 16) != 0 ||
            sg_strmap_init(&x.reserved, m->arena, NRESERVED) != 0;
    for (size_t i = 0; !x.oom && i < NRESERVED; i++)
        x.oom = !sg_strmap_put(&x.reserved, RESERVED[i], strlen(RESERVED[i]), (void *)RESERVED[i]);
    /* the ops' names first: a parameter must not take any op's file-scope name */
    for (uint32_t i = 0; !x.oom && i < m->nops; i++) {
        sg_op *op = m->ops[i];
        op->c = NULL;
        if (!op->parsed) continue;
        sg_op_c *c = sg_arena_alloc(m->arena, sizeof *c);
        if (!c) {
            x.oom = true;
            break;
        }
        memset(c, 0, sizeof *c);
        name_op(&x, op, c);
        op->c = c;
    }
    for (uint32_t i = 0; !x.oom && i < m->nops; i++) {
        sg_op *op = m->ops[i];
        if (!op->c) continue;
        name_params(&x, op, op->c);
        op->c->composite = composite_of(op);
        if (op->c->composite && !plan_callee_args(&x, op, op->c)) op->c->composite = NULL;
        kernel_keys(&x, op, op->c);
        signatures(&x, op, op->c);
    }
    if (x.oom) sg_diag_plain(d, SG_ERROR, "out of memory while naming the generated C");
    sg_strmap_free(&x.scope);
    sg_strmap_free(&x.reserved);
    sg_buf_free(&x.tmp);
    return (int)(d->nerrors - before);
}

/* ---- the library's own names ------------------------------------------------------------- */

/* Whether file-scope name n is one the library `lib` declares itself (templates/ops.h.tpl). */
static bool library_name(const char *n, const char *lib, const char *upper) {
    size_t k = strlen(lib);
    if (strncmp(n, upper, k) == 0 && strcmp(n + k, "_H") == 0) return true; /* the guard */
    if (strncmp(n, lib, k) != 0 || n[k] != '_') return false;
    n += k + 1;
    return strcmp(n, "init") == 0 || strcmp(n, "find") == 0 || strcmp(n, "ops") == 0 ||
           strcmp(n, "nops") == 0 || strncmp(n, "boxed_", 6) == 0 || strncmp(n, "over_", 5) == 0;
}

int sg_derive_check_lib(const sg_model *m, const char *lib, sg_diag *d) {
    char upper[256], name[600], full[512];
    size_t k = lib ? strlen(lib) : 0;
    if (!k || k >= sizeof upper) return 0;
    for (size_t i = 0; i <= k; i++)
        upper[i] = (char)(lib[i] >= 'a' && lib[i] <= 'z' ? lib[i] - 'a' + 'A' : lib[i]);
    int errors = 0;
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (!op->c || !op->c->cname) continue;
        const char *cn = op->c->cname;
        if (strncmp(cn, lib, k) != 0 && strncmp(cn, upper, k) != 0) continue;
        for (int s = 0; s < NSCOPE; s++) {
            snprintf(name, sizeof name, "%s%s", cn, FILE_SCOPE[s]);
            if (!library_name(name, lib, upper)) continue;
            sgv_full_name(op, full, sizeof full);
            sg_diag_report(d, SG_ERROR, name_pos(op),
                           "operator '%s::%s' would declare '%s', which the generated library "
                           "'%s' declares itself; rename the operator or choose another --lib "
                           "[SG-409]",
                           op->ns ? op->ns : "aten", full, name, lib);
            errors++;
            break;
        }
    }
    return errors;
}

bool sg_derive_c_declares(const sg_strmap *cnames, const char *lib, const char *name) {
    char   upper[256];
    size_t k = strlen(lib), n = strlen(name);
    if (k < sizeof upper) {
        for (size_t i = 0; i <= k; i++)
            upper[i] = (char)(lib[i] >= 'a' && lib[i] <= 'z' ? lib[i] - 'a' + 'A' : lib[i]);
        if (library_name(name, lib, upper)) return true;
    }
    for (int s = 0; s < NSCOPE; s++)
        if (ends_with(name, n, FILE_SCOPE[s]) &&
            sg_strmap_get(cnames, name, n - strlen(FILE_SCOPE[s])))
            return true;
    return false;
}
