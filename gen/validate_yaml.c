/* validate_yaml.c: torchgen's rules on the yaml keys of one aten entry (V-20..V-40, V-49).
 *
 * The loader already refuses unknown keys and values of the wrong shape (V-19, most of V-20);
 * here are the rules on what the values mean and how keys combine. Dispatch keys are one
 * table, with what torchgen knows of each. docs/rules.md lists the rules (SG-2xx).
 */
#include "validate_rules.h"

#include <stdio.h>
#include <string.h>

static bool contains(const char *s, const char *word) { return strstr(s, word) != NULL; }

/* ---- dispatch keys ----------------------------------------------------------------------- */

enum {
    DK_YAML       = 1u << 0, /* torchgen lets a native_functions.yaml entry use it */
    DK_COMPOSITE  = 1u << 1, /* an alias key for composite kernels (V-30) */
    DK_STRUCTURED = 1u << 2, /* torchgen generates structured kernels for it (V-32) */
    DK_UFUNC      = 1u << 3, /* torchgen generates ufunc kernels for it (V-31) */
};

/* Every key torchgen's DispatchKey knows that a user might write; DK_YAML marks the ones its
 * allow-list lets native_functions.yaml use (every key of PyTorch 2.11's file among them).
 * Rationale: a key torchgen knows but refuses gets its own message, not "unknown key". */
static const struct dispatch_key {
    const char *name;
    unsigned    flags;
} dispatch_keys[] = {
    {"CPU", DK_YAML | DK_STRUCTURED | DK_UFUNC},
    {"CUDA", DK_YAML | DK_STRUCTURED | DK_UFUNC},
    {"MPS", DK_YAML | DK_STRUCTURED},
    {"XPU", DK_YAML | DK_STRUCTURED},
    {"MTIA", DK_YAML | DK_STRUCTURED},
    {"HPU", DK_YAML},
    {"Meta", DK_YAML},
    {"MkldnnCPU", DK_YAML},
    {"ZeroTensor", DK_YAML},
    {"SparseCPU", DK_YAML},
    {"SparseCUDA", DK_YAML},
    {"SparseMPS", DK_YAML},
    {"SparseXPU", DK_YAML},
    {"SparseMeta", DK_YAML},
    {"SparseCsrCPU", DK_YAML},
    {"SparseCsrCUDA", DK_YAML},
    {"SparseCsrMPS", DK_YAML},
    {"SparseCsrXPU", DK_YAML},
    {"SparseCsrMeta", DK_YAML},
    {"QuantizedCPU", DK_YAML},
    {"QuantizedCUDA", DK_YAML},
    {"QuantizedXPU", DK_YAML},
    {"QuantizedMeta", DK_YAML},
    {"NestedTensorCPU", DK_YAML},
    {"NestedTensorCUDA", DK_YAML},
    {"NestedTensorXPU", DK_YAML},
    {"NestedTensorHPU", DK_YAML},
    {"NestedTensorMeta", DK_YAML},
    {"CompositeImplicitAutograd", DK_YAML | DK_COMPOSITE},
    {"CompositeImplicitAutogradNestedTensor", DK_YAML | DK_COMPOSITE},
    {"CompositeExplicitAutograd", DK_YAML | DK_COMPOSITE},
    {"CompositeExplicitAutogradNonFunctional", DK_YAML | DK_COMPOSITE},
    /* known to torchgen, refused in native_functions.yaml */
    {"Undefined", 0}, {"CatchAll", 0}, {"Dense", 0}, {"Sparse", 0}, {"SparseCsr", 0},
    {"Quantized", 0}, {"NestedTensor", 0}, {"FPGA", 0}, {"Vulkan", 0}, {"Metal", 0},
    {"HIP", 0}, {"XLA", 0}, {"Lazy", 0}, {"IPU", 0}, {"VE", 0}, {"MAIA", 0},
    {"PrivateUse1", 0}, {"PrivateUse2", 0}, {"PrivateUse3", 0}, {"BackendSelect", 0},
    {"Python", 0}, {"Named", 0}, {"Conjugate", 0}, {"Negative", 0}, {"Functionalize", 0},
    {"ADInplaceOrView", 0}, {"Autograd", 0}, {"AutogradOther", 0}, {"AutogradCPU", 0},
    {"AutogradCUDA", 0}, {"AutogradXPU", 0}, {"AutogradMPS", 0}, {"AutogradMeta", 0},
    {"AutogradNestedTensor", 0}, {"AutogradPrivateUse1", 0}, {"Tracer", 0},
    {"AutocastCPU", 0}, {"AutocastCUDA", 0}, {"AutocastXPU", 0}, {"Batched", 0},
    {"VmapMode", 0}, {"FuncTorchBatched", 0}, {"FuncTorchDynamicLayerFrontMode", 0},
    {"FuncTorchDynamicLayerBackMode", 0}, {"PreDispatch", 0}, {"PythonTLSSnapshot", 0},
    {"PythonDispatcher", 0}, {"FuncTorchBatchedDecomposition", 0},
};

enum { NKEYS = sizeof dispatch_keys / sizeof *dispatch_keys };

static const struct dispatch_key *find_dispatch_key(const char *name) {
    for (unsigned i = 0; i < NKEYS; i++)
        if (sgv_streq(dispatch_keys[i].name, name)) return &dispatch_keys[i];
    return NULL;
}

bool sg_dispatch_key_known(const char *name) { return find_dispatch_key(name) != NULL; }

static unsigned key_flags(const char *name) {
    const struct dispatch_key *k = find_dispatch_key(name);
    return k ? k->flags : 0;
}

/* V-26, every namespace: each key exists (a key that does not is a typo whatever the op's
 * namespace; c10 takes any existing key for a custom op, PrivateUse1 included). */
void sgv_check_dispatch_keys(sgv_ctx *cx, const sg_op *op) {
    for (uint32_t i = 0; i < op->ndispatch; i++) {
        const sg_dispatch *dl = &op->dispatch[i];
        for (uint32_t k = 0; k < dl->nkeys; k++)
            if (!find_dispatch_key(dl->keys[k]))
                SGV_ERROR(cx, dl->key_pos[k], "unknown dispatch key '%s' [SG-209]", dl->keys[k]);
    }
}

/* V-26, aten (torchgen's rule): each key allowed in a schema file's dispatch table; kernel names
 * with at most three namespaces. */
static void dispatch_keys_allowed(sgv_ctx *cx, const sg_op *op) {
    for (uint32_t i = 0; i < op->ndispatch; i++) {
        const sg_dispatch *dl = &op->dispatch[i];
        for (uint32_t k = 0; k < dl->nkeys; k++) {
            const struct dispatch_key *dk = find_dispatch_key(dl->keys[k]);
            if (dk && !(dk->flags & DK_YAML))
                SGV_ERROR(cx, dl->key_pos[k], "dispatch key '%s' cannot be used in a schema "
                          "file's dispatch table [SG-209]", dl->keys[k]);
        }
        uint32_t levels = 0;
        for (const char *p = dl->kernel; *p; p++)
            if (p[0] == ':' && p[1] == ':') levels++, p++;
        if (levels > 3)
            SGV_ERROR(cx, dl->pos, "kernel '%s' has %u namespace levels; at most 3 [SG-209]",
                      dl->kernel, levels);
    }
}

/* Whether key k of line i was given on an earlier line or earlier on its line; where. */
static bool given_before(const sg_op *op, uint32_t i, uint32_t k, sg_pos *first) {
    const char *key = op->dispatch[i].keys[k];
    for (uint32_t j = 0; j <= i; j++)
        for (uint32_t l = 0; l < (j < i ? op->dispatch[j].nkeys : k); l++)
            if (sgv_streq(key, op->dispatch[j].keys[l])) {
                *first = op->dispatch[j].key_pos[l];
                return true;
            }
    return false;
}

/* Up to this many keys a table is scanned; past it, its keys are hashed, so that a table of
 * very many keys takes linear time. */
enum { KEYS_SCANNED = 16 };

/* A key listed twice in one table: the later kernel would silently replace the first. */
void sgv_check_dispatch_once(sgv_ctx *cx, const sg_op *op) {
    uint32_t total = 0;
    for (uint32_t i = 0; i < op->ndispatch; i++) total += op->dispatch[i].nkeys;
    sg_strmap seen;
    bool      hashed = total > KEYS_SCANNED && sg_strmap_init(&seen, cx->m->arena, total) == 0;
    for (uint32_t i = 0; i < op->ndispatch; i++)
        for (uint32_t k = 0; k < op->dispatch[i].nkeys; k++) {
            const char     *key = op->dispatch[i].keys[k];
            const sg_pos   *at = &op->dispatch[i].key_pos[k];
            sg_strmap_slot *sl = hashed ? sg_strmap_put(&seen, key, strlen(key), (void *)at) : NULL;
            sg_pos          first;
            bool            twice;
            if (sl) {
                twice = sl->value != at;
                if (twice) first = *(const sg_pos *)sl->value;
            } else {
                hashed = false; /* out of memory: scanning gives the same answers */
                twice = given_before(op, i, k, &first);
            }
            if (twice) {
                SGV_ERROR(cx, *at, "dispatch key '%s' is given twice in one dispatch table "
                          "[SG-210]", key);
                SGV_NOTE(cx, first, "first given here");
            }
        }
}

/* torchgen's C++ name of the op: the name, with _out for an out operator. */
static void cpp_name(const sg_op *op, char *buf, size_t n) {
    bool out = false;
    for (uint32_t i = 0; i < op->schema.nargs; i++) out |= sg_arg_is_out(&op->schema, &op->schema.args[i]);
    snprintf(buf, n, "%s%s", op->schema.name, out ? "_out" : "");
}

/* V-27, V-28: a table whose only key is CompositeImplicitAutograd. */
static void sole_cia(sgv_ctx *cx, const sg_op *op) {
    if (op->ndispatch != 1 || op->dispatch[0].nkeys != 1 ||
        !sgv_streq(op->dispatch[0].keys[0], "CompositeImplicitAutograd"))
        return;
    const sg_dispatch *dl = &op->dispatch[0];
    char name[256];
    cpp_name(op, name, sizeof name);
    if (sgv_streq(dl->kernel, name))
        SGV_ERROR(cx, dl->pos, "this dispatch table says what having none says "
                  "(CompositeImplicitAutograd: %s); delete it [SG-211]", name);
    else if (!op->structured_delegate && !contains(dl->kernel, "_symint"))
        SGV_ERROR(cx, dl->pos, "a sole CompositeImplicitAutograd kernel must be named '%s', not "
                  "'%s': rename it and delete the dispatch table [SG-212]", name, dl->kernel);
}

static bool has_tensor_input(const sg_schema *s) {
    for (uint32_t i = 0; i < s->nargs; i++)
        if (!sg_arg_is_out(s, &s->args[i]) && sg_type_is_tensor_like(s->args[i].type)) return true;
    return false;
}

static bool starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && sgv_streq(s + n - k, suffix);
}

/* V-29: without a dispatch table an op is CompositeImplicitAutograd; factories may not be. */
static void factory_dispatch(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    if (op->has_dispatch || op->structured == SG_TRUE || op->structured_delegate) return;
    bool factory = starts_with(s->name, "new_") || ends_with(s->name, "_like") ||
                   (sgv_tensor_options(s, 0) >= 0 && !has_tensor_input(s));
    if (factory)
        SGV_ERROR(cx, sg_op_pos_at(op, s->name_offset), "factory function '%s' needs a dispatch "
                  "table (CompositeExplicitAutograd, say): factories must not decompose "
                  "implicitly [SG-213]", s->name);
}

/* V-30: one composite key, or CompositeImplicitAutogradNestedTensor beside another one that
 * is not CompositeExplicitAutogradNonFunctional. */
static void composites(sgv_ctx *cx, const sg_op *op) {
    uint32_t n = 0;
    bool nested = false, nonfunctional = false;
    sg_pos second = op->pos;
    for (uint32_t i = 0; i < op->ndispatch; i++)
        for (uint32_t k = 0; k < op->dispatch[i].nkeys; k++) {
            const char *key = op->dispatch[i].keys[k];
            if (!(key_flags(key) & DK_COMPOSITE)) continue;
            if (++n == 2) second = op->dispatch[i].key_pos[k];
            nested |= sgv_streq(key, "CompositeImplicitAutogradNestedTensor");
            nonfunctional |= sgv_streq(key, "CompositeExplicitAutogradNonFunctional");
        }
    if (n > 2 || (n == 2 && (!nested || nonfunctional)))
        SGV_ERROR(cx, second, "more than one composite kernel (CompositeExplicitAutograd, "
                  "CompositeExplicitAutogradNonFunctional, CompositeImplicitAutograd): each "
                  "subsumes the others; keep one [SG-214]");
}

/* V-25: manual registration and a dispatch table exclude each other. */
static void manual_registration(sgv_ctx *cx, const sg_op *op) {
    if (op->has_dispatch && op->manual_kernel_registration == SG_TRUE)
        SGV_ERROR(cx, sgv_key_pos(op, "manual_kernel_registration"), "manual_kernel_registration "
                  "and a dispatch table exclude each other: the table would have no effect "
                  "[SG-208]");
}

/* ---- ufunc_inner_loop (V-31) ------------------------------------------------------------- */

static bool ufunc_key_known(const char *k) {
    static const char *const keys[] = {"CUDAFunctor", "CUDAFunctorOnOther", "CUDAFunctorOnSelf",
                                       "CPUScalar", "CPUVector", "ScalarOnly", "Generic"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (sgv_streq(k, keys[i])) return true;
    return false;
}

/* "name (dtypes...)": a name, one space, a parenthesised list. */
static bool ufunc_value_ok(const sg_ynode *v) {
    const char *sp = v->kind == SG_Y_SCALAR ? strchr(v->text, ' ') : NULL;
    return sp && sp > v->text && sp[1] == '(' && v->len > 2 && v->text[v->len - 1] == ')';
}

static void ufunc(sgv_ctx *cx, const sg_op *op) {
    const sg_ynode *u = op->ufunc_inner_loop;
    if (!u) return;
    if (op->structured != SG_TRUE)
        SGV_ERROR(cx, u->pos, "ufunc_inner_loop needs 'structured: True' [SG-215]");
    for (uint32_t i = 0; i + 1 < u->nitems; i += 2) {
        const sg_ynode *k = u->items[i], *v = u->items[i + 1];
        if (k->kind != SG_Y_SCALAR || !ufunc_key_known(k->text))
            SGV_ERROR(cx, k->pos, "unknown ufunc key%s%s%s (expected Generic, ScalarOnly, "
                      "CPUScalar, CPUVector, CUDAFunctor, CUDAFunctorOnSelf or CUDAFunctorOnOther)"
                      " [SG-215]", k->kind == SG_Y_SCALAR ? " '" : "",
                      k->kind == SG_Y_SCALAR ? k->text : "", k->kind == SG_Y_SCALAR ? "'" : "");
        else if (!ufunc_value_ok(v))
            SGV_ERROR(cx, v->pos, "expected 'name (dtypes)' for ufunc key '%s' [SG-215]", k->text);
    }
    for (uint32_t i = 0; i < op->ndispatch; i++)
        for (uint32_t k = 0; k < op->dispatch[i].nkeys; k++)
            if (key_flags(op->dispatch[i].keys[k]) & DK_UFUNC)
                SGV_ERROR(cx, op->dispatch[i].key_pos[k], "a ufunc operator gets its %s kernel "
                          "generated; remove this entry [SG-215]", op->dispatch[i].keys[k]);
}

/* ---- structured kernels (V-21, V-23, V-32, V-35..V-37) ----------------------------------- */

static void delegate_keys(sgv_ctx *cx, const sg_op *op) {
    for (uint32_t i = 0; op->structured_delegate && i < op->ndispatch; i++)
        for (uint32_t k = 0; k < op->dispatch[i].nkeys; k++)
            if (key_flags(op->dispatch[i].keys[k]) & DK_STRUCTURED)
                SGV_ERROR(cx, op->dispatch[i].key_pos[k], "a structured_delegate operator takes "
                          "its %s kernel from its delegate; remove this entry [SG-216]",
                          op->dispatch[i].keys[k]);
}

static void structured_kind(sgv_ctx *cx, const sg_op *op) {
    sg_schema_kind k = sg_schema_kind_of(&op->schema);
    if (op->structured == SG_TRUE && k != SG_KIND_OUT)
        SGV_ERROR(cx, sgv_key_pos(op, "structured"), "'structured' belongs on the out variant; "
                  "this operator is %s (did you mean structured_delegate?) [SG-219]",
                  sg_schema_kind_names[k]);
    if (op->structured_delegate && k == SG_KIND_OUT)
        SGV_ERROR(cx, sgv_key_pos(op, "structured_delegate"), "an out operator cannot have a "
                  "structured_delegate (did you mean structured: True?) [SG-220]");
    if ((op->structured == SG_TRUE || op->structured_delegate) && op->device_guard == SG_FALSE)
        SGV_ERROR(cx, sgv_key_pos(op, "device_guard"), "structured kernels always use a device "
                  "guard; 'device_guard: False' is not allowed here [SG-219]");
    if (op->structured == SG_TRUE && op->structured_delegate)
        SGV_ERROR(cx, sgv_key_pos(op, "structured_delegate"), "an operator is structured or "
                  "delegates to a structured one, not both [SG-221]");
    if (op->structured_inherits && op->structured != SG_TRUE)
        SGV_ERROR(cx, sgv_key_pos(op, "structured_inherits"), "structured_inherits needs "
                  "'structured: True' [SG-221]");
    if (op->precomputed.n && op->structured != SG_TRUE)
        SGV_ERROR(cx, sgv_key_pos(op, "precomputed"), "precomputed needs 'structured: True' "
                  "[SG-205]");
}

static void no_namespace(sgv_ctx *cx, const sg_op *op, const char *key, const char *value) {
    if (value && contains(value, "::"))
        SGV_ERROR(cx, sgv_key_pos(op, key), "%s cannot name a namespace: it is always the "
                  "operator's own [SG-203]", key);
}

static void delegate_name(sgv_ctx *cx, const sg_op *op) {
    const char *d = op->structured_delegate;
    if (!d || strstr(d, "::")) return;
    const char *dot = strchr(d, '.');
    sgv_check_op_name(cx, d, dot ? (size_t)(dot - d) : strlen(d),
                      sgv_key_pos(op, "structured_delegate"), "structured_delegate");
}

static void autogen_names(sgv_ctx *cx, const sg_op *op) {
    for (uint32_t i = 0; i < op->autogen.n; i++) {
        const char *a = op->autogen.items[i], *dot = strchr(a, '.');
        sgv_check_op_name(cx, a, dot ? (size_t)(dot - a) : strlen(a), op->autogen.pos[i],
                          "autogen name");
    }
}

/* ---- precomputed (V-49) ------------------------------------------------------------------ */

static sg_pos pos_plus(sg_pos p, size_t off) {
    p.col += (uint32_t)off;
    return p;
}

/* One "TYPE name" of a precomputed line: a torchgen argument whose name is not all capitals. */
static void precomputed_decl(sgv_ctx *cx, const char *d, size_t n, sg_pos pos) {
    char text[320];
    sg_schema s;
    sg_schema_error err;
    int len = snprintf(text, sizeof text, "f(%.*s) -> ()", (int)n, d);
    bool ok = n < 256 && sg_schema_parse(text, (size_t)len, cx->m->arena, &s, &err) == SG_SCHEMA_OK
              && s.nargs == 1 && !s.star && !s.varargs && !s.args[0].default_text;
    if (!ok) {
        SGV_ERROR(cx, pos, "expected a parameter 'TYPE name' in precomputed, not '%.*s' "
                  "[SG-206]", (int)(n > 60 ? 60 : n), d);
        return;
    }
    bool lower = false;
    for (const char *c = s.args[0].name; *c; c++) lower |= *c >= 'a' && *c <= 'z';
    if (!lower)
        SGV_ERROR(cx, pos, "precomputed parameter '%s' is all capitals, like the template "
                  "parameters it would be confused with [SG-206]", s.args[0].name);
}

/* The comma-separated declarations of s[0..n), each checked at its place. */
static void precomputed_decls(sgv_ctx *cx, const char *s, size_t n, sg_pos pos, size_t base) {
    for (size_t i = 0, e; i <= n; i = e + 1) {
        const char *c = memchr(s + i, ',', n - i);
        e = c ? (size_t)(c - s) : n;
        size_t b = i, z = e;
        while (b < z && s[b] == ' ') b++;
        while (z > b && s[z - 1] == ' ') z--;
        precomputed_decl(cx, s + b, z - b, pos_plus(pos, base + b));
    }
}

static void precomputed(sgv_ctx *cx, const sg_op *op) {
    const sg_strlist *l = &op->precomputed;
    for (uint32_t i = 0; i < l->n; i++) {
        const char *line = l->items[i], *arrow = strstr(line, " -> ");
        if (!arrow && i + 1 < l->n) {
            SGV_ERROR(cx, l->pos[i], "only the last precomputed line may add parameters without "
                      "replacing one ('name -> TYPE new, ...') [SG-206]");
            continue;
        }
        if (!arrow) {
            precomputed_decls(cx, line, strlen(line), l->pos[i], 0);
            continue;
        }
        size_t name_len = (size_t)(arrow - line), off = name_len + 4;
        if (memchr(line, ' ', name_len) || !name_len || strstr(arrow + 4, " -> "))
            SGV_ERROR(cx, l->pos[i], "expected 'parameter -> TYPE name, ...' in precomputed "
                      "[SG-206]");
        else
            precomputed_decls(cx, line + off, strlen(line + off), l->pos[i], off);
    }
}

/* ---- other keys (V-20, V-22, V-24, V-33, V-34, V-38, V-39, V-40) --------------------------- */

static void device_check(sgv_ctx *cx, const sg_op *op) {
    const char *v = op->device_check;
    if (v && !sgv_streq(v, "NoCheck") && !sgv_streq(v, "ExactSame"))
        SGV_ERROR(cx, sgv_key_pos(op, "device_check"), "device_check is NoCheck or ExactSame, "
                  "not '%s' [SG-202]", v);
    if (starts_with(op->schema.name, "_foreach") && /* the full name starts as the name does */
        (!v || !sgv_streq(v, "NoCheck")))
        SGV_ERROR(cx, v ? sgv_key_pos(op, "device_check") : sg_op_pos_at(op, op->schema.name_offset),
                  "_foreach operators need 'device_check: NoCheck' (their kernels handle tensors "
                  "on different devices) [SG-223]");
}

static bool has_out_args(const sg_schema *s) {
    for (uint32_t i = s->npositional; i < s->nargs; i++)
        if (sg_arg_is_out(s, &s->args[i])) return true;
    return false;
}

static void variants_and_outs(sgv_ctx *cx, const sg_op *op) {
    bool outs = has_out_args(&op->schema);
    if (op->python_module && (op->variants & SG_VARIANT_METHOD))
        SGV_ERROR(cx, sgv_key_pos(op, "variants"), "an operator with a python_module cannot be "
                  "a method [SG-204]");
    if (outs && op->variants != SG_VARIANT_FUNCTION)
        SGV_ERROR(cx, sgv_key_pos(op, "variants"), "an operator with out arguments must have "
                  "'variants: function' only [SG-218]");
    if (outs && op->use_const_ref_for_mutable_tensors == SG_TRUE)
        SGV_ERROR(cx, sgv_key_pos(op, "use_const_ref_for_mutable_tensors"),
                  "use_const_ref_for_mutable_tensors is not supported on operators with out "
                  "arguments [SG-217]");
}

static void tags_known(sgv_ctx *cx, const sg_op *op) {
    for (uint32_t i = 0; cx->m->have_tags && i < op->tags.n; i++) {
        bool found = false;
        for (uint32_t t = 0; t < cx->m->ntags && !found; t++)
            found = sgv_streq(cx->m->tags[t].name, op->tags.items[i]);
        if (!found)
            SGV_ERROR(cx, op->tags.pos[i], "unknown tag '%s' (not in the tags file) [SG-207]",
                      op->tags.items[i]);
    }
}

static void no_default_args(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t i = 0; i < op->cpp_no_default_args.n; i++) {
        const char *name = op->cpp_no_default_args.items[i];
        const sg_arg *a = NULL;
        for (uint32_t k = 0; k < s->nargs && !a; k++)
            if (sgv_streq(s->args[k].name, name)) a = &s->args[k];
        if (!a || !a->default_text)
            SGV_ERROR(cx, op->cpp_no_default_args.pos[i], "cpp_no_default_args names '%s', "
                      "which is %s [SG-222]", name, a ? "an argument without a default"
                                                       : "not an argument");
    }
}

/* V-40: operators that look random must say so with the nondeterministic_seeded tag. */
static bool looks_random(const sg_op *op) {
    const sg_schema *s = &op->schema;
    char name[256];
    sgv_full_name(op, name, sizeof name);
    if (contains(name, "rand")) return true;
    bool dropout = contains(name, "dropout"), generator = false;
    for (uint32_t i = 0; i < s->nargs; i++) {
        dropout |= contains(s->args[i].name, "dropout");
        generator |= !sg_arg_is_out(s, &s->args[i]) &&
                     sg_type_base(s->args[i].type)->kind == SG_TY_GENERATOR;
    }
    return generator || (dropout && !contains(name, "backward") &&
                         !sgv_streq(s->name, "_cudnn_init_dropout_state"));
}

static void seeded_tag(sgv_ctx *cx, const sg_op *op) {
    if (looks_random(op) && !sgv_has_tag(op, "nondeterministic_seeded"))
        SGV_ERROR(cx, sg_op_pos_at(op, op->schema.name_offset), "'%s' is random (its name says "
                  "rand or dropout, or it takes a Generator) and needs the tag "
                  "nondeterministic_seeded [SG-224]", op->schema.name);
}

void sgv_check_yaml(sgv_ctx *cx, const sg_op *op) {
    dispatch_keys_allowed(cx, op);
    sole_cia(cx, op);
    factory_dispatch(cx, op);
    composites(cx, op);
    manual_registration(cx, op);
    ufunc(cx, op);
    delegate_keys(cx, op);
    structured_kind(cx, op);
    no_namespace(cx, op, "structured_delegate", op->structured_delegate);
    no_namespace(cx, op, "structured_inherits", op->structured_inherits);
    delegate_name(cx, op);
    autogen_names(cx, op);
    precomputed(cx, op);
    device_check(cx, op);
    variants_and_outs(cx, op);
    tags_known(cx, op);
    no_default_args(cx, op);
    seeded_tag(cx, op);
}
