/* test_cpu_grad_reference.c: the generated Autograd kernels' gradients against PyTorch's own.
 *
 * tests/data/grad_reference.bin holds cases made by PyTorch 2.11 on the CPU
 * (tests/reference/make_grad_reference.py, whose docstring has the format in full): an aten op
 * of schemas/derivatives_core.yaml, its full boxed argument list, which tensor arguments require
 * grad, an upstream gradient per output tensor (or none), and the gradient torch gave each
 * tensor that requires grad (or None). Each case runs here as a user of the library runs it:
 * the arguments built (transposed and expanded ones as views), the marked ones made leaves that
 * require grad (for an in-place op, flag 1, argument 0 is passed as aten::clone of its leaf),
 * the op called boxed through the dispatcher (the Autograd kernels registered by
 * aten_autograd_init), sg_backward from the outputs with their upstream gradients, and each
 * leaf's .grad compared with torch's: dtype and shape exactly, elements within the case's
 * rtol/atol; a gradient where torch has None, or none where torch has one, fails.
 *
 * Not failures, but counted and named per op in the summary:
 * - not covered: the op's backward is not available here: the node's formula was not
 *   translated (sg_backward says SG_EUNSUPPORTED and why), or the op has no Autograd kernel
 *   of its own and its outputs come back without a grad_fn;
 * - not implemented: the forward has no kernel here (SG_ENOKERNEL, SG_EUNSUPPORTED).
 * Everything else fails: an error, a mismatch, an output that does not require grad where the
 * op has an Autograd kernel, a different number of output tensors, and a crash (the cases run in
 * child processes, tests/unit/ref_data.h, so one crash fails its case and the rest still run).
 *
 * The path may be given as the first argument; the test skips (77) where the file is missing;
 * a file that cannot be read, or is not such a file, fails with the byte where reading stopped
 * and why. SG_REF_VERBOSE=1 prints every case; SG_REF_NOFORK=1 runs them in this process.
 *
 * Built with SG_REF_CUDA (test_cuda_grad_reference) the same cases run on the GPU: arguments and
 * upstream gradients are built there, the gradients copied back to compare. It skips (77) where
 * no GPU is usable.
 *
 * Built with SG_REF_GRAD_CONFORMANCE (test_cpu_grad_conformance) it replays the gradients of the
 * conformance plan's cases instead (tests/conformance/oracle_grad.py, docs/conformance.md,
 * "Gradients"): versions 2 and 3 of the format (3 records each .grad's strides and storage
 * offset, compared as the results' are), whose label is the plan line and whose flags bit 1 says
 * torch raised (in the backward, or in the forward only under grad). Such a case passes where our
 * forward or backward fails too, or our results carry no history ("errors matched"), and fails
 * where ours gives gradients. A list argument's integer items never require grad. The file is
 * the first argument, else SG_REF_FILE; the list of the cases known to differ
 * (tests/conformance/differ_grad_cpu.txt) the second, else SG_REF_DIFFER: a listed case that
 * differs counts as "listed", one that agrees fails. "Not covered" reads "no derivative" there,
 * "not implemented" "no kernel", and the summary is per family as well as per op. With
 * SG_REF_CUDA too (test_cuda_grad_conformance) they run on the GPU, against differ_grad_cuda.txt. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, waitpid, alarm, strsignal */
#include "aten.h"
#include "aten_autograd.h"
#include "check.h"
#include "ref_data.h"
#include "ref_tally.h"
#include "sg_aten_cpu.h"
#ifdef SG_REF_CUDA
#include "sg_aten_cuda.h"
#endif

#ifndef SG_TESTS_DIR
#define SG_TESTS_DIR "tests"
#endif

#if defined(SG_REF_CUDA) && defined(SG_REF_GRAD_CONFORMANCE)
#define TEST_NAME "test_cuda_grad_conformance"
#define AUTOGRAD_KEY SG_KEY_AUTOGRAD_CUDA
#elif defined(SG_REF_CUDA)
#define TEST_NAME "test_cuda_grad_reference"
#define AUTOGRAD_KEY SG_KEY_AUTOGRAD_CUDA
#elif defined(SG_REF_GRAD_CONFORMANCE)
#define TEST_NAME "test_cpu_grad_conformance"
#define AUTOGRAD_KEY SG_KEY_AUTOGRAD_CPU
#else
#define TEST_NAME "test_cpu_grad_reference"
#define AUTOGRAD_KEY SG_KEY_AUTOGRAD_CPU
#endif

#ifdef SG_REF_GRAD_CONFORMANCE
#define REF_FILE     "conformance_grad.bin"
#define REF_MAKER    "tests/conformance/oracle_grad.py"
#define REF_VMIN     2 /* version 3 records the gradients' geometry */
#define REF_VERSION  3
#define UNCOVERED_AS "no derivative"
#define NOIMPL_AS    "no kernel"
#else
#define REF_FILE     "grad_reference.bin"
#define REF_MAKER    "tests/reference/make_grad_reference.py"
#define REF_VMIN     1
#define REF_VERSION  1
#define UNCOVERED_AS "not covered"
#define NOIMPL_AS    "not implemented yet"
#endif

/* FLAG_RAISED: version 2 only */
enum { MAX_ITEMS = 255, FLAG_INPLACE = 1, FLAG_RAISED = 2 };

static sg_status init_library(void) {
#ifdef SG_REF_CUDA
    sg_status st = sg_aten_cuda_init();
#else
    sg_status st = sg_aten_cpu_init();
#endif
    return st ? st : aten_autograd_init();
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct gcase {
    char       *family, *name, *overload, *label;
    char       *error; /* FLAG_RAISED: what torch raised */
    uint8_t     flags;
    double      rtol, atol;
    int         nargs, nout, nwant;
    value       args[MAX_ITEMS];
    uint8_t     grad[MAX_ITEMS]; /* 1: argument i requires grad */
    value       up[MAX_ITEMS];   /* per output tensor: TENSOR, or NONE (no upstream gradient) */
    value       want[MAX_ITEMS]; /* per tensor that requires grad: TENSOR, or NONE */
    const char *bad;             /* why a case that read is not a valid one */
} gcase;

static bool tensor_or_none(const value *v) {
    return v->tag == SG_ANY_TENSOR || v->tag == SG_ANY_NONE;
}

/* The tensors of an argument that require grad where its flag is set: a tensor; a list's floating
 * items (version 1 lists hold only those). */
static bool grad_item(const tdesc *t) {
    return !t->none && is_float_dtype(t->dtype);
}

/* Reads the case at r, of a file of that version, into c (strings and lists in a); false where
 * it does not read or is not a valid case (c->bad says why for the latter). */
static bool parse_case(reader *r, uint32_t version, arena *a, gcase *c) {
    c->bad = NULL;
    c->family = rd_str(r, a, NULL);
    c->name = rd_str(r, a, NULL);
    c->overload = rd_str(r, a, NULL);
    c->label = rd_str(r, a, NULL);
    c->flags = rd_u8(r);
    c->error = version >= 2 && (c->flags & FLAG_RAISED) ? rd_str(r, a, NULL) : NULL;
    c->rtol = rd_f64(r);
    c->atol = rd_f64(r);
    c->nargs = rd_u8(r);
    for (int i = 0; i < c->nargs && r->ok; i++) rd_value(r, a, &c->args[i]);
    int leaves = 0;
    for (int i = 0; i < c->nargs && r->ok; i++) {
        c->grad[i] = rd_u8(r);
        if (c->grad[i] > 1) c->bad = "a requires-grad flag is neither 0 nor 1";
        if (!c->grad[i]) continue;
        const value *v = &c->args[i];
        if (v->tag != SG_ANY_TENSOR && v->tag != SG_ANY_TENSOR_LIST &&
            v->tag != SG_ANY_OPT_TENSOR_LIST) {
            c->bad = "an argument that is no tensor requires grad";
            continue;
        }
        for (int32_t k = 0; k < v->len; k++) leaves += grad_item(&v->ts[k]);
        if (v->tag == SG_ANY_TENSOR && !grad_item(v->ts))
            c->bad = "a tensor that is not floating requires grad";
    }
    c->nout = rd_u8(r);
    int roots = 0;
    for (int i = 0; i < c->nout && r->ok; i++) {
        rd_value(r, a, &c->up[i]);
        if (!tensor_or_none(&c->up[i])) c->bad = "an upstream gradient is neither tensor nor none";
        roots += c->up[i].tag == SG_ANY_TENSOR;
    }
    c->nwant = rd_u8(r);
    for (int i = 0; i < c->nwant && r->ok; i++) {
        rd_value(r, a, &c->want[i]);
        if (!tensor_or_none(&c->want[i])) c->bad = "a gradient is neither tensor nor None";
    }
    if (!r->ok) {
        c->bad = NULL; /* what was read past the end says nothing */
        return false;
    }
    bool raised = c->flags & FLAG_RAISED;
    if (!roots && !raised) c->bad = "no output gets an upstream gradient";
    if (c->flags & ~(version >= 2 ? FLAG_INPLACE | FLAG_RAISED : FLAG_INPLACE))
        c->bad = "unknown flags";
    if ((c->flags & FLAG_INPLACE) && (c->nargs < 1 || c->args[0].tag != SG_ANY_TENSOR ||
                                      !c->grad[0]))
        c->bad = "an in-place case whose argument 0 is not a tensor that requires grad";
    if (c->nwant != (raised ? 0 : leaves))
        c->bad = raised ? "gradients where torch raised"
                        : "the count of gradients is not the count of leaves";
    if (!(c->rtol >= 0 && c->atol >= 0 && isfinite(c->rtol) && isfinite(c->atol)))
        c->bad = "a tolerance that is negative or not finite";
    return c->bad == NULL;
}

static void describe_case(const gcase *c, sbuf *s) {
#ifdef SG_REF_GRAD_CONFORMANCE
    /* the plan line says it all, and is what the list of differences holds */
    sb_printf(s, "[%s] %s", c->family, c->label);
    return;
#endif
    sb_printf(s, "[%s] %s%s%s(", c->family, c->name, *c->overload ? "." : "", c->overload);
    for (int i = 0; i < c->nargs; i++) {
        if (i) sb_printf(s, ", ");
        sb_value(s, &c->args[i]);
        if (c->grad[i]) sb_printf(s, " requires_grad");
    }
    sb_printf(s, ")%s%s%s", c->flags & FLAG_INPLACE ? " in-place on a clone" : "",
              *c->label ? " " : "", c->label);
}

/* Whether the op has an Autograd kernel of its own here (a generated one, or one a backend
 * registered), rather than a fallthrough or a CompositeImplicitAutograd decomposition. */
static bool has_autograd_kernel(const sg_op *op) {
    sg_entry e = sg_op_entry(op, AUTOGRAD_KEY);
    return (e.kind == SG_ENTRY_KERNEL || e.kind == SG_ENTRY_OVERRIDE ||
            e.kind == SG_ENTRY_OVERRIDE_TYPED) &&
           e.key != SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD;
}

/* The case's state, released in one place. */
typedef struct run {
    owned      o;
    sg_any     in[MAX_ITEMS], out[MAX_ITEMS];
    int32_t    nrets;
    sg_tensor *leaves[MAX_ITEMS], *flat[MAX_ITEMS], *roots[MAX_ITEMS], *ups[MAX_ITEMS];
    int        nleaves, nflat, nroots;
} run;

static int outcome_of(sg_status st) {
    return st == SG_ENOKERNEL || st == SG_EUNSUPPORTED ? OUT_NOIMPL : OUT_FAIL;
}

/* Builds, calls, differentiates and compares; the outcome and why in rec. */
static void run_grad_case(const gcase *c, arena *a, run *R, ref_record *rec, sbuf *why) {
    sg_status st = SG_OK;
    for (int i = 0; i < c->nargs && !st; i++) st = build_arg(&c->args[i], a, &R->o, &R->in[i]);
    if (st) {
        rec->outcome = OUT_FAIL;
        sb_printf(why, "the harness could not build an argument: %s: %s", sg_status_name(st),
                  sg_last_error());
        return;
    }
    for (int i = 0; i < c->nargs; i++) {
        if (!c->grad[i]) continue;
        bool    list = R->in[i].tag != SG_ANY_TENSOR;
        int32_t n = list ? R->in[i].len : 1;
        for (int32_t k = 0; k < n; k++) {
            if (!grad_item(&c->args[i].ts[k])) continue;
            sg_tensor *t = list ? R->in[i].u.tensors[k] : R->in[i].u.t;
            st = sg_tensor_set_requires_grad(t, true);
            if (st) {
                rec->outcome = OUT_FAIL;
                sb_printf(why, "argument %d: requires_grad: %s: %s", i, sg_status_name(st),
                          sg_last_error());
                return;
            }
            R->leaves[R->nleaves++] = t;
        }
    }
    sg_op *op = NULL;
    st = sg_op_find(c->name, c->overload, &op);
    if (st) {
        rec->outcome = OUT_FAIL;
        sb_printf(why, "%s", sg_last_error());
        return;
    }
    bool own_kernel = has_autograd_kernel(op);
    if ((c->flags & FLAG_INPLACE) && !own_kernel) {
        /* without one, the op would write the clone below autograd: no gradient to compare */
        rec->outcome = OUT_UNCOVERED;
        sb_printf(why, "no Autograd kernel (an in-place op needs its own)");
        return;
    }
    if (c->flags & FLAG_INPLACE) {
        sg_any cl = sg_any_none();
        st = sg_call_by_name("aten::clone", "", &R->in[0], 1, &cl, 1);
        if (st) {
            rec->outcome = OUT_FAIL;
            sb_printf(why, "aten::clone of argument 0: %s: %s", sg_status_name(st),
                      sg_last_error());
            return;
        }
        own(&R->o, cl.u.t);
        R->in[0] = cl;
    }
    R->nrets = sg_op_nrets(op);
    if (R->nrets < 0 || R->nrets > MAX_ITEMS) {
        rec->outcome = OUT_FAIL;
        sb_printf(why, "the op has %d results", R->nrets);
        R->nrets = 0;
        return;
    }
    bool raised = c->flags & FLAG_RAISED;
    sg_error_clear();
    st = sg_op_call_boxed(op, R->in, c->nargs, R->out, R->nrets);
    if (st) {
        rec->outcome = outcome_of(st);
        rec->status = st;
        sb_printf(why, "%s: %s", sg_status_name(st), sg_last_error());
        if (raised && rec->outcome == OUT_FAIL) {
            rec->outcome = OUT_ERRMATCH; /* torch refused too */
        } else if (rec->outcome == OUT_NOIMPL && own_kernel) {
            /* the Autograd kernel may be what refused (an input it cannot differentiate yet):
             * then the forward works under no_grad, and the case is one not covered (or, where
             * torch refused it too, an error matched) */
            sg_any again[MAX_ITEMS];
            bool   was = sg_grad_set_enabled(false);
            bool   works = sg_op_call_boxed(op, R->in, c->nargs, again, R->nrets) == SG_OK;
            sg_grad_set_enabled(was);
            if (works) {
                for (int32_t i = 0; i < R->nrets; i++) sg_any_release(&again[i]);
                rec->outcome = raised ? OUT_ERRMATCH : OUT_UNCOVERED;
            }
        }
        return;
    }
    /* the output tensors, a list's items one by one */
    for (int32_t i = 0; i < R->nrets; i++) {
        if (R->out[i].tag == SG_ANY_TENSOR) {
            if (R->nflat < MAX_ITEMS) R->flat[R->nflat] = R->out[i].u.t;
            R->nflat++;
        } else if (R->out[i].tag == SG_ANY_TENSOR_LIST) {
            for (int32_t k = 0; k < R->out[i].len; k++) {
                if (R->nflat < MAX_ITEMS) R->flat[R->nflat] = R->out[i].u.tensors[k];
                R->nflat++;
            }
        }
    }
    if (raised && !c->nout) {
        rec->outcome = OUT_FAIL;
        sb_printf(why, "torch raised %s under grad; our forward succeeded", c->error);
        return;
    }
    if (R->nflat != c->nout) {
        rec->outcome = OUT_FAIL;
        sb_printf(why, "%d output tensors, torch gave %d", R->nflat, c->nout);
        return;
    }
    for (int k = 0; k < c->nout; k++) {
        if (c->up[k].tag != SG_ANY_TENSOR) continue;
        sg_tensor *root = R->flat[k];
        if (!root || !sg_tensor_requires_grad(root)) {
            rec->outcome = raised ? OUT_ERRMATCH : own_kernel ? OUT_FAIL : OUT_UNCOVERED;
            sb_printf(why, own_kernel ? "output %d does not require grad; torch's does"
                                      : "no Autograd kernel (output %d has no grad_fn)", k);
            return;
        }
        sg_tensor *u = NULL;
        st = build_tensor(c->up[k].ts, &u);
        if (st) {
            rec->outcome = OUT_FAIL;
            sb_printf(why, "the harness could not build upstream gradient %d: %s: %s", k,
                      sg_status_name(st), sg_last_error());
            return;
        }
        own(&R->o, u);
        R->roots[R->nroots] = root;
        R->ups[R->nroots++] = u;
    }
    sg_error_clear();
    st = sg_backward(R->roots, R->ups, (size_t)R->nroots, false);
    if (st) {
        rec->outcome = raised ? OUT_ERRMATCH : st == SG_EUNSUPPORTED ? OUT_UNCOVERED : OUT_FAIL;
        rec->status = st;
        sb_printf(why, "%s: %s", sg_status_name(st), sg_last_error()); /* names sg_backward */
        return;
    }
    if (raised) {
        rec->outcome = OUT_FAIL;
        sb_printf(why, "torch raised %s; our backward succeeded", c->error);
        return;
    }
    rec->outcome = OUT_PASS;
    for (int j = 0; j < R->nleaves && rec->outcome == OUT_PASS; j++) {
        sg_tensor *g = NULL;
        st = sg_tensor_grad(R->leaves[j], &g);
        if (st) {
            rec->outcome = OUT_FAIL;
            sb_printf(why, "leaf %d: sg_tensor_grad: %s: %s", j, sg_status_name(st),
                      sg_last_error());
        } else if (c->want[j].tag == SG_ANY_NONE) {
            if (g) {
                rec->outcome = OUT_FAIL;
                sb_printf(why, "leaf %d: a gradient where torch gives None", j);
            }
        } else if (!g) {
            rec->outcome = OUT_FAIL;
            sb_printf(why, "leaf %d: no gradient (None) where torch gives one", j);
        } else if (!compare_tensor(g, c->want[j].ts, c->rtol, c->atol, why)) {
            rec->outcome = OUT_FAIL;
            sb_printf(why, " (the gradient of leaf %d)", j);
        }
        sg_tensor_release(g);
    }
}

static void run_case(const gcase *c, arena *a, ref_record *rec) {
    sbuf desc = {{0}, 0}, why = {{0}, 0};
    describe_case(c, &desc);
    run *R = calloc(1, sizeof *R);
    if (!R) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    run_grad_case(c, a, R, rec, &why);
    tally_listed(c->label, &rec->outcome, &why);
    for (int32_t i = 0; i < R->nrets; i++) sg_any_release(&R->out[i]);
    release_owned(&R->o);
    free(R->o.t);
    free(R);
    memcpy(rec->desc, desc.b, sizeof rec->desc);
    memcpy(rec->why, why.b, sizeof rec->why);
}

typedef struct caseinfo {
    size_t offset; /* into the file */
    size_t op;     /* index into ops */
} caseinfo;

/* ---- running (ref_run_all) --------------------------------------------------------------- */

typedef struct suite {
    const uint8_t  *buf;
    size_t          size;
    uint32_t        version;
    const caseinfo *cases;
    gcase          *c;
    arena           a;
    int             tot[OUT_N + 1]; /* cases per outcome; all */
} suite;

static void suite_run(void *ctx, uint32_t i, ref_record *rec) {
    suite *su = ctx;
    reader r = {su->buf + su->cases[i].offset, su->buf + su->size, true};
    parse_case(&r, su->version, &su->a, su->c); /* checked by the parent's first pass */
    run_case(su->c, &su->a, rec);
    arena_reset(&su->a);
}

static void suite_describe(void *ctx, uint32_t i, ref_record *rec) {
    suite *su = ctx;
    reader r = {su->buf + su->cases[i].offset, su->buf + su->size, true};
    parse_case(&r, su->version, &su->a, su->c);
    sbuf desc = {{0}, 0};
    describe_case(su->c, &desc);
    memcpy(rec->desc, desc.b, sizeof rec->desc);
    arena_reset(&su->a);
}

static void suite_account(void *ctx, const ref_record *rec) {
    suite *su = ctx;
    tally(rec, &ops[su->cases[rec->index].op], su->tot);
}

static void suite_child_done(void *ctx) {
    suite *su = ctx;
    free(su->c), free((void *)su->cases), free((void *)su->buf), free(ops), free(su->a.ptrs);
    free_listed();
}

int main(int argc, char **argv) {
    /* the file: the first argument, else SG_REF_FILE, else the source tree's */
    const char *path = argc > 1 ? argv[1] : getenv("SG_REF_FILE");
    if (!path || !*path) path = SG_TESTS_DIR "/data/" REF_FILE;
#ifdef SG_REF_CUDA
    int probe = ref_cuda_probe();
    if (probe) return probe;
    ref_dev = (sg_device){SG_DEV_CUDA, 0};
#endif
    /* the listed differences, if any: the second argument, else SG_REF_DIFFER */
    const char *list = argc > 2 ? argv[2] : getenv("SG_REF_DIFFER");
    if (list && !*list) list = NULL;
    if (list && !load_listed(list)) {
        fprintf(stderr, "%s: %s: cannot read it\n", TEST_NAME, list);
        free_listed();
        return 1;
    }
    const char *env = getenv("SG_REF_VERBOSE");
    verbose = env && *env && strcmp(env, "0") != 0;
    env = getenv("SG_REF_NOFORK");
    bool nofork = env && *env && strcmp(env, "0") != 0;

    uint8_t *buf;
    size_t   size;
    uint32_t ncases, version;
    reader   r;
    int loaded = ref_load(path, "SGGRDREF", REF_VMIN, REF_VERSION, REF_MAKER, &buf, &size,
                          &version, &ncases, &r);
    if (loaded) {
        free_listed();
        return loaded;
    }

    /* first pass: where each case starts, and that every one reads and is valid */
    gcase    *c = malloc(sizeof *c);
    caseinfo *cases = malloc((ncases ? ncases : 1) * sizeof *cases);
    if (!c || !cases) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    arena a = {NULL, 0, 0};
    for (uint32_t i = 0; i < ncases; i++) {
        cases[i].offset = (size_t)(r.p - buf);
        if (!parse_case(&r, version, &a, c)) {
            fprintf(stderr, "%s: case %u of %u (at byte %zu of %zu): %s\n", path, i + 1, ncases,
                    cases[i].offset, size,
                    c->bad ? c->bad : "malformed or truncated");
            arena_reset(&a);
            free(a.ptrs), free(c), free(cases), free(buf), free(ops), free_listed();
            return 1;
        }
        cases[i].op = opstat_of(c->name, c->overload, c->family);
        arena_reset(&a);
    }
    free(a.ptrs);
    if (r.p != r.end) {
        fprintf(stderr, "%s: %td bytes after the last of %u cases\n", path, r.end - r.p, ncases);
        free(c), free(cases), free(buf), free(ops), free_listed();
        return 1;
    }

    suite      su = {buf, size, version, cases, c, {NULL, 0, 0}, {0}};
    ref_runner rn = {ncases, init_library, suite_run, suite_describe, suite_account,
                     suite_child_done, &su, OUT_FAIL, ref_every(nofork)};
    int        crashes = ref_run_all(&rn, nofork);
    free(su.a.ptrs);
    if (crashes < 0) {
        free(c), free(cases), free(buf), free(ops), free_listed();
        return 1;
    }
    const int *tot = su.tot;

    tally_report_failed();
    int nuncovered = tally_report_ops(OUT_UNCOVERED, UNCOVERED_AS);
    int nnoimpl = tally_report_ops(OUT_NOIMPL, NOIMPL_AS);
    int nmatched = 0;
    for (size_t i = 0; i < nops; i++)
        nmatched += ops[i].n[OUT_PASS] + ops[i].n[OUT_ERRMATCH] == ops[i].total;
    tally_col cols[2] = {{OUT_UNCOVERED, UNCOVERED_AS}, {OUT_NOIMPL, NOIMPL_AS}};
    if (version >= 2) tally_report_families(cols, 2);
    printf("%s: %d cases: %d matched, %d failed (%d crashed), ", TEST_NAME, tot[OUT_N],
           tot[OUT_PASS], tot[OUT_FAIL], crashes);
    if (version >= 2) printf("%d errors matched, ", tot[OUT_ERRMATCH]);
    printf("%d %s (%d ops), %d %s (%d ops); %d of %zu ops matched in every case",
           tot[OUT_UNCOVERED], UNCOVERED_AS, nuncovered, tot[OUT_NOIMPL], NOIMPL_AS, nnoimpl,
           nmatched, nops);
    if (nlisted) printf("; %d listed differences of %zu", tot[OUT_LISTED], nlisted);
    printf("\n");

    bool ok = tot[OUT_FAIL] == 0 && crashes == 0 && tot[OUT_N] == (int)ref_cases_run(&rn);
    free(ops);
    free(cases);
    free(c);
    free(buf);
    free_listed();
    return ok ? 0 : 1;
}
