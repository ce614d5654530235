/* codegen.c: the whole generator over PyTorch's native_functions.yaml, in-process.
 *
 *   sg_bench_codegen [--reps N] native_functions.yaml tags.yaml OUTDIR
 *
 * One repetition is what `schemagen --tags tags.yaml -o OUTDIR native_functions.yaml` does: a
 * fresh model, load, group, validate, derive (structured links, autogen variants), render
 * every built-in template into memory, write the files into OUTDIR (after the first
 * repetition their bytes are unchanged, so writing is the comparison the tool makes before it
 * leaves a file alone, as in an incremental build), free.
 * Figures: medians over N after one warm-up, "name value unit" a line.
 */
#define _POSIX_C_SOURCE 200809L
#include "codegen.h"
#include "derive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PH_FRONT, PH_DERIVE, PH_RENDER, PH_WRITE, PH_TOTAL, PH__COUNT };
static const char *const names[PH__COUNT] = {"codegen_frontend_ms", "codegen_derive_ms",
                                             "codegen_render_ms",
                                             "codegen_write_ms", "codegen_ms"};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int reps = 10, i = 1;
    if (argc > 2 && strcmp(argv[1], "--reps") == 0) {
        reps = atoi(argv[2]);
        i = 3;
    }
    if (argc - i != 3 || reps <= 0) {
        fprintf(stderr, "usage: sg_bench_codegen [--reps N] native_functions.yaml tags.yaml OUTDIR\n");
        return 2;
    }
    const char *yaml = argv[i], *tags = argv[i + 1], *outdir = argv[i + 2];
    FILE *probe = fopen(yaml, "rb");
    if (!probe) {
        fprintf(stderr, "skipped: cannot read %s; the corpus is optional\n", yaml);
        return 77;
    }
    fclose(probe);
    double  *t = calloc((size_t)reps * PH__COUNT, sizeof *t);
    size_t   bytes = 0;
    uint32_t files = 0, nops = 0;
    const char *inputs[1] = {yaml};
    for (int r = -1; r < reps; r++) {
        sg_model m;
        sg_diag  d;
        sg_outputs outs = {0};
        double   t0 = now_ms();
        if (!t || sg_model_init(&m) != 0) {
            fprintf(stderr, "sg_bench_codegen: out of memory\n");
            return 1;
        }
        sg_diag_init(&d);
        sg_load_file(&m, tags, &d);
        sg_load_file(&m, yaml, &d);
        sg_model_group(&m, &d);
        sg_validate(&m, &d);
        double td = now_ms();
        if (!d.nerrors) sg_model_derive(&m, &d);
        double t1 = now_ms();
        sg_codegen_opts o = {.lib = "corpus", .shard_size = SG_DEFAULT_SHARD_SIZE,
                             .inputs = inputs, .ninputs = 1};
        if (!d.nerrors) sg_codegen(&m, &o, &outs, &d);
        double t2 = now_ms();
        if (d.nerrors) {
            fprintf(stderr, "%.*s", (int)d.out.len, d.out.data);
            return 1;
        }
        if (sg_outputs_write(outdir, &outs, stderr) != 0) return 1;
        double t3 = now_ms();
        bytes = 0;
        for (uint32_t k = 0; k < outs.n; k++) bytes += outs.items[k].text.len;
        files = outs.n;
        nops = m.nops;
        sg_outputs_free(&outs);
        sg_diag_free(&d);
        sg_model_free(&m);
        double t4 = now_ms();
        if (r < 0) continue;
        t[PH_FRONT * reps + r] = td - t0;
        t[PH_DERIVE * reps + r] = t1 - td;
        t[PH_RENDER * reps + r] = t2 - t1;
        t[PH_WRITE * reps + r] = t3 - t2;
        t[PH_TOTAL * reps + r] = t4 - t0;
    }
    for (int p = 0; p < PH__COUNT; p++) {
        qsort(t + p * reps, (size_t)reps, sizeof *t, cmp_double);
        printf("%s %.3f ms\n", names[p], t[p * reps + reps / 2]);
    }
    printf("codegen_ops %u ops\ncodegen_files %u files\ncodegen_output_bytes %zu bytes\n", nops,
           files, bytes);
    free(t);
    return 0;
}
