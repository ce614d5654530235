/* ref_npu.h: what test_npu_conformance (tests/unit/test_cpu_reference.c built with
 * SG_REF_NPU) adds to the runner: the example plug-in backend (examples/backend/npu_backend.c,
 * PrivateUse1 named "npu") as the device under test, held to the CPU's results case by case.
 *
 * The backend's memory is its own (its allocator), two ops have kernels of its own and every
 * other op goes through the runtime's CPU fallback, so the cases check the fallback as much as
 * the backend. Each case runs on the CPU first, then on the npu, which must come out of it the
 * same way: agreeing with PyTorch, erring where it raised, not implemented, or differing as
 * listed (its list is the CPU's, differ_cpu.txt); and its tensor results must alias the
 * arguments the CPU's do (the argument itself for in-place and out=, its storage for a view),
 * which values alone would not show. An error of another status than the CPU's (both sides
 * refusing a case torch refused) is noted, not failed.
 *
 * Each case is counted by what it reached on the npu: the backend's own kernels (computing, or
 * handing the call to the fallback where their fast path does not apply), the CPU fallback, or
 * neither (an op that composes others or views its input without a kernel, a call refused
 * before any kernel). */
#ifndef SG_TEST_REF_NPU_H
#define SG_TEST_REF_NPU_H

#include "npu_backend.h"
#include "ref_data.h"
#include "sg_aten_cpu.h"

/* a ref_record's mark: bits for what the case reached, and whether its status differed */
enum {
    NPU_RAN = 1,       /* the case ran to its end (a crashed one is not marked) */
    NPU_NATIVE = 2,    /* an own kernel computed */
    NPU_HANDED = 4,    /* an own kernel handed its call to the fallback */
    NPU_FALLBACK = 8,  /* the fallback ran */
    NPU_STATUS_DIFFERS = 16
};

static long npu_own, npu_own_alone, npu_fallback, npu_handed, npu_neither, npu_status_notes;

static inline sg_status ref_npu_init(void) {
    sg_status st = sg_aten_cpu_init();
    return st ? st : npu_backend_init();
}

static ref_record npu_cpu;         /* the case on the CPU */
static char       npu_alias[2][256]; /* what the results alias: on the CPU, on the npu */
static npu_counts npu_before;

/* Before a case runs on dev (the CPU, then the npu). */
static inline void ref_npu_begin(sg_device dev) {
    ref_dev = dev;
    npu_alias[dev.type != SG_DEV_CPU][0] = '\0';
    if (dev.type == SG_DEV_CPU) memset(&npu_cpu, 0, sizeof npu_cpu);
    npu_before = npu_backend_counts();
}

/* The argument t is or views: "a2" (argument 2), "a2.1" (item 1 of list argument 2), with "="
 * for t itself and "~" for its storage; "" for none. */
static inline void alias_of(const sg_tensor *t, const sg_any *in, int32_t nargs, char *s,
                            size_t n) {
    for (int32_t j = 0; j < nargs; j++) {
        if (in[j].tag == SG_ANY_TENSOR && in[j].u.t &&
            (in[j].u.t == t || (t->storage && in[j].u.t->storage == t->storage))) {
            snprintf(s, n, "%sa%d", in[j].u.t == t ? "=" : "~", (int)j);
            return;
        }
        if (in[j].tag == SG_ANY_TENSOR_LIST || in[j].tag == SG_ANY_OPT_TENSOR_LIST)
            for (int32_t k = 0; k < in[j].len; k++) {
                const sg_tensor *x = in[j].u.tensors[k];
                if (x && (x == t || (t->storage && x->storage == t->storage))) {
                    snprintf(s, n, "%sa%d.%d", x == t ? "=" : "~", (int)j, (int)k);
                    return;
                }
            }
    }
    *s = '\0';
}

/* After a call that succeeded: what each tensor result aliases, as text to compare. */
static inline void ref_npu_aliasing(const sg_any *in, int32_t nargs, const sg_any *out,
                                    int32_t nrets) {
    char  *s = npu_alias[ref_dev.type != SG_DEV_CPU], one[32];
    size_t n = 0, cap = sizeof npu_alias[0];
    for (int32_t i = 0; i < nrets; i++) {
        int32_t len = out[i].tag == SG_ANY_TENSOR ? 1
                      : out[i].tag == SG_ANY_TENSOR_LIST || out[i].tag == SG_ANY_OPT_TENSOR_LIST
                          ? out[i].len
                          : 0;
        for (int32_t k = 0; k < len; k++) {
            const sg_tensor *t = out[i].tag == SG_ANY_TENSOR ? out[i].u.t : out[i].u.tensors[k];
            if (!t) continue;
            alias_of(t, in, nargs, one, sizeof one);
            if (*one && n < cap)
                n += (size_t)snprintf(s + n, cap - n, "%sresult %d.%d%s", n ? ", " : "", (int)i,
                                      (int)k, one);
        }
    }
}

/* After the case ran on the npu into rec: fails it (outcome fail) where it came out otherwise
 * than on the CPU, and marks it with its route. */
static inline void ref_npu_compare(ref_record *rec, int32_t fail) {
    npu_counts now = npu_backend_counts();
    rec->mark = NPU_RAN | (now.native > npu_before.native ? NPU_NATIVE : 0) |
                (now.handed > npu_before.handed ? NPU_HANDED : 0) |
                (now.fallback > npu_before.fallback ? NPU_FALLBACK : 0);
    char why[sizeof rec->why];
    if (rec->outcome != npu_cpu.outcome && rec->outcome != fail) {
        snprintf(why, sizeof why, "on the CPU the case came out otherwise: %s%s%.400s (here: "
                 "%s%s%.400s)", sg_status_name((sg_status)npu_cpu.status),
                 *npu_cpu.why ? ": " : "", npu_cpu.why, sg_status_name((sg_status)rec->status),
                 *rec->why ? ": " : "", rec->why);
        memcpy(rec->why, why, sizeof why);
        rec->outcome = fail;
    } else if (rec->outcome != fail && strcmp(npu_alias[0], npu_alias[1])) {
        snprintf(why, sizeof why, "results alias other arguments than on the CPU: %s; on the "
                 "CPU: %s", *npu_alias[1] ? npu_alias[1] : "none",
                 *npu_alias[0] ? npu_alias[0] : "none");
        memcpy(rec->why, why, sizeof why);
        rec->outcome = fail;
    } else if (rec->status != npu_cpu.status) {
        size_t n = strlen(rec->why);
        snprintf(rec->why + n, sizeof rec->why - n, " (on the CPU: %s)",
                 sg_status_name((sg_status)npu_cpu.status));
        rec->mark |= NPU_STATUS_DIFFERS;
    }
}

/* In the parent: counts what a case reached, and says where an error's status differed from
 * the CPU's. */
static inline void ref_npu_account(const ref_record *rec) {
    int32_t m = rec->mark;
    if (!(m & NPU_RAN)) return;
    npu_own += (m & (NPU_NATIVE | NPU_HANDED)) != 0;
    npu_own_alone += (m & NPU_NATIVE) && !(m & NPU_FALLBACK);
    npu_fallback += (m & NPU_FALLBACK) != 0;
    npu_handed += (m & NPU_HANDED) != 0;
    npu_neither += !(m & (NPU_NATIVE | NPU_HANDED | NPU_FALLBACK));
    if (m & NPU_STATUS_DIFFERS) {
        npu_status_notes++;
        printf("note %s\n     another status than on the CPU: %s\n", rec->desc, rec->why);
    }
}

static inline void ref_npu_report(void) {
    printf("  npu: %ld cases reached its own kernels (%ld computed there alone), %ld the CPU "
           "fallback (%ld handed over by its own kernels), %ld neither (composites and views "
           "without a kernel, calls refused before one); errors of another status than the "
           "CPU's: %ld\n",
           npu_own, npu_own_alone, npu_fallback, npu_handed, npu_neither, npu_status_notes);
}

#endif
