/* cli.c: the schemagen command line: options, the driver that runs the phases in order
 * (see run()), and the summary.
 *
 * The run has one rule that shapes the code: nothing leaves the process before every phase
 * has succeeded. Diagnostics accumulate in an sg_diag, outputs in sg_bufs; only at the end is
 * either the diagnostics or the outputs written.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include "cases.h"
#include "codegen.h"
#include "deriv.h"
#include "derive.h"
#include "dsl.h"
#include "emit.h"
#include "kernels.h"
#include "strmap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum emit_kind {
    EMIT_DEFAULT, EMIT_SUMMARY, EMIT_JSON, EMIT_CANONICAL, EMIT_DERIVATIVES, EMIT_CASES
} emit_kind;

typedef struct options {
    emit_kind    emit;
    const char  *outdir;          /* -o DIR, or NULL */
    const char **tags;            /* --tags FILE... */
    uint32_t     ntags;
    const char **inputs;          /* FILE... */
    uint32_t     ninputs;
    long         max_errors;      /* -1: the sg_diag default */
    const char  *lib;             /* --lib NAME */
    long         shard_size;      /* --shard-size N */
    long         shards;          /* --shards N (wins over --shard-size) */
    const char **template_dirs;   /* --templates DIR... */
    uint32_t     ntemplate_dirs;
    bool         user_only;       /* --no-builtin-templates */
    long long    template_budget; /* --template-budget N (0: the default) */
    bool         canonical_check; /* hidden: re-parse every canonical form */
    const char **dsl;             /* --dsl FILE... (docs/dsl.md) */
    uint32_t     ndsl;
    const char  *dsl_plan;        /* --dsl-plan FILE */
    const char  *dsl_artifacts;   /* --dsl-artifacts DIR */
    const char  *kernel_list;     /* --kernel-keys LIST, as given */
    const char  *derivatives;     /* --derivatives FILE (docs/autograd.md) */
    const char  *case_overrides;  /* --case-overrides FILE (docs/conformance.md) */
    sg_kernel_keys kernel_keys;   /* ... parsed (parse_args) */
    bool         help, version;
} options;

static const char usage_line[] = "usage: schemagen [options] FILE...\n";

static const char help_text[] =
    "\n"
    "Reads operator schema files (PyTorch's native_functions.yaml format) and tags\n"
    "files, checks them, and prints or writes the model they describe.\n"
    "\n"
    "options:\n"
    "  --emit=KIND       what to print on standard output:\n"
    "                      summary    counts of files, ops, namespaces, schema kinds,\n"
    "                                 groups, tags and diagnostics (the default\n"
    "                                 without -o)\n"
    "                      json       the model as JSON (docs/json-format.md)\n"
    "                      canonical  every schema in canonical form, one per line\n"
    "                      derivatives  the --derivatives entries read, one line\n"
    "                                 per formula\n"
    "                      cases      the conformance case plan, one line per\n"
    "                                 case (docs/conformance.md)\n"
    "  --case-overrides FILE\n"
    "                    with --emit=cases, read FILE's per-op facts (argument\n"
    "                    sizes, values, dtypes and tokens) and extra cases\n"
    "  -o, --output DIR  generate into DIR: the typed C API (LIB.h, which includes\n"
    "                    one header per shard, LIB_0.h, LIB_1.h, ...), each shard's\n"
    "                    wrappers, adapters and generated kernels (LIB_0.c, ...), the\n"
    "                    op table (LIB_table.c), LIB_registrations.json, and what\n"
    "                    user templates add. DIR is created if need be; the files\n"
    "                    are replaced as one set (a failed run leaves the previous\n"
    "                    set; runs into one DIR take turns), each only when its\n"
    "                    bytes change. With -o, nothing is printed unless --emit\n"
    "                    asks for it.\n"
    "  --lib NAME        the generated library's name (file and function prefix;\n"
    "                    default: ops)\n"
    "  --shard-size N    about N ops per shard of generated files (default: 200)\n"
    "  --shards N        exactly N shards of files (some may hold no op), so a build\n"
    "                    knows their names in advance\n"
    "  --templates DIR   also render DIR's templates (*.tpl, helpers in DIR/lib);\n"
    "                    one named like a built-in replaces it (docs/templates.md)\n"
    "  --no-builtin-templates\n"
    "                    render the --templates folders' templates alone, none of the\n"
    "                    built-in ones (their lib/ modules can still be imported)\n"
    "  --template-budget N\n"
    "                    Lua instructions one render of a template may run before it\n"
    "                    stops with an error (default: 1000000000)\n"
    "  --tags FILE       read FILE as a tags file (tags.yaml); a tags file given as a\n"
    "                    plain FILE is recognised by its content as well\n"
    "  --kernel-keys LIST\n"
    "                    with -o, declare the kernels the schemas name under these\n"
    "                    dispatch keys (comma-separated: CPU,CompositeExplicitAutograd;\n"
    "                    or all) in LIB_kernels.h, which LIB.h includes, and register\n"
    "                    them in LIB_init()\n"
    "  --derivatives FILE\n"
    "                    read FILE as derivatives.yaml against the schemas' aten ops\n"
    "                    (docs/autograd.md); --emit=derivatives prints what it holds\n"
    "  --dsl FILE        read FILE's DSL kernel declarations (docs/dsl.md); with -o,\n"
    "                    also write LIB_dsl.c and LIB_dsl.h (needs --dsl-artifacts)\n"
    "  --dsl-plan FILE   write the artifacts the --dsl declarations ask for to FILE\n"
    "                    (JSON), for the exporter\n"
    "  --dsl-artifacts DIR\n"
    "                    the exporter's sidecars and binaries (PREFIX.json,\n"
    "                    PREFIX.cubin), checked against the declarations\n"
    "  --max-errors=N    show at most N errors (default 20; 0: no limit)\n"
    "  -h, --help        print this help and exit\n"
    "  --version         print the version and exit\n"
    "\n"
    "When any input has an error, nothing is printed on standard output and no file\n"
    "is written: diagnostics go to standard error and the exit status is 1.\n"
    "Usage errors exit with status 2. The same inputs always give the same bytes.\n";

/* ---- options ----------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int usage_error(FILE *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("schemagen: error: ", err);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fputc('\n', err);
    fputs(usage_line, err);
    fputs("Try 'schemagen --help' for more information.\n", err);
    return SG_EXIT_USAGE;
}

/* Matches "--name=VALUE" or "--name VALUE" (and "-o VALUE", "-oVALUE" for short ones): sets
 * *val and returns 1, returns 0 when arg is another option, -1 when the value is missing. */
static int take_value(const char *name, int argc, char **argv, int *i, const char **val) {
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    bool is_short = name[1] != '-';
    if (arg[n] == '=' && !is_short) {
        *val = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0') {
        if (!is_short) return 0;
        *val = arg + n;
        return 1;
    }
    if (*i + 1 >= argc) return -1;
    *val = argv[++*i];
    return 1;
}

static int set_emit(options *o, const char *v, FILE *err) {
    if (strcmp(v, "summary") == 0)
        o->emit = EMIT_SUMMARY;
    else if (strcmp(v, "json") == 0)
        o->emit = EMIT_JSON;
    else if (strcmp(v, "canonical") == 0)
        o->emit = EMIT_CANONICAL;
    else if (strcmp(v, "derivatives") == 0)
        o->emit = EMIT_DERIVATIVES;
    else if (strcmp(v, "cases") == 0)
        o->emit = EMIT_CASES;
    else
        return usage_error(err, "unknown --emit kind '%s' (summary, json, canonical, "
                           "derivatives or cases)", v);
    return SG_EXIT_OK;
}

static int set_lib(options *o, const char *v, FILE *err) {
    bool ok = (*v >= 'A' && *v <= 'Z') || (*v >= 'a' && *v <= 'z') || *v == '_';
    for (const char *p = v; *p && ok; p++)
        ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
             *p == '_';
    if (!ok) return usage_error(err, "--lib needs a C identifier, not '%s'", v);
    o->lib = v;
    return SG_EXIT_OK;
}

static int set_count(long *out, const char *name, const char *v, FILE *err) {
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n <= 0 || n > 1000000 || errno)
        return usage_error(err, "%s needs a positive count, not '%s'", name, v);
    *out = n;
    return SG_EXIT_OK;
}

static int set_max_errors(options *o, const char *v, FILE *err) {
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 0 || errno)
        return usage_error(err, "--max-errors needs a count, not '%s'", v);
    o->max_errors = n > (long)UINT32_MAX ? (long)UINT32_MAX : n;
    return SG_EXIT_OK;
}

static int set_budget(options *o, const char *v, FILE *err) {
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || n <= 0 || errno)
        return usage_error(err, "--template-budget needs a positive count, not '%s'", v);
    o->template_budget = n;
    return SG_EXIT_OK;
}

/* One option that takes a value; returns -1 when arg is none of them. */
static int parse_valued(options *o, int argc, char **argv, int *i, FILE *err) {
    static const char *const names[] = {"--emit", "--output", "-o", "--tags", "--max-errors",
                                        "--lib", "--shard-size", "--templates", "--shards",
                                        "--template-budget", "--dsl", "--dsl-plan",
                                        "--dsl-artifacts", "--kernel-keys", "--derivatives",
                                        "--case-overrides"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *v = NULL;
        int r = take_value(names[k], argc, argv, i, &v);
        if (r == 0) continue;
        if (r < 0) return usage_error(err, "option '%s' needs a value", names[k]);
        switch (k) {
        case 0: return set_emit(o, v, err);
        case 1:
        case 2: o->outdir = v; return SG_EXIT_OK;
        case 3: o->tags[o->ntags++] = v; return SG_EXIT_OK;
        case 4: return set_max_errors(o, v, err);
        case 5: return set_lib(o, v, err);
        case 6: return set_count(&o->shard_size, names[k], v, err);
        case 7: o->template_dirs[o->ntemplate_dirs++] = v; return SG_EXIT_OK;
        case 8: return set_count(&o->shards, names[k], v, err);
        case 9: return set_budget(o, v, err);
        case 10: o->dsl[o->ndsl++] = v; return SG_EXIT_OK;
        case 11: o->dsl_plan = v; return SG_EXIT_OK;
        case 12: o->dsl_artifacts = v; return SG_EXIT_OK;
        case 13: o->kernel_list = v; return SG_EXIT_OK;
        case 14: o->derivatives = v; return SG_EXIT_OK;
        default: o->case_overrides = v; return SG_EXIT_OK;
        }
    }
    return -1;
}

static int parse_option(options *o, int argc, char **argv, int *i, FILE *err) {
    const char *arg = argv[*i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        o->help = true;
    else if (strcmp(arg, "--version") == 0)
        o->version = true;
    else if (strcmp(arg, "--canonical-check") == 0)
        o->canonical_check = true;
    else if (strcmp(arg, "--no-builtin-templates") == 0)
        o->user_only = true;
    else {
        int r = parse_valued(o, argc, argv, i, err);
        return r < 0 ? usage_error(err, "unknown option '%s'", arg) : r;
    }
    return SG_EXIT_OK;
}

static int parse_args(options *o, int argc, char **argv, FILE *err) {
    bool only_files = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_files && strcmp(arg, "--") == 0) {
            only_files = true;
        } else if (!only_files && arg[0] == '-' && arg[1] != '\0') {
            int r = parse_option(o, argc, argv, &i, err);
            if (r != SG_EXIT_OK) return r;
        } else {
            o->inputs[o->ninputs++] = arg;
        }
    }
    if (!o->help && !o->version && o->ninputs == 0 && o->ntags == 0)
        return usage_error(err, "no input files");
    if ((o->dsl_plan || o->dsl_artifacts) && !o->ndsl)
        return usage_error(err, "--dsl-plan and --dsl-artifacts need --dsl FILE");
    if (o->ndsl && o->outdir && !o->dsl_artifacts)
        return usage_error(err, "--dsl with -o needs --dsl-artifacts DIR (the exported kernels)");
    if (o->kernel_list && !o->outdir && !o->help && !o->version)
        return usage_error(err, "--kernel-keys needs -o DIR (it adds to the generated files)");
    if (o->user_only && (!o->outdir || !o->ntemplate_dirs) && !o->help && !o->version)
        return usage_error(err, "--no-builtin-templates needs -o DIR and --templates DIR (the "
                           "templates it renders)");
    if (o->case_overrides && o->emit != EMIT_CASES && !o->help && !o->version)
        return usage_error(err, "--case-overrides needs --emit=cases (it adds to the case plan)");
    if (o->kernel_list) {
        char msg[512];
        if (sg_kernel_keys_parse(&o->kernel_keys, o->kernel_list, msg, sizeof msg) != 0) {
            if (msg[0]) return usage_error(err, "%s", msg);
            fputs("schemagen: error: out of memory\n", err);
            return SG_EXIT_FAIL;
        }
    }
    return SG_EXIT_OK;
}

/* ---- summary ----------------------------------------------------------------------------- */

/* Names with counts, in order of first appearance; an index finds a name's count, so a model
 * with very many distinct names (namespaces, tags) takes linear time. */
typedef struct tally {
    const char **names;
    uint32_t    *counts;
    uint32_t     n, cap;
    bool         oom;
    sg_arena    *arena; /* the index's */
    sg_strmap    index; /* name -> its place + 1 */
} tally;

static void tally_init(tally *t) {
    *t = (tally){0};
    t->arena = sg_arena_new(NULL, NULL);
    t->oom = !t->arena || sg_strmap_init(&t->index, t->arena, 16) != 0;
}

static void tally_add(tally *t, const char *name) {
    if (t->oom) return;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 16;
        const char **names = realloc(t->names, cap * sizeof *names);
        if (names) t->names = names;
        uint32_t *counts = realloc(t->counts, cap * sizeof *counts);
        if (counts) t->counts = counts;
        if (!names || !counts) {
            t->oom = true;
            return;
        }
        t->cap = cap;
    }
    void           *place = (void *)(uintptr_t)(t->n + 1);
    sg_strmap_slot *sl = sg_strmap_put(&t->index, name, strlen(name), place);
    if (!sl) {
        t->oom = true;
    } else if (sl->value != place) {
        t->counts[(uintptr_t)sl->value - 1]++;
    } else {
        t->names[t->n] = name;
        t->counts[t->n++] = 1;
    }
}

static void tally_print(sg_buf *b, const tally *t) {
    for (uint32_t i = 0; i < t->n; i++)
        sg_buf_printf(b, "%s%s %u", i ? ", " : "", t->names[i], t->counts[i]);
    if (!t->n) sg_buf_puts(b, "none");
    sg_buf_putc(b, '\n');
}

static void tally_free(tally *t) {
    free(t->names);
    free(t->counts);
    sg_strmap_free(&t->index);
    sg_arena_free(t->arena);
}

static void summary_kinds(sg_buf *b, const sg_model *m) {
    uint32_t kinds[SG_KIND__COUNT] = {0};
    for (uint32_t i = 0; i < m->nops; i++)
        if (m->ops[i]->parsed) kinds[sg_schema_kind_of(&m->ops[i]->schema)]++;
    sg_buf_puts(b, "kinds:      ");
    for (int k = 0; k < SG_KIND__COUNT; k++)
        sg_buf_printf(b, "%s%s %u", k ? ", " : "", sg_schema_kind_names[k], kinds[k]);
    sg_buf_putc(b, '\n');
}

static void emit_summary(sg_buf *b, const sg_model *m, const sg_diag *d) {
    tally ns, tags;
    tally_init(&ns);
    tally_init(&tags);
    uint32_t tagged = 0;
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        tally_add(&ns, op->ns ? op->ns : "aten");
        tagged += op->tags.n != 0;
        for (uint32_t k = 0; k < op->tags.n; k++) tally_add(&tags, op->tags.items[k]);
    }
    sg_buf_printf(b, "files:      %u\n", m->nsources);
    sg_buf_printf(b, "ops:        %u\n", m->nops);
    sg_buf_puts(b, "namespaces: ");
    tally_print(b, &ns);
    summary_kinds(b, m);
    sg_buf_printf(b, "groups:     %u\n", m->ngroups);
    sg_buf_printf(b, "tags:       %u defined, %u used, on %u ops\n", m->ntags, tags.n, tagged);
    sg_buf_printf(b, "errors:     %u, warnings: %u\n", d->nerrors, d->nwarnings);
    if (ns.oom || tags.oom) b->oom = true;
    tally_free(&ns);
    tally_free(&tags);
}

/* ---- canonical check (hidden option, for conformance tests) ------------------------------ */

/* Prints every op in canonical form, parses that again and checks that the model and the
 * printed bytes come back identical. Mismatches are errors at the op's position. */
static void canonical_check(const sg_model *m, sg_diag *d) {
    sg_arena *arena = sg_arena_new(NULL, NULL);
    sg_buf first, second;
    sg_buf_init(&first);
    sg_buf_init(&second);
    for (uint32_t i = 0; arena && i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (!op->parsed) continue;
        first.len = second.len = 0;
        sg_emit_canonical_op(&first, op);
        sg_schema again;
        sg_schema_error e;
        if (first.oom || sg_schema_parse(first.data, first.len, arena, &again, &e) != SG_SCHEMA_OK) {
            sg_diag_report(d, SG_ERROR, op->pos, "canonical form does not parse: %s",
                           first.oom ? "out of memory" : e.msg);
            continue;
        }
        /* the listing names aten where the file did not */
        if (!op->schema.ns && again.ns && op->ns && strcmp(again.ns, op->ns) == 0) again.ns = NULL;
        sg_emit_schema(&second, op->ns, &again);
        if (!sg_schema_equal(&op->schema, &again))
            sg_diag_report(d, SG_ERROR, op->pos, "canonical form '%s' parses to another schema",
                           first.data);
        else if (second.len != first.len || memcmp(first.data, second.data, first.len) != 0)
            sg_diag_report(d, SG_ERROR, op->pos, "canonical form '%s' prints back as '%s'",
                           first.data, second.data);
    }
    if (!arena) sg_diag_plain(d, SG_ERROR, "out of memory");
    sg_buf_free(&first);
    sg_buf_free(&second);
    sg_arena_free(arena);
}

/* ---- writing ----------------------------------------------------------------------------- */

/* Renders the templates; diagnostics to d. */
static int generate(const options *o, const sg_model *m, const sg_kernel_set *kernels,
                    sg_outputs *outs, sg_diag *d) {
    sg_codegen_opts co = {
        .lib = o->lib ? o->lib : "ops",
        .shard_size = o->shard_size > 0 ? (uint32_t)o->shard_size : SG_DEFAULT_SHARD_SIZE,
        .shards = o->shards > 0 ? (uint32_t)o->shards : 0,
        .inputs = o->inputs,
        .ninputs = o->ninputs,
        .template_dirs = o->template_dirs,
        .ntemplate_dirs = o->ntemplate_dirs,
        .user_only = o->user_only,
        .budget = (uint64_t)o->template_budget,
        .kernels = kernels,
    };
    return sg_codegen(m, &co, outs, d);
}

/* ---- the run ----------------------------------------------------------------------------- */

static void load_inputs(sg_model *m, const options *o, sg_diag *d) {
    for (uint32_t i = 0; i < o->ntags; i++) {
        uint32_t nops = m->nops;
        sg_load_file(m, o->tags[i], d);
        if (m->nops != nops)
            sg_diag_plain(d, SG_ERROR, "'%s' was given with --tags but holds operator entries",
                          o->tags[i]);
    }
    for (uint32_t i = 0; i < o->ninputs; i++) sg_load_file(m, o->inputs[i], d);
    if (o->derivatives) {
        const sg_source *before = m->derivatives;
        uint32_t nops = m->nops, ntags = m->ntags;
        sg_load_file(m, o->derivatives, d);
        if (m->nops != nops || m->ntags != ntags || (m->derivatives == before && !d->nerrors))
            sg_diag_plain(d, SG_ERROR, "'%s' was given with --derivatives but is no derivatives "
                          "file (its entries are not 'name: SCHEMA')", o->derivatives);
    }
}

/* "2 errors and 1 warning generated." */
static void print_counts(FILE *err, const sg_diag *d) {
    unsigned e = d->nerrors, w = d->nwarnings;
    if (w) fprintf(err, "%u warning%s", w, w == 1 ? "" : "s");
    if (w && e) fputs(" and ", err);
    if (e) fprintf(err, "%u error%s", e, e == 1 ? "" : "s");
    if (w || e) fputs(" generated.\n", err);
}

static void emit(sg_buf *b, emit_kind kind, const sg_model *m, const sg_deriv_set *dv,
                 const sg_case_overrides *ov, const sg_diag *d) {
    if (kind == EMIT_DERIVATIVES)
        sg_deriv_emit(b, dv);
    else if (kind == EMIT_JSON)
        sg_emit_json(b, m);
    else if (kind == EMIT_CANONICAL)
        sg_emit_canonical(b, m);
    else if (kind == EMIT_CASES)
        sg_emit_cases(b, m, ov);
    else if (kind == EMIT_SUMMARY)
        emit_summary(b, m, d);
}

/* Hands a piece of the streamed text to standard output. */
static bool write_out(void *ud, const char *data, size_t len) {
    return fwrite(data, 1, len, ud) == len;
}

/* The last phase: the outputs into -o DIR, and the --emit text (or the summary) on standard
 * output. Runs only where every earlier phase succeeded. A run that fails here prints nothing
 * on standard output, unless writing it is what failed. So the text is made in memory before
 * anything is written, but for the JSON alone (megabytes for a big model): that is streamed
 * through a window of memory, as sg_emit_json takes all the memory it needs before its first
 * byte; with -o it is made in memory too, so that outputs that cannot be written leave
 * standard output empty. */
static int write_results(const options *o, const sg_model *m, const sg_deriv_set *dv,
                         const sg_case_overrides *ov, const sg_diag *d, const sg_outputs *outs,
                         const sg_buf *plan, FILE *out, FILE *err) {
    emit_kind kind = o->emit == EMIT_DEFAULT ? (o->outdir || o->ndsl ? EMIT_DEFAULT
                                                                         : EMIT_SUMMARY)
                                             : o->emit;
    bool stream = kind == EMIT_JSON && !o->outdir;
    sg_buf text;
    sg_buf_init(&text);
    if (stream) {
        sg_buf_set_sink(&text, write_out, out);
        sg_emit_json(&text, m);
    } else {
        emit(&text, kind, m, dv, o->case_overrides ? ov : NULL, d);
    }
    int rc = SG_EXIT_OK;
    if (text.oom) {
        fputs("schemagen: error: out of memory\n", err);
        rc = SG_EXIT_FAIL;
    } else if (o->outdir && sg_outputs_write(o->outdir, outs, err)) {
        rc = SG_EXIT_FAIL;
    } else if (o->dsl_plan && sg_dsl_write_file(o->dsl_plan, plan, err)) {
        rc = SG_EXIT_FAIL;
    } else if (!(stream ? sg_buf_flush(&text)
                        : fwrite(text.data ? text.data : "", 1, text.len, out) == text.len) ||
               fflush(out) != 0) {
        fprintf(err, "schemagen: error: cannot write the output: %s\n", strerror(errno));
        rc = SG_EXIT_FAIL;
    }
    sg_buf_free(&text);
    return rc;
}

/* The run: one phase after the other, each a function of the model, none calling a later one:
 *   load (read, YAML, schema strings) -> group -> validate -> derive -> render -> write.
 * Loading, grouping and validation run whatever the phases before them found, so one run
 * reports every error; the later phases run only on a model without errors, and nothing is
 * written unless every phase succeeded. */
/* The DSL declarations (docs/dsl.md), on a model that loaded without errors: the plan, the
 * artifacts' checks and, with -o, LIB_dsl.c and LIB_dsl.h among the outputs. */
static void run_dsl(const options *o, const sg_model *m, sg_dsl_set *ds, sg_outputs *outs,
                    sg_buf *plan, sg_diag *d) {
    for (uint32_t i = 0; i < o->ndsl; i++) sg_dsl_load(ds, m, o->dsl[i], d);
    if (d->nerrors == 0) sg_dsl_link_tables(ds, d);
    if (d->nerrors == 0 && o->dsl_plan) sg_dsl_plan(plan, ds);
    if (d->nerrors == 0 && o->dsl_artifacts) sg_dsl_read_artifacts(ds, o->dsl_artifacts, d);
    if (d->nerrors || !o->outdir) return;
    const char *lib = o->lib ? o->lib : "ops";
    if (sg_dsl_add_outputs(outs, ds, lib, o->inputs, o->ninputs) != 0)
        sg_diag_plain(d, SG_ERROR, "out of memory");
}

static int run(const options *o, sg_model *m, sg_diag *d, FILE *out, FILE *err) {
    sg_outputs outs = {0};
    sg_kernel_set ks = {0};
    sg_dsl_set ds;
    sg_deriv_set dv;
    sg_case_overrides ov = {0};
    sg_buf plan;
    sg_buf_init(&plan);
    int dsl_rc = sg_dsl_init(&ds), deriv_rc = sg_deriv_init(&dv); /* both, for the frees */
    if (dsl_rc != 0 || deriv_rc != 0) sg_diag_plain(d, SG_ERROR, "out of memory");
    load_inputs(m, o, d);
    sg_model_group(m, d);
    sg_validate(m, d);
    if (o->canonical_check && d->nerrors == 0) canonical_check(m, d);
    /* the case plan's overrides, against a model without errors (they name its ops) */
    if (o->case_overrides && d->nerrors == 0)
        sg_case_overrides_load(&ov, m, o->case_overrides, d);
    /* derivatives.yaml, against a model without errors (its entries name the model's ops) */
    if (d->nerrors == 0 && m->derivatives && sg_deriv_load(&dv, m, m->derivatives, d) == 0 &&
        sg_deriv_resolve(&dv, m) < 0)
        sg_diag_plain(d, SG_ERROR, "out of memory");
    if (o->emit == EMIT_DERIVATIVES && !m->derivatives && d->nerrors == 0)
        sg_diag_plain(d, SG_ERROR, "--emit=derivatives: no derivatives file among the inputs "
                      "(--derivatives FILE, or a derivatives.yaml given as FILE)");
    /* generation works on the derived model: structured links, autogen variants */
    if (o->outdir && d->nerrors == 0) sg_model_derive(m, d);
    /* the kernels the schemas name under --kernel-keys, on the ops' C names */
    if (o->outdir && d->nerrors == 0 && o->kernel_list)
        sg_kernels_plan(&ks, m, &o->kernel_keys, o->lib ? o->lib : "ops", d);
    if (o->outdir && d->nerrors == 0) generate(o, m, o->kernel_list ? &ks : NULL, &outs, d);
    /* a run without --dsl removes what an earlier run with it wrote */
    if (o->outdir && d->nerrors == 0 && (sg_dsl_mark_stale(&outs) != 0 ||
                                         sg_outputs_add_mark(&outs, sg_deriv_banner_mark) != 0))
        sg_diag_plain(d, SG_ERROR, "out of memory");
    if (o->outdir && m->derivatives && d->nerrors == 0 &&
        sg_deriv_add_outputs(&outs, &dv, m, o->lib ? o->lib : "ops", o->inputs, o->ninputs) != 0)
        sg_diag_plain(d, SG_ERROR, "out of memory");
    if (o->ndsl && d->nerrors == 0) run_dsl(o, m, &ds, &outs, &plan, d);
    fwrite(d->out.data ? d->out.data : "", 1, d->out.len, err);
    if (d->out.oom) /* the messages past this point could not be kept: say why they are missing */
        fputs("schemagen: error: out of memory; not every message could be shown\n", err);
    print_counts(err, d);
    bool failed = d->nerrors || d->out.oom;
    if (plan.oom) failed = true, fputs("schemagen: error: out of memory\n", err);
    int rc = failed ? SG_EXIT_FAIL : write_results(o, m, &dv, &ov, d, &outs, &plan, out, err);
    sg_case_overrides_free(&ov);
    sg_outputs_free(&outs);
    sg_kernels_free(&ks);
    sg_buf_free(&plan);
    sg_dsl_free(&ds);
    sg_deriv_free(&dv);
    return rc;
}

static int run_model(const options *o, FILE *out, FILE *err) {
    sg_model m;
    if (sg_model_init(&m) != 0) {
        fputs("schemagen: error: out of memory\n", err);
        return SG_EXIT_FAIL;
    }
    sg_diag d;
    sg_diag_init(&d);
    if (o->max_errors >= 0) d.max_errors = (uint32_t)o->max_errors;
    int rc = run(o, &m, &d, out, err);
    sg_diag_free(&d);
    sg_model_free(&m);
    return rc;
}

int sg_cli_main(int argc, char **argv, FILE *out, FILE *err) {
    options o = {.max_errors = -1};
    size_t n = argc > 0 ? (size_t)argc : 1;
    o.inputs = malloc(n * sizeof *o.inputs);
    o.tags = malloc(n * sizeof *o.tags);
    o.template_dirs = malloc(n * sizeof *o.template_dirs);
    o.dsl = malloc(n * sizeof *o.dsl);
    int rc = SG_EXIT_FAIL;
    if (!o.inputs || !o.tags || !o.template_dirs || !o.dsl)
        fputs("schemagen: error: out of memory\n", err);
    else if ((rc = parse_args(&o, argc, argv, err)) != SG_EXIT_OK)
        ;
    else if (o.help)
        rc = fputs(usage_line, out) < 0 || fputs(help_text, out) < 0 ? SG_EXIT_FAIL : SG_EXIT_OK;
    else if (o.version)
        rc = fputs("schemagen " SG_VERSION "\n", out) < 0 ? SG_EXIT_FAIL : SG_EXIT_OK;
    else
        rc = run_model(&o, out, err);
    free(o.inputs);
    free(o.tags);
    free(o.template_dirs);
    free(o.dsl);
    sg_kernel_keys_free(&o.kernel_keys);
    return rc;
}
