/* ref_tally.h: what the two reference runners (test_cpu_reference.c for results,
 * test_cpu_grad_reference.c for gradients) share after a case has run: its outcome, the rule
 * for cases the list of known differences names, the tallies per op and per family, and the
 * report lines built from them. Include after ref_data.h (ref_record, is_listed, nlisted). */
#ifndef SG_REF_TALLY_H
#define SG_REF_TALLY_H

#include "ref_data.h"

/* What a case came to. OUT_ERRMATCH: torch raised and so did we. OUT_LISTED: a listed case
 * that differs. OUT_UNCHECKED: torch raised, Meta ran the case (it has no values to refuse
 * on). OUT_UNCOVERED: the gradients' runner: no derivative where torch has one. */
enum { OUT_PASS, OUT_FAIL, OUT_NOIMPL, OUT_ERRMATCH, OUT_LISTED, OUT_UNCHECKED, OUT_UNCOVERED,
       OUT_N };

enum { MAX_FAIL_PRINTS_PER_OP = 4 };

typedef struct opstat {
    char key[96]; /* "aten::add.Tensor" */
    char family[16];
    int  total, n[OUT_N], printed;
    int  dsl;      /* cases a DSL kernel took (test_cuda_conformance) */
    char msg[240]; /* why the op's first case not implemented (or not covered) was */
} opstat;

static opstat *ops;
static size_t  nops, capops;
static bool    verbose; /* SG_REF_VERBOSE: every case printed */

/* The index of the op's tally (ops grows: keep indices, not pointers). */
static size_t opstat_of(const char *name, const char *overload, const char *family) {
    char key[96];
    snprintf(key, sizeof key, "%s%s%s", name, *overload ? "." : "", overload);
    for (size_t i = 0; i < nops; i++)
        if (!strcmp(ops[i].key, key)) return i;
    if (nops == capops) {
        capops = capops ? 2 * capops : 64;
        opstat *p = realloc(ops, capops * sizeof *p);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        ops = p;
    }
    opstat *o = &ops[nops++];
    memset(o, 0, sizeof *o);
    snprintf(o->key, sizeof o->key, "%s", key);
    snprintf(o->family, sizeof o->family, "%s", family);
    return nops - 1;
}

/* A case the list names: one that differs counts as listed; one that agrees fails, so that the
 * list holds exactly what differs (but in an unordered group, where it may agree). Returns the
 * list's entry for label, or NULL. */
static inline const listed_case *tally_listed(const char *label, int32_t *outcome, sbuf *why) {
    const listed_case *l = is_listed(label);
    if (!l) return NULL;
    if (*outcome == OUT_FAIL) {
        *outcome = OUT_LISTED;
    } else if ((*outcome == OUT_PASS || *outcome == OUT_ERRMATCH) && !l->unordered) {
        *outcome = OUT_FAIL;
        why->n = 0, why->b[0] = 0;
        sb_printf(why, "listed as differing from PyTorch, but agrees: take it off the list");
    }
    return l;
}

/* Counts rec into its op's tally and into tot (tot[k]: cases of outcome k, tot[OUT_N]: all),
 * printing it where it failed (at most MAX_FAIL_PRINTS_PER_OP an op, but crashes) or where
 * verbose. */
static void tally(const ref_record *rec, opstat *os, int *tot) {
    static const char *const tags[OUT_N] = {"ok  ", "FAIL", "n/i ", "err ", "list", "unch",
                                            "n/c "};
    int k = rec->outcome >= 0 && rec->outcome < OUT_N ? rec->outcome : OUT_FAIL;
    os->total++, os->n[k]++;
    tot[OUT_N]++, tot[k]++;
    if ((k == OUT_NOIMPL || k == OUT_UNCOVERED) && !os->msg[0])
        snprintf(os->msg, sizeof os->msg, "%.200s", rec->why);
    if (rec->crashed) os->printed = 0; /* a crash is always printed */
    bool show = verbose || (k == OUT_FAIL && os->printed++ < MAX_FAIL_PRINTS_PER_OP);
    if (show && k == OUT_PASS) printf("%s %s\n", tags[k], rec->desc);
    else if (show) printf("%s %s\n     %s\n", tags[k], rec->desc, rec->why);
    fflush(stdout);
}

/* "FAIL op: n of m cases failed (4 printed)" for the ops that failed more than printed. */
static void tally_report_failed(void) {
    for (size_t i = 0; i < nops && !verbose; i++)
        if (ops[i].n[OUT_FAIL] > MAX_FAIL_PRINTS_PER_OP)
            printf("FAIL %s: %d of %d cases failed (%d printed)\n", ops[i].key,
                   ops[i].n[OUT_FAIL], ops[i].total, MAX_FAIL_PRINTS_PER_OP);
}

/* "title: op (k of n cases): why" for each op with cases of outcome k; their count. */
static int tally_report_ops(int k, const char *title) {
    int n = 0;
    for (size_t i = 0; i < nops; i++) {
        if (!ops[i].n[k]) continue;
        n++;
        printf("%s: %s (%d of %d cases): %s\n", title, ops[i].key, ops[i].n[k], ops[i].total,
               ops[i].msg);
    }
    return n;
}

/* A column of the per-family lines beyond passed, failed and errors matched. */
typedef struct tally_col {
    int         outcome;
    const char *name;
} tally_col;

/* Per family, in the order the ops came: "fam N cases: P passed, F failed, E errors matched",
 * then the columns given, then the listed cases where there is a list. */
static void tally_report_families(const tally_col *cols, int ncols) {
    const char *fams[32];
    int         nf = 0;
    for (size_t i = 0; i < nops; i++) {
        int k = 0;
        while (k < nf && strcmp(fams[k], ops[i].family)) k++;
        if (k == nf && nf < 32) fams[nf++] = ops[i].family;
    }
    for (int f = 0; f < nf; f++) {
        int t[OUT_N + 1] = {0};
        for (size_t i = 0; i < nops; i++) {
            if (strcmp(ops[i].family, fams[f])) continue;
            t[OUT_N] += ops[i].total;
            for (int k = 0; k < OUT_N; k++) t[k] += ops[i].n[k];
        }
        printf("  %-10s %4d cases: %4d passed, %3d failed, %4d errors matched", fams[f], t[OUT_N],
               t[OUT_PASS], t[OUT_FAIL], t[OUT_ERRMATCH]);
        for (int c = 0; c < ncols; c++) printf(", %4d %s", t[cols[c].outcome], cols[c].name);
        if (nlisted) printf(", %3d listed", t[OUT_LISTED]);
        printf("\n");
    }
}

#endif
