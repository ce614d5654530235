/* test_cpu_reference.c: the CPU kernels against PyTorch's own results.
 *
 * tests/data/cpu_reference.bin holds cases made by PyTorch 2.11 on the CPU: an aten op
 * overload, its full boxed argument list (defaults filled in, in schema order) and torch's
 * results. Each case is called here boxed, through sg_call_by_name, and its results compared:
 * dtypes and shapes exactly, integer and bool elements exactly, floating elements within the
 * case's rtol/atol (|got - want| <= atol + rtol * |want|; NaN equals NaN, an infinity only
 * itself). Results that are views are read through their strides.
 *
 * How the data was made: tests/reference/make_cpu_reference.py (torch 2.11.0, CPU, inputs from
 * torch.manual_seed(0)), run on the device machine, the one with torch installed:
 *
 *     python3 tests/reference/make_cpu_reference.py tests/data/cpu_reference.bin
 *
 * File format (the script's docstring has it in full): "SGCPUREF", u32 version 1, u32 ncases,
 * then per case: str family, str name ("aten::add"), str overload, str label, u8 flags, f64 rtol,
 * f64 atol, u8 nargs + values, u8 nrets + values (str = u16 length + bytes; little-endian). A
 * value is a u8 sg_any tag and its payload: BOOL u8, INT i64, FLOAT f64, STR str, DTYPE /
 * LAYOUT / MEMORY_FORMAT u8, DEVICE u8 type + u8 index, INT_LIST / FLOAT_LIST / BOOL_LIST u32 n
 * + items, TENSOR tensor, TENSOR_LIST u32 n + tensors. A tensor is u8 dtype, u8 ndim, i64
 * sizes[ndim], u8 layout (0 contiguous; 1 stored with its last two dims swapped and passed as
 * that transposed back, non-contiguous; 2 u8 sndim + i64 ssizes: a small tensor passed as its
 * expand to sizes), u64 nbytes and the raw elements.
 *
 * Ops without kernels yet (SG_ENOKERNEL, SG_EUNSUPPORTED) are listed, once per op, as "not
 * implemented yet" and do not fail the test; any other error, any mismatch and any crash does
 * (the cases run in a child process, so a kernel that crashes fails its case and the rest still
 * run). Each failure prints the case: op, argument dtypes and shapes, the first differing
 * element. The path may be given as the first argument; the test skips (77) where the file is
 * missing. SG_REF_VERBOSE=1 prints every case; SG_REF_NOFORK=1 runs them in this process (for
 * a debugger).
 *
 * The same program built with SG_REF_CUDA (test_cuda_reference) runs every case on the GPU
 * instead: it moves each tensor argument there (views are made there from the
 * moved base, so transposed and expanded inputs stay what they are), passes device arguments
 * as CUDA, and copies results back to compare them. It skips (77) where no GPU is usable.
 *
 * Built with SG_REF_CONFORMANCE (test_cpu_conformance) it reads tests/data/conformance.bin
 * instead: the cases tests/conformance/oracle.py recorded from a plan that schemagen
 * --emit=cases wrote (docs/conformance.md). Either build reads versions 1 to 3 of the format;
 * version 2 adds cases torch refused (flags bit 0: they pass where our call fails too, counted
 * as "errors matched", and fail where it succeeds), results compared without values (flags
 * bit 1), strided views of a base (tensor layout 3) and Tensor?[] arguments; version 3
 * records each result's strides and storage offset (layout 4), compared where they matter. With
 * SG_REF_META as well (test_meta_conformance) every case runs on the Meta device: arguments
 * without values, results compared by dtype, shape and strides; a case torch refused that Meta
 * runs is "unchecked" rather than failed (the refusal may have been about values Meta does not
 * have).
 * With SG_REF_NPU instead (test_npu_conformance) every case runs on the example plug-in backend
 * and on the CPU, which it must agree with (ref_npu.h).
 * With SG_REF_TYPED (the conformance builds) each case is called once more, through the typed
 * C wrappers, and must have the boxed call's outcome (typed_replay.h). test_cuda_conformance
 * runs the DSL overrides the build has (sg_aten_cuda_init registers them) and counts the cases
 * one of their kernels took. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, waitpid, alarm, strsignal */
#include "aten.h"
#include "check.h"
#include "ref_data.h"
#include "ref_tally.h"
#include "sg_aten_cpu.h"
#ifdef SG_REF_CUDA
#include "sg_aten_cuda.h"
#include "sg_dsl.h"
#include "sg_iter.h"
#endif
#ifdef SG_REF_NPU
#include "ref_npu.h" /* the example plug-in backend */
#endif
#ifdef SG_REF_TYPED
#include "typed_replay.h"
#endif

#ifndef SG_TESTS_DIR
#define SG_TESTS_DIR "tests"
#endif

#ifdef SG_REF_CONFORMANCE
#define REF_FILE  "conformance.bin"
#define REF_MAKER "tests/conformance/oracle.py"
#else
#define REF_FILE  "cpu_reference.bin"
#define REF_MAKER "tests/reference/make_cpu_reference.py"
#endif

enum { MAX_ITEMS = 255 };

/* The library's init for where the cases run (ref_dev). */
static sg_status init_library(void) {
#ifdef SG_REF_CUDA
    return sg_aten_cuda_init();
#elif defined(SG_REF_NPU)
    return ref_npu_init();
#else
    return sg_aten_cpu_init();
#endif
}

/* ---- one case ---------------------------------------------------------------------------- */

/* Version 2's flags. */
enum { FLAG_RAISED = 1, FLAG_UNCHECKED_VALUES = 2 };

typedef struct parsed {
    char   *family, *name, *overload, *label;
    char   *error; /* FLAG_RAISED: what torch raised */
    uint8_t flags;
    double  rtol, atol;
    int     nargs, nrets;
    value   args[MAX_ITEMS], rets[MAX_ITEMS];
} parsed;

/* Reads the case at r, of a file of that version, into c (strings and lists in a). */
static bool parse_case(reader *r, uint32_t version, arena *a, parsed *c) {
    c->family = rd_str(r, a, NULL);
    c->name = rd_str(r, a, NULL);
    c->overload = rd_str(r, a, NULL);
    c->label = rd_str(r, a, NULL);
    c->flags = rd_u8(r);
    c->error = NULL;
    if (version < 2 && c->flags) r->ok = false; /* reserved in version 1 */
    if (c->flags & ~(FLAG_RAISED | FLAG_UNCHECKED_VALUES)) r->ok = false;
    if (c->flags & FLAG_RAISED) c->error = rd_str(r, a, NULL);
    c->rtol = rd_f64(r);
    c->atol = rd_f64(r);
    c->nargs = rd_u8(r);
    for (int i = 0; i < c->nargs && r->ok; i++) rd_value(r, a, &c->args[i]);
    c->nrets = rd_u8(r);
    if ((c->flags & FLAG_RAISED) && c->nrets) r->ok = false;
    for (int i = 0; i < c->nrets && r->ok; i++) rd_value(r, a, &c->rets[i]);
    return r->ok;
}

static void describe_case(const parsed *c, sbuf *s) {
    sb_printf(s, "[%s] %s%s%s(", c->family, c->name, *c->overload ? "." : "", c->overload);
    for (int i = 0; i < c->nargs; i++) {
        if (i) sb_printf(s, ", ");
        sb_value(s, &c->args[i]);
    }
    sb_printf(s, ")%s%s", *c->label ? " " : "", c->label);
}

/* What running a case gave (ref_record; ref_tally.h has the outcomes): for OUT_NOIMPL, why is
 * the kernel's status and message. */
typedef ref_record record;

/* Calls the case and compares its results. */
#ifdef SG_REF_CUDA
/* Where aten's CUDA kernel differs from its CPU one in a result's dtype: native_layer_norm keeps
 * mean and rstd in the accumulation dtype (float32 for a 16-bit input) on CUDA, in the input's
 * on the CPU. Such a result must have CUDA's dtype; it is then cast to the CPU's to compare. */
static bool cuda_statistics(const parsed *c, sg_any *out, sbuf *why) {
    if (strcmp(c->name, "aten::native_layer_norm") != 0 || c->nrets != 3) return true;
    for (int i = 1; i < 3; i++) {
        const value *w = &c->rets[i];
        sg_tensor   *g = out[i].tag == SG_ANY_TENSOR ? out[i].u.t : NULL;
        if (!g || w->tag != SG_ANY_TENSOR ||
            (w->ts->dtype != SG_FLOAT16 && w->ts->dtype != SG_BFLOAT16))
            continue;
        if (g->dtype != SG_FLOAT32) {
            sb_printf(why, "result %d: dtype %s, want float32 (aten's CUDA kernel)", i,
                      sg_dtype_name((sg_dtype)g->dtype));
            return false;
        }
        sg_tensor *cast = NULL;
        if (sg_cast(g, (sg_dtype)w->ts->dtype, &cast)) {
            sb_printf(why, "result %d: casting to compare: %s", i, sg_last_error());
            return false;
        }
        sg_tensor_release(g);
        out[i].u.t = cast;
    }
    return true;
}
#endif

#ifdef SG_REF_CUDA
/* The launches of every DSL kernel so far: a case that adds to them was taken by a DSL override
 * (docs/dsl.md), whose results are then the ones compared. */
static uint64_t dsl_launches(void) {
    const sg_dsl_artifact *a[256];
    size_t                 n = sg_dsl_list(a, 256);
    uint64_t               total = 0;
    for (size_t i = 0; i < n && i < 256; i++) total += sg_dsl_launch_count(a[i]);
    return total;
}
#endif

static void run_case(const parsed *c, arena *a, record *rec) {
    sbuf desc = {{0}, 0}, why = {{0}, 0};
    describe_case(c, &desc);
    owned  o = {NULL, 0, 0};
    sg_any in[MAX_ITEMS], out[MAX_ITEMS];
    memset(out, 0, sizeof out);
    sg_status st = SG_OK;
    for (int i = 0; i < c->nargs && !st; i++) st = build_arg(&c->args[i], a, &o, &in[i]);
    /* a factory's `Device? device=None` means the CPU to torch: here the device under test */
    const sg_op_desc *d = ref_dev.type != SG_DEV_CPU ? aten_find(c->name, c->overload)
                                                             : NULL;
    for (int i = 0; d && !st && i < c->nargs && i < d->nargs; i++)
        if (in[i].tag == SG_ANY_NONE && !strcmp(d->args[i].type, "Device?"))
            in[i] = sg_any_device(ref_dev);
    bool harness = st != SG_OK;
    bool raised = c->flags & FLAG_RAISED;
    /* a case torch refused records no results: the call still takes the op's */
    sg_op  *op = NULL;
    int32_t nrets = c->nrets;
    if (raised && !sg_op_find(c->name, c->overload, &op)) nrets = sg_op_nrets(op);
    if (!st) {
#ifdef SG_REF_CUDA
        uint64_t launched = dsl_launches();
#endif
        sg_error_clear();
        st = sg_call_by_name(c->name, c->overload, in, c->nargs, out, nrets);
#ifdef SG_REF_CUDA
        rec->mark = dsl_launches() > launched;
#endif
    }
#ifdef SG_REF_NPU
    if (!st) ref_npu_aliasing(in, c->nargs, out, nrets);
#endif
    rec->status = st;
#ifdef SG_REF_TYPED
    /* the same case through the typed wrappers, compared with the boxed call (typed_replay.h) */
    typed_case    tc = {c->name, c->overload, c->args, c->nargs, in, !harness, st, out, nrets,
                        !(c->flags & FLAG_UNCHECKED_VALUES)};
    typed_outcome typed;
    typed_replay(&tc, a, &typed);
#endif
#ifdef SG_REF_CONFORMANCE
    /* a plan's schema set may hold ops the library does not define: not implemented, whatever
     * torch did */
    bool undefined = st == SG_ENOTFOUND;
#else
    bool undefined = false;
#endif
    bool noimpl = st == SG_ENOKERNEL || st == SG_EUNSUPPORTED || undefined;
    if (raised && !harness && !undefined) {
        if (st) {
            rec->outcome = OUT_ERRMATCH;
            sb_printf(&why, "%s: %s", sg_status_name(st), sg_last_error());
        } else {
            rec->outcome = ref_dev.type == SG_DEV_META ? OUT_UNCHECKED : OUT_FAIL;
            sb_printf(&why, "torch raised %s; our call succeeded", c->error);
        }
    } else if (noimpl) {
        rec->outcome = OUT_NOIMPL;
        sb_printf(&why, "%s: %s", sg_status_name(st), sg_last_error());
    } else if (st) {
        rec->outcome = OUT_FAIL;
        sb_printf(&why, "%s%s: %s", harness ? "the harness could not build an argument: " : "",
                  sg_status_name(st), sg_last_error());
    } else {
        rec->outcome = OUT_PASS;
#ifdef SG_REF_CUDA
        if (!cuda_statistics(c, out, &why)) rec->outcome = OUT_FAIL;
#endif
        for (int i = 0; rec->outcome == OUT_PASS && i < c->nrets; i++) {
            if (!compare_value(&out[i], &c->rets[i], c->rtol, c->atol,
                               !(c->flags & FLAG_UNCHECKED_VALUES), &why)) {
                rec->outcome = OUT_FAIL;
                if (c->nrets > 1) sb_printf(&why, " (result %d)", i);
                break;
            }
        }
    }
    const listed_case *listed_as = tally_listed(c->label, &rec->outcome, &why);
#ifdef SG_REF_TYPED
    /* a difference from the boxed call fails it, but where the list says runs may differ */
    typed_merge(&typed, rec, &why, OUT_FAIL, listed_as && listed_as->unordered);
#else
    (void)listed_as;
#endif
    for (int i = 0; i < nrets; i++) sg_any_release(&out[i]);
    release_owned(&o);
    free(o.t);
    memcpy(rec->desc, desc.b, sizeof rec->desc);
    memcpy(rec->why, why.b, sizeof rec->why);
}

/* What the parent knows of each case before running any. */
typedef struct caseinfo {
    size_t offset; /* into the file */
    size_t op;     /* index into ops (which grows: no pointers into it) */
} caseinfo;

/* ---- running the cases (ref_run_all) ------------------------------------------------------ */

typedef struct suite {
    const uint8_t  *buf;
    size_t          size;
    uint32_t        version;
    const caseinfo *cases;
    parsed         *c;
    arena           a;
    int             tot[OUT_N + 1]; /* cases per outcome; all */
} suite;

static void suite_run(void *ctx, uint32_t i, ref_record *rec) {
    suite *su = ctx;
    reader r = {su->buf + su->cases[i].offset, su->buf + su->size, true};
    parse_case(&r, su->version, &su->a, su->c); /* checked by the parent's first pass */
#ifdef SG_REF_NPU
    /* on the CPU first: the npu must come out of the case as the CPU does (ref_npu.h) */
    ref_npu_begin(SG_CPU);
    run_case(su->c, &su->a, &npu_cpu);
    ref_npu_begin(NPU0);
    run_case(su->c, &su->a, rec);
    ref_npu_compare(rec, OUT_FAIL);
#else
    run_case(su->c, &su->a, rec);
#endif
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
    suite  *su = ctx;
    opstat *os = &ops[su->cases[rec->index].op];
    tally(rec, os, su->tot);
#ifdef SG_REF_CUDA
    os->dsl += rec->mark != 0;
#endif
#ifdef SG_REF_NPU
    ref_npu_account(rec);
#endif
#ifdef SG_REF_TYPED
    typed_account(rec);
#endif
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
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
#ifdef SG_REF_CUDA
    int probe = ref_cuda_probe();
    if (probe) return probe;
    ref_dev = (sg_device){SG_DEV_CUDA, 0};
#elif defined(SG_REF_META)
    ref_dev = SG_META;
#elif defined(SG_REF_NPU)
    ref_dev = NPU0;
#endif
    /* the listed differences, if any: the second argument, else SG_REF_DIFFER */
    const char *list = argc > 2 ? argv[2] : getenv("SG_REF_DIFFER");
    if (list && !*list) list = NULL;
    atexit(free_listed); /* every way out frees it (it may be freed twice: that is harmless) */
    if (list && !load_listed(list)) {
        fprintf(stderr, "%s: %s: cannot read it\n", prog, list);
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
    int loaded = ref_load(path, "SGCPUREF", 1, 3, REF_MAKER, &buf, &size, &version, &ncases, &r);
    if (loaded) return loaded;

    /* first pass: where each case starts, and that all of them read */
    parsed   *c = malloc(sizeof *c);
    caseinfo *cases = malloc((ncases ? ncases : 1) * sizeof *cases);
    if (!c || !cases) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    arena a = {NULL, 0, 0};
    bool  readable = true;
    for (uint32_t i = 0; i < ncases && readable; i++) {
        cases[i].offset = (size_t)(r.p - buf);
        readable = parse_case(&r, version, &a, c);
        if (readable) cases[i].op = opstat_of(c->name, c->overload, c->family);
        arena_reset(&a);
    }
    free(a.ptrs);
    if (!readable || r.p != r.end) {
        fprintf(stderr, "%s: malformed or truncated (at byte %td of %zu)\n", path, r.p - buf, size);
        free(c), free(cases), free(buf), free(ops);
        return 1;
    }

    suite      su = {buf, size, version, cases, c, {NULL, 0, 0}, {0}};
    ref_runner rn = {ncases, init_library, suite_run, suite_describe, suite_account,
                     suite_child_done, &su, OUT_FAIL, ref_every(nofork)};
    int        crashes = ref_run_all(&rn, nofork);
    free(su.a.ptrs);
    if (crashes < 0) {
        free(c), free(cases), free(buf), free(ops);
        return 1;
    }
    const int *tot = su.tot;

    /* ops with more failures than printed, then ops not implemented yet, then families */
    tally_report_failed();
    int       nnoimpl = tally_report_ops(OUT_NOIMPL, "not implemented yet");
    tally_col cols[2] = {{OUT_NOIMPL, "not implemented yet"}, {OUT_UNCHECKED, "unchecked"}};
    tally_report_families(cols, ref_dev.type == SG_DEV_META ? 2 : 1);
#ifdef SG_REF_NPU
    ref_npu_report();
#endif
#ifdef SG_REF_CUDA
    int ndsl = 0;
    for (size_t i = 0; i < nops; i++) ndsl += ops[i].dsl;
    printf("dsl: %d cases taken by DSL kernels", ndsl);
    for (size_t i = 0, k = 0; i < nops; i++)
        if (ops[i].dsl) printf("%s %s %d", k++ ? "," : ":", ops[i].key, ops[i].dsl);
    printf("\n");
#endif
#ifdef SG_REF_TYPED
    typed_report();
#endif
    printf("%s: %d cases, %d passed, %d failed (%d crashed), %d errors matched, %d ops not "
           "implemented yet (%d cases)",
           prog, tot[OUT_N], tot[OUT_PASS], tot[OUT_FAIL], crashes, tot[OUT_ERRMATCH], nnoimpl,
           tot[OUT_NOIMPL]);
    if (ref_dev.type == SG_DEV_META) printf(", %d unchecked", tot[OUT_UNCHECKED]);
    if (nlisted) printf(", %d listed differences of %zu", tot[OUT_LISTED], nlisted);
    printf("\n");

    bool ok = tot[OUT_FAIL] == 0 && crashes == 0 && tot[OUT_N] == (int)ref_cases_run(&rn);
    free(ops);
    free(cases);
    free(c);
    free(buf);
    free_listed();
    return ok ? 0 : 1;
}
