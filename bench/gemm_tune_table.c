/* gemm_tune_table.c: the tuner's records read back, and the decision table written from them
 * (gemm_tune.h, docs/gemm.md). No GPU here: a table can be written again from saved records. */
#define _POSIX_C_SOURCE 200809L
#include "gemm_tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sg_tune_op_names[TUNE_NOPS] = {"mm", "addmm", "bmm"};
const char *const sg_tune_keys[TUNE_NKEYS] = {"device", "capability", "driver", "cuda",
                                              "cublaslt", "triton", "method"};

/* Each op's table entry: its name, operands, the m, n, k (and batch) expressions and its
 * cuBLASLt function (kernels/cuda/sg_aten_cuda.h). */
static const struct {
    const char *name, *a, *b, *batch, *m, *n, *k, *lt, *blas;
} entries[TUNE_NOPS] = {
    {"mm_tuned", "self", "mat2", NULL, "self.size(0)", "mat2.size(1)", "self.size(1)",
     "sg_cuda_mm_lt", "sg_cuda_mm_cublas"},
    {"addmm_tuned", "mat1", "mat2", NULL, "mat1.size(0)", "mat2.size(1)", "mat1.size(1)",
     "sg_cuda_addmm_lt", "sg_cuda_addmm_cublas"},
    {"bmm_tuned", "self", "mat2", "self.size(0)", "self.size(1)", "mat2.size(2)", "self.size(2)",
     "sg_cuda_bmm_lt", "sg_cuda_bmm_cublas"},
};
static const char *const layouts[2] = {"nn", "nt"};

bool sg_tune_add(tune_records *rs, const tune_record *r) {
    if (rs->n == rs->cap) {
        int          cap = rs->cap ? 2 * rs->cap : 1024;
        tune_record *p = realloc(rs->r, (size_t)cap * sizeof *p);
        if (!p) return false;
        rs->r = p, rs->cap = cap;
    }
    rs->r[rs->n] = *r;
    rs->r[rs->n++].run = rs->run;
    return true;
}

void sg_tune_free(tune_records *rs) {
    free(rs->r);
    for (int i = 0; i < TUNE_NKEYS; i++) free(rs->header[i]);
    memset(rs, 0, sizeof *rs);
}

/* "# key: value" of the header: kept, or checked against the value kept. */
static bool header_line(tune_records *rs, const char *path, int line, const char *p) {
    for (int i = 0; i < TUNE_NKEYS; i++) {
        size_t n = strlen(sg_tune_keys[i]);
        if (strncmp(p, sg_tune_keys[i], n) != 0 || p[n] != ':' || p[n + 1] != ' ') continue;
        const char *v = p + n + 2;
        size_t      len = strcspn(v, "\r\n");
        if (!rs->header[i]) {
            if (!(rs->header[i] = strndup(v, len))) return false;
        } else if (strlen(rs->header[i]) != len || strncmp(rs->header[i], v, len) != 0) {
            fprintf(stderr, "sg_gemm_tune: %s:%d: %s '%.*s' differs from '%s' read before: one "
                            "table holds one device's measurements\n", path, line,
                    sg_tune_keys[i], (int)len, v, rs->header[i]);
            return false;
        }
        return true;
    }
    return true; /* any other comment */
}

/* The template a "NAME:POINT" candidate names (its point into *point), or NULL: not of that
 * form, or a template this build lacks. */
static const tune_template *template_of(const char *c, int32_t *point) {
    const char *colon = strchr(c, ':');
    int         v;
    char        end;
    if (!colon || sscanf(colon + 1, "%d%c", &v, &end) != 1 || v < 0) return NULL;
    for (int i = 0; i < SG_TUNE_NTEMPLATES; i++)
        if (strlen(SG_TUNE_TEMPLATES[i].name) == (size_t)(colon - c) &&
            !strncmp(c, SG_TUNE_TEMPLATES[i].name, (size_t)(colon - c))) {
            *point = v;
            return &SG_TUNE_TEMPLATES[i];
        }
    return NULL;
}

/* Whether the candidate is one the tables know: heuristic, cublas, lt: with its nine fields,
 * a template of this build with a point. */
static bool known_candidate(const char *c) {
    int     v[9], n = 0;
    char    end;
    int32_t point;
    if (!strcmp(c, "heuristic") || !strcmp(c, "cublas")) return true;
    if (!strncmp(c, "lt:", 3)) {
        n = sscanf(c, "lt:%d/%d/%d/%d/%d/%d/%d/%d/%d%c", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8], &end);
        return n == 9;
    }
    return template_of(c, &point) != NULL;
}

/* The templates' names for a message: "mm_tpl, mm_cute_tpl". */
static const char *template_names(void) {
    static char buf[256];
    size_t      at = 0;
    buf[0] = 0;
    for (int i = 0; i < SG_TUNE_NTEMPLATES && at < sizeof buf; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? ", " : "",
                               SG_TUNE_TEMPLATES[i].name);
    return SG_TUNE_NTEMPLATES ? buf : "none in this build";
}

bool sg_tune_read(tune_records *rs, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "sg_gemm_tune: cannot read %s\n", path);
        return false;
    }
    rs->run++;
    char buf[1024];
    int  line = 0;
    bool ok = true;
    while (ok && fgets(buf, sizeof buf, f)) {
        line++;
        if (!strchr(buf, '\n')) {
            /* a line cut short: the end of a run that was stopped (its earlier lines stand),
             * or one too long */
            if (feof(f)) {
                fprintf(stderr, "sg_gemm_tune: %s:%d: the last line has no end (a run stopped "
                                "while writing it): left out\n", path, line);
                break;
            }
            fprintf(stderr, "sg_gemm_tune: %s:%d: line too long\n", path, line);
            ok = false;
            break;
        }
        if (buf[0] == '#') {
            ok = header_line(rs, path, line, buf + 1 + (buf[1] == ' '));
            continue;
        }
        if (buf[strspn(buf, " \t\r\n")] == 0) continue;
        tune_record r;
        char        op[16], lay[8], status[16];
        long long   b, m, n, k;
        memset(&r, 0, sizeof r);
        if (sscanf(buf, "%15s %7s %15s %lld %lld %lld %lld %63s %lf %15s", op, lay, r.dtype, &b, &m,
                   &n, &k, r.cand, &r.ms, status) != 10) {
            ok = false;
        } else {
            r.op = -1;
            for (int i = 0; i < TUNE_NOPS; i++)
                if (!strcmp(op, sg_tune_op_names[i])) r.op = i;
            r.layout = !strcmp(lay, "nn") ? 0 : !strcmp(lay, "nt") ? 1 : -1;
            r.batch = b, r.m = m, r.n = n, r.k = k;
            r.ok = !strcmp(status, "ok") && r.ms > 0;
            bool st = r.ok || !strcmp(status, "wrong") || !strcmp(status, "declined") ||
                      !strcmp(status, "failed");
            bool dt = !strcmp(r.dtype, "bfloat16") || !strcmp(r.dtype, "float16") ||
                      !strcmp(r.dtype, "float32");
            /* mm's and addmm's tables have no batch */
            ok = r.op >= 0 && r.layout >= 0 && b > 0 && m > 0 && n > 0 && k > 0 && st && dt &&
                 known_candidate(r.cand) && (b == 1 || r.op == SG_CUDA_GEMM_BMM);
        }
        if (!ok)
            fprintf(stderr, "sg_gemm_tune: %s:%d: expected 'op layout dtype batch M N K "
                            "candidate ms status' (op mm, addmm or bmm, batch 1 but for bmm; "
                            "layout nn or nt; dtype bfloat16, float16 or float32; candidate "
                            "heuristic, cublas, lt:A/.../I or TEMPLATE:N, a template of this "
                            "build: %s; status ok, wrong, declined or failed)\n", path, line,
                    template_names());
        else if (!sg_tune_add(rs, &r))
            ok = false, fprintf(stderr, "sg_gemm_tune: out of memory\n");
    }
    fclose(f);
    return ok;
}

/* ---- choices ------------------------------------------------------------------------------ */

/* One shape's measurements: the heuristic's latest and the candidate of the largest gain. */
typedef struct choice {
    const tune_record *base, *best; /* best == base: the heuristic stays */
    double             gain;        /* the heuristic's time over best's, in best's run */
} choice;

static int same_shape(const tune_record *x, const tune_record *y) {
    return x->op == y->op && x->layout == y->layout && !strcmp(x->dtype, y->dtype) &&
           x->batch == y->batch && x->m == y->m && x->n == y->n && x->k == y->k;
}

/* Table order: op, dtype, layout, n, k, batch, m; then the candidate, then the line (a later
 * measurement of one candidate replaces an earlier one). */
static int by_class(const void *p, const void *q) {
    const tune_record *x = *(const tune_record *const *)p, *y = *(const tune_record *const *)q;
    int c;
#define SG_CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
    SG_CMP(op);
    if ((c = strcmp(x->dtype, y->dtype))) return c;
    SG_CMP(layout);
    SG_CMP(n);
    SG_CMP(k);
    SG_CMP(batch);
    SG_CMP(m);
    if ((c = strcmp(x->cand, y->cand))) return c;
#undef SG_CMP
    return x < y ? -1 : x > y;
}

static bool same_choice(const choice *x, const choice *y) {
    bool hx = x->best == x->base, hy = y->best == y->base;
    return hx == hy && (hx || !strcmp(x->best->cand, y->best->cand));
}

/* ---- the table ---------------------------------------------------------------------------- */

static bool rule(FILE *f, const choice *ch, int64_t blo, int64_t bhi, int64_t lo) {
    const tune_record   *b = ch->base, *c = ch->best;
    const tune_template *t;
    int32_t              v[9];
    fprintf(f, "      - {dtype: %s, layout: %s, ", b->dtype, layouts[b->layout]);
    if (entries[b->op].batch) fprintf(f, "batch: [%lld, %lld], ", (long long)blo, (long long)bhi);
    fprintf(f, "m: [%lld, %lld], n: %lld, k: %lld, ", (long long)lo, (long long)b->m,
            (long long)b->n, (long long)b->k);
    if (c == b) {
        fprintf(f, "use: heuristic");
    } else if (!strcmp(c->cand, "cublas")) {
        fprintf(f, "use: cublas");
    } else if ((t = template_of(c->cand, &v[0])) != NULL) {
        const char *p = t->point(v[0]);
        if (!p) {
            fprintf(stderr, "sg_gemm_tune: %s: this build's %s has no such point (records "
                            "of another build's template?)\n", c->cand, t->name);
            return false;
        }
        fprintf(f, "use: %s, point: %s", t->name, p);
    } else if (sscanf(c->cand, "lt:%d/%d/%d/%d/%d/%d/%d/%d/%d", &v[0], &v[1], &v[2], &v[3],
                      &v[4], &v[5], &v[6], &v[7], &v[8]) == 9) {
        fprintf(f, "use: cublaslt, algo: {algo: %d, tile: %d, stages: %d, splitk: %d, "
                   "reduction: %d, swizzle: %d, custom: %d, inner: %d, cluster: %d}",
                v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]);
    }
    fprintf(f, ", gain: %.3f}\n", ch->gain);
    return true;
}

/* The rules of one op from its choices ch[0..n), in table order; false where one cannot be
 * written (said). */
static bool rules(FILE *f, const choice *ch, int n) {
    for (int i = 0; i < n;) {
        const tune_record *g = ch[i].base;
        int                j = i; /* one (dtype, layout, n, k): [i, j) */
        while (j < n && !strcmp(ch[j].base->dtype, g->dtype) && ch[j].base->layout == g->layout &&
               ch[j].base->n == g->n && ch[j].base->k == g->k)
            j++;
        int64_t blo = 1;
        for (int q = i; q < j;) {
            int r = q; /* one batch: [q, r) */
            while (r < j && ch[r].base->batch == ch[q].base->batch) r++;
            int64_t lo = 1;
            for (int x = q; x < r; x++) {
                /* merge into the next M bucket where it makes the same choice */
                if (x + 1 < r && same_choice(&ch[x], &ch[x + 1])) continue;
                if (!rule(f, &ch[x], blo, ch[q].base->batch, lo)) return false;
                lo = ch[x].base->m + 1;
            }
            blo = ch[q].base->batch + 1;
            q = r;
        }
        i = j;
    }
    return true;
}

static bool entry(FILE *f, const tune_records *rs, int op, const choice *ch, int n,
                  double margin) {
    bool f32 = false, blas = false;
    for (int i = 0; i < n; i++) {
        f32 |= !strcmp(ch[i].base->dtype, "float32");
        blas |= ch[i].best != ch[i].base && !strcmp(ch[i].best->cand, "cublas");
    }
    fprintf(f, "- name: %s\n  op: aten::%s\n  key: CUDA\n  priority: 1\n  table:\n    tuned:\n",
            entries[op].name, sg_tune_op_names[op]);
    for (int i = 0; i < TUNE_NKEYS; i++) {
        if (!rs->header[i]) continue;
        if (i == TUNE_NKEYS - 1)
            fprintf(f, "      %s: %s; margin %.2f\n", sg_tune_keys[i], rs->header[i], margin);
        else if (i == 1)
            fprintf(f, "      %s: %s\n", sg_tune_keys[i], rs->header[i]);
        else
            fprintf(f, "      %s: \"%s\"\n", sg_tune_keys[i], rs->header[i]);
    }
    fprintf(f, "    a: %s\n    b: %s\n", entries[op].a, entries[op].b);
    if (entries[op].batch) fprintf(f, "    batch: %s\n", entries[op].batch);
    fprintf(f, "    m: %s\n    n: %s\n    k: %s\n    cublaslt: %s\n", entries[op].m,
            entries[op].n, entries[op].k, entries[op].lt);
    if (blas) fprintf(f, "    cublas: %s\n", entries[op].blas);
    if (f32) fprintf(f, "    tf32: sg_cuda_allow_tf32\n");
    fprintf(f, "    rules:\n");
    return rules(f, ch, n);
}

bool sg_tune_write_table(const tune_records *rs, const char *path, double margin, int *nshapes,
                         int *nchosen, double *gain) {
    *nshapes = *nchosen = 0;
    *gain = 1;
    static const char *const need[] = {"device", "capability", "driver", "cuda", "cublaslt",
                                       "method"};
    for (int i = 0; i < TUNE_NKEYS; i++)
        for (size_t q = 0; q < sizeof need / sizeof *need; q++)
            if (!rs->header[i] && !strcmp(sg_tune_keys[i], need[q])) {
                fprintf(stderr, "sg_gemm_tune: the records say no '%s'\n", need[q]);
                return false;
            }
    const tune_record **ord = malloc(((size_t)rs->n + 1) * sizeof *ord);
    choice             *ch = malloc(((size_t)rs->n + 1) * sizeof *ch);
    if (!ord || !ch) {
        free(ord), free(ch);
        fprintf(stderr, "sg_gemm_tune: out of memory\n");
        return false;
    }
    for (int i = 0; i < rs->n; i++) ord[i] = &rs->r[i];
    qsort(ord, (size_t)rs->n, sizeof *ord, by_class);
    int    nch = 0;
    double log_gain = 0;
    for (int i = 0; i < rs->n;) {
        int j = i; /* one shape: [i, j), a candidate's last measurement last among its own */
        while (j < rs->n && same_shape(ord[i], ord[j])) j++;
        choice c = {NULL, NULL, 1};
        for (int q = i; q < j; q++) {
            if (q + 1 < j && !strcmp(ord[q]->cand, ord[q + 1]->cand)) continue;
            if (!strcmp(ord[q]->cand, "heuristic")) c.base = ord[q];
        }
        if (c.base && c.base->ok) {
            c.best = c.base;
            for (int q = i; q < j; q++) {
                if (q + 1 < j && !strcmp(ord[q]->cand, ord[q + 1]->cand)) continue;
                if (!ord[q]->ok || !strcmp(ord[q]->cand, "heuristic")) continue;
                /* against the heuristic of the candidate's own run (its last there) */
                const tune_record *h = c.base;
                for (int p = i; p < j; p++)
                    if (!strcmp(ord[p]->cand, "heuristic") && ord[p]->ok &&
                        ord[p]->run == ord[q]->run)
                        h = ord[p];
                double g = h->ms / ord[q]->ms;
                if (g > c.gain) c.gain = g, c.best = ord[q];
            }
            if (c.gain < margin) c.best = c.base, c.gain = 1;
            log_gain += log(c.gain);
            *nchosen += c.best != c.base;
            ch[nch++] = c;
        }
        i = j;
    }
    free(ord);
    *nshapes = nch;
    *gain = nch ? exp(log_gain / nch) : 1;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = nch ? fopen(tmp, "w") : NULL;
    if (!f) {
        fprintf(stderr, nch ? "sg_gemm_tune: cannot write %s\n" : "sg_gemm_tune: no shape "
                              "measured%s\n", nch ? tmp : "");
        free(ch);
        return false;
    }
    fprintf(f, "# Decision tables for matrix products (docs/gemm.md), written by\n"
               "# bench/gemm_tune.c (bash .ci/gpu gemm-tune) from measurements; tune again\n"
               "# rather than edit them. Each rule's gain is the heuristic's time over the\n"
               "# choice's at the bucket's largest M (and batch); 'heuristic' rules record that\n"
               "# nothing beat it by %.0f%%.\n", (margin - 1) * 100);
    bool written = true;
    for (int i = 0; i < nch && written;) {
        int j = i;
        while (j < nch && ch[j].base->op == ch[i].base->op) j++;
        written = entry(f, rs, ch[i].base->op, ch + i, j - i, margin);
        i = j;
    }
    free(ch);
    bool ok = fclose(f) == 0 && written;
    if (!ok || rename(tmp, path) != 0) {
        if (written) fprintf(stderr, "sg_gemm_tune: cannot write %s\n", path);
        remove(tmp);
        return false;
    }
    return true;
}
