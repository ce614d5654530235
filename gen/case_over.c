/* case_over.c: the case plan's override file (--case-overrides FILE, docs/conformance.md "The
 * overrides"): per-op facts the generic rules cannot know, one per line:
 *
 *     OP ARG KEY=VALUE...     sizes=2x3 | values=p | dtype=int64 (a tensor), token=i0 (others)
 *     OP case TOKEN...        an extra case, one token per schema argument
 *
 * OP is ns::name (every overload of name and of its in-place form name_) or ns::name.overload
 * (`-` for the overload-less one). Each line is checked against the model where it is read, so
 * a fact that names no op, no argument, or gives a token its argument cannot take is an error
 * at its column, never a case silently left as the rules made it. */
#include "cases.h"
#include "read_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ---------------------------------------------------------------------------------- */

static const char *const DTYPE_NAMES[] = {"float32", "float64", "float16", "bfloat16", "int64",
                                          "int32",   "int16",   "int8",    "uint8",    "bool"};

static bool is_dtype(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof DTYPE_NAMES / sizeof *DTYPE_NAMES; i++)
        if (strlen(DTYPE_NAMES[i]) == n && !memcmp(DTYPE_NAMES[i], s, n)) return true;
    return false;
}

static bool is_digits(const char *s, size_t n) {
    if (!n || n > 18) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

static bool is_int(const char *s, size_t n) { return n && *s == '-' ? is_digits(s + 1, n - 1)
                                                                     : is_digits(s, n); }

/* A float as the plan writes it: what strtod reads whole, or inf, -inf, nan. */
static bool is_float(const char *s, size_t n) {
    if ((n == 3 && !memcmp(s, "inf", 3)) || (n == 4 && !memcmp(s, "-inf", 4)) ||
        (n == 3 && !memcmp(s, "nan", 3)))
        return true;
    char buf[64], *end;
    if (!n || n >= sizeof buf || !((*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    errno = 0;
    (void)strtod(buf, &end);
    return *end == 0 && !errno;
}

/* `-` (0-d) or sizes joined by `x`: 2x3, 0x3, 1024 */
static bool is_sizes(const char *s, size_t n) {
    if (n == 1 && *s == '-') return true;
    for (size_t i = 0, j; i <= n; i = j + 1) {
        for (j = i; j < n && s[j] != 'x'; j++) {}
        if (!is_digits(s + i, j - i)) return false;
    }
    return n > 0;
}

/* sizes, or several joined by `,` (a Tensor[]'s items): at most 64 bytes and 8 items, so that
 * the Tensor[] token cases.c makes of them fits its buffer */
static bool is_sizes_list(const char *s, size_t n) {
    int items = 0;
    for (size_t i = 0, j; i <= n; i = j + 1, items++) {
        for (j = i; j < n && s[j] != ','; j++) {}
        if (!is_sizes(s + i, j - i)) return false;
    }
    return n <= 64 && items <= 8;
}

/* n, p, u, w, z, or xN with N >= 1 */
static bool is_values(const char *s, size_t n) {
    if (n == 1) return strchr("npuwz", *s) != NULL;
    return n > 1 && n <= 10 && *s == 'x' && is_digits(s + 1, n - 1) && strspn(s + 1, "0") < n - 1;
}

/* tDTYPE:SIZES:LAYOUT:VALUES */
static bool is_tensor_tok(const char *s, size_t n) {
    if (!n || *s != 't') return false;
    const char *f[4], *end = s + n, *p = s + 1;
    size_t      len[4];
    for (int k = 0; k < 4; k++) {
        const char *c = memchr(p, ':', (size_t)(end - p));
        if (k < 3 && !c) return false;
        f[k] = p;
        len[k] = (size_t)((k < 3 ? c : end) - p);
        p = k < 3 ? c + 1 : end;
    }
    return is_dtype(f[0], len[0]) && is_sizes(f[1], len[1]) && len[2] == 1 &&
           strchr("ctsoe", *f[2]) && is_values(f[3], len[3]);
}

/* l, or l ITEM,ITEM... with items of the kind (i int, f float, b 0/1) */
static bool is_list(const char *s, size_t n, char kind) {
    if (!n || *s != 'l') return false;
    if (n == 1) return true;
    for (size_t i = 1, j; i <= n; i = j + 1) {
        for (j = i; j < n && s[j] != ','; j++) {}
        bool ok = kind == 'i'   ? is_int(s + i, j - i)
                  : kind == 'f' ? is_float(s + i, j - i)
                                : j - i == 1 && (s[i] == '0' || s[i] == '1');
        if (!ok) return false;
    }
    return true;
}

/* T[] or T[ITEM,...] of tensor tokens (or N where none may be) */
static bool is_tensor_list(const char *s, size_t n, bool opt_items) {
    if (n < 3 || memcmp(s, "T[", 2) || s[n - 1] != ']') return false;
    if (n == 3) return true;
    for (size_t i = 2, j; i < n - 1; i = j + 1) {
        for (j = i; j < n - 1 && s[j] != ','; j++) {}
        if (!(is_tensor_tok(s + i, j - i) || (opt_items && j - i == 1 && s[i] == 'N')))
            return false;
    }
    return true;
}

static bool is_word(const char *s, size_t n) { return n > 0 && strcspn(s, " \t") >= n; }

const char *sg_case_token_misfit(sg_type_family_id fam, const char *tok) {
    size_t n = strlen(tok);
    bool   none = n == 1 && *tok == 'N';
    switch (fam) {
    case SG_FAM_OPT_TENSOR: if (none) return NULL; /* fall through */
    case SG_FAM_TENSOR:
        return is_tensor_tok(tok, n) ? NULL : "a tensor is tDTYPE:SIZES:LAYOUT:VALUES";
    case SG_FAM_TENSOR_LIST:
        return is_tensor_list(tok, n, false) ? NULL : "a Tensor[] is T[TENSOR,...]";
    case SG_FAM_OPT_TENSOR_LIST_OPT: if (none) return NULL; /* fall through */
    case SG_FAM_OPT_TENSOR_LIST:
        return is_tensor_list(tok, n, true) ? NULL : "a Tensor?[] is T[TENSOR or N,...]";
    case SG_FAM_OPT_INT: if (none) return NULL; /* fall through */
    case SG_FAM_INT: return *tok == 'i' && is_int(tok + 1, n - 1) ? NULL : "an int is iN";
    case SG_FAM_OPT_FLOAT: if (none) return NULL; /* fall through */
    case SG_FAM_FLOAT: return *tok == 'f' && is_float(tok + 1, n - 1) ? NULL : "a float is fX";
    case SG_FAM_OPT_BOOL: if (none) return NULL; /* fall through */
    case SG_FAM_BOOL:
        return n == 2 && *tok == 'b' && (tok[1] == '0' || tok[1] == '1') ? NULL
                                                                         : "a bool is b0 or b1";
    case SG_FAM_OPT_SCALAR: if (none) return NULL; /* fall through */
    case SG_FAM_SCALAR:
        return n > 2 && tok[0] == 's' &&
                       ((tok[1] == 'i' && is_int(tok + 2, n - 2)) ||
                        (tok[1] == 'f' && is_float(tok + 2, n - 2)) ||
                        (tok[1] == 'b' && n == 3 && (tok[2] == '0' || tok[2] == '1')))
                   ? NULL
                   : "a Scalar is siN, sfX or sb0/sb1";
    case SG_FAM_OPT_DTYPE: if (none) return NULL; /* fall through */
    case SG_FAM_DTYPE:
        return *tok == 'd' && is_dtype(tok + 1, n - 1) ? NULL : "a ScalarType is dNAME";
    case SG_FAM_OPT_LAYOUT: if (none) return NULL; /* fall through */
    case SG_FAM_LAYOUT: return *tok == 'y' && n > 1 ? NULL : "a Layout is yNAME";
    case SG_FAM_OPT_MEMORY_FORMAT: if (none) return NULL; /* fall through */
    case SG_FAM_MEMORY_FORMAT: return *tok == 'm' && n > 1 ? NULL : "a MemoryFormat is mNAME";
    case SG_FAM_OPT_DEVICE: if (none) return NULL; /* fall through */
    case SG_FAM_DEVICE: return *tok == 'v' && n > 1 ? NULL : "a Device is vNAME";
    case SG_FAM_OPT_STR: if (none) return NULL; /* fall through */
    case SG_FAM_STR: return *tok == 'q' ? NULL : "a str is qTEXT";
    case SG_FAM_OPT_STR_LIST: if (none) return NULL; /* fall through */
    case SG_FAM_STR_LIST: return *tok == 'w' && n > 1 ? NULL : "a str[] is wA,B";
    case SG_FAM_OPT_INT_LIST: if (none) return NULL; /* fall through */
    case SG_FAM_INT_LIST: return is_list(tok, n, 'i') ? NULL : "an int[] is l or lN,N...";
    case SG_FAM_OPT_FLOAT_LIST: if (none) return NULL; /* fall through */
    case SG_FAM_FLOAT_LIST: return is_list(tok, n, 'f') ? NULL : "a float[] is l or lX,X...";
    case SG_FAM_OPT_BOOL_LIST: if (none) return NULL; /* fall through */
    case SG_FAM_BOOL_LIST: return is_list(tok, n, 'b') ? NULL : "a bool[] is l or l0,1...";
    case SG_FAM_GENERATOR: return none ? NULL : "a Generator is N";
    default: return "the plan has no token for this type";
    }
}

/* ---- matching -------------------------------------------------------------------------------- */

bool sg_case_fact_names(const sg_case_fact *f, const sg_op *op) {
    if (!op->parsed || strcmp(op->ns, f->ns)) return false;
    const char *nm = op->schema.name;
    size_t      n = strlen(f->name);
    if (strncmp(nm, f->name, n) || (nm[n] && strcmp(nm + n, "_"))) return false;
    return !f->overload || !strcmp(op->schema.overload, f->overload);
}

static bool is_tensor_fam(sg_type_family_id f) {
    return f == SG_FAM_TENSOR || f == SG_FAM_OPT_TENSOR;
}

/* Whether a tensor fact (sizes=, values=, dtype=) applies to argument a of op: a tensor or a
 * Tensor[] (several sizes only there), values= not for one the op writes (out=: zeros). */
static bool tensor_fact_fits(const sg_case_fact *f, const sg_op *op, const sg_arg *a) {
    sg_type_family_id fam = sg_type_family_of(a->type);
    bool              list = fam == SG_FAM_TENSOR_LIST;
    if (!is_tensor_fam(fam) && !list) return false;
    if (f->sizes && strchr(f->sizes, ',') && !list) return false;
    return !(f->values && a->write && op->schema.kind == SG_KIND_OUT);
}

static const sg_arg *find_arg(const sg_op *op, const char *name) {
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        if (op->schema.args[i].name && !strcmp(op->schema.args[i].name, name))
            return &op->schema.args[i];
    return NULL;
}

/* ---- reading --------------------------------------------------------------------------------- */

typedef struct field {
    const char *s;
    size_t      n;
    uint32_t    col;
} field;

enum { MAX_FIELDS = 40 };

typedef struct reader {
    sg_case_overrides *ov;
    const sg_model    *m;
    const sg_source   *src;
    sg_diag           *d;
    uint32_t           line;
    int                nerr;
} reader;

static void err_at(reader *r, uint32_t col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void err_at(reader *r, uint32_t col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sg_diag_vreport(r->d, SG_ERROR, (sg_pos){r->src, r->line, col}, fmt, ap);
    va_end(ap);
    r->nerr++;
}

static char *dup(reader *r, const char *s, size_t n) {
    char *c = sg_arena_strndup(r->ov->a, s, n);
    if (!c) r->nerr++;
    return c;
}

/* The ops field names, or false (and an error) where it is malformed or names none. */
static bool read_selector(reader *r, const field *f, sg_case_fact *fact) {
    const char *sep = NULL;
    for (size_t i = 0; i + 1 < f->n; i++)
        if (f->s[i] == ':' && f->s[i + 1] == ':') {
            sep = f->s + i;
            break;
        }
    const char *dot = sep ? memchr(sep, '.', (size_t)(f->s + f->n - sep)) : NULL;
    const char *name_end = dot ? dot : f->s + f->n;
    if (!sep || sep == f->s || name_end == sep + 2 || (dot && dot + 1 == f->s + f->n)) {
        err_at(r, f->col, "'%.*s' names no op: write ns::name or ns::name.overload", (int)f->n,
               f->s);
        return false;
    }
    fact->ns = dup(r, f->s, (size_t)(sep - f->s));
    fact->name = dup(r, sep + 2, (size_t)(name_end - sep - 2));
    if (dot) {
        size_t on = (size_t)(f->s + f->n - dot - 1);
        fact->overload = on == 1 && dot[1] == '-' ? dup(r, "", 0) : dup(r, dot + 1, on);
    }
    if (!fact->ns || !fact->name || (dot && !fact->overload)) return false;
    for (uint32_t i = 0; i < r->m->nops; i++)
        if (sg_case_fact_names(fact, r->m->ops[i])) return true;
    err_at(r, f->col, "unknown op '%.*s' (no op of the schemas has this name%s)", (int)f->n, f->s,
           dot ? " and overload" : "");
    return false;
}

/* KEY=VALUE of an argument fact, checked alone (its argument is checked after). */
static bool read_pair(reader *r, const field *f, sg_case_fact *fact) {
    const char *eq = memchr(f->s, '=', f->n);
    static const char *const keys[] = {"sizes", "values", "dtype", "token"};
    const char             **slot[] = {&fact->sizes, &fact->values, &fact->dtype, &fact->token};
    size_t                   kn = eq ? (size_t)(eq - f->s) : f->n;
    for (int k = 0; k < 4; k++) {
        if (strlen(keys[k]) != kn || memcmp(keys[k], f->s, kn)) continue;
        const char *v = eq ? eq + 1 : f->s + f->n;
        size_t      vn = eq ? f->n - kn - 1 : 0;
        if (!vn) {
            err_at(r, f->col, "'%s' needs a value: %s=VALUE", keys[k], keys[k]);
            return false;
        }
        if (*slot[k]) {
            err_at(r, f->col, "'%s' given twice", keys[k]);
            return false;
        }
        bool ok = k == 0   ? is_sizes_list(v, vn)
                  : k == 1 ? is_values(v, vn)
                  : k == 2 ? is_dtype(v, vn)
                           : is_word(v, vn);
        static const char *const want[] = {
            ("sizes as the plan writes them (2x3, 0x3, 4; - for 0-d; a Tensor[]'s items joined "
             "by ',', at most 8 and 64 bytes)"),
            "a value kind (n, p, u, w, z, or xN for indices in [0, N), N of 9 digits at most)",
            "a dtype (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool)",
            "a plan token"};
        if (!ok) {
            err_at(r, (uint32_t)(f->col + kn + 1), "%s= takes %s, not '%.*s'", keys[k], want[k],
                   (int)vn, v);
            return false;
        }
        if (vn > 64) { /* sizes, a value kind and a dtype are shorter; a token of 64 bytes */
            err_at(r, (uint32_t)(f->col + kn + 1), "a value longer than 64 bytes");
            return false;
        }
        return (*slot[k] = dup(r, v, vn)) != NULL;
    }
    err_at(r, f->col, "unknown fact '%.*s' (sizes=, values=, dtype= or token=)", (int)kn, f->s);
    return false;
}

/* Checks an argument fact against the ops it names: some op has the argument, and a kind
 * that takes the fact. */
static bool check_arg_fact(reader *r, const sg_case_fact *fact, const field *sel,
                           const field *argf) {
    const sg_op  *with = NULL;
    const sg_arg *arg = NULL;
    bool          tensor = fact->sizes || fact->values || fact->dtype;
    for (uint32_t i = 0; i < r->m->nops; i++) {
        const sg_op  *op = r->m->ops[i];
        const sg_arg *a = sg_case_fact_names(fact, op) ? find_arg(op, fact->arg) : NULL;
        if (!a) continue;
        sg_type_family_id fam = sg_type_family_of(a->type);
        bool fits = tensor ? tensor_fact_fits(fact, op, a)
                           : !is_tensor_fam(fam) && fam != SG_FAM_TENSOR_LIST &&
                                 !sg_case_token_misfit(fam, fact->token);
        if (fits) return true;
        if (!with) with = op, arg = a;
    }
    if (!with) {
        err_at(r, argf->col, "no op that '%.*s' names has an argument '%s'", (int)sel->n, sel->s,
               fact->arg);
        return false;
    }
    sg_type_family_id fam = sg_type_family_of(arg->type);
    const char       *fname = sg_type_family_rows[fam].name;
    bool list = fam == SG_FAM_TENSOR_LIST;
    if (tensor && !is_tensor_fam(fam) && !list)
        err_at(r, argf->col, "'%s' of %s::%s is no tensor (%s): sizes=, values= and dtype= are "
               "for tensors", fact->arg, with->ns, with->schema.name, fname);
    else if (tensor && fact->sizes && strchr(fact->sizes, ',') && !list)
        err_at(r, argf->col, "'%s' of %s::%s is one tensor: sizes= gives one size, not a list",
               fact->arg, with->ns, with->schema.name);
    else if (tensor)
        err_at(r, argf->col, "'%s' of %s::%s is written (out=): it holds zeros, values= does not "
               "apply", fact->arg, with->ns, with->schema.name);
    else if (is_tensor_fam(fam) || list)
        err_at(r, argf->col, "'%s' of %s::%s is a tensor%s: give sizes=, values= or dtype=, "
               "not token=", fact->arg, with->ns, with->schema.name, list ? " list" : "");
    else
        err_at(r, argf->col, "token '%s' does not fit '%s' of %s::%s (%s): %s", fact->token,
               fact->arg, with->ns, with->schema.name, fname,
               sg_case_token_misfit(fam, fact->token));
    return false;
}

/* Checks an extra case: some op it names takes as many arguments, each token fitting. */
static bool check_case(reader *r, const sg_case_fact *fact, const field *sel, const field *toks) {
    const sg_op *near = NULL;
    uint32_t     bad = 0;
    for (uint32_t i = 0; i < r->m->nops; i++) {
        const sg_op *op = r->m->ops[i];
        if (!sg_case_fact_names(fact, op) || op->schema.nargs != fact->ntokens) continue;
        uint32_t k = 0;
        while (k < fact->ntokens &&
               !sg_case_token_misfit(sg_type_family_of(op->schema.args[k].type), fact->tokens[k]))
            k++;
        if (k == fact->ntokens) return true;
        if (!near) near = op, bad = k;
    }
    if (!near) {
        err_at(r, toks[0].col, "%u tokens, but no op that '%.*s' names takes %u arguments",
               fact->ntokens, (int)sel->n, sel->s, fact->ntokens);
        return false;
    }
    const sg_arg     *a = &near->schema.args[bad];
    sg_type_family_id fam = sg_type_family_of(a->type);
    err_at(r, toks[bad].col, "token '%s' does not fit '%s' of %s::%s%s%s (%s): %s",
           fact->tokens[bad], a->name ? a->name : "?", near->ns, near->schema.name,
           *near->schema.overload ? "." : "", near->schema.overload,
           sg_type_family_rows[fam].name, sg_case_token_misfit(fam, fact->tokens[bad]));
    return false;
}

static bool same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* An argument fact given on an earlier line for the same ops, argument and key: a slip. */
static void check_repeat(reader *r, const sg_case_fact *fact, const field *argf) {
    for (uint32_t i = 0; i < r->ov->n; i++) {
        const sg_case_fact *g = &r->ov->facts[i];
        if (!g->arg || strcmp(g->arg, fact->arg) || strcmp(g->ns, fact->ns) ||
            strcmp(g->name, fact->name) || !same(g->overload, fact->overload))
            continue;
        const char *key = fact->sizes && g->sizes     ? "sizes"
                          : fact->values && g->values ? "values"
                          : fact->dtype && g->dtype   ? "dtype"
                          : fact->token && g->token   ? "token"
                                                      : NULL;
        if (key)
            err_at(r, argf->col, "%s= of '%s' given before, at line %u", key, fact->arg,
                   g->pos.line);
    }
}

static void read_line(reader *r, const char *s, size_t n) {
    field f[MAX_FIELDS];
    int   nf = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i == n) break;
        size_t j = i;
        while (j < n && s[j] != ' ' && s[j] != '\t') j++;
        if (nf == MAX_FIELDS) {
            err_at(r, (uint32_t)i + 1, "more than %d fields on a line", MAX_FIELDS);
            return;
        }
        f[nf++] = (field){s + i, j - i, (uint32_t)i + 1};
        i = j;
    }
    if (!nf || *f[0].s == '#') return;
    sg_case_fact fact = {.pos = {r->src, r->line, f[0].col}};
    if (nf < 3) {
        err_at(r, f[0].col, "a line is 'OP ARG KEY=VALUE...' or 'OP case TOKEN...'");
        return;
    }
    if (!read_selector(r, &f[0], &fact)) return;
    bool ok = true;
    if (f[1].n == 4 && !memcmp(f[1].s, "case", 4)) {
        fact.ntokens = (uint32_t)(nf - 2);
        fact.tokens = sg_arena_alloc(r->ov->a, fact.ntokens * sizeof *fact.tokens);
        if (!fact.tokens) {
            r->nerr++;
            return;
        }
        for (int k = 2; k < nf; k++) {
            if (f[k].n > SG_CASE_TOKEN_MAX) {
                err_at(r, f[k].col, "a token longer than %d bytes", SG_CASE_TOKEN_MAX);
                return;
            }
            if (!(fact.tokens[k - 2] = dup(r, f[k].s, f[k].n))) return;
        }
        ok = check_case(r, &fact, &f[0], &f[2]);
    } else {
        if (!(fact.arg = dup(r, f[1].s, f[1].n))) return;
        for (int k = 2; k < nf && ok; k++) ok = read_pair(r, &f[k], &fact);
        if (ok && fact.token && (fact.sizes || fact.values || fact.dtype)) {
            err_at(r, f[1].col, "token= is for an argument that is no tensor, sizes=, values= "
                   "and dtype= for a tensor: not both");
            ok = false;
        }
        if (ok) ok = check_arg_fact(r, &fact, &f[0], &f[1]);
        if (ok) check_repeat(r, &fact, &f[1]);
    }
    if (!ok) return;
    if (r->ov->n == r->ov->cap) {
        uint32_t      cap = r->ov->cap ? 2 * r->ov->cap : 64;
        sg_case_fact *nf2 = realloc(r->ov->facts, cap * sizeof *nf2);
        if (!nf2) {
            r->nerr++;
            return;
        }
        r->ov->facts = nf2;
        r->ov->cap = cap;
    }
    r->ov->facts[r->ov->n++] = fact;
}

int sg_case_overrides_load(sg_case_overrides *ov, const sg_model *m, const char *path,
                           sg_diag *d) {
    memset(ov, 0, sizeof *ov);
    ov->a = sg_arena_new(NULL, NULL);
    sg_buf b;
    sg_buf_init(&b);
    if (!ov->a) {
        sg_diag_plain(d, SG_ERROR, "out of memory");
        return -1;
    }
    if (!sg_read_file(path, &b)) {
        sg_diag_plain(d, SG_ERROR, "cannot read '%s': %s", path, strerror(errno));
        sg_buf_free(&b);
        return -1;
    }
    sg_source *src = sg_arena_alloc(ov->a, sizeof *src);
    if (src) {
        src->path = sg_arena_strndup(ov->a, path, strlen(path));
        src->text = sg_arena_strndup(ov->a, b.data ? b.data : "", b.len);
        src->len = b.len;
    }
    sg_buf_free(&b);
    if (!src || !src->path || !src->text) {
        sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", path);
        return -1;
    }
    ov->path = src->path;
    reader      r = {ov, m, src, d, 0, 0};
    uint32_t    before = d->nerrors;
    const char *t = src->text, *end = t + src->len;
    while (t < end) {
        const char *nl = memchr(t, '\n', (size_t)(end - t));
        size_t      n = (size_t)((nl ? nl : end) - t);
        r.line++;
        read_line(&r, t, n && t[n - 1] == '\r' ? n - 1 : n);
        t += n + (nl != NULL);
    }
    if (r.nerr && d->nerrors == before) sg_diag_plain(d, SG_ERROR, "out of memory");
    return r.nerr ? -1 : 0;
}

void sg_case_overrides_free(sg_case_overrides *ov) {
    free(ov->facts);
    sg_arena_free(ov->a);
    memset(ov, 0, sizeof *ov);
}
