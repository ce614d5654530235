/* dsl_emit.c: LIB_dsl.c and LIB_dsl.h (docs/dsl.md, "What schemagen generates").
 *
 * Rationale: C emission, not a template. The predicates are compiled to C by dsl_expr.c, which
 * lives in C; a template would only paste strings made here, and the model the templates read
 * would grow a second, DSL-shaped half for one file.
 *
 * LIB_dsl.c holds, in order: the guard helpers the predicates call (each clears `ok` where the
 * value cannot be had, so a predicate is false where it would fault); per artifact its binary
 * as a byte array and its runtime slot; the artifact table; per declaration a `_when` function
 * (pure: the op's arguments and a capability in, the matching artifact's index out, or -1) and
 * a `_launch`; per override (the declarations of one op at one priority) the typed predicate
 * and implementation registered at the CUDA key; and LIB_dsl_init. */
#include "derive.h"
#include "dsl.h"
#include "dsl_emit.h"

#include <string.h>

/* Rationale: a declaration's test (sg_dslg_NAME_when) is inlined into its override's predicate
 * and implementation, so that a call it declines runs no prologue of its own. */
static const char inline_macro[] =
    "#if defined(__GNUC__)\n"
    "#define SG_DSLG_INLINE static inline __attribute__((always_inline))\n"
    "#else\n"
    "#define SG_DSLG_INLINE static inline\n"
    "#endif\n";

static const char helpers[] =
    "/* Rationale: not every declaration needs every helper. */\n"
    "#if defined(__GNUC__)\n"
    "#define SG_DSLG_HELPER static inline __attribute__((unused))\n"
    "#else\n"
    "#define SG_DSLG_HELPER static inline\n"
    "#endif\n"
    "/* Guards: where a value cannot be had (a division by zero, a dim or an index out of range,\n"
    " * None, an overflow), they clear *sg_ok and give 0, and the predicate is false. */\n"
    "SG_DSLG_HELPER int64_t sg_dslg_add(int64_t a, int64_t b, bool *sg_ok) {\n"
    "    int64_t r;\n"
    "    if (__builtin_add_overflow(a, b, &r)) *sg_ok = false, r = 0;\n"
    "    return r;\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_sub(int64_t a, int64_t b, bool *sg_ok) {\n"
    "    int64_t r;\n"
    "    if (__builtin_sub_overflow(a, b, &r)) *sg_ok = false, r = 0;\n"
    "    return r;\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_mul(int64_t a, int64_t b, bool *sg_ok) {\n"
    "    int64_t r;\n"
    "    if (__builtin_mul_overflow(a, b, &r)) *sg_ok = false, r = 0;\n"
    "    return r;\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_div(int64_t a, int64_t b, bool *sg_ok) {\n"
    "    if (b == 0 || (a == INT64_MIN && b == -1)) return *sg_ok = false, 0;\n"
    "    return a / b;\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_mod(int64_t a, int64_t b, bool *sg_ok) {\n"
    "    if (b == 0 || (a == INT64_MIN && b == -1)) return *sg_ok = false, 0;\n"
    "    return a % b;\n"
    "}\n"
    "SG_DSLG_HELPER double sg_dslg_fdiv(double a, double b, bool *sg_ok) {\n"
    "    if (b == 0) return *sg_ok = false, 0;\n"
    "    return a / b;\n"
    "}\n"
    "SG_DSLG_HELPER int sg_dslg_dtype(const sg_tensor *t, bool *sg_ok) {\n"
    "    return t ? t->dtype : (*sg_ok = false, -1);\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_dim(const sg_tensor *t, bool *sg_ok) {\n"
    "    return t ? t->ndim : (*sg_ok = false, 0);\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_numel(const sg_tensor *t, bool *sg_ok) {\n"
    "    return t ? sg_tensor_numel(t) : (*sg_ok = false, 0);\n"
    "}\n"
    "SG_DSLG_HELPER bool sg_dslg_contiguous(const sg_tensor *t, bool *sg_ok) {\n"
    "    return t ? sg_tensor_is_contiguous(t) : (*sg_ok = false, false);\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_offset(const sg_tensor *t, bool *sg_ok) {\n"
    "    return t ? t->offset : (*sg_ok = false, 0);\n"
    "}\n"
    "/* d wraps as aten's (-1 is the last dim); out of range: *sg_ok cleared */\n"
    "SG_DSLG_HELPER int64_t sg_dslg_wrap(const sg_tensor *t, int64_t d, bool *sg_ok) {\n"
    "    if (!t) return *sg_ok = false, -1;\n"
    "    if (d < 0) d += t->ndim;\n"
    "    if (d < 0 || d >= t->ndim) return *sg_ok = false, -1;\n"
    "    return d;\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_size(const sg_tensor *t, int64_t d, bool *sg_ok) {\n"
    "    d = sg_dslg_wrap(t, d, sg_ok);\n"
    "    return d < 0 ? 0 : t->sizes[d];\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_stride(const sg_tensor *t, int64_t d, bool *sg_ok) {\n"
    "    d = sg_dslg_wrap(t, d, sg_ok);\n"
    "    return d < 0 ? 0 : t->strides[d];\n"
    "}\n"
    "SG_DSLG_HELPER bool sg_dslg_aligned(const sg_tensor *t, int64_t n, bool *sg_ok) {\n"
    "    if (!t || n <= 0) return *sg_ok = false, false;\n"
    "    return (uintptr_t)sg_tensor_data(t) % (uint64_t)n == 0;\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_len(sg_int_list l) { return l.len; }\n"
    "/* i < 0 counts from the end, as in Python */\n"
    "SG_DSLG_HELPER int64_t sg_dslg_item(sg_int_list l, int64_t i, bool *sg_ok) {\n"
    "    if (i < 0) i += l.len;\n"
    "    if (i < 0 || i >= l.len) return *sg_ok = false, 0;\n"
    "    return l.items[i];\n"
    "}\n"
    "SG_DSLG_HELPER int64_t sg_dslg_opt_int(const int64_t *p, bool *sg_ok) {\n"
    "    return p ? *p : (*sg_ok = false, 0);\n"
    "}\n"
    "SG_DSLG_HELPER double sg_dslg_opt_float(const double *p, bool *sg_ok) {\n"
    "    return p ? *p : (*sg_ok = false, 0);\n"
    "}\n"
    "SG_DSLG_HELPER bool sg_dslg_opt_bool(const bool *p, bool *sg_ok) {\n"
    "    return p ? *p : (*sg_ok = false, false);\n"
    "}\n"
    "SG_DSLG_HELPER int sg_dslg_opt_dtype(const sg_dtype *p, bool *sg_ok) {\n"
    "    return p ? (int)*p : (*sg_ok = false, -1);\n"
    "}\n"
    "SG_DSLG_HELPER sg_int_list sg_dslg_opt_list(const sg_int_list *p, bool *sg_ok) {\n"
    "    sg_int_list none = {NULL, 0};\n"
    "    return p ? *p : (*sg_ok = false, none);\n"
    "}\n"
    "SG_DSLG_HELPER bool sg_dslg_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }\n"
    "/* CUDA's limits: x up to 2^31-1, y and z up to 65535 */\n"
    "SG_DSLG_HELPER bool sg_dslg_grid_ok(int64_t x, int64_t y, int64_t z) {\n"
    "    return x >= 0 && x <= INT32_MAX && y >= 0 && y <= 65535 && z >= 0 && z <= 65535;\n"
    "}\n";


/* ---- one override per op and priority ------------------------------------------------------
 * Rationale: declarations of one op at one priority (an op's float32 and bfloat16 kernels, say)
 * register one override, whose predicate tests the devices once and then each declaration's
 * points in order. A call they all decline then runs one predicate, not one per declaration:
 * that is what every call the DSL kernels do not take pays. */

/* Whether declarations a and c share an override. */
static bool same_override(const sg_dsl_decl *a, const sg_dsl_decl *c) {
    return !a->is_template && !c->is_template && a->op == c->op && a->priority == c->priority;
}

/* The first declaration of decl i's override. */
static uint32_t group_first(const sg_dsl_set *s, uint32_t i) {
    for (uint32_t j = 0; j < i; j++)
        if (same_override(s->decls[j], s->decls[i])) return j;
    return i;
}

/* The capability member dc is tested at: its one arch's as a constant, else the device's
 * (sg_cap). Rationale: an artifact is ready only on a device of exactly the capability it was
 * built for (sg_dsl_ready), so for a declaration of one arch the test at that capability
 * decides as the device's would wherever the artifact can run, and elsewhere readiness says
 * no. A decline then never asks the runtime for the capability. */
static void member_cap(sg_buf *b, const sg_dsl_decl *dc) {
    if (dc->narchs == 1)
        sg_buf_printf(b, "%d", (int)dc->caps[0]);
    else
        sg_buf_puts(b, "sg_cap");
}

/* The test of member dc: its point, and (ready) its artifact ready on the device. */
static void member_test(sg_buf *b, const sg_dsl_decl *dc, bool ready) {
    sg_buf_printf(b, "    if ((sg_i = sg_dslg_%s_when(", dc->name);
    sg_dsl_c_args(b, dc->op);
    sg_buf_puts(b, ", ");
    member_cap(b, dc);
    sg_buf_puts(b, ")) >= 0");
    if (ready)
        sg_buf_printf(b, " &&\n        sg_dsl_ready(&sg_dslg_artifacts[%u + sg_i], sg_dev)",
                      dc->first);
    sg_buf_puts(b, ")\n");
}

/* The predicate and implementation of the override of decl f and the later declarations that
 * share it, named after f. */
static void override_fns(sg_buf *b, const sg_dsl_set *s, uint32_t f) {
    const sg_dsl_decl *lead = s->decls[f];
    const sg_op *op = lead->op;
    const char *t = op->c->arg_cnames[sg_dsl_c_first_tensor(op)];
    uint32_t last = f;
    bool cap = false; /* a member of several archs needs the device's */
    sg_buf names;
    sg_buf_init(&names);
    for (uint32_t j = f; j < s->ndecls; j++)
        if (same_override(s->decls[j], lead)) {
            sg_buf_printf(&names, "%s%s", names.len ? ", " : "", s->decls[j]->name);
            cap |= s->decls[j]->narchs != 1;
            last = j;
        }
    const char *all = names.data ? names.data : "";
    const char *read_cap = cap ? "    int32_t sg_cap = sg_dsl_capability(sg_dev);\n" : "";
    sg_buf_printf(b, "/* ---- the override of %s at priority %d: %s ---- */\n\n", lead->op_name,
                  (int)lead->priority, all);
    sg_buf_printf(b, "/* Its predicate: %s's tensors on one CUDA device, whose capability and "
                  "the arguments\n * select an artifact that can run. */\n", t);
    sg_buf_printf(b, "static bool sg_dslg_%s_pred(void *sg_ctx, sg_keyset ks, ", lead->name);
    sg_dsl_c_params(b, op);
    sg_buf_puts(b, ") {\n    (void)sg_ctx, (void)ks;\n");
    sg_dsl_c_on_device(b, op, "return false");
    sg_buf_printf(b, "%s    int sg_i;\n", read_cap);
    for (uint32_t j = f; j <= last; j++)
        if (same_override(s->decls[j], lead)) {
            member_test(b, s->decls[j], true);
            sg_buf_puts(b, "        return true;\n");
        }
    sg_buf_puts(b, "    return false;\n}\n\n");

    /* the last declaration's artifact is not asked again whether it is ready: the predicate
     * held, so it was, unless an earlier declaration takes the call */
    sg_buf_puts(b, "/* Its implementation: finds the declaration and artifact again, as the "
                "predicate did, and\n * runs it. */\n");
    sg_buf_printf(b, "static sg_status sg_dslg_%s_impl(sg_keyset ks, ", lead->name);
    sg_dsl_c_params(b, op);
    sg_dsl_c_rets(b, op);
    sg_buf_puts(b, ") {\n    (void)ks;\n");
    sg_dsl_c_rets_null(b, op);
    sg_buf_printf(b, "    int sg_dev = %s->device.index;\n%s    int sg_i;\n", t, read_cap);
    /* the launch is given the capability: a parameter's value, the launch grid and an output's
     * sizes may name it */
    for (uint32_t j = f; j <= last; j++)
        if (same_override(s->decls[j], lead)) {
            member_test(b, s->decls[j], j != last);
            sg_buf_printf(b, "        return sg_dslg_%s_launch(sg_i, ", s->decls[j]->name);
            member_cap(b, s->decls[j]);
            sg_buf_puts(b, ", ");
            sg_dsl_c_args_rets(b, op);
            sg_buf_puts(b, ");\n");
        }
    sg_buf_printf(b, "    (void)sg_dev;\n    return sg_error(SG_ESTATE, \"%s: the DSL kernels of "
                  "%s were called for arguments their predicate declines\");\n}\n\n",
                  lead->op_name, all);
    if (names.oom) b->oom = true;
    sg_buf_free(&names);
}

/* "sg_sizes[k] = SIZE_k;" for output o at artifact a, each line after ind. */
static void sizes_c(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_output *o,
                    const sg_dsl_artifact *a, const char *ind) {
    for (uint32_t k = 0; k < o->nsizes; k++) {
        sg_buf_printf(b, "%ssg_sizes[%u] = ", ind, k);
        sg_dsl_c_expr(b, &o->sizes[k], dc, a);
        sg_buf_puts(b, ";\n");
    }
}

/* Made tensor j's own sizes into sg_sizes: once where they are the same C at every point, else
 * per point in a switch, as the dtypes of grid variables are. A failed guard cannot happen (the
 * predicate held for the same values) but is an error rather than a wrong size. */
static void eval_sizes(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_set *s, uint32_t j) {
    uint32_t i;
    const char *name;
    const sg_dsl_output *o = sg_dsl_c_made_tensor(dc, j, &name, &i);
    const sg_dsl_artifact *arts = &s->arts[dc->first];
    sg_buf first;
    sg_buf_init(&first);
    if (dc->nartifacts) sizes_c(&first, dc, o, &arts[0], "");
    bool same = dc->nartifacts && !first.oom;
    for (uint32_t k = 1; k < dc->nartifacts && same; k++) {
        sg_buf other;
        sg_buf_init(&other);
        sizes_c(&other, dc, o, &arts[k], "");
        same = !other.oom && other.len == first.len && memcmp(other.data, first.data,
                                                              first.len) == 0;
        sg_buf_free(&other);
    }
    sg_buf_free(&first);
    sg_buf_puts(b, "    {\n        bool sg_ok = true;\n");
    if (same) {
        sizes_c(b, dc, o, &arts[0], "        ");
    } else {
        sg_buf_puts(b, "        switch (sg_i) {\n");
        for (uint32_t k = 0; k < dc->nartifacts; k++) {
            sg_buf_printf(b, "        case %u: ", k);
            sg_dsl_c_point_comment(b, dc, &arts[k]);
            sg_buf_putc(b, '\n');
            sizes_c(b, dc, o, &arts[k], "            ");
            sg_buf_puts(b, "            break;\n");
        }
        sg_buf_puts(b, "        default: sg_ok = false; break;\n        }\n");
    }
    sg_buf_printf(b, "        if (!sg_ok) {\n            sg_st = sg_error(SG_ESTATE, \"%s: the DSL "
                  "kernels of %s were called for arguments their predicate declines (%s%u's "
                  "sizes)\");\n            goto sg_fail;\n        }\n    }\n", dc->op_name,
                  dc->name, name, i);
}

/* Made tensor j's sizes (its own; or like's, the last keep_last of them 1) and its tensor, on
 * the device of the first tensor (t); a scratch tensor's zeros are queued on the device's
 * current stream, before the launch. */
static void alloc_made(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_set *s, uint32_t j,
                       const char *t) {
    uint32_t i;
    const char *name;
    const sg_dsl_output *o = sg_dsl_c_made_tensor(dc, j, &name, &i);
    const char *like = dc->op->c->arg_cnames[o->like];
    if (o->nsizes) {
        eval_sizes(b, dc, s, j);
        sg_buf_printf(b, "    sg_st = sg_tensor_%s(sg_sizes, %u, ", o->zero ? "zeros" : "empty",
                      o->nsizes);
    } else if (o->keep_last) {
        sg_buf_printf(b, "    for (int32_t sg_d = 0; sg_d < %s->ndim; sg_d++)\n"
                      "        sg_sizes[sg_d] = sg_d >= %s->ndim - %lld ? 1 : %s->sizes[sg_d];\n",
                      like, like, (long long)o->keep_last, like);
        sg_buf_printf(b, "    sg_st = sg_tensor_empty(sg_sizes, %s->ndim, ", like);
    } else {
        sg_buf_printf(b, "    sg_st = sg_tensor_empty(%s->sizes, %s->ndim, ", like, like);
    }
    if (o->dtype >= 0)
        sg_buf_puts(b, sg_dsl_dtypes[o->dtype].cenum);
    else if (o->dtype_var >= 0)
        sg_buf_printf(b, "sg_%s%u_dtype", name, i);
    else
        sg_buf_printf(b, "(sg_dtype)%s->dtype", like);
    sg_buf_printf(b, ", %s->device, &sg_%s%u);\n    if (sg_st != SG_OK) goto sg_fail;\n",
                  o->nsizes ? t : like, name, i);
}

/* The end of a point's case, both kinds: where `declined` holds, an SG_ESTATE error (its
 * predicate held, so this cannot happen unless the arguments changed); then `grid` fills sg_grid
 * and the artifact runs on the device's current stream. */
static void launch_tail(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_artifact *a, uint32_t i,
                        const char *t, const char *declined, const char *grid) {
    sg_buf_printf(b, "        if (%s) {\n", declined);
    sg_buf_printf(b, "            sg_st = sg_error(SG_ESTATE, \"%s: the DSL kernel %s was called "
                  "for arguments its predicate declines\");\n"
                  "            goto sg_fail;\n        }\n",
                  dc->op_name, a->prefix);
    sg_buf_printf(b, "        %s\n", grid);
    sg_buf_printf(b, "        sg_st = sg_stream_current(%s->device, &sg_stream);\n", t);
    sg_buf_printf(b, "        if (sg_st == SG_OK)\n            sg_st = sg_dsl_launch("
                  "&sg_dslg_artifacts[%u], sg_dev, sg_grid, sg_args, sg_stream);\n"
                  "        break;\n    }\n", dc->first + i);
}

/* Scalar parameter k at artifact a: a local of its C type, and its address in sg_args. */
static void scalar_param(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_artifact *a, uint32_t k) {
    const sg_dsl_param *p = &dc->params[k];
    int         pd = p->grid_var >= 0 ? (int)a->vals[p->grid_var].i : p->base;
    const char *ctype = sg_dsl_dtypes[pd].ctype;
    sg_buf_printf(b, "        %s sg_v%u = (%s)(", ctype, k, ctype);
    sg_dsl_c_expr(b, &p->value, dc, a);
    sg_buf_printf(b, "); /* %s */\n        sg_args[%u] = &sg_v%u;\n", p->name, k, k);
}

/* An object artifact's call: each tensor a struct of its data and
 * its numel, each scalar a local; a zero grid where a tensor is empty (nothing runs). */
static void object_case(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_artifact *a, uint32_t i,
                        const char *t) {
    sg_buf_puts(b, "        uint32_t sg_run = 1;\n");
    for (uint32_t k = 0; k < dc->nparams; k++) {
        const sg_dsl_param *p = &dc->params[k];
        if (p->ptr) {
            sg_buf_puts(b, "        int64_t sg_n");
            sg_buf_printf(b, "%u = sg_dslg_numel(", k);
            sg_dsl_c_expr(b, &p->value, dc, a);
            sg_buf_printf(b, ", &sg_ok);\n        %s_Tensor_%s_t sg_t%u = {sg_tensor_data(",
                          a->prefix, p->name, k);
            sg_dsl_c_expr(b, &p->value, dc, a);
            sg_buf_printf(b, "), {(int32_t)sg_n%u}};\n", k);
            sg_buf_printf(b, "        sg_ok = sg_ok && sg_dslg_i32(sg_n%u);\n"
                          "        sg_run &= sg_n%u != 0;\n        sg_args[%u] = &sg_t%u; "
                          "/* %s */\n", k, k, k, k, p->name);
        } else {
            scalar_param(b, dc, a, k);
        }
    }
    launch_tail(b, dc, a, i, t, "!sg_ok", "sg_grid[0] = sg_run, sg_grid[1] = 1, sg_grid[2] = 1;");
}

/* One artifact's launch: its parameters marshalled, the hidden ones NULL, its grid. */
static void launch_case(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_artifact *a, uint32_t i,
                        const char *t) {
    sg_buf_printf(b, "    case %u: { ", i);
    sg_dsl_c_point_comment(b, dc, a);
    sg_buf_puts(b, "\n        bool sg_ok = true;\n");
    if (dc->lang->object) {
        object_case(b, dc, a, i, t);
        return;
    }
    for (uint32_t k = 0; k < dc->nparams; k++) {
        const sg_dsl_param *p = &dc->params[k];
        if (p->ptr) {
            sg_buf_printf(b, "        sg_p[%u] = sg_tensor_data(", k);
            sg_dsl_c_expr(b, &p->value, dc, a);
            sg_buf_printf(b, "); /* %s */\n", p->name);
        } else {
            scalar_param(b, dc, a, k);
        }
    }
    sg_buf_puts(b, "        int64_t sg_g[3] = {");
    for (int g = 0; g < 3; g++) {
        if (g) sg_buf_puts(b, ", ");
        sg_dsl_c_expr(b, &dc->launch_grid[g], dc, a);
    }
    sg_buf_puts(b, "};\n");
    launch_tail(b, dc, a, i, t, "!sg_ok || !sg_dslg_grid_ok(sg_g[0], sg_g[1], sg_g[2])",
                "for (int sg_d = 0; sg_d < 3; sg_d++)\n"
                "            sg_grid[sg_d] = (uint32_t)sg_g[sg_d];");
}

static void launch_fn(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_set *s) {
    const sg_op *op = dc->op;
    const char *t = op->c->arg_cnames[sg_dsl_c_first_tensor(op)];
    sg_buf_printf(b, "/* Launches artifact sg_i (its index among %s's, which its test took): "
                  "allocates the\n * outputs on %s's device and launches on its current stream. "
                  "*/\n", dc->name, t);
    sg_buf_printf(b, "static sg_status sg_dslg_%s_launch(int sg_i, int32_t sg_cap, ", dc->name);
    sg_dsl_c_params(b, op);
    sg_dsl_c_rets(b, op);
    sg_buf_puts(b, ") {\n    (void)sg_cap;\n");
    sg_dsl_c_void_args(b, op);
    sg_buf_printf(b, "    int sg_dev = %s->device.index;\n", t);
    sg_buf_puts(b, "    sg_status sg_st = SG_OK;\n");
    bool own = false; /* sizes not like's as they are */
    uint32_t most = 0, nmade = dc->noutputs + dc->nscratch, mi;
    const char *mn;
    for (uint32_t j = 0; j < nmade; j++) {
        const sg_dsl_output *o = sg_dsl_c_made_tensor(dc, j, &mn, &mi);
        own |= o->keep_last != 0 || o->nsizes != 0;
        if (o->nsizes > most) most = o->nsizes;
    }
    if (own) sg_buf_puts(b, "    int64_t sg_sizes[SG_MAX_DIMS];\n");
    if (most) /* dsl_launch.c allows SG_DSL_MAX_DIMS, which should be the runtime's */
        sg_buf_printf(b, "    _Static_assert(SG_MAX_DIMS >= %u, \"more sizes than the runtime's "
                      "SG_MAX_DIMS\");\n", most);
    for (uint32_t j = 0; j < nmade; j++) {
        sg_dsl_c_made_tensor(dc, j, &mn, &mi);
        sg_buf_printf(b, "    sg_tensor *sg_%s%u = NULL;\n", mn, mi);
    }
    bool per_point = false;
    for (uint32_t j = 0; j < nmade; j++)
        if (sg_dsl_c_made_tensor(dc, j, &mn, &mi)->dtype_var >= 0) {
            sg_buf_printf(b, "    sg_dtype sg_%s%u_dtype = SG_FLOAT32;\n", mn, mi);
            per_point = true;
        }
    /* dtypes that follow a grid variable are set per artifact before allocation */
    if (per_point) {
        sg_buf_puts(b, "    switch (sg_i) {\n");
        for (uint32_t i = 0; i < dc->nartifacts; i++) {
            const sg_dsl_artifact *a = &s->arts[dc->first + i];
            sg_buf_printf(b, "    case %u:", i);
            for (uint32_t j = 0; j < nmade; j++) {
                const sg_dsl_output *o = sg_dsl_c_made_tensor(dc, j, &mn, &mi);
                if (o->dtype_var >= 0)
                    sg_buf_printf(b, " sg_%s%u_dtype = %s;", mn, mi,
                                  sg_dsl_dtypes[a->vals[o->dtype_var].i].cenum);
            }
            sg_buf_puts(b, " break;\n");
        }
        sg_buf_puts(b, "    default: break;\n    }\n");
    }
    for (uint32_t j = 0; j < nmade; j++) alloc_made(b, dc, s, j, t);
    uint32_t maxargs = 0;
    for (uint32_t i = 0; i < dc->nartifacts; i++) {
        uint32_t n = dc->nparams + s->arts[dc->first + i].nhidden;
        if (n > maxargs) maxargs = n;
    }
    sg_buf_printf(b, "    void *sg_p[%u] = {NULL}, *sg_args[%u], *sg_stream = NULL;\n", maxargs + 1,
                  maxargs + 1);
    sg_buf_puts(b, "    uint32_t sg_grid[3];\n");
    sg_buf_printf(b, "    for (uint32_t sg_k = 0; sg_k < %u; sg_k++)\n"
                  "        sg_args[sg_k] = &sg_p[sg_k];\n", maxargs + 1);
    sg_buf_puts(b, "    switch (sg_i) {\n");
    for (uint32_t i = 0; i < dc->nartifacts; i++)
        launch_case(b, dc, &s->arts[dc->first + i], i, t);
    sg_buf_printf(b, "    default:\n        sg_st = sg_error(SG_ESTATE, \"%s: no DSL kernel %%d of "
                  "%s\", sg_i);\n        goto sg_fail;\n    }\n", dc->op_name, dc->name);
    /* scratch goes back at once: the allocator reuses it in the stream's order, after the
     * kernel (runtime/cuda.c) */
    for (uint32_t i = 0; i < dc->nscratch; i++)
        sg_buf_printf(b, "    sg_tensor_release(sg_scratch%u);\n    sg_scratch%u = NULL;\n", i, i);
    sg_buf_puts(b, "    if (sg_st != SG_OK) goto sg_fail;\n");
    for (uint32_t i = 0; i < dc->noutputs; i++)
        sg_buf_printf(b, "    *%s = sg_out%u;\n", op->c->ret_cnames[i], i);
    sg_buf_puts(b, "    return SG_OK;\nsg_fail:\n");
    for (uint32_t j = 0; j < nmade; j++) {
        sg_dsl_c_made_tensor(dc, j, &mn, &mi);
        sg_buf_printf(b, "    sg_tensor_release(sg_%s%u);\n", mn, mi);
    }
    sg_buf_puts(b, "    return sg_st;\n}\n\n");
}

/* The when_c functions, each once: defined in the user's .c files, which include this header
 * so that the compiler checks their definitions against what the predicates call. */
static void when_c_protos(sg_buf *h, const sg_dsl_set *s) {
    bool any = false;
    for (uint32_t i = 0; i < s->ndecls; i++) {
        const sg_dsl_decl *dc = s->decls[i];
        bool seen = false;
        for (uint32_t j = 0; j < i && dc->when_c; j++)
            seen |= s->decls[j]->when_c && strcmp(s->decls[j]->when_c, dc->when_c) == 0;
        if (!dc->when_c || seen) continue;
        if (!any)
            sg_buf_puts(h, "/* The C functions the declarations name with `when_c`, defined "
                        "in the user's .c files: each\n * is ANDed into the predicate after "
                        "`when`, and must be pure (no allocation, no CUDA\n * call; the same "
                        "arguments, the same answer). */\n");
        any = true;
        sg_buf_printf(h, "extern bool %s(", dc->when_c);
        sg_dsl_c_params(h, dc->op);
        sg_buf_puts(h, ");\n");
    }
    if (any) sg_buf_putc(h, '\n');
}

/* ---- the file ---------------------------------------------------------------------------- */

static void banner(sg_buf *b, const sg_dsl_set *s, const char *const *inputs, uint32_t ninputs) {
    sg_buf_printf(b, " * " SG_BANNER_HEAD "%s from ", SG_VERSION);
    for (uint32_t i = 0; i < ninputs; i++) {
        if (i) sg_buf_puts(b, ", ");
        sg_dsl_c_comment_text(b, inputs[i]);
    }
    sg_buf_puts(b, " and the DSL declarations ");
    for (uint32_t i = 0; i < s->nfiles; i++) {
        if (i) sg_buf_puts(b, ", ");
        sg_dsl_c_comment_text(b, s->files[i]);
    }
    sg_buf_printf(b, "%s */\n", sg_dsl_banner_mark);
}

/* An object artifact's module and the two hooks the runtime calls (runtime/sg_dsl.h): the
 * header's loader, whose failures the macro above keeps, and its wrapper. */
static void object_hooks(sg_buf *b, const sg_dsl_artifact *a) {
    const sg_dsl_decl *dc = a->decl;
    const char *p = a->prefix;
    sg_buf_printf(b, "static %s_Kernel_Module_t sg_dslg_%s_module;\n\n", p, p);
    sg_buf_printf(b, "static int sg_dslg_%s_load(void) {\n    sg_dslg_load_err = cudaSuccess;\n"
                  "    %s_Kernel_Module_Load(&sg_dslg_%s_module);\n"
                  "    return (int)sg_dslg_load_err;\n}\n\n", p, p, p);
    sg_buf_printf(b, "static int sg_dslg_%s_run(void **sg_a, void *sg_stream) {\n"
                  "    return (int)%s(&sg_dslg_%s_module", p, a->symbol, p);
    for (uint32_t k = 0; k < dc->nparams; k++) {
        const sg_dsl_param *q = &dc->params[k];
        int pd = q->grid_var >= 0 ? (int)a->vals[q->grid_var].i : q->base;
        if (q->ptr)
            sg_buf_printf(b, ",\n        (%s_Tensor_%s_t *)sg_a[%u]", p, q->name, k);
        else
            sg_buf_printf(b, ",\n        *(%s *)sg_a[%u]", sg_dsl_dtypes[pd].ctype, k);
    }
    sg_buf_printf(b, ",\n        (cudaStream_t)sg_stream);\n}\n"
                  "static sg_dsl_slot sg_dslg_%s_slot = SG_DSL_SLOT_INIT;\n\n", p);
}

static void image(sg_buf *b, const sg_dsl_artifact *a) {
    if (a->decl->lang->object) {
        object_hooks(b, a);
        return;
    }
    sg_buf_printf(b, "static const unsigned char sg_dslg_%s_image[%zu] = {", a->prefix,
                  a->image_size ? a->image_size : 1);
    for (size_t i = 0; i < a->image_size; i++)
        sg_buf_printf(b, "%s0x%02x,", i % 16 ? " " : "\n    ", a->image[i]);
    if (!a->image_size) sg_buf_puts(b, "0");
    sg_buf_printf(b, "\n};\nstatic sg_dsl_slot sg_dslg_%s_slot = SG_DSL_SLOT_INIT;\n\n", a->prefix);
}

/* The headers of the object artifacts, after the macro through which they report a
 * failure: their default prints, this keeps the first failure of the loader running on this
 * thread for its hook to return. */
static void object_headers(sg_buf *b, const sg_dsl_set *s) {
    bool any = false;
    for (uint32_t i = 0; i < s->narts; i++) {
        const sg_dsl_artifact *a = &s->arts[i];
        if (!a->decl->lang->object) continue;
        if (!any)
            sg_buf_puts(b, "#include <cuda_runtime.h>\n\n"
                        "static _Thread_local cudaError_t sg_dslg_load_err;\n\n"
                        "static void sg_dslg_load_check(cudaError_t sg_e) {\n"
                        "    if (sg_e != cudaSuccess && sg_dslg_load_err == cudaSuccess) "
                        "sg_dslg_load_err = sg_e;\n}\n"
                        "#define CUTE_DSL_CUDA_ERROR_CHECK(err) sg_dslg_load_check(err)\n");
        any = true;
        sg_buf_printf(b, "#include \"%s.h\"\n", a->prefix);
    }
    if (any) sg_buf_putc(b, '\n');
}

/* The artifacts; none where the declarations are decision tables over cuBLASLt alone. */
static void table(sg_buf *b, const sg_dsl_set *s) {
    if (!s->narts) return;
    sg_buf_printf(b, "static const sg_dsl_artifact sg_dslg_artifacts[%u] = {\n", s->narts);
    for (uint32_t i = 0; i < s->narts; i++) {
        const sg_dsl_artifact *a = &s->arts[i];
        int32_t cap = a->decl->caps[a->arch];
        if (a->decl->lang->object) {
            sg_buf_printf(b, "    {.prefix = \"%s\", .op = \"%s\", .dsl = \"%s\", .symbol = "
                          "\"%s\",\n     .cc_major = %d, .cc_minor = %d, .nparams = %u,\n"
                          "     .slot = &sg_dslg_%s_slot, .load = sg_dslg_%s_load, "
                          ".run = sg_dslg_%s_run},\n",
                          a->prefix, a->decl->op_name, a->decl->dsl, a->symbol, cap / 10,
                          cap % 10, a->decl->nparams, a->prefix, a->prefix, a->prefix);
            continue;
        }
        sg_buf_printf(b, "    {.prefix = \"%s\", .op = \"%s\", .dsl = \"%s\", .symbol = \"%s\",\n"
                      "     .cc_major = %d, .cc_minor = %d, .image = sg_dslg_%s_image,\n"
                      "     .image_size = sizeof sg_dslg_%s_image, .block_x = %u, .shared = %u,\n"
                      "     .nparams = %u, .slot = "
                      "&sg_dslg_%s_slot},\n",
                      a->prefix, a->decl->op_name, a->decl->dsl, a->symbol, cap / 10, cap % 10,
                      a->prefix, a->prefix, a->warps * 32, a->shared,
                      a->decl->nparams + a->nhidden, a->prefix);
    }
    sg_buf_puts(b, "};\n\n");
}

static void init_fn(sg_buf *b, const sg_dsl_set *s, const char *lib) {
    sg_buf_printf(b, "sg_status %s_dsl_init(void) {\n    sg_status sg_st = SG_OK;\n", lib);
    if (s->narts)
        sg_buf_printf(b, "    for (size_t sg_i = 0; sg_i < %u && sg_st == SG_OK; sg_i++)\n"
                      "        sg_st = sg_dsl_register(&sg_dslg_artifacts[sg_i]);\n", s->narts);
    for (uint32_t i = 0; i < s->ndecls + s->ntables; i++) {
        const sg_dsl_decl *dc = i < s->ndecls ? s->decls[i] : s->tables[i - s->ndecls]->dc;
        if (dc->is_template) continue; /* its tables register */
        if (i < s->ndecls && group_first(s, i) != i) continue; /* registered by its first */
        sg_buf_printf(b, "    if (sg_st == SG_OK)\n        sg_st = %s_override(SG_KEY_CUDA, %d, "
                      "sg_dslg_%s_pred, sg_dslg_%s_impl, NULL, NULL);\n", dc->op->c->cname,
                      dc->priority, dc->name, dc->name);
    }
    sg_buf_puts(b, "    return sg_st;\n}\n");
}

void sg_dsl_emit_c(sg_buf *c, sg_buf *h, const sg_dsl_set *s, const char *lib,
                   const char *const *inputs, uint32_t ninputs) {
    sg_buf_printf(h, "/* %s_dsl.h: the DSL kernels of %s (docs/dsl.md).\n", lib, lib);
    banner(h, s, inputs, ninputs);
    char guard[160];
    size_t k = 0;
    for (const char *q = lib; *q && k + 1 < sizeof guard; q++)
        guard[k++] = *q >= 'a' && *q <= 'z' ? (char)(*q - 'a' + 'A') : *q;
    guard[k] = '\0';
    sg_buf_printf(h, "#ifndef SG_GEN_%s_DSL_H\n#define SG_GEN_%s_DSL_H\n\n", guard, guard);
    sg_buf_puts(h, "#include \"sg_runtime.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    sg_buf_printf(h, "/* Registers the %u DSL kernel%s of %s and the overrides that route calls "
                  "to them at the\n * CUDA key; call once, after %s_init. */\n",
                  s->narts, s->narts == 1 ? "" : "s", lib, lib);
    sg_buf_printf(h, "sg_status %s_dsl_init(void);\n\n", lib);
    when_c_protos(h, s);
    sg_dsl_template_protos(h, s, lib);
    sg_buf_puts(h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");

    sg_buf_printf(c, "/* %s_dsl.c: the DSL kernels of %s: their binaries, launch table, "
                  "predicates and\n * registrations (docs/dsl.md).\n", lib, lib);
    banner(c, s, inputs, ninputs);
    sg_buf_printf(c, "#include \"%s.h\"\n#include \"%s_dsl.h\"\n#include \"sg_dsl.h\"\n"
                  "#include \"sg_gemm_table.h\"\n\n",
                  lib,
                  lib);
    sg_buf_puts(c, "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n");
    sg_buf_puts(c, inline_macro);
    sg_buf_puts(c, helpers);
    sg_buf_putc(c, '\n');
    object_headers(c, s);
    for (uint32_t i = 0; i < s->narts; i++) image(c, &s->arts[i]);
    table(c, s);
    for (uint32_t i = 0; i < s->ndecls; i++) {
        const sg_dsl_decl *dc = s->decls[i];
        sg_buf_printf(c, "/* ---- %s: %s (", dc->name, dc->op_name);
        sg_dsl_c_comment_text(c, dc->file);
        sg_buf_printf(c, ":%u) ---- */\n\n", dc->pos.line);
        sg_dsl_c_when(c, dc, s);
        launch_fn(c, dc, s);
        if (dc->is_template) sg_dsl_template_emit(c, dc, s, lib);
    }
    for (uint32_t i = 0; i < s->ndecls; i++)
        if (!s->decls[i]->is_template && group_first(s, i) == i) override_fns(c, s, i);
    sg_dsl_template_lists(c, s, lib);
    for (uint32_t i = 0; i < s->ntables; i++) sg_dsl_table_emit(c, s->tables[i]);
    init_fn(c, s, lib);
}
